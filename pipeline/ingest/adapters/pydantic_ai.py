"""Pydantic AI message histories -> canonical trajectories.

A history is what ``result.all_messages_json()`` / ``ModelMessagesTypeAdapter.dump_json(...)``
writes: a JSON array of ``ModelRequest`` / ``ModelResponse`` objects
(``pydantic_ai_slim/pydantic_ai/messages.py``). A whole ``.json`` array, or one NDJSON line,
is ONE trajectory ``<file stem>:<line>`` (:func:`one_list`); so is each element of an array of
histories, and a record ``{"messages": [...], "trajectory_id"?, "suite"?}``.

- ``{"kind": "request", "parts", "instructions"?}``: ``instructions`` -> a system message
  (again only when it changes: Pydantic AI repeats them on every request); parts by
  ``part_kind``: ``system-prompt`` -> system, ``user-prompt`` (``content`` a string or a list
  of strings, ``text-content`` items and media, which are dropped) -> user, ``tool-return``
  (``tool_name``, ``content``, ``tool_call_id``) -> the call's result (``content`` not a
  string: its JSON text), ``retry-prompt`` -> see below.
- ``{"kind": "response", "parts", "model_name"?}``: ``text`` -> assistant text,
  ``tool-call`` (``tool_name``, ``args``: a JSON string, an object or null,
  ``tool_call_id``) -> a call, ``builtin-tool-call`` / ``builtin-tool-return`` (a tool the
  provider ran: web search, code execution) -> a call and its result, in part order;
  ``thinking``, ``compaction`` and ``file`` parts are dropped (counted in ``meta``).
- A ``retry-prompt`` with a ``tool_name`` answers its ``tool_call_id``: the call did not
  complete, it is an ERROR result. ``content`` a list (pydantic-core ``ErrorDetails``: the
  arguments failed validation, the tool never ran) -> ``{"type": "validation"}`` (failed);
  a string (``Unknown tool name: ...``, or the tool raised ``ModelRetry``, which it may do
  after side effects) -> that text as the error (the policy's text rules; unmatched text is
  ``unknown``: fail closed). Without ``tool_name`` (output validation) -> user text.
- ``tool-return`` errors: ``outcome`` ``denied`` -> ``{"type": "approval"}`` (blocked),
  ``failed`` -> the content as error text; Pydantic AI's own notices for calls it skipped
  (``Tool not executed - a final result was already processed.``, ``Output tool not used -
  ...``) -> ``{"type": "not_executed"}`` (failed: the tool never ran).
- A message that is not a request/response, a part of unknown ``part_kind`` or a part that
  is not an object rejects the history ``malformed_record`` naming it (an unknown part may
  be a call that ran: never dropped silently). ``args`` that are not JSON are kept as text:
  the trajectory is rejected ``unparseable_arguments``.
- Ids: calls pair with results by ``tool_call_id`` (:func:`repair_call_ids`, tool name as
  the hint). trajectory_id: ``trajectory_id``, else ``<file stem>:<line>``; suite:
  ``suite``, else ``default``.
"""

from __future__ import annotations

import json
from typing import Any

from pipeline.ingest.adapters._common import (
    AdapterError, Ctx, assistant, listed, listed_record, repair_call_ids, tool_call, tool_result,
)
from pipeline.ingest.records import canonical_message

FORMAT = "pydantic-ai"
KINDS = ("request", "response")
DROPPED = frozenset({"thinking", "compaction", "file"})
# ToolReturnPart contents Pydantic AI writes for calls it did not run (_agent_graph.py)
NOT_EXECUTED = ("Tool not executed - a final result was already processed.",
                "Output tool not used - a final result was already processed.",
                "Output tool not used - output failed validation.")


def message(value: Any) -> bool:
    """True when ``value`` is one Pydantic AI ``ModelRequest`` / ``ModelResponse`` (``kind``
    request or response, a ``parts`` list), not a record holding messages."""
    return isinstance(value, dict) and value.get("kind") in KINDS and isinstance(value.get("parts"), list)


def one_list(value: Any) -> bool:
    """A top-level array that is ONE history (its first element a message)."""
    return message(value)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _user_text(content: Any, meta: dict[str, Any]) -> str:
    """A user prompt's text: strings and ``text-content`` items; media items are counted."""
    if isinstance(content, str):
        return content
    texts: list[str] = []
    for item in content if isinstance(content, list) else [content]:
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, dict) and item.get("kind") == "text-content" and isinstance(item.get("content"), str):
            texts.append(item["content"])
        elif item is not None:
            meta["dropped_media"] = meta.get("dropped_media", 0) + 1
    return "\n".join(texts)


def _arguments(args: Any) -> Any:
    """A call's ``args``: a JSON string (kept, parsed downstream), an object, or null (no
    arguments); releases before 0.0.14 wrapped them as ``{"args_json"}`` / ``{"args_dict"}``."""
    if args is None or args == "":
        return {}
    if isinstance(args, dict) and len(args) == 1:
        inner = args.get("args_json", args.get("args_dict"))
        if isinstance(inner, (str, dict)):
            return inner
    return args


def _return_error(part: dict[str, Any], content: str) -> Any:
    outcome = part.get("outcome")
    if outcome == "denied":
        return {"type": "approval", "message": content[:500] or "The tool call was denied."}
    if outcome == "failed":
        return content[:2000] or "tool failed (outcome: failed)"
    if content.strip() in NOT_EXECUTED:
        return {"type": "not_executed", "message": content.strip()}
    return None


def _retry_error(content: Any) -> Any:
    if isinstance(content, list):
        return {"type": "validation", "message": _text(content)[:2000]}
    return _text(content)[:2000] or "retry requested"


class _History:
    """Canonical messages built from one history's messages, in order."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.hints: list[str | None] = []
        self.meta: dict[str, Any] = {"format": FORMAT}
        self.instructions: str | None = None

    def add(self, msg: dict[str, Any], hint: str | None = None) -> None:
        """One canonical message (``hint``: the tool name of a result)."""
        self.messages.append(msg)
        self.hints.append(hint)

    def request(self, where: str, msg: dict[str, Any]) -> None:
        """A ``ModelRequest``: its instructions, then its parts in order."""
        instructions = msg.get("instructions")
        if isinstance(instructions, str) and instructions.strip() and instructions != self.instructions:
            self.instructions = instructions
            self.add(canonical_message("system", instructions))
        for j, part in enumerate(msg["parts"]):
            kind = _kind(part, f"{where} part {j}")
            name = part.get("tool_name") if isinstance(part.get("tool_name"), str) else None
            if kind == "system-prompt":
                self.add(canonical_message("system", _text(part.get("content"))))
            elif kind == "user-prompt":
                self.add(canonical_message("user", _user_text(part.get("content"), self.meta)))
            elif kind == "tool-return":
                content = _text(part.get("content"))
                self.add(tool_result(part.get("tool_call_id"), content, _return_error(part, content)), name)
            elif kind == "retry-prompt" and name is not None:
                retry = part.get("content")
                self.add(tool_result(part.get("tool_call_id"), _text(retry), _retry_error(retry)), name)
            elif kind == "retry-prompt":
                self.add(canonical_message("user", "Validation feedback:\n" + _text(part.get("content"))))
            else:
                raise AdapterError(f"{where} part {j}: unknown request part_kind {kind!r} (expected system-prompt, "
                                   "user-prompt, tool-return or retry-prompt)")

    def response(self, where: str, msg: dict[str, Any]) -> None:
        """A ``ModelResponse``: texts and calls make assistant messages; a built-in tool's
        return closes the message before it and is the result of its call."""
        texts: list[str] = []
        calls: list[dict[str, Any]] = []

        def flush() -> None:
            if texts or calls:
                self.add(assistant("\n\n".join(texts) if texts else None, list(calls)))
            texts.clear()
            calls.clear()

        for j, part in enumerate(msg["parts"]):
            kind = _kind(part, f"{where} part {j}")
            if kind == "text":
                if isinstance(part.get("content"), str) and part["content"]:
                    texts.append(part["content"])
            elif kind in ("tool-call", "builtin-tool-call"):
                calls.append(tool_call(part.get("tool_call_id"), part.get("tool_name"), _arguments(part.get("args"))))
            elif kind == "builtin-tool-return":
                flush()
                name = part.get("tool_name") if isinstance(part.get("tool_name"), str) else None
                self.add(tool_result(part.get("tool_call_id"), _text(part.get("content"))), name)
            elif kind in DROPPED:
                key = f"dropped_{kind}_parts"
                self.meta[key] = self.meta.get(key, 0) + 1
            else:
                raise AdapterError(f"{where} part {j}: unknown response part_kind {kind!r} (expected text, tool-call, "
                                   "builtin-tool-call, builtin-tool-return, thinking, compaction or file)")
        flush()
        model = msg.get("model_name")
        if isinstance(model, str) and model and model not in self.meta.setdefault("models", []):
            self.meta["models"].append(model)


def _kind(part: Any, where: str) -> Any:
    if not isinstance(part, dict):
        raise AdapterError(f"{where} is {type(part).__name__}, expected an object with a part_kind")
    return part.get("part_kind")


def convert(record: Any, ctx: Ctx) -> dict[str, Any]:
    """Convert one Pydantic AI history (a list of messages, or ``{"messages": [...]}``)."""
    rec, history = listed(record, "messages", "Pydantic AI messages (ModelRequest / ModelResponse)")
    conv = _History()
    for i, msg in enumerate(history):
        if not message(msg):
            got = msg.get("kind") if isinstance(msg, dict) else type(msg).__name__
            raise AdapterError(f"message {i} is not a Pydantic AI ModelRequest/ModelResponse (kind request|response "
                               f"with a 'parts' list; got {got!r})")
        (conv.request if msg["kind"] == "request" else conv.response)(f"message {i} ({msg['kind']})", msg)
    conv.meta["messages"] = len(history)
    repaired = repair_call_ids(conv.messages, conv.hints)
    if repaired:
        conv.meta["repaired_ids"] = repaired
    return listed_record(rec, ctx, conv.messages, conv.meta)
