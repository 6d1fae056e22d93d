"""Shared helpers of the corpus scripts: finding kernels, building and
running them, reading and comparing their dumps."""
import math
import struct
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "polybench")
INCLUDE = os.path.join(CORPUS, "include")
COMPILERS = {"gcc": "gcc", "clang": "clang-19"}


def kernels(names=()):
    """Paths of the corpus kernels (all, or those named), sorted by name."""
    out = []
    for dirpath, _, files in os.walk(CORPUS):
        if os.path.abspath(dirpath) == INCLUDE:
            continue
        for f in files:
            if f.endswith(".c") and (not names or f[:-2] in names):
                out.append(os.path.join(dirpath, f))
    return sorted(out, key=os.path.basename)


def compile_c(cc, src, exe, size, flags, extra=()):
    cmd = [cc, *flags, f"-D{size.upper()}_DATASET", "-I", INCLUDE, *extra, src, "-o", exe, "-lm"]
    return subprocess.run(cmd, capture_output=True, text=True)


def run(exe, args=(), threads=2, timeout=60):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    return subprocess.run([exe, *args], capture_output=True, text=True, env=env, timeout=timeout)


def parse_dump(text):
    """{name: [values as text]} from the `begin NAME COUNT [bits]` format
    (`bits`: doubles as the hexadecimal digits of their IEEE-754 form,
    turned into exact decimal text here)."""
    arrays = {}
    name = None
    values = []
    expected = 0
    bits = False
    for line in text.splitlines():
        if line.startswith("begin "):
            parts = line.split()
            _, name, count = parts[:3]
            bits = parts[3:] == ["bits"]
            values = []
            expected = int(count)
        elif bits and name is not None and not line.startswith("end "):
            values.append(repr(struct.unpack(">d", bytes.fromhex(line.strip()))[0]))
        elif line.startswith("end "):
            if len(values) != expected:
                raise ValueError(f"{name}: {len(values)} values, header says {expected}")
            arrays[name] = values
            name = None
        elif name is not None:
            values.append(line.strip())
    return arrays


def close(a, b, rtol=1e-6, atol=1e-9):
    if a == b:
        return True
    try:
        x, y = int(a), int(b)
        return x == y
    except ValueError:
        pass
    x, y = float(a), float(b)
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    if math.isinf(x) or math.isinf(y):
        return x == y
    return abs(x - y) <= atol + rtol * max(abs(x), abs(y))


def compare(ref, got):
    """None when the dumps agree, else a description of the first difference."""
    if sorted(ref) != sorted(got) or any(len(ref[k]) != len(got[k]) for k in ref):
        return "different arrays or sizes"
    for name in ref:
        diff = [i for i, (x, y) in enumerate(zip(ref[name], got[name])) if not close(x, y)]
        if diff:
            i = diff[0]
            return f"{name}: {len(diff)} values differ, first at {i}: {ref[name][i]} vs {got[name][i]}"
    return None
