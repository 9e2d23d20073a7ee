"""OpenCode message parts -> canonical messages (shared by the three OpenCode layouts of
:mod:`pipeline.ingest.adapters.opencode`).

OpenCode (sst/opencode, ``packages/opencode/src/session/message-v2.ts``) stores a message
as its ``info`` (``role`` user | assistant) and a list of typed ``parts``:

- ``text`` -> the message's text (a user text part marked ``ignored`` was never sent to
  the model: dropped); ``reasoning``, ``file``, ``agent``, ``subtask``, ``compaction``,
  ``step-start``, ``step-finish``, ``snapshot``, ``patch``, ``retry`` are no steps (counted
  in ``meta.dropped_parts``).
- ``tool`` -> one call ``callID`` named ``tool`` with ``state.input`` as its arguments, and
  its result from ``state``: ``completed`` -> ``output``; ``error`` -> ``error`` as error
  text (the content: the output an interrupted command printed, ``metadata.output``, else
  the error text); ``pending`` / ``running`` -> no result (a call still running when the
  session was saved: the last action is ``unknown``, an earlier one a
  ``missing_tool_result``, SPEC section 3).
- A permission the user rejected (OpenCode's ``PermissionRejectedError`` /
  ``PermissionCorrectedError``: "The user rejected permission to use this specific tool
  call...") or a rule denied (``PermissionDeniedError``: "The user has specified a rule
  which prevents you from using this specific tool call...") -> the structured error
  ``{"type": "approval"}`` (blocked); older releases wrote the error as ``Error: <text>``.
- A ``task`` call that failed because its subagent failed ("Subagent failed (task_id: ...):
  <the subagent's error>") -> ``{"type": "unknown"}``: the subagent ran (its own session is
  its own trajectory), whatever wording its last error has.
- An assistant message is split where text follows its calls: calls -> their results ->
  the text after them (the order the model saw them in).
- ``apply_patch`` / ``patch`` calls get ``paths_written`` / ``paths_deleted`` from the
  patch headers of ``patchText`` (the Codex patch format: codex.toml's ``apply_patch``);
  such a ``patch`` call (older releases) is named ``apply_patch``: the bundled catalogs
  merge by name, and ``patch`` is a generic name other agents' tools carry.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pipeline.ingest.adapters._common import TextParts, assistant, tool_call, tool_result
from pipeline.ingest.adapters._session import SizeGuard
from pipeline.ingest.adapters.codex_patch import patch_paths
from pipeline.ingest.records import canonical_message

# the texts of OpenCode's permission errors (packages/opencode/src/permission): the call never ran
PERMISSION_TEXTS = ("The user rejected permission to use this specific tool call",
                    "The user has specified a rule which prevents you from using this specific tool call")
_ERROR_NAME = re.compile(r"^(?:[A-Za-z]*Error: )?")
_PATCH_TOOLS = {"apply_patch", "patch"}


def permission_refused(text: str) -> bool:
    """True when an error text is one of OpenCode's permission errors (an ``Error: `` or
    ``<Name>Error: `` prefix allowed, as older releases wrote ``error.toString()``)."""
    return text[_ERROR_NAME.match(text).end():].startswith(PERMISSION_TEXTS)  # type: ignore[union-attr]


def _text(value: Any) -> str:
    """A string as is; any other JSON value as its JSON text ('' for None)."""
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value, ensure_ascii=False, default=str)


def _result(call_id: str, name: str, state: dict[str, Any]) -> dict[str, Any] | None:
    """The tool message answering one call of tool ``name``, from its part's ``state``
    (module docstring)."""
    status = state.get("status")
    if status == "completed":
        return tool_result(call_id, _text(state.get("output")))
    if status != "error":
        return None  # pending / running: no result
    text = _text(state.get("error")) or "error"
    meta = state.get("metadata") if isinstance(state.get("metadata"), dict) else {}
    printed = meta.get("output") if meta.get("interrupted") is True else None
    content = printed if isinstance(printed, str) else text
    error: Any = {"type": "approval", "message": text} if permission_refused(text) else text
    if name == "task" and text.startswith("Subagent failed"):
        error = {"type": "unknown", "message": text}  # the subagent ran: whatever its own last error says
    return tool_result(call_id, content, error)


class Builder:
    """Canonical messages built from OpenCode messages (``info`` + ``parts``), in order."""

    def __init__(self, guard: SizeGuard) -> None:
        self.guard = guard
        self.messages: list[dict[str, Any]] = []
        self.texts = TextParts()
        self.dropped: dict[str, int] = {}
        self.used: set[str] = set()
        self.calls = 0
        self.errors: list[str] = []

    def message(self, info: Any, parts: Any) -> None:
        """One OpenCode message (its ``info`` and its ``parts``)."""
        info = info if isinstance(info, dict) else {}
        parts = [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
        error = info.get("error")
        if isinstance(error, dict):
            data = error.get("data") if isinstance(error.get("data"), dict) else {}
            self.errors.append(_text(data.get("message") or error.get("name")))
        if info.get("role") == "user":
            self._user(parts)
        else:
            self._assistant(parts)

    def _drop(self, kind: Any) -> None:
        key = kind if isinstance(kind, str) else "?"
        self.dropped[key] = self.dropped.get(key, 0) + 1

    def _user(self, parts: list[dict[str, Any]]) -> None:
        msg: dict[str, Any] | None = None
        for part in parts:
            text = part.get("text")
            if part.get("type") != "text" or part.get("ignored") is True or not isinstance(text, str):
                self._drop(part.get("type"))
                continue
            if msg is None:
                msg = canonical_message("user", "")
                self.messages.append(msg)
            self.guard.add(text)
            self.texts.add(msg, text)

    def _assistant(self, parts: list[dict[str, Any]]) -> None:
        current: dict[str, Any] | None = None
        results: list[dict[str, Any]] = []
        for part in parts:
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str) and part["text"]:
                if current is None or current.get("tool_calls"):
                    self.messages.extend(results)
                    results = []
                    current = assistant(None)
                    self.messages.append(current)
                self.guard.add(part["text"])
                self.texts.add(current, part["text"])
            elif kind == "tool":
                if current is None:
                    current = assistant(None)
                    self.messages.append(current)
                call, result = self._call(part)
                current["tool_calls"] = [*(current.get("tool_calls") or []), call]
                if result is not None:
                    results.append(result)
            else:
                self._drop(kind)
        self.messages.extend(results)

    def _call(self, part: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """(the canonical call, its result or None) of one ``tool`` part."""
        self.calls += 1
        source = part.get("callID") if isinstance(part.get("callID"), str) else part.get("id")
        call_id = source if isinstance(source, str) and source else f"opencode_{self.calls}"
        if call_id in self.used:  # a call id written twice names a new call
            call_id = f"{call_id}#{self.calls}"
        self.used.add(call_id)
        state = part.get("state") if isinstance(part.get("state"), dict) else {}
        name = part.get("tool") if isinstance(part.get("tool"), str) and part.get("tool") else "unknown"
        args: Any = state.get("input") if isinstance(state.get("input"), dict) else {}
        if name in _PATCH_TOOLS and isinstance(args.get("patchText"), str):
            written, deleted = patch_paths(args["patchText"])
            args = {**args, "paths_written": written, "paths_deleted": deleted}
            name = "apply_patch"  # codex.toml's entry; `patch` is a generic name other agents use
        self.guard.add(args)
        result = _result(call_id, name, state)
        if result is not None:
            self.guard.add(result["content"])
        return tool_call(call_id, name, args), result

    def finish(self) -> dict[str, Any]:
        """Join the texts; the ``meta`` the parts add (dropped part types, message errors)."""
        self.texts.join()
        meta: dict[str, Any] = {}
        if self.dropped:
            meta["dropped_parts"] = dict(sorted(self.dropped.items()))
        if self.errors:
            meta["message_errors"] = self.errors
        return meta
