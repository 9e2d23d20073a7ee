"""Gemini CLI ``--output-format stream-json`` output (``gemini -p ... -o stream-json``, a
headless run) -> one trajectory per session.

The events (``packages/core/src/output/types.ts`` of google-gemini/gemini-cli), one JSON
object a line, each with ``type`` and ``timestamp``: ``init`` (``session_id``, ``model``),
``message`` (``role`` user | assistant, ``content``, ``delta``: a piece of the assistant's
text as it streams), ``tool_use`` (``tool_name``, ``tool_id``, ``parameters``),
``tool_result`` (``tool_id``, ``status`` success | error, ``output``, ``error {type,
message}``), ``error`` (``severity``, ``message``) and ``result`` (``status``, ``error``,
``stats``).

- Runs appended to one log are one trajectory each, id = the ``init`` line's
  ``session_id`` (lines before any ``init`` belong to a trajectory named by the file,
  ``<stem>``); a run resumed under its id continues its trajectory.
- Assistant text (``delta`` pieces joined as they came; a message without ``delta`` is
  whole, a message of its own) and the tool calls that follow it with no result
  between are ONE assistant message (one model turn); a user message or a tool result
  ends it. ``parameters`` are the call's arguments.
- A result whose ``status`` is ``error`` gives the canonical error ``{"type": error.type,
  "message": error.message}`` (Inspect's vocabulary where it matches, e.g.
  ``file_not_found``; other types fall to the policy's text rules); without an ``error``
  object, the output text, else ``tool error``.
- suite = ``--suite``, else ``gemini-cli``; ``meta``: ``format``, ``session_id``,
  ``model``, ``result_status``, ``errors`` (``error`` events and the result's error).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from pipeline.ingest.adapters._common import Ctx, TextParts, tool_call, tool_result
from pipeline.ingest.adapters._session import SizeGuard, run_records
from pipeline.ingest.records import canonical_message

FORMAT = "gemini-stream"


def _error(line: dict[str, Any], text: str) -> Any:
    """The canonical error of an ``error`` result (module docstring)."""
    err = line.get("error")
    if isinstance(err, dict) and (isinstance(err.get("type"), str) or isinstance(err.get("message"), str)):
        return {"type": str(err.get("type") or "unknown"), "message": str(err.get("message") or "")[:2000]}
    return text[:2000] or "tool error"


class _Session:
    """One trajectory: its messages and the assistant message still open."""

    def __init__(self, first_line: int, guard: SizeGuard) -> None:
        self.first_line = first_line
        self.guard = guard
        self.messages: list[dict[str, Any]] = []
        self.texts = TextParts(sep="")  # the delta pieces of one streamed text
        self.open: dict[str, Any] | None = None  # the model turn calls and text still join
        self.meta: dict[str, Any] = {}
        self.errors: list[str] = []

    def _assistant(self) -> dict[str, Any]:
        if self.open is None:
            self.open = canonical_message("assistant", None)
            self.messages.append(self.open)
        return self.open

    def run_meta(self) -> dict[str, Any]:
        """``model``, ``result_status``, ``errors`` of this session's record."""
        return {**self.meta, **({"errors": self.errors[:20]} if self.errors else {})}

    def line(self, obj: dict[str, Any]) -> None:
        """Take one event of this session."""
        kind = obj.get("type")
        if kind == "init" and isinstance(obj.get("model"), str):
            self.meta.setdefault("model", obj["model"])
        elif kind == "message" and isinstance(obj.get("content"), str):
            self.guard.add(obj["content"])
            if obj.get("role") == "assistant":
                if obj.get("delta") is not True or (self.open or {}).get("tool_calls"):
                    self.open = None  # a whole message, or text after the turn's calls: a new one
                self.texts.add(self._assistant(), obj["content"])
            else:
                self.open = None
                self.messages.append(canonical_message("user", obj["content"]))
        elif kind == "tool_use":
            args = obj.get("parameters") if isinstance(obj.get("parameters"), dict) else {}
            self.guard.add(args)
            self._assistant().setdefault("tool_calls", []).append(
                tool_call(obj.get("tool_id"), obj.get("tool_name"), args))
        elif kind == "tool_result":
            self.open = None
            text = obj.get("output") if isinstance(obj.get("output"), str) else ""
            self.guard.add(text)
            error = _error(obj, text) if obj.get("status") == "error" else None
            self.messages.append(tool_result(obj.get("tool_id"), text[:100_000], error))
        elif kind == "error" and isinstance(obj.get("message"), str):
            self.errors.append(obj["message"][:500])
        elif kind == "result":
            if isinstance(obj.get("status"), str):
                self.meta["result_status"] = obj["status"]
            err = obj.get("error")
            if isinstance(err, dict) and isinstance(err.get("message"), str):
                self.errors.append(err["message"][:500])


def convert_session(items: Iterable[tuple[int, Any]], ctx: Ctx) -> Iterator[tuple[int, dict[str, Any]]]:
    """Convert one Gemini CLI stream-json log (the reader's ``session`` layout)."""
    yield from run_records(items, ctx, ("init", "session_id"), _Session, FORMAT, "gemini-cli")
