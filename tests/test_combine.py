"""Combine (``pipeline/combine.py``) and the split's spill files: bounded memory at scale.

Combine must give the run's table, sorted by grain, from shard files in any order, even
when its sort cannot fit in memory (DuckDB spills); the split must keep one spill file
per shard however many chunks the input takes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

import pipeline.shards as shards
from pipeline.cli import main
from pipeline.config import RunConfig
from pipeline.combine import combine
from pipeline.records import RawRecord
from pipeline.writer import table_files
from schemas import schema_module
from tests.conftest import REPO

SAMPLE = REPO / "data" / "sample"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("combine") / "run"
    assert main(["score", str(SAMPLE / "corpus"), "--out", str(out), "--workers", "1", "--quiet"]) == 0
    return out


def _scatter(frame: pl.DataFrame, work: Path, table: str, parts: int) -> None:
    """Shard files as workers write them: disjoint, each sorted, named out of order."""
    folder = work / "out" / table
    folder.mkdir(parents=True)
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=3)
    for k in range(parts):
        piece = shuffled.gather_every(parts, offset=k).sort(list(schema_module(table).GRAIN))
        piece.write_parquet(folder / f"shard-{parts - 1 - k}.parquet")


@pytest.mark.parametrize("table", ["steps", "actions", "edges", "flows"])
def test_combine_sorts_shards_by_grain_under_a_tiny_memory_limit(run: Path, tmp_path: Path, table: str) -> None:
    published = pl.read_parquet(table_files(run, table))
    _scatter(published, tmp_path / "work", table, parts=4)
    staging = tmp_path / "staging"
    n = combine(tmp_path / "work", table, staging, threads=2, memory_limit="8MB")
    combined = pl.read_parquet(table_files(staging, table))
    assert n == published.height
    assert combined.equals(published)  # same rows, same order, same types


def test_combine_writes_one_folder_per_partition_value(run: Path, tmp_path: Path) -> None:
    files = table_files(run, "verdicts")
    published = pl.concat([pl.read_parquet(f).with_columns(pl.lit(Path(f).parent.name.split("=", 1)[1]).alias("suite"))
                           for f in files], how="diagonal")
    assert published.height > 0
    frame = published.select(pq.read_schema(files[0]).names + ["suite"])
    _scatter(frame, tmp_path / "work", "verdicts", parts=3)
    staging = tmp_path / "staging"
    assert combine(tmp_path / "work", "verdicts", staging, threads=1, memory_limit="8MB") == published.height
    assert sorted(p.relative_to(staging) for p in (staging / "verdicts").rglob("*.parquet")) == \
        sorted(Path(f).relative_to(run) for f in files)
    for f in files:
        again = staging / Path(f).relative_to(run)
        assert pl.read_parquet(again).equals(pl.read_parquet(f))


def test_split_keeps_one_spill_file_per_shard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shards, "CHUNK_ROWS", 7)  # many chunks
    records = [RawRecord("in.jsonl", i + 1, f'{{"trajectory_id": "t{i}", "messages": []}}') for i in range(100)]
    assert shards.split(iter(records), tmp_path, n_shards=3) == 100
    spill = sorted(p.relative_to(tmp_path / "spill") for p in (tmp_path / "spill").rglob("*.parquet"))
    assert spill == [Path(f"shard-{k}/part-000000.parquet") for k in range(3)]
    ids = sorted(r for f in spill for r in pq.read_table(tmp_path / "spill" / f).column("record_id").to_pylist())
    assert ids == list(range(100))
    assert all(pq.ParquetFile(tmp_path / "spill" / f).metadata.num_row_groups > 1 for f in spill)


_BIG_SORT = """
import sys
from pathlib import Path
import polars as pl
from pipeline.combine import combine
from pipeline.writer import table_files
from tests.test_combine import _scatter
run, tmp = Path(sys.argv[1]), Path(sys.argv[2])
base = pl.read_parquet(table_files(run, "steps"))
copies = 1 + (400 << 20) // max(base.estimated_size(), 1)  # about 400 MB of rows against a 160 MB limit
big = pl.concat([base.with_columns(pl.col("trajectory_id") + f"~{i:04d}") for i in range(copies)])
_scatter(big, tmp / "work", "steps", parts=5)
assert combine(tmp / "work", "steps", tmp / "staging", threads=1, memory_limit="160MB") == big.height
assert pl.read_parquet(table_files(tmp / "staging", "steps")).equals(big.sort(["trajectory_id", "step_idx"]))
print("rows", big.height)
"""


def test_combine_sorts_more_rows_than_its_memory_limit_holds(run: Path, tmp_path: Path) -> None:
    # in a child: 400 MB of frames would stay in this process's RSS and skew the
    # peak-RSS measurements of later tests (ru_maxrss survives fork + exec)
    done = subprocess.run([sys.executable, "-c", _BIG_SORT, str(run), str(tmp_path)], cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("rows ")


def test_a_shard_lost_after_scoring_is_never_published(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pipeline.run as run_module
    from pipeline.errors import SchemaValidationError

    real = run_module.combine

    def lose_shard(work: Path, table: str, *args: object) -> int:
        if table in ("verdicts", "attrition"):  # as if one shard's files vanished from shared storage
            for f in sorted((work / "out" / table).glob("shard-*.parquet"))[:1]:
                f.unlink()
        return real(work, table, *args)

    monkeypatch.setattr(run_module, "combine", lose_shard)
    out = tmp_path / "run"
    with pytest.raises(SchemaValidationError, match="records read"):
        run_module.score(RunConfig(inputs=(SAMPLE / "corpus",), out=out, shards=3, workers=1))
    assert not out.exists()
