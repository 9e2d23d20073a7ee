"""AutoGen AgentChat messages (``TaskResult.messages`` / a team run's stream, each dumped
with ``model_dump()``) -> canonical trajectories.

Each message has ``type``, ``source`` (an agent's name, or ``user``) and ``content``
(``autogen_agentchat/messages.py``):
- ``TextMessage``, ``MultiModalMessage`` (its text items), ``StopMessage``,
  ``HandoffMessage``, ``ToolCallSummaryMessage`` -> user text when ``source`` is ``user``,
  else assistant text;
- ``ToolCallRequestEvent`` (``content``: ``FunctionCall {id, name, arguments}``) -> an
  assistant message with those calls; ``ToolCallExecutionEvent`` (``content``:
  ``FunctionExecutionResult {call_id, name, content, is_error}``) -> tool messages, an
  ``is_error`` result's content as the error (the policy's text rules);
- ``CodeGenerationEvent`` (a ``CodeExecutorAgent``'s markdown) -> one call per fenced code
  block (``python`` {"code"}, ``bash`` / ``sh`` / ``shell`` / ``console`` {"command"}, other
  languages ``code_execution`` {"code", "language"}); the next ``CodeExecutionEvent``
  answers them (its ``result``: text, or ``{exit_code, output}``: a non-zero exit ->
  ``{"type": "exit_code"}``, the policy's text rules);
- ``ThoughtEvent``, ``MemoryQueryEvent``, ``ModelClientStreamingChunkEvent``,
  ``UserInputRequestedEvent`` and unknown types are no steps.

A record is a bare array of messages (a ``.json`` file or one NDJSON line: ONE trajectory
``<file stem>:<line>``) or ``{"messages": [...]}`` (``TaskResult.model_dump()``, its
``stop_reason`` kept in ``meta``; ``trajectory_id`` / ``suite`` when present).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pipeline.ingest.adapters._common import AdapterError, Ctx, listed, listed_record, tool_call, tool_result
from pipeline.ingest.records import canonical_message

FORMAT = "autogen"
TEXT_TYPES = {"TextMessage", "MultiModalMessage", "StopMessage", "HandoffMessage", "ToolCallSummaryMessage"}
EVENT_TYPES = {"ToolCallRequestEvent", "ToolCallExecutionEvent", "CodeGenerationEvent", "CodeExecutionEvent",
               "ThoughtEvent", "MemoryQueryEvent", "ModelClientStreamingChunkEvent", "UserInputRequestedEvent"}
_FENCE = re.compile(r"```[ \t]*([\w+\-]*)[ \t]*\n(.*?)```", re.S)
_SHELLS = {"bash", "sh", "shell", "console", "zsh"}


def message(value: Any) -> bool:
    """True when ``value`` is one AgentChat message (a known ``type`` and a ``source``)."""
    return isinstance(value, dict) and value.get("type") in TEXT_TYPES | EVENT_TYPES and "source" in value


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # MultiModalMessage: strings and images
        return "\n".join(c for c in content if isinstance(c, str))
    return ""


def _code_calls(markdown: str, n: int) -> list[dict[str, Any]]:
    calls = []
    for k, (lang, code) in enumerate(_FENCE.findall(markdown)):
        lang = lang.lower()
        if lang in ("python", "py", "python3"):
            name, args = "python", {"code": code}
        elif lang in _SHELLS:
            name, args = "bash", {"command": code}
        else:
            name, args = "code_execution", {"code": code, "language": lang}
        calls.append(tool_call(f"code_{n}_{k}", name, args))
    return calls


def _execution(result: Any) -> tuple[str, Any]:
    if isinstance(result, dict):
        output = str(result.get("output") or "")[:100_000]
        code = result.get("exit_code")
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            return output, {"type": "exit_code", "message": f"exit code {code}: {output[:300]}"}
        return output, None
    return str(result if result is not None else "")[:100_000], None


def convert(record: Any, ctx: Ctx) -> dict[str, Any]:
    """Convert one list of AgentChat messages (or a ``TaskResult`` dump)."""
    rec, items = listed(record, "messages", "AutoGen messages")
    messages: list[dict[str, Any]] = []
    pending_code: list[str] = []  # ids of the last generation's code calls, awaiting execution
    generations = 0
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise AdapterError(f"message {i} is {type(item).__name__}, expected an object")
        kind, content = item.get("type"), item.get("content")
        if kind in TEXT_TYPES:
            text = _text(content)
            if text:
                messages.append(canonical_message("user" if item.get("source") == "user" else "assistant", text))
        elif kind == "ToolCallRequestEvent":
            calls = [tool_call(c.get("id"), c.get("name"), c.get("arguments") if c.get("arguments") is not None else {})
                     for c in content or [] if isinstance(c, dict)]
            if calls:
                messages.append(canonical_message("assistant", None, tool_calls=calls))
        elif kind == "ToolCallExecutionEvent":
            for r in content or []:
                if isinstance(r, dict):
                    text = r["content"] if isinstance(r.get("content"), str) else json.dumps(r.get("content"))
                    messages.append(tool_result(r.get("call_id"), text[:100_000],
                                                (text[:2000] or "tool error") if r.get("is_error") is True else None))
        elif kind == "CodeGenerationEvent" and isinstance(content, str):
            calls = _code_calls(content, generations)
            generations += 1
            if calls:
                messages.append(canonical_message("assistant", None, tool_calls=calls))
                pending_code = [c["id"] for c in calls]
        elif kind == "CodeExecutionEvent" and pending_code:
            text, error = _execution(item.get("result", content))
            for call_id in pending_code:  # one result for the generation's blocks, run together
                messages.append(tool_result(call_id, text, error))
            pending_code = []
    meta: dict[str, Any] = {"format": FORMAT}
    if isinstance(rec.get("stop_reason"), str):
        meta["stop_reason"] = rec["stop_reason"][:500]
    return listed_record(rec, ctx, messages, meta)
