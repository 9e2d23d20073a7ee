"""Stage `events` pairs each tool result with the latest earlier call of its id. Call ids
repeat in hostile input; joining every earlier call of the id and keeping the latest grew
with calls x results of one id (20,000 calls of one id, a 4.9 MB record: 18 s, where the
same record with distinct ids took 2 s). The pairing is now a window over the calls and
results of an id in step order: the same pairs, in time that grows with the record."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from pipeline.config import RunConfig
from pipeline.ingest.records import RawRecord
from pipeline.ingest.tables_in import LABELS_SCHEMA
from pipeline.policy import load_policy
from pipeline.sql import materialize
from pipeline.stages import tables as run
from tests.conftest import calls, result, rows, stage_connection, traj, user


def test_repeated_ids_pair_with_the_latest_earlier_call() -> None:
    con = stage_connection([
        traj("a", user("go"), calls(("x", "read_file", {"path": "f1"})), calls(("x", "read_file", {"path": "f2"})),
             result("x"), result("x"), result("x"), calls(("x", "read_file", {"path": "f3"})), result("x")),
        traj("b", user("go"), result("y"), calls(("y", "read_file", {"path": "f1"})), result("y", error="boom"))],
        until="steps")
    assert rows(con, "select trajectory_id, step_idx, kind, call_step_idx, result_step_idx, answered from steps "
                     "where kind in ('tool_call', 'tool_result') order by all") == [
        # the second call is the latest before each result: it takes the first, the rest are orphans
        {"trajectory_id": "a", "step_idx": 1, "kind": "tool_call", "call_step_idx": None, "result_step_idx": None,
         "answered": None},
        {"trajectory_id": "a", "step_idx": 2, "kind": "tool_call", "call_step_idx": None, "result_step_idx": 3,
         "answered": None},
        {"trajectory_id": "a", "step_idx": 3, "kind": "tool_result", "call_step_idx": 2, "result_step_idx": None,
         "answered": True},
        {"trajectory_id": "a", "step_idx": 4, "kind": "tool_result", "call_step_idx": 2, "result_step_idx": None,
         "answered": False},
        {"trajectory_id": "a", "step_idx": 5, "kind": "tool_result", "call_step_idx": 2, "result_step_idx": None,
         "answered": False},
        {"trajectory_id": "a", "step_idx": 6, "kind": "tool_call", "call_step_idx": None, "result_step_idx": 7,
         "answered": None},
        {"trajectory_id": "a", "step_idx": 7, "kind": "tool_result", "call_step_idx": 6, "result_step_idx": None,
         "answered": True},
        # a result before any call of its id answers nothing
        {"trajectory_id": "b", "step_idx": 1, "kind": "tool_result", "call_step_idx": None, "result_step_idx": None,
         "answered": False},
        {"trajectory_id": "b", "step_idx": 2, "kind": "tool_call", "call_step_idx": None, "result_step_idx": 3,
         "answered": None},
        {"trajectory_id": "b", "step_idx": 3, "kind": "tool_result", "call_step_idx": 2, "result_step_idx": None,
         "answered": True}]


def _calls(n: int, same_id: bool) -> dict[str, object]:
    parts: list[object] = [user("list the files")]
    for i in range(n):
        cid = "same" if same_id else f"c{i}"
        parts += [calls((cid, "read_file", {"path": f"f{i}.txt"})), result(cid, "short")]
    return traj("t", *parts)


def _largest_operator_rows(record: dict[str, object]) -> int:
    """The most rows any operator of stage ``events`` made on ``record`` (DuckDB's profile):
    a count, not a time, so a loaded machine cannot decide the test."""
    con = run.connect(RunConfig(inputs=(), out=Path("unused")))
    run.register_inputs(con, run.records_table([RawRecord("mem.jsonl", 1, json.dumps(record))]), load_policy(),
                        LABELS_SCHEMA.empty_table())
    materialize(con, "trajectories")
    with tempfile.TemporaryDirectory() as tmp:
        profile = Path(tmp) / "events.json"
        con.execute("pragma enable_profiling = 'json'")
        con.execute(f"pragma profiling_output = '{profile}'")  # a path of ours, not data
        materialize(con, "events")
        con.execute("pragma disable_profiling")
        found: list[int] = []

        def walk(node: dict[str, Any]) -> None:
            found.append(int(node.get("intermediate_rows") or 0))
            for child in node.get("children", []):
                walk(child)
        for node in json.loads(profile.read_text()).get("operator", []):
            walk(node)
    return max(found)


def test_one_id_on_every_call_costs_what_distinct_ids_cost() -> None:
    """1,000 calls of one id, each answered: the pairwise join made calls x results of the
    id (500,500 rows in one operator; 2.4 against 0.3 CPU s at 10,000 calls), the ordered
    pass makes no more rows than it has steps, as with distinct ids."""
    same = _largest_operator_rows(_calls(1_000, True))
    distinct = _largest_operator_rows(_calls(1_000, False))
    assert same == distinct <= 2_001, (same, distinct)
