"""Claude Code's ``--output-format stream-json`` output (``claude -p ... --verbose``, the
Claude Agent SDK's message stream) -> one trajectory per session.

What a headless run (CI, a nightly agent job) prints, one JSON object a line:
``{"type": "system", "subtype": "init", "session_id", "cwd", "model", "tools", ...}``,
then ``{"type": "assistant" | "user", "message": <Anthropic message>, "session_id",
"parent_tool_use_id"}`` lines, and a last ``{"type": "result", "subtype", "is_error",
"num_turns", ...}``; ``stream_event`` (partial messages) and other line types are not
steps. It is the session file's content under snake_case keys, so the messages are read
by the session reader's own rules (:class:`pipeline.ingest.adapters.claude_code_messages.Messages`:
assistant lines sharing ``message.id`` are one message, ``tool_result`` blocks are tool
messages with its error rules; the structured result is ``tool_use_result`` here).

- A file is a stream when its first line naming a session says ``session_id`` (a session
  file says ``sessionId``): :func:`is_stream`.
- Runs appended to one log (``claude -p ... >> runs.jsonl``) are one trajectory each:
  trajectory_id = ``session_id`` (a resumed run that keeps its id continues its
  trajectory, as a session file does).
- A subagent's messages (``parent_tool_use_id`` = the parent's Task call) are their own
  trajectory ``<session_id>:task-<call id>``, with ``parent_trajectory_id`` and
  ``parent_call_id``, like a session's subagent file: interleaved with the parent's
  lines, they would pair with none of its calls.
- A line without a ``session_id`` belongs to the session of the line before it (the
  file's stem before any).
- source_line = the trajectory's first line; suite = ``--suite``, else the last folder
  name of the init line's ``cwd`` (the project, as a session file's folder names it),
  else ``claude-code``.
- ``meta``: ``format`` (``claude-code``), ``output_format`` (``stream-json``), ``cwd``,
  ``models``, the result line's ``result_subtype`` / ``is_error`` / ``num_turns``
  (``error_max_turns``: the run was cut off, its last calls may have no result).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from pipeline.ingest.adapters._common import AdapterError, Ctx
from pipeline.ingest.adapters._session import SizeGuard, object_lines, told_by_head
from pipeline.ingest.adapters.claude_code import FORMAT, convert_session
from pipeline.ingest.adapters.claude_code_messages import Messages

_STREAM_TYPES = {"system", "assistant", "user", "result", "stream_event", "rate_limit_event"}
_SUITE = re.compile(r"[^A-Za-z0-9._-]+")


def is_stream(obj: Any) -> bool | None:
    """True / False when this line tells a stream from a session file (it names its
    session: ``session_id`` / ``sessionId``), None when it does not."""
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("sessionId"), str):
        return False
    if isinstance(obj.get("session_id"), str) and obj.get("type") in _STREAM_TYPES:
        return True
    return None


class _Run:
    """One trajectory of the stream: its first line and the session reader's builder."""

    def __init__(self, first_line: int, guard: SizeGuard) -> None:
        self.first_line = first_line
        self.builder = Messages(guard)


def folder_suite(cwd: Any) -> str | None:
    """The suite a working folder names: its last component, sanitised (at most 100
    characters), or None when ``cwd`` is not a string or names nothing."""
    if not isinstance(cwd, str):
        return None
    name = _SUITE.sub("-", cwd.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1]).strip("-.")
    return name[:100] or None


def convert(items: Iterable[tuple[int, Any]], ctx: Ctx) -> Iterator[tuple[int, dict[str, Any]]]:
    """A ``claude-code`` file: a stream (:func:`convert_stream`) or a session file
    (:func:`pipeline.ingest.adapters.claude_code.convert_session`), told by the first line
    that names its session (:func:`is_stream`)."""
    stream, lines = told_by_head(items, is_stream)
    yield from convert_stream(lines, ctx) if stream else convert_session(lines, ctx)


def convert_stream(items: Iterable[tuple[int, Any]], ctx: Ctx) -> Iterator[tuple[int, dict[str, Any]]]:
    """Convert one stream-json file (the reader's ``session`` layout, module docstring)."""
    max_bytes = int(ctx.state.get("max_record_bytes", 32 * 2**20))
    guard = SizeGuard(max_bytes)  # the file's kept text, whichever run holds it
    runs: dict[tuple[str, str | None], _Run] = {}
    info: dict[str, dict[str, Any]] = {}
    dropped: list[int] = []
    current: str | None = None
    for number, obj in object_lines(items, dropped):
        sid = obj.get("session_id")
        if not isinstance(sid, str) or not sid:
            # a line without its session (a wrapper that drops the key): the session of the
            # line before it, else one named by the file; never a message dropped
            sid = current or ctx.stem
        current = sid
        meta = info.setdefault(sid, {})
        kind = obj.get("type")
        if kind == "system" and obj.get("subtype") == "init" and isinstance(obj.get("cwd"), str):
            meta.setdefault("cwd", obj["cwd"])
        elif kind == "result":
            meta.update({k: obj[k] for k in ("subtype", "is_error", "num_turns") if k in obj})
        if kind not in ("user", "assistant") or not isinstance(obj.get("message"), dict):
            continue
        parent = obj.get("parent_tool_use_id")
        key = (sid, parent if isinstance(parent, str) and parent else None)
        run = runs.get(key)
        if run is None:
            run = runs[key] = _Run(number, guard)
        if "toolUseResult" not in obj and "tool_use_result" in obj:
            obj = {**obj, "toolUseResult": obj["tool_use_result"]}
        run.builder.line(obj)
    if not runs:
        if not info:
            raise AdapterError("no user/assistant line with a session_id: not a Claude Code stream")
        # a run that printed no message (`--output-format json`, a run that failed at once)
        for sid, meta in info.items():
            yield 1, _record(sid, None, _Run(1, guard), meta, ctx, dropped)
        return
    for (sid, parent), run in sorted(runs.items(), key=lambda kv: kv[1].first_line):
        run.builder.texts.join()
        yield run.first_line, _record(sid, parent, run, info.get(sid, {}), ctx, dropped)


def _record(sid: str, parent: str | None, run: _Run, info: dict[str, Any], ctx: Ctx,
            dropped: list[int]) -> dict[str, Any]:
    meta: dict[str, Any] = {"format": FORMAT, "output_format": "stream-json", "session_id": sid,
                            "message_lines": run.builder.message_lines}
    if "cwd" in info:
        meta["cwd"] = info["cwd"]
    for key in ("subtype", "is_error", "num_turns"):
        if key in info:
            meta["result_subtype" if key == "subtype" else key] = info[key]
    if run.builder.models:
        meta["models"] = sorted(run.builder.models)
    if run.builder.repeated_lines:
        meta["repeated_lines"] = run.builder.repeated_lines
    if dropped:
        meta["dropped_lines"] = dropped
    record: dict[str, Any] = {"trajectory_id": sid if parent is None else f"{sid}:task-{parent}"}
    if parent is not None:
        record["parent_trajectory_id"] = sid
        record["parent_call_id"] = parent
    suite = ctx.state.get("suite") or folder_suite(info.get("cwd")) or FORMAT
    record.update({"suite": suite, "meta": meta, "messages": run.builder.messages})
    return record
