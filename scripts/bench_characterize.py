#!/usr/bin/env python3
"""How long the characterization takes against one native run, per corpus
kernel (issue 36: bounded at max(3x one native run, 5 s) at any size).

    scripts/bench_characterize.py [--size large] [--kernels a,b] [--json OUT]

For every corpus kernel it builds the program as a user would
(`gcc -O3 -march=native -D<SIZE>_DATASET`), times one whole native run
(wall clock, the process from start to exit), then times the whole
`polytune characterize FILE --size SIZE --json` (compiling the counted
build, the simulator up to the bound) and prints a markdown table: native
seconds, characterization seconds, their ratio, the bound max(3x native,
5 s) and whether it held, and what was counted (whole or prefix, millions
of instructions). Run it on a quiet machine: nothing else should run
beside it (the two are timed one after the other, not interleaved).
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpuslib  # noqa: E402


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="large")
    ap.add_argument("--kernels", default="")
    ap.add_argument("--json", dest="json_out")
    ap.add_argument("--native-from", help="reuse the native seconds of an earlier --json")
    a = ap.parse_args()
    known = {}
    if a.native_from:
        known = {r["kernel"]: r["native"] for r in json.load(open(a.native_from))}
    binary = os.environ.get("POLYTUNE", os.path.join(corpuslib.ROOT, "target/release/polytune"))
    names = [k for k in a.kernels.split(",") if k]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for src in corpuslib.kernels(names):
            name = os.path.basename(src)[:-2]
            exe = os.path.join(tmp, name)
            c = corpuslib.compile_c("gcc", src, exe, a.size, ["-O3", "-march=native"])
            if c.returncode != 0:
                print(f"{name}: does not build: {c.stderr}", file=sys.stderr)
                continue
            if name in known:
                native = known[name]
            else:
                t0 = time.monotonic()
                subprocess.run([exe], capture_output=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
                native = time.monotonic() - t0
            t0 = time.monotonic()
            out = subprocess.run(
                [binary, "characterize", src, "--size", a.size, "--json", "-q", "--timeout", "3600"],
                capture_output=True,
                text=True,
            )
            seconds = time.monotonic() - t0
            if out.returncode != 0:
                print(f"{name}: characterize failed: {out.stderr}", file=sys.stderr)
                continue
            counted = json.loads(out.stdout)["counted"]
            bound = max(3 * native, 5.0)
            rows.append(
                {
                    "kernel": name,
                    "native": native,
                    "characterize": seconds,
                    "bound": bound,
                    "held": seconds <= bound,
                    "counted": counted,
                }
            )
            print(
                f"{name}: native {native:.2f} s, characterize {seconds:.2f} s, {counted['part']}",
                file=sys.stderr,
                flush=True,
            )
            if a.json_out:
                with open(a.json_out, "w") as f:
                    json.dump(rows, f, indent=1)
    print(f"Characterization at {a.size.upper()} ({time.strftime('%Y-%m-%d')}, {cpu_name()}, "
          f"{os.cpu_count()} cores; polytune's default bound)\n")
    print("| kernel | native s | characterize s | ratio | bound s | held | counted (M instr.) |")
    print("|---|---:|---:|---:|---:|---|---|")
    for r in rows:
        c = r["counted"]
        print(
            f"| {r['kernel']} | {r['native']:.2f} | {r['characterize']:.2f} | "
            f"{r['characterize'] / r['native']:.1f}x | {r['bound']:.1f} | "
            f"{'yes' if r['held'] else '**no**'} | {c['part']} {c['instructions'] / 1e6:.0f} |"
        )
    held = sum(r["held"] for r in rows)
    print(f"\n{held} of {len(rows)} within max(3x native, 5 s)")
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
