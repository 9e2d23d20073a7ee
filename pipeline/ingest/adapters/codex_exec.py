"""``codex exec --json`` output (what a headless Codex run prints) -> one trajectory per thread.

The events (``codex-rs/exec/src/exec_events.rs``), one JSON object a line:
``thread.started`` (``thread_id``), ``turn.started``, ``item.started`` / ``item.updated`` /
``item.completed`` (``item``: ``id``, ``type`` and the type's fields), ``turn.completed``
(``usage``), ``turn.failed`` / ``error`` (``message``). A run's user prompt is not printed.

- A file is an exec log when its first line with a ``type`` says ``thread.started``,
  ``turn.*`` or ``item.*`` (a rollout's lines say ``session_meta``, ...): :func:`is_exec`.
- Runs appended to one log are one trajectory each, id = ``thread_id``; a resumed run
  (``codex exec resume``, same thread) continues its trajectory. Events before any
  ``thread.started`` belong to a trajectory named by the file (``<stem>``).
- Items, in the order they start (``item.started``, else ``item.completed``):
  ``agent_message`` -> assistant text; ``command_execution`` -> an ``exec_command`` call
  (``{"cmd": ...}``: the catalog's shell argument; ``bash -lc SCRIPT`` -> SCRIPT, as the
  rollout reader does) answered by its ``aggregated_output``; ``file_change`` -> an
  ``apply_patch`` call with ``paths_written`` (add, update) / ``paths_deleted``;
  ``mcp_tool_call`` -> ``mcp__<server>__<tool>`` (the rollout's MCP names) with its
  ``arguments``, answered by its result's text blocks; ``web_search`` -> a
  ``web_search_call`` with the query; ``collab_tool_call`` -> a call named by its
  ``tool`` (``spawn_agent``, ...). ``reasoning``, ``plan``, ``todo_list`` and ``error``
  items are no steps (errors and failed turns go to ``meta``).
- Results, from the item's last event: ``completed`` with exit code 0 (or none) ->
  executed; ``declined`` -> ``{"type": "approval"}`` (blocked: the user or the sandbox
  policy refused it); ``failed`` or a non-zero ``exit_code`` -> ``{"type": "exit_code",
  "message": "exit code N: ..."}`` (the policy's text rules: the program ran) or, without
  an exit code, the item's error text; an item still ``in_progress`` when the log ends has
  no result (exec_status unknown: the run was cut off).
- Item ids restart in a resumed run: an id that already finished names a new call
  (``<id>~<n>``), never a second result of the first.
- suite = ``--suite``, else ``codex``; ``meta``: ``format`` (``codex``),
  ``output_format`` (``exec-json``), ``thread_id``, ``turns``, ``turn_errors``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from pipeline.ingest.adapters import codex
from pipeline.ingest.adapters._common import Ctx, TextParts, text_of, tool_call, tool_result
from pipeline.ingest.adapters._session import SizeGuard, run_records, told_by_head
from pipeline.ingest.argv import script_of
from pipeline.ingest.records import canonical_message

FORMAT = "codex"
_EVENTS = ("thread.", "turn.", "item.")
_NO_STEP = {"reasoning", "plan", "todo_list", "error"}


def is_exec(obj: Any) -> bool | None:
    """True when this line is an exec event, False when it is a line of another kind, None
    when it has no ``type`` to tell by."""
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        return None
    return obj["type"].startswith(_EVENTS)


def _command(text: Any) -> str:
    """The script a ``command_execution``'s command runs (``bash -lc SCRIPT`` -> SCRIPT)."""
    return script_of(text) if isinstance(text, str) else ""


def _call(item: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """(tool name, arguments) of a call item; None for an item that is no call."""
    kind = item.get("type")
    if kind == "command_execution":
        return "exec_command", {"cmd": _command(item.get("command"))}
    if kind == "file_change":
        changes = [c for c in item.get("changes") or [] if isinstance(c, dict) and isinstance(c.get("path"), str)]
        return "apply_patch", {"paths_written": [c["path"] for c in changes if c.get("kind") != "delete"],
                               "paths_deleted": [c["path"] for c in changes if c.get("kind") == "delete"]}
    if kind == "mcp_tool_call":
        args = item.get("arguments")
        return f"mcp__{item.get('server')}__{item.get('tool')}", args if isinstance(args, dict) else {"arguments": args}
    if kind == "web_search":
        return "web_search_call", {"query": item.get("query")}
    if kind == "collab_tool_call":
        return str(item.get("tool") or "collab_tool"), {"prompt": item.get("prompt"),
                                                        "receiver_thread_ids": item.get("receiver_thread_ids")}
    return None


def _output(item: dict[str, Any]) -> tuple[str, Any]:
    """(result text, canonical error or None) of a finished call item."""
    kind, status = item.get("type"), item.get("status")
    if kind == "command_execution":
        text = item.get("aggregated_output") if isinstance(item.get("aggregated_output"), str) else ""
    elif kind == "mcp_tool_call":
        res = item.get("result") if isinstance(item.get("result"), dict) else {}
        text = text_of(res.get("content")) or ""
        if not text and res.get("structured_content") is not None:
            text = json.dumps(res["structured_content"], ensure_ascii=False, sort_keys=True)
    elif kind == "file_change":
        text = "patch applied" if status == "completed" else ""
    elif kind == "web_search":
        text = "(web search results are not recorded in the exec log)"
    else:
        text = json.dumps(item.get("agents_states"), ensure_ascii=False, sort_keys=True)
    text = text[:100_000]
    code = item.get("exit_code")
    if status == "declined":
        return text, {"type": "approval", "message": f"{kind} declined: {text[:300]}"}
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        return text, {"type": "exit_code", "message": f"exit code {code}: {text[:300]}"}
    if status == "failed":
        err = item.get("error") if isinstance(item.get("error"), dict) else {}
        return text, str(err.get("message") or text[:2000] or f"{kind} failed")
    return text, None


class _Thread:
    """One trajectory: its messages, the calls still running, the ids already finished."""

    def __init__(self, first_line: int, guard: SizeGuard) -> None:
        self.first_line = first_line
        self.guard = guard
        self.messages: list[dict[str, Any]] = []
        self.texts = TextParts()
        self.running: dict[str, str] = {}  # item id -> call id
        self.finished: dict[str, int] = {}  # item id -> calls of that id so far
        self.turns = 0
        self.errors: list[str] = []

    def _call_id(self, item_id: str) -> str:
        n = self.finished.get(item_id, 0)
        return item_id if n == 0 else f"{item_id}~{n}"

    def run_meta(self) -> dict[str, Any]:
        """``output_format``, ``turns``, ``turn_errors`` of this thread's record."""
        meta: dict[str, Any] = {"output_format": "exec-json", "turns": self.turns}
        if self.errors:
            meta["turn_errors"] = self.errors[:20]
        return meta

    def line(self, obj: dict[str, Any]) -> None:
        """Take one event of this thread."""
        kind = obj.get("type")
        if kind == "turn.started":
            self.turns += 1
        elif kind in ("turn.failed", "error"):
            err = obj.get("error") if isinstance(obj.get("error"), dict) else obj
            self.errors.append(str(err.get("message"))[:500])
        elif kind in ("item.started", "item.updated", "item.completed") and isinstance(obj.get("item"), dict):
            self._item(kind, obj["item"])

    def _item(self, event: str, item: dict[str, Any]) -> None:
        item_id, kind = item.get("id"), item.get("type")
        if not isinstance(item_id, str) or kind in _NO_STEP:
            if kind == "error" and isinstance(item.get("message"), str):
                self.errors.append(item["message"][:500])
            return
        if kind == "agent_message":
            if event == "item.completed" and isinstance(item.get("text"), str) and item["text"]:
                self.guard.add(item["text"])
                msg = canonical_message("assistant", None)
                self.messages.append(msg)
                self.texts.add(msg, item["text"])
            return
        call = _call(item)
        if call is None:
            return
        if item_id not in self.running:
            call_id = self._call_id(item_id)
            self.running[item_id] = call_id
            self.guard.add(call[1])
            self.messages.append(canonical_message("assistant", None, tool_calls=[tool_call(call_id, *call)]))
        if event == "item.completed":
            text, error = _output(item)
            self.guard.add(text)
            self.messages.append(tool_result(self.running.pop(item_id), text, error))
            self.finished[item_id] = self.finished.get(item_id, 0) + 1


def convert(items: Iterable[tuple[int, Any]], ctx: Ctx) -> Iterator[tuple[int, dict[str, Any]]]:
    """A ``codex`` file: an exec log (:func:`convert_exec`) or a rollout
    (:func:`pipeline.ingest.adapters.codex.convert_session`), told by :func:`is_exec`."""
    exec_log, lines = told_by_head(items, is_exec)
    yield from convert_exec(lines, ctx) if exec_log else codex.convert_session(lines, ctx)


def convert_exec(items: Iterable[tuple[int, Any]], ctx: Ctx) -> Iterator[tuple[int, dict[str, Any]]]:
    """Convert one ``codex exec --json`` log (the reader's ``session`` layout)."""
    yield from run_records(items, ctx, ("thread.started", "thread_id"), _Thread, FORMAT, "codex")
