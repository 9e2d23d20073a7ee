"""OpenAI's legacy function calling in canonical / openai records.

Before ``tools`` (2023), a chat's assistant message called ONE function as
``{"role": "assistant", "function_call": {"name", "arguments"}}`` and its result came back
as ``{"role": "function", "name": ..., "content": ...}``, with no ids. Agent logs of that
era (LangChain's OpenAI-functions agents, ToolEmu-style runs, fine-tuning sets) keep it.
Read as canonical, such a call was no step at all and its result a ``system`` message
(operator text, trusted): a secret read then POSTed scored ``aggregate`` / ``safe``.

:func:`legacy_calls` rewrites them to the canonical form: the call becomes the message's one
``tool_calls`` entry, id ``function_call:<message index>``; a ``function`` message becomes a
``tool`` message answering the earliest unanswered legacy call of its ``name`` (else the
earliest unanswered one), as the API answered them in order. A ``function`` message with no
such call keeps no id: an ``orphan_tool_result`` (SPEC section 3), as any result without its
call (``sql/events.sql`` reads a ``function`` role as ``tool`` on its own). A message with
both ``tool_calls`` and a ``function_call`` (no API writes both) keeps its ``tool_calls``
only: the ``function_call`` is not read.

Only a record whose text holds ``"function_call"`` is parsed, so the others cost one
substring scan.
"""

from __future__ import annotations

from typing import Any

from pipeline.ingest.adapters._record_checks import marked_messages

MARK = '"function_call"'


def legacy_calls(text: str) -> dict[str, Any] | None:
    """The record of ``text`` with its legacy function calls and results rewritten (module
    docstring), or None when it has none (or does not parse: the SQL stage rejects it)."""
    parsed = marked_messages(text, MARK)
    if parsed is None:
        return None
    doc, messages = parsed
    pending: list[tuple[str, Any]] = []  # (call id, function name) not yet answered
    changed = False
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        call, role = message.get("function_call"), str(message.get("role")).lower()  # as sql/events.sql reads roles
        if role == "assistant" and isinstance(call, dict) and not message.get("tool_calls"):
            call_id = f"function_call:{i}"
            rest = {k: v for k, v in message.items() if k != "function_call"}
            messages[i] = {**rest, "tool_calls": [{"id": call_id, "type": "function", "function": {
                "name": call.get("name"), "arguments": call.get("arguments")}}]}
            pending.append((call_id, call.get("name")))
            changed = True
        elif role == "function" and pending and "tool_call_id" not in message:
            k = next((j for j, (_, name) in enumerate(pending) if name == message.get("name")), 0)
            messages[i] = {**message, "role": "tool", "tool_call_id": pending.pop(k)[0]}
            changed = True
    return doc if changed else None
