"""Adapters on small hand-written fixtures (tests/fixtures/adapters)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.ingest.adapters.gold import gold_rows
from pipeline.ingest.adapters.r_judge import parse_action
from pipeline.ingest.discovery import detect_format
from pipeline.ingest.reader import iter_records
from tests.conftest import bounded_child

FIX = Path(__file__).resolve().parent / "fixtures" / "adapters"


def load(path: Path, fmt: str = "auto") -> list[tuple[int, dict[str, Any] | None, Any]]:
    """(source_line, parsed text or None, record) for every record of a file."""
    out = []
    for rec in iter_records([path], fmt):
        out.append((rec.source_line, json.loads(rec.text) if rec.text is not None else None, rec))
    return out


def calls_of(traj: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for m in traj["messages"] for c in m.get("tool_calls") or []]


def results_of(traj: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in traj["messages"] if m["role"] == "tool"]


def assert_linked(traj: dict[str, Any]) -> None:
    """Every call id unique, every result answers an earlier call."""
    seen: list[str] = []
    for m in traj["messages"]:
        for c in m.get("tool_calls") or []:
            assert c["id"] not in seen
            seen.append(c["id"])
        if m["role"] == "tool":
            assert m["tool_call_id"] in seen


def test_canonical_passthrough_is_byte_identical() -> None:
    lines = (FIX / "canonical-mini.jsonl").read_text(encoding="utf-8").splitlines()
    recs = list(iter_records([FIX / "canonical-mini.jsonl"]))
    assert [r.text for r in recs] == lines
    assert [r.fmt for r in recs] == ["canonical", "canonical"]


def test_agentdojo_fixture() -> None:
    recs = load(FIX / "agentdojo_mini.jsonl")
    assert [line for line, _, _ in recs] == [2, 4, 5]  # header skipped, blank line counted
    first, second = recs[0][1], recs[1][1]
    assert first["trajectory_id"] == "agentdojo_mini:banking:user_task_0:injection_task_1:1"
    assert first["suite"] == "banking"
    assert first["meta"]["injection_task_id"] == "injection_task_1"
    assert first["meta"]["security"] is True and first["meta"]["run"]["name"] == "mini-model"
    assert [c["id"] for c in calls_of(first)] == ["c1", "c2", "c3", "c4"]
    # results came in a different order than the parallel calls: matched by tool name
    assert [m["tool_call_id"] for m in results_of(first)] == ["c1", "c3", "c2", "c4"]
    assert results_of(first)[2]["error"] == "ValueError: amount must be a number"
    assert calls_of(first)[0]["function"]["arguments"] == {"file_path": "bill.txt"}
    assert_linked(first)
    # a reused id (call_A twice) is made unique and the second result follows it
    assert [c["id"] for c in calls_of(second)] == ["call_A", "call_A#2"]
    assert [m["tool_call_id"] for m in results_of(second)] == ["call_A", "call_A#2"]
    assert second["meta"]["call_ids_repaired"] == 2
    bad = recs[2][2]
    assert bad.text is None and bad.reject_reason == "malformed_record"
    assert "messages" in bad.reject_detail and bad.source_line == 5


def test_anthropic_fixture() -> None:
    recs = load(FIX / "anthropic-mini.jsonl")
    traj = recs[0][1]
    assert detect_format(FIX / "anthropic-mini.jsonl")[0] == "anthropic"
    assert traj["trajectory_id"] == "an-1" and traj["suite"] == "files"
    roles = [m["role"] for m in traj["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "tool", "user", "assistant"]
    assert traj["messages"][2]["content"] == "Reading it."  # thinking dropped
    assert traj["messages"][3]["error"] == "permission denied"
    assert traj["messages"][5]["error"] is None
    assert calls_of(traj)[1]["function"]["arguments"] == {"path": "/home/u/.ssh/id_rsa"}
    assert_linked(traj)
    assert recs[1][1]["trajectory_id"] == "anthropic-mini:2"  # no id in the source


def test_tau_bench_fixture() -> None:
    path = FIX / "tau-bench-mini-retail.json"
    assert detect_format(path)[0] == "tau-bench"
    recs = load(path)
    assert [line for line, _, _ in recs] == [1, 2]
    traj = recs[0][1]
    assert traj["trajectory_id"] == "tau-bench-mini-retail:4:0"
    assert recs[1][1]["trajectory_id"] == "tau-bench-mini-retail:4:1"
    assert traj["suite"] == "tau-bench-retail"
    assert traj["meta"]["reward"] == 1.0 and traj["meta"]["task_id"] == 4
    assert results_of(traj)[0]["content"] == "Error: invalid reason"
    assert [c["id"] for c in calls_of(traj)] == ["call_1", "call_1#2"]
    assert_linked(traj)


def test_r_judge_fixture() -> None:
    path = FIX / "r-judge-mini.json"
    assert detect_format(path)[0] == "r-judge"
    (l1, a, _), (l2, b, _) = load(path)
    assert (l1, l2) == (1, 2)
    assert a["trajectory_id"] == "rjudge:1" and a["suite"] == "r-judge"
    assert a["meta"]["gold"] == "unsafe" and a["meta"]["label"] == 1
    names = [c["function"]["name"] for c in calls_of(a)]
    assert names == ["GmailReadEmail", "AugustSmartLockGrantGuestAccess"]
    assert json.loads(calls_of(a)[0]["function"]["arguments"]) == {"email_id": "e1"}
    assert calls_of(a)[1]["function"]["arguments"] == '{"guest_ids": ["amy"], "permanent": true}'
    assert a["messages"][-1] == {"role": "assistant", "content": "Done.\nFinal Answer: Access granted."}
    assert_linked(a)
    assert b["suite"] == "os" and b["meta"]["gold"] == "safe"
    assert b["messages"][1] == {"role": "user", "content": "Terminal ready."}
    names = [c["function"]["name"] for c in calls_of(b)]
    assert names == ["TerminalExecute", "TerminalExecute", "OpenBrowser", "agent_action", "bash", "Send"]
    args = [c["function"]["arguments"] for c in calls_of(b)]
    assert json.loads(args[2]) == {"url": "10.0.0.1"}
    assert json.loads(args[3]) == {"action": "click <Sign Up>"}
    assert json.loads(args[4]) == {"command": "ssh alex@10.0.0.1"}
    assert args[5] == '{"to": "a", "body": "unterminated'  # kept as the raw string
    assert [m["tool_call_id"] for m in results_of(b)] == ["c1", "c3", "c4", "c5"]


@pytest.mark.parametrize("action,expected", [
    ("Final Answer: ok", None),
    ("just talking", None),
    ("Tool{'a': 1}", [("Tool", '{"a": 1}')]),
    ("Action: Tool\nAction Input: {\"a\": 1}", [("Tool", '{"a": 1}')]),
    ('"command": {"name": "read_file", "args": {"filename": "k.json"}}}',
     [("read_file", '{"filename": "k.json"}')]),
    ("Tool(x=1, y='z')", [("Tool", '{"x": 1, "y": "z"}')]),
    ("Tool(x < 1)", [("Tool", "x < 1")]),
    ("Send{'to': 0xAB12, 'v': 1}", [("Send", '{"to": "0xAB12", "v": 1}')]),
    ("Mail{'body': 'a\nb'}", [("Mail", '{"body": "a\\nb"}')]),
    ('A: {"x": 1}\nB: {"y": "raw\ncontrol"}', [("A", '{"x": 1}'), ("B", '{"y": "raw\\ncontrol"}')]),
])
def test_r_judge_action_forms(action: str, expected: Any) -> None:
    assert parse_action(action) == expected


def test_openhands_fixture() -> None:
    path = FIX / "openhands" / "model_x" / "traj_demo-task.json"
    assert detect_format(path)[0] == "openhands"
    [(line, traj, _)] = load(path)
    assert line == 1
    assert traj["trajectory_id"] == "model_x:traj_demo-task" and traj["suite"] == "openagentsafety"
    assert traj["meta"]["task"] == "demo-task" and traj["meta"]["model"] == "demo-model"
    calls = calls_of(traj)
    assert [(c["id"], c["function"]["name"]) for c in calls] == [
        ("3", "run"), ("5", "run"), ("7", "run"), ("9", "read"), ("11", "edit"), ("15", "chat"), ("17", "browse")]
    assert calls[0]["function"]["arguments"] == {"command": "cat /instruction/task.md"}
    assert calls[4]["function"]["arguments"] == {"path": "/workspace/note.md", "command": "create", "file_text": "done"}
    assert calls[5]["function"]["arguments"] == {"npc_name": "Bob", "content": "Logs deleted?"}
    assert traj["messages"][1]["content"] == "Let me read the task."  # from the model response
    errors = {m["tool_call_id"]: m["error"] for m in results_of(traj)}
    assert errors["3"] is None
    assert errors["5"]["type"] == "exit_code" and errors["5"]["message"].startswith("exit code 1: rm:")
    assert errors["7"]["type"] == "timeout"
    assert errors["9"].startswith("ERROR:")
    assert errors["15"] == "Bob took too long to respond."
    assert errors["999"] is None  # unpaired observation kept (an orphan for the SQL stage)
    texts = [m["content"] for m in traj["messages"] if m["role"] == "assistant" and not m.get("tool_calls")]
    assert texts == ["I should ask Bob.", "All done, logs could not be deleted."]
    assert traj["messages"][0] == {"role": "user", "content": "Complete the task in /instruction/task.md"}
    assert all("recall" not in json.dumps(m) for m in traj["messages"])


def test_openhands_label_files_are_skipped() -> None:
    folder = FIX / "openhands" / "model_x"
    assert detect_format(folder / "eval_demo-task.json")[0] == "skip"
    assert detect_format(folder / "model_x_safety_eval_results.json")[0] == "skip"
    assert list(iter_records([folder / "eval_demo-task.json"])) == []
    assert [Path(r.source_file).name for r in iter_records([folder])] == ["traj_demo-task.json"]


def test_swe_agent_fixture() -> None:
    path = FIX / "swe-agent" / "demo.traj"
    assert detect_format(path)[0] == "swe-agent"
    [(line, traj, _)] = load(path)
    assert traj["trajectory_id"] == "swe-agent:demo" and traj["suite"] == "swe-agent"
    assert [m["role"] for m in traj["messages"]] == [
        "system", "user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert traj["messages"][1]["content"] == "Fix the bug in file.py"  # demo message skipped
    assert [c["function"]["arguments"]["command"] for c in calls_of(traj)] == ["ls -la", "python file.py", "submit"]
    assert results_of(traj)[1]["content"] == "Traceback: boom"


@pytest.mark.parametrize("layout", ["{run}/{iid}.traj", "{run}/{iid}/{iid}.traj"])
def test_swe_agent_runs_of_two_experiments_keep_both(tmp_path: Path, layout: str) -> None:
    # every experiment of a benchmark runs the same instances, and SWE-agent names each
    # file after its instance (trajectories/<user>/<experiment>/<iid>.traj; 1.0 on:
    # <output_dir>/<iid>/<iid>.traj): with the stem as id, a second experiment scored
    # in the same run was all duplicate_trajectory_id
    from pipeline.cli import main

    text = (FIX / "swe-agent" / "demo.traj").read_text()
    for run in ("gpt-4o__default", "claude__default"):
        path = tmp_path / "trajectories" / layout.format(run=run, iid="django__django-11099")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert main(["score", str(tmp_path / "trajectories"), "--out", str(tmp_path / "run"), "--workers", "1"]) == 0
    import duckdb

    con = duckdb.connect()
    ids = con.execute("select trajectory_id from read_parquet($p) order by 1",
                      {"p": f"{tmp_path}/run/verdicts/**/*.parquet"}).fetchall()
    assert ids == [("claude__default:django__django-11099",), ("gpt-4o__default:django__django-11099",)]


def test_gold_rows_on_fixtures() -> None:
    dojo = list(gold_rows(FIX / "agentdojo_mini.jsonl", "auto"))
    assert [(r["gold"], r["slice"], r["suite"]) for r in dojo] == [
        ("unsafe", "injected", "banking"), ("safe", "benign", "slack")]
    ids = [json.loads(r.text)["trajectory_id"] for r in iter_records([FIX / "agentdojo_mini.jsonl"]) if r.text]
    assert [r["trajectory_id"] for r in dojo] == ids
    [oh] = gold_rows(FIX / "openhands", "auto")
    assert oh["trajectory_id"] == "model_x:traj_demo-task"
    assert (oh["gold"], oh["gold_source"], oh["llm_label"], oh["gold_rule"]) == ("unsafe", "llm", 2, "unsafe")
    rj = list(gold_rows(FIX / "r-judge-mini.json", "r-judge"))
    assert [(r["trajectory_id"], r["gold"]) for r in rj] == [("rjudge:1", "unsafe"), ("rjudge:2", "safe")]
    assert list(gold_rows(FIX / "tau-bench-mini-retail.json", "auto")) == []


def test_odd_kinds_and_tool_call_lists_give_clear_rejects(tmp_path: Path) -> None:
    """An OpenHands event whose ``action`` / ``observation`` is a list or an object (no set
    holds one: a TypeError before) is just not one of the known kinds; an AgentDojo or
    Inspect message whose ``tool_calls`` is no list is rejected saying so."""
    events = json.loads((FIX / "openhands" / "model_x" / "traj_demo-task.json").read_text())
    events += [{"id": 900, "source": "user", "action": ["x"], "args": {}},
               {"id": 901, "source": "environment", "observation": {"k": 1}, "content": "c"}]
    folder = tmp_path / "model_x"
    folder.mkdir()
    (folder / "traj_odd.json").write_text(json.dumps(events))
    [rec] = list(iter_records([folder / "traj_odd.json"], "openhands"))
    assert rec.reject_reason is None, rec.reject_detail
    dojo = tmp_path / "d.jsonl"
    dojo.write_text('{"metadata": {"suite_name": "s"}}\n'
                    + json.dumps({"messages": [{"role": "user", "content": "hi"},
                                               {"role": "assistant", "content": "x", "tool_calls": 5}]}) + "\n")
    [bad] = [r for r in iter_records([dojo], "agentdojo")]
    assert bad.reject_detail is not None and "messages[1].tool_calls is int, expected an array" in bad.reject_detail


def test_inspect_attachment_references_are_expanded_within_the_record_limit(tmp_path: Path) -> None:
    """Inspect stores repeated texts once in ``attachments``; a small sample repeating one
    reference 600 times expanded to 600 copies of its attachment before the converted
    record's size was checked (a 1 MB log took a run to 1.7 GB; a few thousand references
    run out of memory). The expansion now stops at ``max_record_bytes``: the sample is
    ``record_too_large`` without the big text being built, and a log within the limit
    still resolves every reference."""
    import tracemalloc

    msgs = [{"role": "user", "content": "attachment://a"}] * 600
    bomb = {"id": 1, "epoch": 1, "messages": msgs, "attachments": {"a": "x" * 100_000}}
    fine = {"id": 2, "epoch": 1, "messages": msgs[:3], "attachments": {"a": "y" * 100_000}}
    log = tmp_path / "log.json"
    log.write_text(json.dumps({"version": 2, "status": "success", "eval": {"task": "t"}, "samples": [bomb, fine]}))
    tracemalloc.start()
    try:
        recs = list(iter_records([log], max_record_bytes=1_000_000))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [(r.source_line, r.reject_reason) for r in recs] == [(1, "record_too_large"), (2, None)]
    assert "attachment" in recs[0].reject_detail
    assert [m["content"] for m in json.loads(recs[1].text)["messages"]] == ["y" * 100_000] * 3
    assert peak < 20_000_000  # before: the 60 MB text of the expanded sample


def test_call_id_repair_is_linear_in_the_calls_of_a_record() -> None:
    """AgentDojo and tau-bench ids are repaired by matching each result to the oldest
    unanswered call with its id (or tool name): a scan of every unanswered call per result.
    A 3.7 MB record of 20,000 calls answered after all of them took 38 s (a 32 MB one,
    about an hour). Unanswered calls are now kept in queues by id and by name. In a child
    process with a timeout: well under a second when linear, minutes when quadratic."""
    code = ("from pipeline.ingest.adapters._common import repair_call_ids\n"
            "n = 30_000\n"
            "calls = [{'id': f'c{i}', 'function': {'name': 'f'}} for i in range(n)]\n"
            "calls += [{'id': '', 'function': {'name': 'g'}}, {'id': '', 'function': {'name': 'f'}}]\n"
            "results = [{'role': 'tool', 'tool_call_id': f'c{n - 1 - i}'} for i in range(n)]\n"
            "results += [{'role': 'tool', 'tool_call_id': None}, {'role': 'tool', 'tool_call_id': None}]\n"
            "messages = [{'role': 'assistant', 'tool_calls': calls}] + results\n"
            "hints = [None] * (n + 1) + ['f', None]\n"
            "changed = repair_call_ids(messages, hints)\n"
            "print(changed, messages[1]['tool_call_id'], messages[-2]['tool_call_id'], messages[-1]['tool_call_id'])\n")
    done = bounded_child(code)
    # ids filled in for the two id-less calls and their two results: the first id-less
    # result names tool f (the oldest unanswered f call), the second takes the oldest left
    assert done.stdout.split() == ["4", "c29999", "c30002", "c30001"], done.stderr


def test_r_judge_action_of_many_unclosed_segments_is_parsed_in_linear_time() -> None:
    """An R-Judge action of ``Name: {...`` lines whose JSON never closes: each line is one
    failed lenient decode, and each failure counted the lines from the start of the action
    to name its line number (json's error message): 50,000 lines (1.1 MB) took 58 s. In a
    child process with a timeout: under two seconds when linear."""
    code = ("from pipeline.ingest.adapters.r_judge import parse_action\n"
            "action = '\\n'.join(f'T{i}: {{\"a\": [1, 2' for i in range(60_000))\n"
            "calls = parse_action(action)\n"
            "print(len(calls), calls[0][0], calls[-1][0], calls[-1][1])\n")
    done = bounded_child(code)
    assert done.stdout.split() == ["60000", "T0", "T59999", '{"a":', "[1,", "2"], done.stderr


@pytest.mark.parametrize("action", [
    "Tool{'a': [" + "[1]," * 100_000 + "]}",          # a Python dict literal
    "Tool(" + ", ".join(f"k{i}=[1]" for i in range(40_000)) + ")",  # Python keywords
])
def test_r_judge_python_literals_are_read_in_bounded_memory(action: str) -> None:
    """Python's parser holds several hundred bytes per character of a literal: a 1.2 MB
    action of nested lists took 667 MB (a few MB would end a worker). Texts over
    LITERAL_MAX_CHARS are not read as Python; they stay raw (unparseable_arguments later)."""
    import tracemalloc

    tracemalloc.start()
    try:
        [(name, args)] = parse_action(action)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert name == "Tool"
    assert peak < 30_000_000  # before: 114 and 206 MB
    assert args.startswith(("{'a'", "k0="))  # kept as written
