"""Anthropic Messages API transcripts -> canonical records.

Accepted record: ``{"trajectory_id"?, "suite"?, "system"?, "messages": [...]}`` where
each message is ``{"role": "user"|"assistant", "content": str | [blocks]}``, or the bare
list of messages (one conversation, e.g. Cline's ``api_conversation_history.json``).

- assistant ``text`` blocks -> assistant text; ``tool_use`` ``{id, name, input}`` ->
  tool calls (``input`` kept as an object); ``thinking`` blocks are dropped.
- user ``text`` blocks -> user message; each ``tool_result`` ``{tool_use_id, content,
  is_error}`` -> one ``role=tool`` message, in block order; ``is_error: true`` -> ``error``
  is the result text.
- ``system`` (string or text blocks) -> a leading system message.
- trajectory_id: ``trajectory_id``, else ``id``, else ``<file stem>:<source_line>``.
"""

from __future__ import annotations

from typing import Any

from pipeline.ingest.adapters._common import (
    AdapterError, Ctx, assistant, require_dict, require_list, text_of, tool_call, tool_result,
)
from pipeline.ingest.records import canonical_message


def _assistant(content: Any) -> dict[str, Any]:
    if not isinstance(content, list):
        return assistant(text_of(content))
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind in ("tool_use", "server_tool_use"):
            calls.append(tool_call(block.get("id"), block.get("name"), block.get("input", {})))
    return assistant("\n".join(texts) if texts else None, calls)


def _user(content: Any) -> list[dict[str, Any]]:
    if not isinstance(content, list):
        return [canonical_message("user", text_of(content))]
    out: list[dict[str, Any]] = []
    texts: list[str] = []

    def flush() -> None:
        if texts:
            out.append(canonical_message("user", "\n".join(texts)))
            texts.clear()

    for block in content:
        if isinstance(block, str):
            texts.append(block)
            continue
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_result":
            flush()
            text = text_of(block.get("content"))
            error = (text or "error") if block.get("is_error") is True else None
            out.append(tool_result(block.get("tool_use_id"), text, error))
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
    flush()
    return out


def convert(record: Any, ctx: Ctx) -> dict[str, Any]:
    """Convert one Anthropic-style record (or a bare list of its messages:
    :mod:`pipeline.ingest.adapters.bare_lists`) to a canonical trajectory dict."""
    rec = require_dict({"messages": record} if isinstance(record, list) else record, "record")
    messages: list[dict[str, Any]] = []
    system = rec.get("system")
    if system is not None:
        messages.append(canonical_message("system", text_of(system)))
    for i, msg in enumerate(require_list(rec.get("messages"), "messages")):
        msg = require_dict(msg, f"messages[{i}]")
        role = msg.get("role")
        if role == "assistant":
            messages.append(_assistant(msg.get("content")))
        elif role == "user":
            messages.extend(_user(msg.get("content")))
        elif isinstance(role, str):
            messages.append(canonical_message(role, text_of(msg.get("content"))))
        else:
            raise AdapterError(f"messages[{i}] has no role")
    if "trajectory_id" in rec:
        tid = rec["trajectory_id"]
    elif "id" in rec:
        tid = rec["id"]
    else:
        tid = f"{ctx.stem}:{ctx.line}"
    out: dict[str, Any] = {"trajectory_id": tid, "messages": messages,
                           "meta": {"format": "anthropic"}}
    if "suite" in rec:
        out["suite"] = rec["suite"]
    if isinstance(rec.get("meta"), dict):
        out["meta"] = {**rec["meta"], "format": "anthropic"}
    return out
