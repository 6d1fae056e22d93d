#!/usr/bin/env python3
"""The share of loop nests under the user's own OpenMP directives that
`optimize --detect` takes (issue 40), over the OpenMP programs of
tests/fixtures/openmp, for one or two polytune binaries (before and after
a change).

    scripts/openmp_share.py BINARY [BINARY ...]

A nest carries a directive when a `#pragma omp ... for` or `simd` stands
in front of one of its loops. It is taken when `optimize --detect
--config CONFIG` writes a SCoP for it: detected, and (with directives
proven by the engine) neither left unchanged because a directive is not
proven nor refused for its pragma."""
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted((ROOT / "tests/fixtures/openmp").glob("*.c"))
CONFIG = "fuse=smart,tile=32x32x32,wave=0,omp=1,prevec=1,simd=1,uj=2"
LOOP_DIRECTIVE = re.compile(r"^\s*#\s*pragma\s+omp\s+(parallel\s+for|for|simd)\b")


def directive_lines(path):
    return [
        k + 1
        for k, line in enumerate(path.read_text().splitlines())
        if LOOP_DIRECTIVE.match(line)
    ]


def taken(binary, path):
    """The directive lines inside a SCoP the binary transformed."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "out.c"
        p = subprocess.run(
            [binary, "optimize", str(path), "--detect", "--config", CONFIG, "-o", str(out)],
            capture_output=True,
            text=True,
        )
    regions = [
        (int(a), int(b))
        for a, b in re.findall(r"detected a SCoP in \S+ at \S+?:(\d+)-(\d+)", p.stderr)
    ]
    unproven = {int(n) for n in re.findall(r"\.c:(\d+):\d+: SCoP \d+ left unchanged", p.stderr)}
    lines = directive_lines(path)
    return [
        line
        for line in lines
        if any(a <= line <= b for a, b in regions) and line not in unproven
    ]


def main():
    binaries = sys.argv[1:]
    if not binaries:
        sys.exit(__doc__)
    print("| program | nests under a directive | " + " | ".join(f"taken ({b})" for b in binaries) + " |")
    print("|---|---|" + "---|" * len(binaries))
    totals = [0] * (len(binaries) + 1)
    for f in FIXTURES:
        n = len(directive_lines(f))
        counts = [len(taken(b, f)) for b in binaries]
        totals[0] += n
        for k, c in enumerate(counts):
            totals[k + 1] += c
        print(f"| {f.name} | {n} | " + " | ".join(str(c) for c in counts) + " |")
    print(
        f"| all | {totals[0]} | "
        + " | ".join(f"{c} ({100 * c / max(totals[0], 1):.0f}%)" for c in totals[1:])
        + " |"
    )


if __name__ == "__main__":
    main()
