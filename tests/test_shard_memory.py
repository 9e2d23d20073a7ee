"""A shard frees its intermediate tables before writing (docs/design.md, "Memory")."""

from __future__ import annotations

from pathlib import Path

from pipeline.config import RunConfig
from pipeline.execution.driver import MIN_SPLIT_BYTES, shard_count
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
    assert count(65 * mb, 2) == 4  # not 3: the last round would leave a worker idle
    assert count(64 * mb, 2) == 2
    assert count(65 * mb, 3) == 3
    assert count(100 * mb, 3) == 6
    assert count(20 * mb, 2) == 2  # under 32 MB, still split between two workers
    assert count(2 * MIN_SPLIT_BYTES - 1, 2) == 1  # too small to be worth a pool
    for total, workers in [(65 * mb, 2), (100 * mb, 3), (1024 * mb, 2), (20 * mb, 2)]:
        n = count(total, workers)
        assert n % workers == 0 and -(-total // n) <= 32 * mb  # never above the memory bound
