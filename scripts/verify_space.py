#!/usr/bin/env python3
"""Verifies the whole optimization space of corpus kernels: a thin
wrapper over `polytune space --verify` (every distinct variant built with
each compiler, OpenMP on, run on two threads and compared with the
original's output) that runs it on every kernel named (default: the whole
corpus), prints the counts per kernel and in total, and exits non-zero on
any compile error, crash, timeout or wrong output. `--keep DIR` writes
the failing variants there.

    scripts/verify_space.py [--size mini] [--compilers gcc,clang] [--jobs 2]
                            [--threads 2] [--tt] [--red 1|2] [--priv 1|2] [--cyc] [--outer] [--dist]
                            [--changed] [--keep DIR] [--json FILE] [KERNEL ...]

With --changed (and a field added), only the variants the field changes are
verified: those whose code no configuration of the paper's space generates
(`polytune space --changed`); the others are counted as `unchanged`.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpuslib import ROOT, kernels  # noqa: E402

STATUSES = ["ok", "compile_error", "crash", "timeout", "wrong_output"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="mini", choices=["mini", "small", "medium", "large"])
    ap.add_argument("--compilers", default="gcc,clang")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--keep", help="write the failing variants to this directory")
    ap.add_argument("--json", help="write the per-kernel figures to this file")
    ap.add_argument("--threads", type=int, default=2, help="OpenMP threads of every run")
    ap.add_argument("--tt", action="store_true",
                    help="every configuration with tt=diamond added (polytune space --tt)")
    ap.add_argument("--red", choices=["1", "2"],
                    help="every configuration with red=1 or red=2 added (polytune space --red)")
    ap.add_argument("--priv", choices=["1", "2"],
                    help="every configuration with priv=1 or priv=2 added (polytune space --priv)")
    ap.add_argument("--cyc", action="store_true",
                    help="every configuration with cyc=1 added (polytune space --cyc)")
    ap.add_argument("--outer", action="store_true",
                    help="every configuration with outer=1 added (polytune space --outer)")
    ap.add_argument("--dist", action="store_true",
                    help="every configuration with dist=1 added (polytune space --dist)")
    ap.add_argument("--changed", action="store_true",
                    help="only the variants the added fields change (polytune space --changed)")
    ap.add_argument("--polytune", default=os.path.join(ROOT, "target", "release", "polytune"))
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    if not os.path.exists(a.polytune):
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    totals = {"kernels": 0, "variants": 0, "unchanged": 0, "builds": 0, "failed": 0,
              **{s: 0 for s in STATUSES}}
    report = []
    for src in kernels(a.names):
        name = os.path.basename(src)[:-2]
        cmd = [a.polytune, "-q", "space", src, "--verify", "--json", "--size", a.size,
               "--compiler", a.compilers, "--jobs", str(a.jobs), "--threads", str(a.threads)]
        if a.tt:
            cmd.append("--tt")
        if a.red:
            cmd += ["--red", a.red]
        if a.priv:
            cmd.append(f"--priv={a.priv}")
        if a.cyc:
            cmd.append("--cyc")
        if a.outer:
            cmd.append("--outer")
        if a.dist:
            cmd.append("--dist")
        if a.changed:
            cmd.append("--changed")
        emitted = tempfile.mkdtemp(prefix="polytune-verify-") if a.keep else None
        if emitted:
            cmd += ["--emit", emitted]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode not in (0, 1) or not r.stdout:
            print(f"FAIL {name}: polytune space failed: {r.stderr.strip()}")
            totals["failed"] += 1
            continue
        space = json.loads(r.stdout)
        v = space["verification"]
        for note in space.get("skipped", []):
            print(f"     note: {name}: {note}")
        for c in v["compilers"]:
            if c["original"] != "ok":
                print(f"     {name}: the original fails with {c['compiler']}: {c['original_detail']}")
        for f in v["failures"]:
            print(f"     {f['status']} {name}.v{f['variant']}.c ({f['config']}) with "
                  f"{f['compiler']}: {f['detail']}")
            if emitted:
                os.makedirs(a.keep, exist_ok=True)
                shutil.copy(os.path.join(emitted, f"{name}.v{f['variant']}.c"), a.keep)
        if emitted:
            shutil.rmtree(emitted, ignore_errors=True)
        counts = {s: sum(c["counts"][s] for c in v["compilers"]) for s in STATUSES}
        bad = r.returncode != 0
        unchanged = space.get("unchanged")
        kept = f"  unchanged={unchanged:4}" if unchanged is not None else ""
        print(f"{'FAIL' if bad else 'ok':4} {name:18} variants={v['variants']:4}{kept}  "
              f"builds={v['builds']:4}  mismatches={counts['wrong_output']}  "
              f"compile-errors={counts['compile_error']}  crashes={counts['crash']}  "
              f"timeouts={counts['timeout']}  ({v['seconds']:.0f}s)", flush=True)
        totals["kernels"] += 1
        totals["variants"] += v["variants"]
        totals["unchanged"] += unchanged or 0
        totals["builds"] += v["builds"]
        totals["failed"] += bad
        for s in STATUSES:
            totals[s] += counts[s]
        report.append({"kernel": name, "variants": v["variants"], "unchanged": unchanged, **counts})
    print(f"total: {totals['kernels']} kernels, {totals['variants']} distinct variants"
          + (f" ({totals['unchanged']} more unchanged by the fields, left out)" if a.changed else "")
          + ", "
          f"{totals['builds']} builds, {totals['ok']} ok, {totals['wrong_output']} mismatches, "
          f"{totals['compile_error']} compile errors, {totals['crash']} crashes, "
          f"{totals['timeout']} timeouts")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"totals": totals, "kernels": report}, f, indent=2)
    sys.exit(0 if totals["failed"] == 0 else 1)


if __name__ == "__main__":
    main()
