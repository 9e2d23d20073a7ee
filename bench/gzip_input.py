"""A gzip corpus against the same corpus uncompressed: ``litmus-gate score`` on each,
alternating, in one run (``bench/_common.py``'s ``measure``: wall, CPU of the whole
process tree, peak RSS of the largest process and of the tree), and whether the two runs'
tables hold the same rows (``source_file`` aside). A gzip NDJSON file is split by its
uncompressed bytes (pipeline/execution/plan.py); ``--checkout DIR`` also runs the gzip file
with another checkout's code (``PYTHONPATH``), e.g. one from before that change.

Usage: python bench/gzip_input.py --mb 256 [--rounds 2] [--checkout DIR] [--section]
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import MIB, gib, machine, measure, update_section  # noqa: E402

import gen_corpus  # noqa: E402

TABLES = ("steps", "actions", "edges", "flows", "verdicts", "attrition")


def same_rows(a: Path, b: Path) -> bool:
    """Whether two runs' tables hold the same rows (``source_file`` aside: the names differ)."""
    import duckdb

    con = duckdb.connect()
    for table in TABLES:
        rels = []
        for run in (a, b):
            files = sorted(str(p) for p in (run / table).rglob("*.parquet"))
            rel = con.sql("select * from read_parquet($f, hive_partitioning = true, union_by_name = true, "
                          "hive_types_autocast = false)", params={"f": files})
            rels.append(rel.select(*[f'"{c}"' for c in rel.columns if c != "source_file"]).to_arrow_table())
        con.register("ra", rels[0])
        con.register("rb", rels[1])
        diff = con.sql("select (select count(*) from (select * from ra except all select * from rb)) + "
                       "(select count(*) from (select * from rb except all select * from ra))").fetchall()[0][0]
        if diff:
            return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=256)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--checkout", type=Path, default=None, help="another checkout to run on the gzip file")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/litmus-bench/gzip"))
    parser.add_argument("--section", action="store_true", help="write docs/performance.md's section")
    args = parser.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    plain = args.workdir / f"corpus-{args.mb:g}mb-s{args.seed}.jsonl"
    packed = plain.with_suffix(".jsonl.gz")
    if not plain.exists():
        gen_corpus.generate(plain, args.mb, args.seed)
    if not packed.exists():
        with plain.open("rb") as src, gzip.open(packed, "wb", compresslevel=6) as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    cli = [sys.executable, "-m", "pipeline.cli", "score"]
    variants = [("plain `.jsonl`", plain, None), ("`.jsonl.gz`", packed, None)]
    if args.checkout is not None:
        variants.append((f"`.jsonl.gz`, code of {args.checkout.name}", packed, args.checkout))
    results: dict[str, list] = {name: [] for name, _, _ in variants}
    for _ in range(args.rounds):
        for name, corpus, checkout in variants:
            out = args.workdir / f"run-{len(results[name])}-{abs(hash(name))}"
            env = dict(os.environ, PYTHONPATH=str(checkout)) if checkout is not None else None
            m = measure([*cli, str(corpus), "--out", str(out), "--overwrite", "--quiet"], env=env,
                        cwd=checkout or Path(__file__).resolve().parents[1])
            if m.returncode != 0:
                print(f"{name}: exit {m.returncode}: {m.stderr[-500:]}", file=sys.stderr)
                return 1
            results[name].append((m, out))
    first = {name: runs[-1][1] for name, runs in results.items()}
    identical = same_rows(first["plain `.jsonl`"], first["`.jsonl.gz`"])
    lines = [f"Corpus: `bench/gen_corpus.py --mb {args.mb:g} --seed {args.seed}`, {plain.stat().st_size / MIB:,.0f} MB; "
             f"gzip level 6: {packed.stat().st_size / MIB:,.1f} MB. {args.rounds} rounds, alternating; the median "
             "(lower of two) run of each.", "",
             "| input | wall s | CPU s | peak RSS, largest process | peak RSS, process tree |", "|---|---:|---:|---:|---:|"]
    for name, runs in results.items():
        m = sorted((r[0] for r in runs), key=lambda x: x.wall)[(len(runs) - 1) // 2]
        lines.append(f"| {name} | {m.wall:.1f} | {m.cpu:.1f} | {gib(m.peak_rss)} | {gib(m.tree_rss)} |")
    lines += ["", f"Tables of the plain and the gzip run: {'the same rows' if identical else 'DIFFERENT rows'} "
              "(`source_file` aside).", "", machine(),
              f"Command: `python bench/gzip_input.py --mb {args.mb:g} --rounds {args.rounds}"
              + (f" --checkout {args.checkout}" if args.checkout else "") + "`"]
    body = "\n".join(lines)
    print(body)
    if args.section:
        update_section("Compressed input (gzip)", body)
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
