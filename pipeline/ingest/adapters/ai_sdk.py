"""Vercel AI SDK messages -> canonical trajectories.

What an AI SDK (TypeScript) app keeps of a conversation, either:
- ``UIMessage``s (``useChat``'s ``messages``, what apps store per chat): ``{id, role,
  parts}``; parts ``text``, ``reasoning`` (dropped), ``step-start`` (a new model step),
  ``tool-<name>`` / ``dynamic-tool`` (``toolName``) with ``toolCallId``, ``state``,
  ``input``, ``output``, ``errorText``, and the AI SDK 4 ``tool-invocation`` part
  (``toolInvocation {state call|partial-call|result, toolCallId, toolName, args,
  result}``); files, sources and ``data-*`` parts are dropped
  (``packages/ai/src/ui/ui-messages.ts``);
- ``ModelMessage``s (``result.response.messages``, a ``generateText`` call's
  ``messages``): ``{role, content}`` with content parts ``text``, ``tool-call``
  (``toolCallId``, ``toolName``, ``input``, AI SDK 4 ``args``) and, in ``tool`` messages,
  ``tool-result`` (``output {type: text|json|error-text|error-json|execution-denied|content,
  value}``, AI SDK 4 ``result`` + ``isError``).

A record is a bare array of such messages (a ``.json`` file or one NDJSON line: ONE
trajectory ``<file stem>:<line>``) or ``{"messages": [...], "id"?/"trajectory_id"?,
"suite"?}`` (a stored chat). A UIMessage tool part holds call and outcome: it becomes the
call (in the assistant message of its step) followed by its result: ``output-available``
-> the output (JSON text unless a string); ``output-error`` -> ``errorText`` as the
error (the policy's text rules); ``output-denied`` (the user refused the approval) ->
``{"type": "approval"}`` (blocked); a part still ``input-*`` / ``approval-*`` has no
result. A ``tool-result`` whose output is ``error-*`` -> its value as the error;
``execution-denied`` -> ``approval`` (blocked).
"""

from __future__ import annotations

import json
from typing import Any

from pipeline.ingest.adapters._common import AdapterError, Ctx, listed, listed_record, tool_call, tool_result
from pipeline.ingest.adapters.bare_lists import RECORD_KEYS
from pipeline.ingest.records import canonical_message

FORMAT = "ai-sdk"


def _typed_parts(value: Any) -> list[dict[str, Any]]:
    return [p for p in value if isinstance(p, dict) and isinstance(p.get("type"), str)] if isinstance(value, list) else []


def one_list(value: Any) -> bool:
    """A top-level array that is ONE conversation: its first element a message (a role with
    ``content`` or ``parts``; the file was told AI SDK by its tool parts, :mod:`._detect`),
    not a record holding messages."""
    return (isinstance(value, dict) and isinstance(value.get("role"), str)
            and bool({"content", "parts"} & value.keys()) and not RECORD_KEYS & value.keys())


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _output(output: Any) -> tuple[str, Any]:
    """(result text, error) of a ModelMessage ``tool-result`` output."""
    if isinstance(output, dict) and isinstance(output.get("type"), str):
        kind, value = output["type"], output.get("value")
        if kind == "execution-denied":
            return "", {"type": "approval", "message": str(output.get("reason") or "execution denied")[:500]}
        if kind.startswith("error-"):
            return "", _text(value)[:2000] or "tool error"
        return _text(value)[:100_000], None
    return _text(output)[:100_000], None


class _Builder:
    """Canonical messages, with the assistant message of the current model step open."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.open: dict[str, Any] | None = None
        self.results: list[dict[str, Any]] = []  # of the open step's calls, emitted when it closes

    def close(self) -> None:
        self.messages.extend(self.results)
        self.open, self.results = None, []

    def assistant(self) -> dict[str, Any]:
        if self.open is None:
            self.open = canonical_message("assistant", None)
            self.messages.append(self.open)
        return self.open

    def text(self, role: str, text: str) -> None:
        if role == "assistant":
            if self.results:  # text after the step's calls ran: the model's next step
                self.close()
            msg = self.assistant()
            msg["content"] = f"{msg['content']}\n{text}" if msg.get("content") else text
        else:
            self.close()
            self.messages.append(canonical_message(role if role in ("system", "user") else "user", text))

    def call(self, call_id: Any, name: Any, args: Any) -> None:
        if self.results:
            self.close()
        self.assistant().setdefault("tool_calls", []).append(
            tool_call(call_id, name, args if isinstance(args, (dict, str)) else {"input": args}))

    def tool_part(self, part: dict[str, Any]) -> None:
        """A UIMessage tool part: the call, then its outcome (module docstring)."""
        inv = part.get("toolInvocation") if part["type"] == "tool-invocation" else part
        if not isinstance(inv, dict):
            return
        name = inv.get("toolName") if part["type"] in ("dynamic-tool", "tool-invocation") else part["type"][5:]
        state = inv.get("state")
        self.call(inv.get("toolCallId"), name, inv.get("input", inv.get("args", {})))
        if state in ("output-available", "result"):
            out = inv.get("output", inv.get("result"))
            self.results.append(tool_result(inv.get("toolCallId"), _text(out)[:100_000]))
        elif state == "output-error":
            self.results.append(tool_result(inv.get("toolCallId"), "", str(inv.get("errorText") or "tool error")[:2000]))
        elif state == "output-denied":
            approval = inv.get("approval") if isinstance(inv.get("approval"), dict) else {}
            reason = str(approval.get("reason") or "the user denied the tool call")[:500]
            self.results.append(tool_result(inv.get("toolCallId"), "", {"type": "approval", "message": reason}))


def _ui_message(b: _Builder, role: str, parts: list[dict[str, Any]]) -> None:
    for part in parts:
        kind = part["type"]
        if kind == "text" and isinstance(part.get("text"), str):
            b.text(role, part["text"])
        elif kind == "step-start":
            b.close()
        elif kind.startswith("tool-") or kind == "dynamic-tool":
            b.tool_part(part)


def _model_message(b: _Builder, role: str, content: Any) -> None:
    if isinstance(content, str):
        b.text(role, content)
        return
    for part in _typed_parts(content):
        kind = part["type"]
        if kind == "text" and isinstance(part.get("text"), str):
            b.text("assistant" if role == "assistant" else role, part["text"])
        elif kind == "tool-call":
            b.call(part.get("toolCallId"), part.get("toolName"), part.get("input", part.get("args", {})))
        elif kind == "tool-result":
            b.close()
            if "output" in part:
                text, error = _output(part["output"])
            else:
                text, error = _text(part.get("result"))[:100_000], None
                error = (text[:2000] or "tool error") if part.get("isError") is True else None
            b.messages.append(tool_result(part.get("toolCallId"), text, error))


def convert(record: Any, ctx: Ctx) -> dict[str, Any]:
    """Convert one AI SDK message list (or a ``{"messages": [...]}`` record)."""
    rec, messages = listed(record, "messages", "AI SDK messages")
    b = _Builder()
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or not isinstance(msg.get("role"), str):
            raise AdapterError(f"message {i} is not an object with a role")
        b.close()  # each message is a turn of its own
        if isinstance(msg.get("parts"), list):
            _ui_message(b, msg["role"], _typed_parts(msg["parts"]))
        else:
            _model_message(b, msg["role"], msg.get("content"))
    b.close()
    return listed_record(rec, ctx, b.messages, {"format": FORMAT}, "id")
