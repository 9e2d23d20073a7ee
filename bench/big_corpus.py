"""A large corpus quickly: copies of one generated corpus file, each copy's ids made new.

``bench/gen_corpus.py`` writes about 5-6 MB/s on one core (a 25 GB corpus would take
over an hour) and ``litmus-gate synth`` draws the bundled sample's trajectories (about
1.9 KB each: 25 GB would be 13.7 million of them). For the large-corpus run, this
script writes ``--copies`` copies of a ``gen_corpus.py`` file into ``--out`` (a folder,
one ``part-NNN.jsonl`` per copy), at disk speed: copy ``k`` renames every trajectory id
``ID`` to ``ID-cK``, so no id repeats (no duplicate-id rescoring) and the corpus has the
generator's shape (about 10 KB per trajectory). Only this script's own input is
rewritten, by the fixed ``{"trajectory_id": "`` prefix every generated line starts with;
a line without it stops the script.

Usage: python bench/big_corpus.py --source FILE --copies 100 --out DIR
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

PREFIX = b'{"trajectory_id": "'


def write_copy(source: Path, target: Path, k: int) -> int:
    """One copy with ids suffixed ``-c<k>``; returns the bytes written."""
    suffix = f"-c{k}".encode()
    written = 0
    tmp = target.with_name(target.name + ".tmp")
    with source.open("rb") as src, tmp.open("wb", buffering=1 << 22) as dst:
        for line in src:
            if not line.startswith(PREFIX):
                raise SystemExit(f"{source}: a line without the generator's id prefix")
            end = line.index(b'"', len(PREFIX))
            out = line[:end] + suffix + line[end:]
            dst.write(out)
            written += len(out)
    tmp.replace(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, required=True, help="a bench/gen_corpus.py file")
    parser.add_argument("--copies", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True, help="folder to write part-NNN.jsonl into")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    start, total = time.perf_counter(), 0
    for k in range(args.copies):
        total += write_copy(args.source, args.out / f"part-{k:03d}.jsonl", k)
    wall = time.perf_counter() - start
    print(f"wrote {args.copies} copies, {total / 2**20:,.0f} MB in {wall:.0f} s to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
