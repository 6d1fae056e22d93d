#!/usr/bin/env python3
"""Re-characterizes every corpus kernel of a dataset with `polytune
characterize` (counting inside the SCoP regions, through polytune's
instrumentation) and compares the new features with the stored ones.

    scripts/recharacterize.py DATASET [--write] [--json OUT]

For every kernel of DATASET it runs
`polytune characterize polybench/**/NAME.c --size SIZE --json` at the size
the stored features were counted at, and prints per feature the stored
value, the new one and their relative difference |new-old|/|old| (absolute
when the stored value is 0), with a summary. The stored kernel's source
hash must match the corpus file (otherwise the kernel changed since the
campaign and the script stops). With --write it replaces the stored
features of DATASET by the new ones (same back end, size and names): run it
on a copy unless that is what you mean. --json writes the new features and
the differences to OUT.
"""

import argparse
import hashlib
import json
import os
import sqlite3
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def code_hash(text):
    """The store's source hash (engine::space::code_hash)."""
    h = hashlib.sha256()
    for line in text.splitlines():
        if not line.lstrip().startswith("/* polytune:"):
            h.update(line.encode() + b"\n")
    return h.hexdigest()


def characterize(binary, path, size):
    out = subprocess.run(
        [binary, "characterize", str(path), "--size", size, "--json", "-q"],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)["features"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--json", dest="json_out")
    a = ap.parse_args()
    binary = os.environ.get("POLYTUNE", str(ROOT / "target/release/polytune"))
    corpus = {p.stem: p for p in (ROOT / "polybench").rglob("*.c")}
    db = sqlite3.connect(a.dataset)
    rows = db.execute(
        "SELECT k.id, k.name, k.source_hash, f.backend, f.size, f.name, f.value "
        "FROM features f JOIN kernels k ON k.id = f.kernel_id "
        "WHERE f.backend = 'cachegrind' ORDER BY k.name, f.name"
    ).fetchall()
    stored = {}
    for kid, name, shash, backend, size, fname, value in rows:
        stored.setdefault((kid, name, shash, size), {})[fname] = value
    report = {}
    diffs = []
    for (kid, name, shash, size), old in sorted(stored.items(), key=lambda x: x[0][1]):
        path = corpus.get(name)
        if path is None:
            sys.exit(f"{name}: no polybench/**/{name}.c")
        if code_hash(path.read_text()) != shash:
            sys.exit(f"{name}: {path} changed since its features were stored")
        print(f"{name}: characterizing {path.relative_to(ROOT)} at {size}", file=sys.stderr)
        new = characterize(binary, path, size)
        if set(new) != set(old):
            sys.exit(f"{name}: features {sorted(new)} differ from the stored {sorted(old)}")
        per = {}
        for f in sorted(old):
            o, n = old[f], new[f]
            rel = abs(n - o) / abs(o) if o != 0 else None
            per[f] = {"old": o, "new": n, "rel": rel, "abs": abs(n - o)}
            if rel is not None:
                diffs.append((rel, name, f))
            print(
                f"  {f:14} {o:14.6g} {n:14.6g} "
                + (f"{rel * 100:9.3f} %" if rel is not None else f"  abs {abs(n - o):.3g}")
            )
        report[name] = {"kernel_id": kid, "size": size, "features": per}
        if a.write:
            db.executemany(
                "UPDATE features SET value = ? WHERE kernel_id = ? AND backend = 'cachegrind' "
                "AND size = ? AND name = ?",
                [(new[f], kid, size, f) for f in old],
            )
    if a.write:
        db.commit()
    rels = [d[0] for d in diffs]
    print(
        f"relative difference over {len(rels)} (kernel, feature) pairs with a non-zero stored value: "
        f"median {statistics.median(rels) * 100:.3f} %, max {max(rels) * 100:.2f} %",
        file=sys.stderr,
    )
    for rel, name, f in sorted(diffs, reverse=True)[:10]:
        print(f"  {name:16} {f:14} {rel * 100:8.2f} %", file=sys.stderr)
    if a.json_out:
        Path(a.json_out).write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
