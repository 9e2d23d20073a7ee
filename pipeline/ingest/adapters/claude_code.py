"""Claude Code session files (``~/.claude/projects/<project>/<session>.jsonl``) -> one trajectory.

A session FILE is one trajectory (source_line 1); lines are taken in file order (every
branch of the ``parentUuid`` tree: a rewound branch's tool calls did run).
- ``user`` / ``assistant`` lines are messages; ``summary``, ``system``, ``progress``,
  ``file-history-snapshot``, ``queue-operation`` and any other line type are not steps.
  A message line whose ``uuid`` an earlier line of the file has is that entry written
  again (Claude Code repeats entries: the same line four times, the history replayed
  after each ``--input-format stream-json`` turn) and is read once (``meta.repeated_lines``).
- assistant lines sharing ``message.id`` (one API response split one block per line)
  are ONE assistant message: text blocks joined, ``tool_use`` blocks its tool calls
  (``input`` as arguments), thinking dropped.
- ``tool_result`` blocks of user lines are tool messages paired by ``tool_use_id``; the
  other blocks of the line (text) are a user message after them. Errors (``is_error``
  with the result text and the line's structured ``toolUseResult``), first that applies:
  user rejection ("The user doesn't want to proceed ...", "User rejected tool use", a
  permission prompt that was not granted: "Claude requested permissions ...") ->
  ``{"type": "approval"}`` (blocked); "Sibling tool call errored" -> ``{"type":
  "cancelled"}`` (the call never ran: failed); ``<tool_use_error>X`` -> the error text
  ``tool_use_error: X`` (the policy's rules: guard wording -> blocked, else the
  ``tool_use_error`` rule of claude_code.toml -> failed: the harness refused it); ``Exit code N`` ->
  ``{"type": "exit_code", "message": "exit code N: ..."}`` (the policy's text rules:
  the program ran, so unknown); any other ``is_error`` text -> that text as the error
  (text rules; never empty, so never `executed`). A Bash result whose
  ``toolUseResult.interrupted`` is true -> ``{"type": "unknown"}``. These texts count only
  where they OPEN the result (Claude Code writes them so); a program's output that
  merely contains them is not a refusal. Server tools (``server_tool_use`` with a
  ``*_tool_result`` block in the same response) are calls with that result.
- trajectory_id = ``sessionId`` (of the last message line: a file's own lines come last);
  a subagent file (every line ``isSidechain`` with an ``agentId``; ``<session>/subagents/
  agent-*.jsonl`` or ``agent-*.jsonl`` beside the parent) is ``<sessionId>:agent-<agentId>``
  with ``parent_trajectory_id`` = sessionId and ``parent_call_id`` = the parent's Task
  call whose result names the agent (read from the parent file when it is there; an
  orphan subagent keeps ``parent_call_id`` null and still scores).
- suite = the project folder (the session's folder; for ``<session>/subagents/`` files
  the folder above ``<session>``), or the ``--suite`` flag (``ctx.state["suite"]``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pipeline.ingest.adapters._common import AdapterError, Ctx
from pipeline.ingest.adapters._io import iter_lines
from pipeline.ingest.adapters._session import SizeGuard, feed_lines
# Messages and KNOWN_TYPES were defined here: still importable from here
from pipeline.ingest.adapters.claude_code_messages import KNOWN_TYPES, Messages

FORMAT = "claude-code"
_SAFE_NAME = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,200}\Z")
__all__ = ["FORMAT", "KNOWN_TYPES", "Messages", "convert_session", "find_parent_call"]


def _project_dir(path: Any) -> Any:
    parent = path.parent
    return parent.parent.parent if parent.name == "subagents" else parent


def _parent_file(path: Any, session_id: str) -> Path | None:
    """The parent session file of a subagent file, when it is a local file that exists."""
    if not isinstance(path, Path):
        return None
    if path.parent.name == "subagents":
        base = path.parent.parent
        candidates = [base.with_name(base.name + ext) for ext in (".jsonl", ".jsonl.gz")]
    elif _SAFE_NAME.match(session_id):  # a name from the data: never a path
        candidates = [path.with_name(session_id + ext) for ext in (".jsonl", ".jsonl.gz")]
    else:
        return None
    return next((c for c in candidates if c.is_file() and c != path), None)


def find_parent_call(parent: Path, agent_id: str, max_record_bytes: int) -> tuple[str | None, Any]:
    """(Task call id, subagent_type) in the parent file whose result names ``agent_id``."""
    needle = agent_id.encode()
    inputs: dict[str, Any] = {}
    found: str | None = None
    for _, raw in iter_lines(parent, max_record_bytes):
        if isinstance(raw, bytes) and (b'"Task"' in raw or b'"Agent"' in raw) and b'"tool_use"' in raw:
            try:
                obj = json.loads(raw)
                for block in obj["message"]["content"]:
                    if block.get("type") == "tool_use" and block.get("name") in ("Task", "Agent"):
                        inputs[block.get("id")] = (block.get("input") or {}).get("subagent_type")
            except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
                pass  # a line of the parent that cannot be read names no call
        if isinstance(raw, bytes) and needle in raw and b"agentId" in raw:
            found = _call_naming(raw, agent_id)
            if found is not None:
                break  # the Task call precedes its progress and result lines
    return found, inputs.get(found) if found else None


def _call_naming(raw: bytes, agent_id: str) -> str | None:
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError):  # a parent's line too deep for Python: no call named
        return None
    if not isinstance(obj, dict):
        return None
    data = obj.get("data")
    if obj.get("type") == "progress" and isinstance(data, dict) and data.get("agentId") == agent_id:
        return obj.get("parentToolUseID") if isinstance(obj.get("parentToolUseID"), str) else None
    result = obj.get("toolUseResult")
    message = obj.get("message")
    if isinstance(result, dict) and result.get("agentId") == agent_id and isinstance(message, dict):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                return block.get("tool_use_id")
    return None


def convert_session(items: Iterable[tuple[int, Any]], ctx: Ctx) -> Iterator[tuple[int, dict[str, Any]]]:
    """Convert one Claude Code session file (the reader's ``session`` layout)."""
    max_bytes = int(ctx.state.get("max_record_bytes", 32 * 2**20))
    builder = Messages(SizeGuard(max_bytes))
    dropped = feed_lines(items, builder.line)
    builder.texts.join()
    if not builder.session_ids:
        if not builder.known_lines:
            raise AdapterError("no user/assistant line with a sessionId: not a Claude Code session")
        # summary-only files (Claude Code writes them): named by the file, empty_trajectory
        suite = ctx.state.get("suite") or _project_dir(ctx.path).name or FORMAT
        yield 1, {"trajectory_id": ctx.stem, "suite": suite, "messages": [],
                  "meta": {"format": FORMAT, "message_lines": 0, "dropped_lines": dropped}}
        return
    session_id = builder.session_ids[-1]
    meta: dict[str, Any] = {"format": FORMAT, "session_id": session_id, **builder.meta,
                            "message_lines": builder.message_lines}
    if len(builder.session_ids) > 1:
        meta["session_ids"] = list(dict.fromkeys(builder.session_ids))
    if builder.models:
        meta["models"] = sorted(builder.models)
    if dropped:
        meta["dropped_lines"] = dropped
    if builder.repeated_lines:
        meta["repeated_lines"] = builder.repeated_lines
    record: dict[str, Any] = {"trajectory_id": session_id}
    subagent = builder.sidechain_lines == builder.message_lines and len(builder.agent_ids) == 1
    if subagent:
        agent_id = next(iter(builder.agent_ids))
        record["trajectory_id"] = f"{session_id}:agent-{agent_id}"
        record["parent_trajectory_id"] = session_id
        meta["agent_id"] = agent_id
        parent = _parent_file(ctx.path, session_id)
        call_id, subagent_type = find_parent_call(parent, agent_id, max_bytes) if parent else (None, None)
        record["parent_call_id"] = call_id
        if isinstance(subagent_type, str):
            meta["subagent_type"] = subagent_type
        meta["parent_file_found"] = parent is not None
    suite = ctx.state.get("suite") or _project_dir(ctx.path).name or FORMAT
    record.update({"suite": suite, "meta": meta, "messages": builder.messages})
    yield 1, record
