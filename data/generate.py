#!/usr/bin/env python3
"""Deterministic generator of the litmus-gate sample corpus (``data/sample/``).

    python data/generate.py              # (re)writes data/sample/
    python data/generate.py --out DIR    # writes the same files under DIR/

Output (SPEC section 8, canonical format, one trajectory per JSON line):

- ``corpus/<suite>.jsonl``  trajectories of the suites file-net, mail-pay, web-agent,
  with about 5% hostile records mixed in (malformed lines, orphans, ...);
- ``labels.jsonl``          per-step labels of a simulated external instance-level
  classifier (step_idx in the explode order of docs/design.md), for ~2/3 of them;
- ``gold.jsonl``            adjudicated truth per trajectory plus slice tags;
- ``README.md``             the case classes, their counts, how to regenerate.

Stdlib only, no network. Every random choice comes from ``random.Random`` instances
seeded from SEED and stable strings (never ``hash()``), so two runs give
byte-identical files. The scenarios live in ``data/samplegen/`` (see data/README.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from samplegen.classifier import label_rows
from samplegen.plan import build_suite, gold_row, render_line
from samplegen.rand import SUITES
from samplegen.readme import readme_text_for
from samplegen.traj import Traj

DEFAULT_OUT = Path(__file__).resolve().parent / "sample"


# ============================================================================ output
def write_jsonl(path: Path, rows: list[str]) -> None:
    """Write one row per line, LF line ends."""
    with path.open("w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            f.write(row + "\n")


def write_sample(out: Path) -> dict[str, list[Traj]]:
    """Write corpus/, gold.jsonl, labels.jsonl and README.md under ``out``; returns the suites."""
    suites = {s: build_suite(s) for s in SUITES}
    (out / "corpus").mkdir(parents=True, exist_ok=True)
    gold_lines: list[str] = []
    label_lines: list[str] = []
    n_labelled = 0
    for suite, items in suites.items():
        write_jsonl(out / "corpus" / f"{suite}.jsonl", [render_line(t) for t in items])
        for t in items:
            row = gold_row(t)
            if row is None:
                continue
            gold_lines.append(json.dumps(row, ensure_ascii=False))
            rows = label_rows(t)
            n_labelled += bool(rows)
            label_lines.extend(json.dumps(r) for r in rows)
    write_jsonl(out / "gold.jsonl", gold_lines)
    write_jsonl(out / "labels.jsonl", label_lines)
    (out / "README.md").write_text(
        readme_text_for(suites, len(label_lines), n_labelled), encoding="utf-8", newline="\n"
    )
    return suites


def main(argv: list[str] | None = None) -> int:
    """The command line: ``python data/generate.py [--out DIR]``."""
    parser = argparse.ArgumentParser(description="Write the litmus-gate sample corpus deterministically.")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (default: data/sample)")
    args = parser.parse_args(argv)
    suites = write_sample(args.out)
    n = sum(len(v) for v in suites.values())
    print(f"wrote {n} records over {len(suites)} suites to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
