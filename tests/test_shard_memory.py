"""A shard frees its intermediate tables before writing (docs/design.md, "Memory")."""

from __future__ import annotations

from pathlib import Path

from pipeline.config import RunConfig
from pipeline.execution.driver import MIN_SPLIT_BYTES, SHARD_SLACK, shard_count
from pipeline.execution.shard import _drop_tables
from pipeline.stages.tables import connect


def test_drop_tables_keeps_only_the_outputs() -> None:
    con = connect(RunConfig(inputs=(), out=Path("unused"), threads=1))
    for name in ("events", "outputs", "steps", "verdicts"):
        con.execute(f"create temp table {name} as select 1 as x")
    con.execute("create table not_temp as select 1 as x")  # only temp tables are stages'
    _drop_tables(con, keep={"steps", "verdicts"})
    left = {r[0] for r in con.execute("select table_name from duckdb_tables()").fetchall()}
    assert left == {"steps", "verdicts", "not_temp"}
    _drop_tables(con, keep=set())
    assert {r[0] for r in con.execute("select table_name from duckdb_tables()").fetchall()} == {"not_temp"}


def test_default_shards_are_32_mb(tmp_path: Path) -> None:
    config = RunConfig(inputs=(), out=tmp_path / "run")
    assert config.shard_bytes == 32 * 2**20
    assert shard_count(config, 65 * 2**20) == 3  # ceil(65 / 32): every shard at most 32 MB
    assert shard_count(RunConfig(inputs=(), out=tmp_path / "run", shards=7), 65 * 2**20) == 7


def test_default_shards_keep_every_worker_busy(tmp_path: Path) -> None:
    def count(total: int, workers: int) -> int:
        return shard_count(RunConfig(inputs=(), out=tmp_path / "run", workers=workers), total)

    mb = 2**20
    assert count(65 * mb, 2) == 2  # not 3 (a worker idle in the last round): 32.5 MB each
    assert count(81 * mb, 2) == 4  # two would be 40.5 MB each, over 32 MB x SHARD_SLACK
    assert count(64 * mb, 2) == 2
    assert count(65 * mb, 3) == 3
    assert count(100 * mb, 3) == 3  # 33.3 MB each
    assert count(130 * mb, 3) == 6  # three would be 43 MB each
    assert count(1025 * mb, 2) == 32
    assert count(20 * mb, 2) == 2  # under 32 MB, still split between two workers
    assert count(2 * MIN_SPLIT_BYTES - 1, 2) == 1  # too small to be worth a pool
    for total in range(16 * mb, 2048 * mb, 7 * mb + 12345):
        for workers in (2, 3, 4):
            n = count(total, workers)
            assert n % workers == 0 or (n == 1 and total < workers * MIN_SPLIT_BYTES), (total, workers)
            assert total / n <= 32 * mb * SHARD_SLACK  # the memory bound, with its slack
