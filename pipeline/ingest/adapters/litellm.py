"""LiteLLM ``StandardLoggingPayload`` records -> canonical records (one line = one model call).

What LiteLLM logs for every call (``kwargs["standard_logging_object"]``, the payload its
proxy's loggers write: https://docs.litellm.ai/docs/proxy/logging_spec): ``id`` (unique per
call), ``trace_id`` (shared by the calls of one overall request), ``call_type``
(``completion``, ``acompletion``, ...), ``status``, ``model``, ``messages`` (the request's
messages: OpenAI chat messages, or a prompt string) and ``response`` (a ``ModelResponse``:
``choices[0].message`` holds the reply and its ``tool_calls``; a string or null for
other calls or a failure, whose ``error_str`` is kept in ``meta``).

The conversation is ``messages`` with the response's message appended (read as the
canonical reader reads its messages, OpenAI's legacy ``function_call`` included): the
reply's tool calls are the call's last actions (their results are in the next call's
``messages``). ``messages`` a string: one user message; a text completion's
``choices[0].text``: assistant text.

The same reader takes a logged OpenAI-compatible chat call as API proxies and logging
middleware write it: ``{"request": {"model", "messages", "tools", ...}, "response":
<chat.completion>}`` (the request's ``messages``, then the response's message; its ``id``
from ``trajectory_id``, ``id``, else the response's ``id``, one per call).

A payload whose messages hold Anthropic typed blocks, or whose response is an Anthropic
message (LiteLLM's ``/v1/messages`` passthrough: Claude Code behind a LiteLLM proxy), is
read by the Anthropic reader; one in the Converse or Responses API layout is a
``malformed_record`` (its calls would be lost), never scored as text alone.

trajectory_id: ``trajectory_id``, else ``id``, else ``<file stem>:<source_line>``: one
payload is one model call, each holding the conversation so far, so a conversation logged
call by call is scored once per call (the ``trace_id``, which the calls share, is in
``meta``; its last call holds the whole conversation). suite: ``suite``, else ``default``.
"""

from __future__ import annotations

import json
from typing import Any

from pipeline.ingest.adapters import anthropic
from pipeline.ingest.adapters._common import AdapterError, Ctx, require_dict
from pipeline.ingest.adapters.bedrock import CALL_BLOCKS as CONVERSE_BLOCKS
from pipeline.ingest.adapters.legacy_calls import legacy_calls
from pipeline.ingest.records import canonical_message

FORMAT = "litellm"
# Anthropic content block types (calls and results) that say the payload's messages are Anthropic's
ANTHROPIC_BLOCKS = frozenset({*anthropic.CALL_BLOCKS, "tool_result", "mcp_tool_result"})
# payload fields kept in meta when they are strings
_META_KEYS = ("trace_id", "call_type", "status", "model", "error_str")


def payload(value: Any) -> bool:
    """True when ``value`` looks like a StandardLoggingPayload: ``messages`` beside the
    payload's own ``call_type`` and ``response`` / ``trace_id``."""
    return (isinstance(value, dict) and "messages" in value and "call_type" in value
            and bool({"response", "trace_id"} & value.keys()))


def _request(messages: Any, call_type: Any) -> list[Any]:
    """The request's messages: a list of message objects as is, a prompt string one user
    message (an embedding call's list of strings is no conversation: AdapterError)."""
    if isinstance(messages, str):
        return [canonical_message("user", messages)]
    if isinstance(messages, list):
        if not all(isinstance(m, dict) for m in messages):
            raise AdapterError(f"messages holds a non-object (call_type {call_type}): not a chat call")
        return list(messages)
    if messages is None:
        return []
    raise AdapterError(f"messages is {type(messages).__name__}, expected an array or a string")


def _reply(response: Any) -> dict[str, Any] | None:
    """The response's message: ``choices[0].message`` (or a text completion's
    ``choices[0].text``), a string response as assistant text; None when there is none."""
    if isinstance(response, str):
        return canonical_message("assistant", response) if response else None
    choices = response.get("choices") if isinstance(response, dict) else None
    first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
    if first is None:
        return None
    if isinstance(first.get("message"), dict):
        return {"role": "assistant", **first["message"]}
    return canonical_message("assistant", first["text"]) if isinstance(first.get("text"), str) else None


def _other_layout(rec: dict[str, Any]) -> str | None:
    """``anthropic`` when the call's messages hold Anthropic typed blocks (``tool_use``,
    ``tool_result``, ...) or its response is an Anthropic message; ``Bedrock Converse`` /
    ``Responses API`` for those layouts; None for OpenAI chat messages."""
    response = rec.get("response")
    if isinstance(response, dict) and (response.get("type") == "message" or "stop_reason" in response):
        return "anthropic"
    messages = rec.get("messages")
    blocks = [b for m in messages if isinstance(m, dict) and isinstance(m.get("content"), list)
              for b in m["content"] if isinstance(b, dict)] if isinstance(messages, list) else []
    if any(b.get("type") in ANTHROPIC_BLOCKS for b in blocks):
        return "anthropic"
    if any(CONVERSE_BLOCKS & b.keys() for b in blocks) or isinstance(response, dict) and isinstance(
            response.get("output"), dict):
        return "Bedrock Converse"
    if isinstance(response, dict) and isinstance(response.get("output"), list):
        return "Responses API"
    return None


def convert(record: Any, ctx: Ctx) -> dict[str, Any]:
    """Convert one StandardLoggingPayload, or one logged ``{request, response}`` chat call,
    to a canonical trajectory dict."""
    rec = require_dict(record, "record")
    if isinstance(rec.get("request"), dict) and "messages" in rec["request"]:
        response = rec.get("response")
        logged_id = response.get("id") if isinstance(response, dict) else None
        rec = {**rec["request"], **{k: v for k, v in rec.items() if k != "request"}}
        if "id" not in rec and isinstance(logged_id, str):
            rec["id"] = logged_id
    other = _other_layout(rec)
    if other == "anthropic":  # an /v1/messages passthrough: Anthropic blocks, not chat messages
        converted = anthropic.convert({**{k: rec[k] for k in ("system", "messages", "response") if k in rec},
                                       "trajectory_id": rec.get("trajectory_id", rec.get("id", f"{ctx.stem}:{ctx.line}"))},
                                      ctx)
        meta = {"format": FORMAT, **{k: rec[k] for k in _META_KEYS if isinstance(rec.get(k), str)}}
        return {**converted, "meta": meta, **({"suite": rec["suite"]} if "suite" in rec else {})}
    if other is not None:
        raise AdapterError(f"the call's messages or response are in the {other} layout, which this reader "
                           "does not take: its calls would be lost")
    messages = _request(rec.get("messages"), rec.get("call_type"))
    reply = _reply(rec.get("response"))
    if reply is not None:
        messages.append(reply)
    if not messages:
        raise AdapterError("neither 'messages' nor 'response' holds a message")
    meta: dict[str, Any] = {"format": FORMAT, **{k: rec[k] for k in _META_KEYS if isinstance(rec.get(k), str)}}
    out: dict[str, Any] = {"trajectory_id": rec.get("trajectory_id", rec.get("id", f"{ctx.stem}:{ctx.line}")),
                           "messages": messages, "meta": meta}
    if "suite" in rec:
        out["suite"] = rec["suite"]
    if not any(isinstance(m, dict) and isinstance(m.get("function_call"), dict) for m in messages):
        return out  # (ModelResponse messages carry "function_call": null)
    rewritten = legacy_calls(json.dumps(out, ensure_ascii=False))
    return rewritten if rewritten is not None else out
