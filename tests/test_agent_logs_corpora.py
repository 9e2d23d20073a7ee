"""The real Claude Code and Codex files of ../shared/corpora, scored with --format auto.

Expected counts are computed HERE from the raw lines, without the adapters: tool_use
blocks of assistant lines and ``is_error`` tool_result blocks (Claude Code);
function_call / custom_tool_call items and non-zero exits (``exec_command_end``,
``metadata.exit_code``, ``Process exited with code N``) (Codex). Skips cleanly when
../shared is absent.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pytest

from pipeline.config import RunConfig
from pipeline.policy import load_policy
from pipeline.ingest.discovery import detect_format, discover_inputs
from pipeline.run import score
from tests.conftest import SHARED

CORPORA = SHARED / "corpora"
FOLDERS = {"claude-code": "claude-code", "codex": "codex"}

pytestmark = pytest.mark.skipif(not all((CORPORA / f).is_dir() for f in FOLDERS), reason="../shared corpora absent")


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def raw_claude(path: Path) -> tuple[set[str], set[str]]:
    """(tool_use ids, tool_use ids whose result has is_error) from the raw lines."""
    calls: set[str] = set()
    errors: set[str] = set()
    for obj in _lines(path):
        content = (obj.get("message") or {}).get("content") if isinstance(obj.get("message"), dict) else None
        for block in content if isinstance(content, list) else []:
            if obj.get("type") == "assistant" and block.get("type") == "tool_use":
                calls.add(block["id"])
            if obj.get("type") == "user" and block.get("type") == "tool_result" and block.get("is_error"):
                errors.add(block["tool_use_id"])
    return calls, errors


def raw_codex(path: Path) -> tuple[set[str], set[str]]:
    """(call ids, call ids with a non-zero exit) from the raw lines."""
    calls: set[str] = set()
    failed: set[str] = set()
    for obj in _lines(path):
        p = obj.get("payload") or {}
        if obj.get("type") == "response_item" and p.get("type") in ("function_call", "custom_tool_call"):
            calls.add(p["call_id"])
        if obj.get("type") == "event_msg" and p.get("type") == "exec_command_end" and p.get("exit_code"):
            failed.add(p["call_id"])
        if obj.get("type") == "response_item" and p.get("type", "").endswith("_call_output"):
            out = p.get("output") if isinstance(p.get("output"), str) else ""
            m = re.search(r"Process exited with code (-?\d+)", out)
            if m and m.group(1) != "0":
                failed.add(p["call_id"])
            try:
                code = json.loads(out).get("metadata", {}).get("exit_code")
            except (ValueError, AttributeError):
                code = None
            if code:
                failed.add(p["call_id"])
    return calls, failed


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> duckdb.DuckDBPyConnection:
    out = tmp_path_factory.mktemp("agent_logs") / "run"
    score(RunConfig(inputs=tuple(CORPORA / f for f in FOLDERS), out=out, fmt="auto", workers=1))
    con = duckdb.connect()
    for table in ("steps", "verdicts", "attrition"):
        con.execute(f"create view {table} as select * from read_parquet('{out}/{table}/**/*.parquet', "
                    "hive_partitioning = false)")
    return con


def _files(folder: str) -> list[Path]:
    return [Path(p) for p in discover_inputs([CORPORA / folder])]


def test_auto_detects_every_file() -> None:
    for folder, fmt in FOLDERS.items():
        assert {p.name: detect_format(p)[0] for p in _files(folder)} == {p.name: fmt for p in _files(folder)}


def test_no_record_rejected(run: duckdb.DuckDBPyConnection) -> None:
    rejects = run.execute("select trajectory_id, reason, detail from attrition").fetchall()
    if "inference" not in load_policy().data:
        # until role inference (#11) lands, an MCP tool (mcp__*) is an unknown tool
        rejects = [r for r in rejects if not (r[1] == "unknown_tool" and "tool mcp__" in r[2])]
    assert rejects == []
    n_files = sum(len(_files(f)) for f in FOLDERS)
    assert run.execute("select count(*) from verdicts").fetchone()[0] + \
        run.execute("select count(*) from attrition").fetchone()[0] == n_files


@pytest.mark.parametrize("folder", sorted(FOLDERS))
def test_every_raw_call_is_a_tool_call_step_and_every_error_is_not_executed(
        run: duckdb.DuckDBPyConnection, folder: str) -> None:
    raw = raw_claude if folder == "claude-code" else raw_codex
    all_calls: set[str] = set()
    all_errors: set[str] = set()
    for path in _files(folder):
        calls, errors = raw(path)
        all_calls |= calls
        all_errors |= errors
        assert errors <= calls, path
    steps = run.execute(
        "select s.call_id, s.exec_status from steps s where s.kind = 'tool_call' and s.call_id in "
        "(select unnest(?::varchar[]))", [sorted(all_calls)]).fetchall()
    status = dict(steps)
    assert len(steps) == len(status) == len(all_calls)  # each raw call is exactly one tool_call step
    assert set(status) == all_calls
    assert all_errors and all(status[c] != "executed" for c in all_errors)
    # and nothing else is made non-executed: a result without an error flag ran
    others = {c for c in all_calls - all_errors if status[c] != "executed"}
    assert others == set()


def test_rejections_are_blocked_and_harness_errors_failed(run: duckdb.DuckDBPyConnection) -> None:
    rows = run.execute("select error_type, exec_status, count(*) from steps where kind = 'tool_call' "
                       "and exec_status <> 'executed' group by all order by all").fetchall()
    got = {(etype, status) for etype, status, _ in rows}
    assert ("approval", "blocked") in got
    assert ("not_found", "failed") in got  # <tool_use_error>File does not exist.</tool_use_error> (Read)
    assert ("exit_code", "unknown") in got


def test_subagents_join_their_parents(run: duckdb.DuckDBPyConnection) -> None:
    rows = run.execute("""
        select c.trajectory_id, c.parent_call_id, p.trajectory_id, pc.tool_name
        from verdicts c
        left join verdicts p on p.trajectory_id = c.parent_trajectory_id
        left join steps pc on pc.trajectory_id = p.trajectory_id and pc.call_id = c.parent_call_id
            and pc.kind = 'tool_call'
        where c.parent_trajectory_id is not null order by 1""").fetchall()
    subagent_files = [p for f in ("claude-code",) for p in _files(f) if p.name.startswith("agent-")]
    assert len(rows) == len(subagent_files) == 3
    assert all(parent is not None for _, _, parent, _ in rows)  # every parent file is in the corpus
    linked = [r for r in rows if r[1] is not None]
    # the 2.1.7 subagent is linked to the Task call that spawned it; the two 2.0.64
    # "Warmup" sidechains were started by Claude Code itself, with no Task call
    assert [(r[0].split(":")[1], r[3]) for r in linked] == [("agent-a485154", "Task")]
    counts = Counter(r[0].split(":")[0] for r in rows)
    assert counts == {"4c2ddfdc-b619-4525-8d03-1950fb1b0257": 2, "e9fb405b-169f-40eb-9396-7e75076f045d": 1}


def test_non_message_lines_are_not_steps(run: duckdb.DuckDBPyConnection) -> None:
    path = CORPORA / "claude-code" / "spotter" / "subagent.jsonl"
    lines = _lines(path)
    sid = next(o["sessionId"] for o in lines if o.get("type") == "user")
    assistant_ids = {o["message"]["id"] for o in lines if o.get("type") == "assistant"}
    n_assistant_lines = sum(o.get("type") == "assistant" for o in lines)
    assert n_assistant_lines > len(assistant_ids)  # split responses exist in this file
    blocks = [b for o in lines if o.get("type") == "user" and isinstance(o["message"].get("content"), list)
              for b in o["message"]["content"]]
    user_texts = sum(1 for o in lines if o.get("type") == "user" and (
        isinstance(o["message"].get("content"), str)
        or any(b.get("type") == "text" for b in o["message"]["content"])))
    kinds = dict(run.execute("select kind, count(*) from steps where trajectory_id = ? group by all",
                             [sid]).fetchall())
    calls, _ = raw_claude(path)
    assert kinds["tool_call"] == len(calls)
    assert kinds["tool_result"] == sum(b.get("type") == "tool_result" for b in blocks)
    assert kinds["user"] == user_texts
    assert "system" not in kinds  # system / progress / snapshot lines are not steps
    assert 0 < kinds["assistant_text"] <= len(assistant_ids)  # one text per merged response at most
