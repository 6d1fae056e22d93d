#!/usr/bin/env python3
"""Verifies the whole optimization space of corpus kernels.

For each kernel: enumerate its distinct variants with `polytune space
--emit`, compile every one with each compiler (OpenMP on), run it on two
threads, and compare its dump with the original program's. Prints the
counts per kernel and in total; exits non-zero on any compile error,
crash, timeout or wrong output. Failing variants are kept under --keep.

    scripts/verify_space.py [--size mini] [--compilers gcc,clang] [--jobs 2] [KERNEL ...]
"""
import argparse
import concurrent.futures as cf
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpuslib import COMPILERS, ROOT, compare, compile_c, kernels, parse_dump, run  # noqa: E402

FLAGS = ["-O2", "-march=native", "-std=c99", "-fopenmp", "-w"]


def polytune_binary():
    exe = os.path.join(ROOT, "target", "release", "polytune")
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    return exe


def check_variant(cc, path, size, reference):
    exe = path + "." + os.path.basename(cc)
    r = compile_c(cc, path, exe, size, FLAGS)
    if r.returncode != 0:
        return "compile-error", r.stderr[-2000:]
    try:
        r = run(exe, ["--dump"], threads=2, timeout=120)
    except subprocess.TimeoutExpired:
        return "timeout", ""
    if r.returncode != 0:
        return "crash", r.stderr[-2000:]
    try:
        d = compare(reference, parse_dump(r.stdout))
    except ValueError as e:
        return "wrong-output", str(e)
    return ("wrong-output", d) if d else ("ok", "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="mini", choices=["mini", "small", "medium", "large"])
    ap.add_argument("--compilers", default="gcc,clang")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--keep", default=os.path.join(tempfile.gettempdir(), "polytune-verify-failures"))
    ap.add_argument("--json", help="write the per-kernel figures to this file")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    compilers = [COMPILERS[c] for c in args.compilers.split(",")]
    polytune = polytune_binary()
    totals = {"kernels": 0, "variants": 0, "builds": 0, "ok": 0, "compile-error": 0, "crash": 0, "timeout": 0, "wrong-output": 0}
    report = []
    for src in kernels(args.names):
        name = os.path.basename(src)[:-2]
        t0 = time.time()
        work = tempfile.mkdtemp(prefix=f"polytune-verify-{name}-")
        r = subprocess.run([polytune, "space", src, "--emit", work, "--json"], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL {name}: polytune space failed: {r.stderr.strip()}")
            totals["compile-error"] += 1
            continue
        space = json.loads(r.stdout)
        for note in space.get("skipped", []):
            print(f"     note: {name}: {note}")
        ref_exe = os.path.join(work, "original")
        rc = compile_c("gcc", src, ref_exe, args.size, FLAGS)
        if rc.returncode != 0:
            print(f"FAIL {name}: original does not compile: {rc.stderr}")
            continue
        reference = parse_dump(run(ref_exe, ["--dump"], threads=1, timeout=600).stdout)
        variants = [os.path.join(work, f"{name}.v{k}.c") for k in range(space["distinct"])]
        counts = {"ok": 0, "compile-error": 0, "crash": 0, "timeout": 0, "wrong-output": 0}
        failures = []
        with cf.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futs = {pool.submit(check_variant, cc, v, args.size, reference): (cc, v) for v in variants for cc in compilers}
            for f in cf.as_completed(futs):
                status, detail = f.result()
                counts[status] += 1
                if status != "ok":
                    failures.append((futs[f], status, detail))
        for (cc, v), status, detail in failures:
            os.makedirs(args.keep, exist_ok=True)
            shutil.copy(v, args.keep)
            print(f"     {status} {os.path.basename(v)} with {cc}: {detail.strip()[:300]}")
        shutil.rmtree(work, ignore_errors=True)
        bad = len(failures)
        print(
            f"{'ok' if not bad else 'FAIL':4} {name:18} variants={space['distinct']:4}  builds={sum(counts.values()):4}  "
            f"mismatches={counts['wrong-output']}  compile-errors={counts['compile-error']}  crashes={counts['crash']}  "
            f"timeouts={counts['timeout']}  ({time.time() - t0:.0f}s)",
            flush=True,
        )
        totals["kernels"] += 1
        totals["variants"] += space["distinct"]
        totals["builds"] += sum(counts.values())
        for k, v in counts.items():
            totals[k] += v
        report.append({"kernel": name, "variants": space["distinct"], **counts})
    print(
        f"total: {totals['kernels']} kernels, {totals['variants']} distinct variants, {totals['builds']} builds, "
        f"{totals['ok']} ok, {totals['wrong-output']} mismatches, {totals['compile-error']} compile errors, "
        f"{totals['crash']} crashes, {totals['timeout']} timeouts"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"totals": totals, "kernels": report}, f, indent=2)
    sys.exit(0 if totals["ok"] == totals["builds"] else 1)


if __name__ == "__main__":
    main()
