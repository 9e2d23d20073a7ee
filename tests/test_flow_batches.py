"""Reachability a batch of trajectories at a time (pipeline/stages/flow_batches.py): a
shard of many large graphs, each within the per-trajectory bounds, ran DuckDB out of
memory in ``sql/flows.sql`` (it cannot spill a recursive query); explored in batches
sized by ``sql/reach_sizes.sql`` it scores, with the rows of one query."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from pipeline.cli import main
from pipeline.config import RunConfig
from pipeline.run import score
from pipeline.stages import flow_batches as fb
from pipeline.stages import tables
from tests.test_graph_rejects import chain
from tests.conftest import table_contents



def _sizes(con: duckdb.DuckDBPyConnection, rows: list[tuple[str, int, int]], rejected: tuple[str, ...] = ()) -> None:
    con.execute("create table reach_sizes (trajectory_id varchar, n_states bigint, n_levels bigint)")
    if rows:
        con.executemany("insert into reach_sizes values (?, ?, ?)", rows)
    con.execute("create table graph_rejects as select unnest($r::varchar[]) as trajectory_id", {"r": list(rejected)})
    con.execute("create table edge_rejects as select ''::varchar as trajectory_id where false")


def test_batches_cover_every_id_and_hold_their_budget() -> None:
    con = duckdb.connect()
    # slots = n_states x (n_levels + ROW_SLOTS): 10 x (4 + 6) = 100 each; 'big' alone is 1,000
    _sizes(con, [("a", 10, 4), ("b", 10, 4), ("big", 100, 4), ("c", 10, 4), ("d", 10, 4), ("e", 10, 4),
                 ("huge", 10_000, 4)], rejected=("huge",))
    assert fb.flow_batches(con, None) == [(None, None)]
    assert fb.flow_batches(con, 10_000) == [(None, None)]  # all fits (the rejected one is not explored)
    assert fb.flow_batches(con, 250) == [(None, "big"), ("big", "c"), ("c", "e"), ("e", None)]
    # every id falls in exactly one batch, also ids with no size (no source reaches a sink)
    batches = fb.flow_batches(con, 250)
    for tid in ("", "a", "aa", "b", "big", "bz", "c", "d", "e", "f", "zzz"):
        assert sum((lo is None or tid >= lo) and (hi is None or tid < hi) for lo, hi in batches) == 1, tid


def test_the_memory_limit_is_read_as_duckdb_shows_it() -> None:
    for setting, exact in (("640MiB", 640 * 2**20), ("1.5GiB", 3 * 2**29), ("2GB", 2 * 1000**3), ("100KB", 100_000)):
        con = duckdb.connect(config={"memory_limit": setting})
        read = fb.memory_limit_bytes(con)
        assert read is not None and abs(read - exact) <= exact * 0.06  # one decimal: 2 GB shows as "1.8 GiB"


def _corpus(path: Path) -> Path:
    lines = [chain(f"ch{k:03d}", 12 + k % 5) for k in range(24)]
    lines += [{"trajectory_id": f"plain{k}", "messages": [{"role": "user", "content": "hi"},
                                                          {"role": "assistant", "content": "hello"}]}
              for k in range(3)]
    path.write_text("".join(json.dumps(t) + "\n" for t in lines))
    return path


def test_a_shard_explored_in_batches_has_the_rows_of_one_query(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = _corpus(tmp_path / "c.jsonl")
    assert main(["score", str(corpus), "--out", str(tmp_path / "one"), "--quiet", "--workers", "1"]) == 0
    ran: list[tuple[Any, Any]] = []
    real = tables.materialize

    def counting(con: duckdb.DuckDBPyConnection, name: str, append: bool = False, **params: Any) -> None:
        if name == "flows":
            ran.append((params["first"], params["until"]))
        real(con, name, append, **params)

    monkeypatch.setattr(tables, "materialize", counting)
    # a budget of about 2,000 slots: one or two of these chains per batch
    monkeypatch.setattr(tables, "BYTES_PER_SLOT", 2 * 1000**3 // 2_000)
    assert main(["score", str(corpus), "--out", str(tmp_path / "many"), "--quiet", "--workers", "1",
                 "--memory-limit", "2GB"]) == 0
    assert len(ran) > 5 and ran[0][0] is None and ran[-1][1] is None
    assert all(a[1] == b[0] for a, b in zip(ran, ran[1:]))  # contiguous: every id in one batch
    assert table_contents(tmp_path / "one") == table_contents(tmp_path / "many")  # every table, row for row
    con = duckdb.connect()
    assert con.read_parquet(f"{tmp_path}/many/flows/*.parquet").aggregate("count(distinct trajectory_id)"
                                                                          ).fetchall() == [(24,)]


def test_a_shard_of_many_large_graphs_scores_under_a_small_memory_limit(tmp_path: Path) -> None:
    """60 chains of 80 steps (2.6 MB), each well within the per-trajectory bounds: under a
    128 MiB cap the unbatched query ran out of memory in ``flows`` and the run failed (the
    library takes a cap under the command line's 256 MiB floor)."""
    corpus = tmp_path / "chains.jsonl"
    corpus.write_text("".join(json.dumps(chain(f"ch{k:03d}", 80)) + "\n" for k in range(60)))
    result = score(RunConfig(inputs=(corpus,), out=tmp_path / "run", workers=1, memory_limit="128MiB"))
    assert result.row_counts["verdicts"] == 60 and result.row_counts["attrition"] == 0
    assert result.row_counts["flows"] == 60 * 80
