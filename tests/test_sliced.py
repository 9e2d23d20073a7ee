"""A shard's large tables validated and written a slice of whole trajectories at a time
(pipeline/execution/sliced.py): the same contents as the whole-table path, sorted by
grain, and no validation ever holds more than the slice bound (bar one trajectory)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from pipeline.cli import main
from pipeline.execution import sliced
from pipeline.outputs import writer
from tests.conftest import calls, result, traj, user
from tests.conftest import table_contents


def _heavy(tid: str, n: int) -> dict[str, Any]:
    """n writes of one file, then n reads of it: n x n resource edges."""
    messages: list[dict[str, Any]] = [user("keep notes")]
    for i in range(n):
        messages += [calls((f"w{i}", "write_file", {"path": "notes.txt", "content": f"line {i}"})), result(f"w{i}")]
    for i in range(n):
        messages += [calls((f"r{i}", "read_file", {"path": "notes.txt"})), result(f"r{i}", f"line {i}")]
    return traj(tid, *messages)


def _corpus(path: Path) -> Path:
    sizes = [6, 2, 9, 4, 7, 3]
    path.write_text("".join(json.dumps(_heavy(f"t{k}", n)) + "\n" for k, n in enumerate(sizes)))
    return path


def test_slice_bounds_keep_trajectories_whole() -> None:
    con = duckdb.connect()
    con.execute("create table edges as select * from (values ('a', 3), ('b', 3), ('c', 5), ('d', 1), ('e', 9)) "
                "t(trajectory_id, n), range(n)")
    con.execute("alter table edges drop column n")
    assert sliced.slice_bounds(con, "edges", limit=6) == [("a", "b", 6), ("c", "d", 6), ("e", "e", 9)]
    assert sliced.slice_bounds(con, "edges", limit=21) is None  # small enough: written whole
    con.execute("create table verdicts as select 'a' as trajectory_id from range(50)")
    assert sliced.slice_bounds(con, "verdicts", limit=6) is None  # partitioned tables are never sliced


def test_sliced_tables_hold_what_the_whole_path_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = _corpus(tmp_path / "c.jsonl")
    whole, parts = tmp_path / "whole", tmp_path / "sliced"
    assert main(["score", str(corpus), "--out", str(whole), "--workers", "1"]) == 0
    seen: list[tuple[str, int]] = []
    real = writer.conform

    def counted(table: str, frame: Any) -> Any:
        seen.append((table, frame.height))
        return real(table, frame)

    monkeypatch.setattr(sliced, "SLICE_ROWS", 60)
    monkeypatch.setattr(sliced, "BATCH_ROWS", 7)  # slices cut across DuckDB's batches
    monkeypatch.setattr(sliced, "conform", counted)
    assert main(["score", str(corpus), "--out", str(parts), "--workers", "1"]) == 0
    edges = [n for table, n in seen if table == "edges"]
    assert len(edges) > 2 and max(edges) <= 81  # t2 alone has 9 x 9 edges: a slice of its own
    assert table_contents(whole) == table_contents(parts)  # every table, row for row
    con = duckdb.connect()
    rows = con.execute("select trajectory_id, src_action_idx, dst_action_idx, kind from read_parquet($p)",
                       {"p": f"{parts}/edges/*.parquet"}).fetchall()
    assert len(rows) == 6 * 6 + 2 * 2 + 9 * 9 + 4 * 4 + 7 * 7 + 3 * 3
    assert rows == sorted(rows)  # the slices follow each other in grain order


def test_rows_of_a_null_trajectory_id_are_never_left_out_of_the_slices(tmp_path: Path) -> None:
    """A NULL id (a stage's bug) groups last: it must reach validation, which refuses it,
    not fall out of every slice (the table would be published without its rows)."""
    from pipeline.errors import SchemaValidationError

    con = duckdb.connect()
    con.execute("create table edges as select * from (values ('a', 3), ('b', 3), (null, 5)) "
                "t(trajectory_id, n), range(n)")
    con.execute("alter table edges drop column n")
    bounds = sliced.slice_bounds(con, "edges", limit=4)
    assert bounds == [("a", "a", 3), ("b", "b", 3), (None, None, 5)]
    assert [p.num_rows for p in sliced._slices(con, "edges", bounds)] == [3, 3, 5]
    with pytest.raises(SchemaValidationError, match="more rows read than its slices counted"):
        list(sliced._slices(con, "edges", bounds[:2]))
    with pytest.raises(SchemaValidationError, match="fewer rows read than counted"):
        list(sliced._slices(con, "edges", [("a", "b", 12)]))
