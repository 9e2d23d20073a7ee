"""Data-path alternatives for ``score`` (issue 12), measured on one generated corpus.

Each alternative runs in its own child process (``_common.measure``: wall, CPU, peak
RSS of the process tree, peak bytes of the temporary folders):

- **plan**: the new planning pass (SHA-256 + record-aligned cut points) alone;
- **spill split**: the previous design's first phase (records hashed by trajectory id
  into one zstd Parquet spill file per shard), its seconds and spill bytes;
- **id pre-pass**: a separate id-only pass (DuckDB ``read_ndjson_objects`` ->
  ``trajectory_id``), the alternative to ids written by the shards;
- **sort combine**: the previous design's final step (DuckDB external sort of the
  ``steps`` shard files by grain, 512 MB limit) against moving the files;
- **end to end**: ``litmus-gate score`` at a commit of the previous design (``--old``,
  extracted with ``git archive``) and at this checkout, same corpus and settings.

Usage: python bench/data_path.py [--mb 256] [--old 726caad] [--workdir /tmp/litmus-bench/data-path]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import MIB, REPO, Measured, folder_bytes, gib, machine, measure  # noqa: E402

_PLAN = """
import sys, time
from pathlib import Path
from pipeline.execution.plan import scan_inputs
n = max(1, -(-Path(sys.argv[1]).stat().st_size // (64 << 20)))
scan_inputs([Path(sys.argv[1])], n, "auto")
"""

_SPILL = """
import sys
from pathlib import Path
import duckdb, pyarrow.compute as pc, pyarrow.parquet as pq
from pipeline.ingest.reader import iter_records
from pipeline.execution.shard import chunks
from pipeline.stages.tables import records_table
corpus, spill = Path(sys.argv[1]), Path(sys.argv[2])
n = max(1, -(-corpus.stat().st_size // (64 << 20)))
con = duckdb.connect(config={"threads": 1, "memory_limit": "1GB"})
writers, first = {}, 0
for chunk in chunks(iter_records([corpus])):
    con.register("chunk", records_table(chunk, first))
    first += len(chunk)
    tagged = con.sql("select *, (hash(coalesce(try(json_extract_string(text, '$.trajectory_id')), "
                     "'record:' || record_id)) % $n)::bigint as shard from chunk", params={"n": n}).to_arrow_table()
    for k in range(n):
        rows = tagged.filter(pc.equal(tagged.column("shard"), k)).drop_columns(["shard"])
        if rows.num_rows:
            if k not in writers:
                (spill / str(k)).mkdir(parents=True, exist_ok=True)
                writers[k] = pq.ParquetWriter(spill / str(k) / "part.parquet", rows.schema, compression="zstd",
                                              write_statistics=False)
            writers[k].write_table(rows)
for w in writers.values():
    w.close()
"""

_IDS = """
import sys, duckdb
con = duckdb.connect(config={"threads": 2, "memory_limit": "1GB"})
print(con.execute("select count(*), count(distinct id) from (select try(json_extract_string(json, '$.trajectory_id')) "
                  "as id from read_ndjson_objects(?))", [sys.argv[1]]).fetchall())
"""

_SORT = """
import sys
from pathlib import Path
import duckdb
run, tmp = Path(sys.argv[1]), Path(sys.argv[2])
files = sorted(str(p) for p in (run / "steps").rglob("*.parquet"))
con = duckdb.connect(config={"threads": 2, "memory_limit": "512MB", "temp_directory": str(tmp / "sort-tmp")})
con.execute("copy (select * from read_parquet(?) order by trajectory_id, step_idx) to '" + str(tmp / "sorted.parquet")
            + "' (format parquet, compression zstd)", [files])
"""


def _child(code: str, *args: str, watch: tuple[Path, tuple[str, ...]] | None = None,
           env: dict[str, str] | None = None) -> Measured:
    m = measure([sys.executable, "-c", code, *args], cwd=REPO, watch=watch, env=env)
    if m.returncode:
        raise SystemExit(f"child failed:\n{m.stderr[-3000:]}")
    return m


def _old_tree(commit: str, target: Path) -> Path:
    """The repository at ``commit`` (``git archive``), to run the previous design."""
    if not (target / "pipeline").is_dir():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", commit], cwd=REPO, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def _score(corpus: Path, work: Path, name: str, pythonpath: Path | None) -> Measured:
    out = work / name
    env = dict(os.environ, PYTHONPATH=str(pythonpath)) if pythonpath else None
    m = measure([sys.executable, "-m", "pipeline.cli", "score", str(corpus), "--out", str(out), "--overwrite",
                 "--quiet"], cwd=pythonpath or REPO, env=env,
                watch=(work, (f".{name}.work", f".{name}.staging-*", ".tmp")))
    if m.returncode:
        raise SystemExit(f"score ({name}) failed:\n{m.stderr[-3000:]}")
    return m


def run(mb: float, old: str, work: Path, seed: int) -> dict:
    """Every measurement of the module docstring; returns the figures."""
    work.mkdir(parents=True, exist_ok=True)
    corpus = work / f"corpus-{mb:g}mb-s{seed}.jsonl"
    if not corpus.exists():
        subprocess.run([sys.executable, str(REPO / "bench" / "gen_corpus.py"), "--mb", str(mb), "--out", str(corpus),
                        "--seed", str(seed)], check=True, capture_output=True)
    size = corpus.stat().st_size
    spill = work / "spill"
    res: dict = {"bytes": size, "mb": size / MIB}
    res["plan"] = _child(_PLAN, str(corpus))
    res["spill"] = _child(_SPILL, str(corpus), str(spill), watch=(work, ("spill",)))
    res["spill_bytes"] = folder_bytes(work, ("spill",))
    shutil.rmtree(spill, ignore_errors=True)
    res["ids"] = _child(_IDS, str(corpus))
    tree = _old_tree(old, work / f"old-{old}")
    res["old"] = _score(corpus, work, "old-run", tree)
    res["new"] = _score(corpus, work, "new-run", None)
    res["sort"] = _child(_SORT, str(work / "new-run"), str(work), watch=(work, ("sort-tmp", "sorted.parquet")))
    res["steps_bytes"] = folder_bytes(work / "new-run", ("steps",))
    for name in ("old-run", "new-run", "sort-tmp", "sorted.parquet"):
        target = work / name
        shutil.rmtree(target, ignore_errors=True) if target.is_dir() else target.unlink(missing_ok=True)
    return res


def markdown(res: dict, old: str, command: str) -> str:
    """The figures as a Markdown table plus the picks they support."""
    mb = res["mb"]

    def row(name: str, m: Measured, extra: str = "") -> str:
        return (f"| {name} | {m.wall:.1f} | {m.cpu:.1f} | {mb / m.wall:,.0f} | {gib(m.tree_rss)} "
                f"| {m.disk_peak / MIB:,.0f} MB | {extra} |")

    before, new = res["old"], res["new"]
    lines = [
        f"Corpus: {mb:,.0f} MB of canonical NDJSON (`bench/gen_corpus.py`), default settings (64 MB shards, "
        "workers = cores). Machine shared with other jobs: wall seconds are noisy, CPU seconds steadier.", "",
        "| step | wall s | CPU s | MB/s of corpus | peak RSS, process tree | peak temporary disk | note |",
        "|---|---:|---:|---:|---:|---:|---|",
        row("plan: SHA-256 + record-aligned cut points (this design)", res["plan"]),
        row("spill split by id hash (previous design, phase 1)", res["spill"],
            f"spill {res['spill_bytes'] / MIB:,.0f} MB = {100 * res['spill_bytes'] / res['bytes']:.0f}% of the corpus"),
        row("separate id-only pre-pass (DuckDB `read_ndjson_objects`)", res["ids"], "not used: shards write their ids"),
        row("external sort of `steps` by grain (previous combine, one table)", res["sort"],
            f"`steps` is {res['steps_bytes'] / MIB:,.0f} MB; this design moves the files instead"),
        row(f"`litmus-gate score`, previous design (commit {old})", before),
        row("`litmus-gate score`, this design", new),
        "",
        f"End to end: wall {before.wall:.1f} -> {new.wall:.1f} s ({100 * (new.wall / before.wall - 1):+.0f}%), "
        f"CPU {before.cpu:.1f} -> {new.cpu:.1f} s ({100 * (new.cpu / before.cpu - 1):+.0f}%), peak temporary disk "
        f"{before.disk_peak / MIB:,.0f} -> {new.disk_peak / MIB:,.0f} MB "
        f"({100 * before.disk_peak / res['bytes']:.0f}% -> {100 * new.disk_peak / res['bytes']:.0f}% of the corpus), "
        f"peak RSS of the process tree {gib(before.tree_rss)} -> {gib(new.tree_rss)}.",
        "", machine(), f"Command: `{command}`",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=256)
    parser.add_argument("--old", default="726caad", help="a commit of the previous design (spill + sort)")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/litmus-bench/data-path"))
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="keep the corpus and the old tree")
    args = parser.parse_args(argv)
    command = "python bench/data_path.py " + " ".join(argv if argv is not None else sys.argv[1:])
    try:
        res = run(args.mb, args.old, args.workdir, args.seed)
    finally:
        if not args.keep:
            shutil.rmtree(args.workdir, ignore_errors=True)
    print(markdown(res, args.old, command.strip()))
    print(json.dumps({k: (v.__dict__ | {"stdout": "", "stderr": ""}) if isinstance(v, Measured) else v
                      for k, v in res.items()}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
