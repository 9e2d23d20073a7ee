"""Stage `actions`: golden fixtures and retry-collapse properties."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import rows, stage_connection
from tests.golden_runner import check_golden, golden_cases


@pytest.mark.parametrize("path", golden_cases("actions"), ids=lambda p: p.stem)
def test_golden(path: Path) -> None:
    check_golden(path, until="actions")


TOOLS = ("bash", "read_file", "http_post")
ERRORS = (None, None, "ValidationError: bad", "HTTP 429", {"type": "approval", "message": "no"}, "timed out")


@st.composite
def trajectories(draw: st.DrawFn) -> dict:
    """Random trajectories of tool calls, failures, parallel calls and user turns."""
    messages: list[dict] = [{"role": "user", "content": "go"}]
    n = 0
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["calls", "calls", "calls", "user", "text"]))
        if kind == "user":
            messages.append({"role": "user", "content": "change of plan"})
        elif kind == "text":
            messages.append({"role": "assistant", "content": "thinking"})
        else:
            batch = []
            for _ in range(draw(st.integers(1, 3))):
                n += 1
                batch.append((f"c{n}", draw(st.sampled_from(TOOLS)), draw(st.sampled_from(ERRORS))))
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": cid, "function": {"name": tool, "arguments": {"command": "ls", "path": "a", "url": "u"}}}
                for cid, tool, _ in batch]})
            for cid, _, err in batch:
                messages.append({"role": "tool", "tool_call_id": cid, "content": "" if err else "fine", "error": err})
    return {"trajectory_id": "h", "messages": messages}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(trajectories(), min_size=1, max_size=4))
def test_retry_collapse_properties(trajs: list[dict]) -> None:
    for i, t in enumerate(trajs):
        t["trajectory_id"] = f"h{i}"
    con = stage_connection(trajs, until="actions")
    calls = rows(con, "select trajectory_id, call_id, step_idx, n_user_before from steps where kind = 'tool_call'")
    members = rows(con, "select trajectory_id, action_idx, unnest(collapsed_call_ids) as call_id from actions")
    # every tool call belongs to exactly one action
    assert sorted((c["trajectory_id"], c["call_id"]) for c in calls) == sorted(
        (m["trajectory_id"], m["call_id"]) for m in members)
    # no action spans a user message
    spans = rows(con, """
        select a.trajectory_id, a.action_idx, count(distinct s.n_user_before) as n
        from actions a join steps s on s.trajectory_id = a.trajectory_id and s.kind = 'tool_call'
         and list_contains(a.collapsed_call_ids, s.call_id) group by all""")
    assert all(s["n"] == 1 for s in spans)
    # calls issued together in one assistant message are never retries of each other
    same_message = rows(con, """
        select a.trajectory_id, a.action_idx, count(*) as n, count(distinct s.message_idx) as m
        from actions a join steps s on s.trajectory_id = a.trajectory_id and s.kind = 'tool_call'
         and list_contains(a.collapsed_call_ids, s.call_id) group by all""")
    assert all(r["n"] == r["m"] for r in same_message)
    # only the last attempt of an action may be anything but failed
    statuses = rows(con, "select attempt_statuses from actions")
    assert all(all(x == "failed" for x in s["attempt_statuses"][:-1]) for s in statuses)
    # a blocked attempt stands alone
    assert all(len(s["attempt_statuses"]) == 1 for s in statuses if "blocked" in s["attempt_statuses"])
