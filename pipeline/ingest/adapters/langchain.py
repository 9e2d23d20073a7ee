"""LangChain / LangGraph serialized messages -> canonical records (one record = one trajectory).

Accepted record: ``{"messages": [...]}`` (a LangGraph state; also under ``outputs``, a
LangSmith run, or ``values``, a LangGraph thread state), or a bare list of messages (one
NDJSON line, or a whole ``.json`` document: ``one_list``). A message is any of
- ``messages_to_dict`` output ``{"type": "human"|"ai"|"tool"|"system"|"function"|"chat",
  "data": {...}}`` (``data`` is the message's ``model_dump()``);
- the ``dumpd`` form ``{"lc": 1, "type": "constructor", "id": [..., "AIMessage"],
  "kwargs": {...}}`` (namespace ``langchain.schema.messages`` or ``langchain_core...``);
- the bare ``model_dump()`` ``{"type": "ai", "content", "additional_kwargs", ...}`` (the
  LangGraph API's messages). ``*MessageChunk`` types are their message's type.

human -> user, system -> system, ai -> assistant, tool / function -> tool, chat -> its
``role``; ``remove`` and unknown types are dropped. ``content`` is a string or a list of
blocks: ``text`` blocks (and strings) are the text; ``tool_use`` blocks (Anthropic-backed
models) are calls when ``tool_calls`` is empty; ``thinking`` / ``reasoning`` / image blocks
are dropped. An AIMessage's calls: ``tool_calls`` ``[{name, args, id}]`` (``args`` an
object), else ``additional_kwargs.tool_calls`` (OpenAI's ``function.arguments`` string,
older LangChain), else ``tool_use`` blocks; ``invalid_tool_calls`` (arguments that did not
parse; LangGraph's ToolNode does not run them) are dropped and counted in
``meta.invalid_tool_calls``. A ToolMessage ``{tool_call_id, content, status}``: ``status:
"error"`` is a failed call, its content the error text (``exec_status`` text rules);
``artifact`` is dropped. Calls without an id pair with results by tool ``name``, oldest
first (:func:`repair_call_ids`).

A LangChain AgentExecutor result (``intermediate_steps``, no ``messages``) is read by
:mod:`.langchain_agent`.

trajectory_id: ``trajectory_id``, else ``id`` (a LangSmith run's), else
``<file stem>:<source_line>``. suite: ``suite``, else ``default``.
"""

from __future__ import annotations

from typing import Any

from pipeline.ingest.adapters._common import (
    AdapterError, Ctx, RecordTooLarge, assistant, repair_call_ids, require_dict, text_of, tool_call, tool_result,
)
from pipeline.ingest.adapters._session import SessionAbort, SizeGuard
from pipeline.ingest.adapters.langchain_agent import STEPS_KEY, agent_messages, steps_holder
from pipeline.ingest.records import canonical_message

FORMAT = "langchain"
# message type -> canonical role (a ChatMessage's role is its own)
ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "function": "tool",
         "developer": "system"}
# dumpd class names and chunk types -> message type
CLASSES = {"HumanMessage": "human", "AIMessage": "ai", "SystemMessage": "system", "ToolMessage": "tool",
           "FunctionMessage": "function", "ChatMessage": "chat", "RemoveMessage": "remove"}
# the keys of a bare model_dump() message (a dict holding one of them and a type is a message)
DUMP_KEYS = ("additional_kwargs", "response_metadata", "tool_call_id", "tool_calls")


def message_parts(msg: Any) -> tuple[str | None, dict[str, Any]]:
    """(message type, its fields) of one serialized message in any of the three forms;
    (None, {}) for what is not a message."""
    if not isinstance(msg, dict):
        return None, {}
    if msg.get("lc") == 1 and msg.get("type") == "constructor":
        ident = msg.get("id")
        name = ident[-1] if isinstance(ident, list) and ident and isinstance(ident[-1], str) else ""
        kwargs = msg.get("kwargs")
        return CLASSES.get(name.removesuffix("Chunk")), kwargs if isinstance(kwargs, dict) else {}
    kind = msg.get("type")
    if not isinstance(kind, str):
        return None, {}
    kind = CLASSES.get(kind.removesuffix("Chunk"), kind)
    data = msg.get("data")
    if isinstance(data, dict):
        return kind, data
    return (kind, msg) if "content" in msg or any(k in msg for k in DUMP_KEYS) else (None, {})


def is_message(value: Any) -> bool:
    """True when ``value`` is a serialized message (the first element of a bare message
    list: ``one_list`` of the adapter spec), not a record holding ``messages``."""
    kind, _ = message_parts(value)
    return kind in ROLES or kind in ("chat", "remove")


def _calls(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The calls of an AIMessage (module docstring order)."""
    calls = data.get("tool_calls")
    if isinstance(calls, list) and calls:
        return [tool_call(c.get("id"), c.get("name"), c.get("args") if c.get("args") is not None else {})
                for c in calls if isinstance(c, dict)]
    extra = data.get("additional_kwargs")
    legacy = extra.get("tool_calls") if isinstance(extra, dict) else None
    if isinstance(legacy, list) and legacy:
        out = []
        for c in legacy:
            fn = c.get("function") if isinstance(c, dict) else None
            if isinstance(fn, dict):
                out.append(tool_call(c.get("id"), fn.get("name"), fn.get("arguments")))
        return out
    content = data.get("content")
    return [tool_call(b.get("id"), b.get("name"), b.get("input") if b.get("input") is not None else {})
            for b in content if isinstance(b, dict) and b.get("type") == "tool_use"] \
        if isinstance(content, list) else []


def _messages(rec: Any) -> list[Any]:
    if isinstance(rec, list):
        return rec
    rec = require_dict(rec, "record")
    for holder in (rec, rec.get("outputs"), rec.get("values")):
        if isinstance(holder, dict) and isinstance(holder.get("messages"), list):
            return holder["messages"]
    raise AdapterError("no 'messages' array (nor outputs.messages / values.messages), and not a message list")


def _has_messages(record: Any) -> bool:
    try:
        _messages(record)
        return True
    except AdapterError:
        return False


def convert(record: Any, ctx: Ctx) -> dict[str, Any]:
    """Convert one LangChain / LangGraph record (or a bare message list, or an
    AgentExecutor result: its ``messages``, an executor's memory, come before its steps)."""
    guard = SizeGuard(4 * int(ctx.state.get("max_record_bytes", 32 * 2**20)))
    holder = steps_holder(record)
    try:
        if holder is not None and (holder[STEPS_KEY] or not _has_messages(record)):
            history, meta_out = _history(record, guard)
            steps, extra = agent_messages(record, holder, guard)
            return _record(record, ctx, history + steps, {**meta_out, **extra})
        messages, meta_out = _chat(record, guard)
    except SessionAbort as exc:
        raise RecordTooLarge(exc.detail) from exc
    return _record(record, ctx, messages, meta_out)


def _history(record: Any, guard: SizeGuard) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """An AgentExecutor result's ``messages`` (its memory, or the chat it ran in) before its
    steps: LangChain's read as such; OpenAI-style ``role`` messages (the canonical layout)
    taken as they are, for the SQL stage to read as it reads a canonical record's."""
    if not _has_messages(record):
        return [], {"format": FORMAT}
    try:
        return _chat(record, guard)
    except AdapterError:
        source = _messages(record)
        if not all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in source):
            raise
        guard.add(source)
        return list(source), {"format": FORMAT, "history_format": "canonical"}


def _chat(record: Any, guard: SizeGuard) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The canonical messages of a record's (or a bare list's) LangChain messages, and its meta."""
    source = _messages(record)
    messages: list[dict[str, Any]] = []
    hints: list[str | None] = []
    invalid = 0
    model: str | None = None
    for msg in source:
        kind, data = message_parts(msg)
        role = data.get("role") if kind == "chat" else ROLES.get(kind or "")
        role = ROLES.get(role, role) if isinstance(role, str) else None
        if not isinstance(role, str):
            continue
        text = text_of(data.get("content"))
        guard.add(text)
        name = data.get("name") if isinstance(data.get("name"), str) else None
        if role == "assistant":
            calls = _calls(data)
            guard.add(calls)
            messages.append(assistant(text or None, calls))
            bad = data.get("invalid_tool_calls")
            invalid += len(bad) if isinstance(bad, list) else 0
            meta = data.get("response_metadata")
            found = (meta.get("model_name") or meta.get("model")) if isinstance(meta, dict) else None
            model = found if isinstance(found, str) else model
        elif role == "tool":
            error = (text or "error") if data.get("status") == "error" else None
            messages.append(tool_result(data.get("tool_call_id"), text, error))
        else:
            messages.append(canonical_message(role, text))
        hints.append(name if role == "tool" else None)
    if not messages:
        raise AdapterError("no LangChain message (human/ai/tool/system ...) in the message list")
    repaired = repair_call_ids(messages, hints)
    meta_out: dict[str, Any] = {"format": FORMAT}
    for key, value in (("model", model), ("call_ids_repaired", repaired), ("invalid_tool_calls", invalid)):
        if value:
            meta_out[key] = value
    return messages, meta_out


def _record(record: Any, ctx: Ctx, messages: list[dict[str, Any]], meta_out: dict[str, Any]) -> dict[str, Any]:
    """The canonical record: id and suite as the module docstring says."""
    rec = record if isinstance(record, dict) else {}
    tid = rec.get("trajectory_id", rec.get("id"))
    out: dict[str, Any] = {"trajectory_id": tid if tid is not None else f"{ctx.stem}:{ctx.line}",
                           "messages": messages, "meta": meta_out}
    if "suite" in rec:
        out["suite"] = rec["suite"]
    return out
