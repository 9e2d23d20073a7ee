"""A shard frees its intermediate tables before writing (docs/design.md, "Memory")."""

from __future__ import annotations

from pathlib import Path

from pipeline.config import RunConfig
from pipeline.execution.driver import _shard_count
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
    corpus = tmp_path / "c.jsonl"
    corpus.write_bytes(b"x" * (65 * 2**20))
    config = RunConfig(inputs=(corpus,), out=tmp_path / "run")
    assert config.shard_bytes == 32 * 2**20
    assert _shard_count(config, [corpus]) == 3  # ceil(65 / 32): every shard at most 32 MB
    assert _shard_count(RunConfig(inputs=(corpus,), out=tmp_path / "run", shards=7), [corpus]) == 7
