"""Amazon Bedrock Converse API transcripts -> canonical records.

Converse messages (``bedrock-runtime`` ``Converse`` / ``ConverseStream``; what boto3 apps
and the Strands Agents SDK keep as ``agent.messages``) carry a list of content blocks
named by their one key, not by a ``type``:

- ``{"text": str}`` -> text (user or assistant); ``guardContent.text.text`` is user text;
  ``citationsContent.content[].text`` assistant text; ``reasoningContent``, ``image``,
  ``document``, ``video``, ``audio``, ``cachePoint`` are no steps.
- assistant ``{"toolUse": {"toolUseId", "name", "input"}}`` -> a tool call (``input``
  kept as an object).
- user ``{"toolResult": {"toolUseId", "content": [{"text"} | {"json"} | ...], "status"}}``
  -> one ``role=tool`` message in block order; ``json`` blocks as their JSON text;
  ``status: "error"`` -> ``error`` is the result text.

Accepted records:

- ``{"trajectory_id"?, "id"?, "suite"?, "system"?, "messages": [...], "output"?}``: a
  Converse request (``system`` a list of ``{"text"}`` blocks or a string) with, when the
  app logged the reply beside it, the response's ``output.message`` as the last turn;
  or the bare list of messages (one conversation, id ``<file stem>:<source_line>``).
- a model invocation log line (``schemaType: "ModelInvocationLog"``, what Bedrock's
  invocation logging writes to S3 / CloudWatch): ``input.inputBodyJson`` is the request
  and ``output.outputBodyJson`` the reply. ``Converse`` bodies as above; an
  ``InvokeModel`` body of Anthropic's Messages API (``anthropic_version``) is read by the
  Anthropic reader, its reply's ``content`` the last assistant turn. One line is ONE
  model call (``trajectory_id`` its ``requestId``): an agent makes a call per step, each
  repeating the conversation so far, so a conversation logged this way is scored once
  per call (README "Input formats").
- a Strands Agents session folder (``FileSessionManager`` / ``S3SessionManager``:
  ``session_<sid>/agents/agent_<aid>/messages/message_<n>.json``, each file
  ``{"message": <Converse message>, "message_id": n, "redact_message", ...}``): its
  ``message_0.json`` stands for the agent's conversation, read in index order (a missing
  index rejects it: ``malformed_record``; all files together within one record's
  ``max_record_bytes``); the other message files, ``session.json`` and ``agent.json`` are
  skipped by detection when their heads say so; ``trajectory_id`` ``<sid>:<aid>``. The original ``message`` is read, not a
  guardrail's ``redact_message`` (what was sent is what is scored).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pipeline.ingest.adapters import anthropic
from pipeline.ingest.adapters._common import (
    AdapterError, Ctx, RecordTooLarge, assistant, listed_record, require_dict, require_list, tool_call, tool_result,
)
from pipeline.ingest.adapters._folders import folder_names, read_json_file
from pipeline.ingest.records import canonical_message
from pipeline.storage import Location

# the content blocks that mark a Converse message (no other chat format names a block so)
CALL_BLOCKS = frozenset({"toolUse", "toolResult"})
# keys of an OpenAI chat message, which a Converse message never has
OPENAI_KEYS = frozenset({"tool_calls", "function_call", "tool_call_id"})
MESSAGE_NAME = re.compile(r"^message_(\d+)\.json$")


def session_message_index(path: Location) -> int | None:
    """The index of a Strands session message file
    (``.../agents/agent_<aid>/messages/message_<n>.json``), else None."""
    m = MESSAGE_NAME.match(path.name)
    agent = path.parent.parent
    if m is None or path.parent.name != "messages" or not agent.name.startswith("agent_") \
            or agent.parent.name != "agents" or not agent.parent.parent.name.startswith("session_"):
        return None
    return int(m.group(1))


def session_bookkeeping(path: Location) -> bool:
    """True for a Strands session's ``session.json`` / ``agent.json`` (no messages)."""
    return (path.name == "session.json" and path.parent.name.startswith("session_")
            or path.name == "agent.json" and path.parent.name.startswith("agent_")
            and path.parent.parent.name == "agents")


def _texts(blocks: list[Any]) -> list[str]:
    """The texts of Converse content blocks (``text``, ``guardContent``, ``citationsContent``)."""
    out: list[str] = []
    for block in blocks:
        if isinstance(block, str):
            out.append(block)
        elif isinstance(block, dict):
            text = block.get("text")
            if isinstance(text, str):
                out.append(text)
            guard = block.get("guardContent")
            if isinstance(guard, dict) and isinstance(guard.get("text"), dict) \
                    and isinstance(guard["text"].get("text"), str):
                out.append(guard["text"]["text"])
            cited = block.get("citationsContent")
            if isinstance(cited, dict) and isinstance(cited.get("content"), list):
                out.extend(_texts(cited["content"]))
    return out


def _result_text(content: Any) -> str | None:
    """A ``toolResult``'s content as text: its ``text`` blocks, ``json`` blocks as JSON."""
    if content is None or isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else [content]:
        if isinstance(block, dict) and "json" in block:
            parts.append(json.dumps(block["json"], ensure_ascii=False))
        elif isinstance(block, dict) and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif isinstance(block, str):
            parts.append(block)
    return "\n".join(parts)


def _assistant(content: Any) -> dict[str, Any]:
    if not isinstance(content, list):
        return assistant(content if isinstance(content, str) else None)
    calls = [tool_call(use.get("toolUseId"), use.get("name"), use.get("input", {}))
             for use in (b.get("toolUse") for b in content if isinstance(b, dict))
             if isinstance(use, dict)]
    texts = _texts(content)
    return assistant("\n".join(texts) if texts else None, calls)


def _user(content: Any) -> list[dict[str, Any]]:
    if not isinstance(content, list):
        return [canonical_message("user", content if isinstance(content, str) else None)]
    out: list[dict[str, Any]] = []
    texts: list[str] = []
    for block in content:
        result = block.get("toolResult") if isinstance(block, dict) else None
        if isinstance(result, dict):
            if texts:
                out.append(canonical_message("user", "\n".join(texts)))
                texts = []
            text = _result_text(result.get("content"))
            error = (text or "error") if result.get("status") == "error" else None
            out.append(tool_result(result.get("toolUseId"), text, error))
        else:
            texts.extend(_texts([block]))
    if texts:
        out.append(canonical_message("user", "\n".join(texts)))
    return out


def _system(system: Any) -> list[dict[str, Any]]:
    if isinstance(system, str):
        return [canonical_message("system", system)]
    if isinstance(system, list):
        texts = _texts(system)
        return [canonical_message("system", "\n".join(texts))] if texts else []
    return []


def converse_messages(body: dict[str, Any], reply: Any = None) -> list[dict[str, Any]]:
    """Canonical messages of a Converse request ``body`` (``system`` + ``messages``),
    then ``reply`` (a Converse response's ``output.message``) when it is a message."""
    turns = list(require_list(body.get("messages"), "messages"))
    if isinstance(reply, dict) and "role" in reply:
        turns.append(reply)
    messages = _system(body.get("system"))
    for i, msg in enumerate(turns):
        msg = require_dict(msg, f"messages[{i}]")
        role = msg.get("role")
        if OPENAI_KEYS & msg.keys() or role in ("tool", "function"):  # its calls would be lost here
            raise AdapterError(f"messages[{i}] is an OpenAI-style chat message (tool_calls / tool role), "
                               "not Converse: use --format canonical")
        if role == "assistant":
            messages.append(_assistant(msg.get("content")))
        elif role == "user":
            messages.extend(_user(msg.get("content")))
        elif isinstance(role, str):
            messages.append(canonical_message(role, "\n".join(_texts(msg.get("content") or []))
                                              if isinstance(msg.get("content"), list) else msg.get("content")))
        else:
            raise AdapterError(f"messages[{i}] has no role")
    return messages


def _reply(output: Any) -> Any:
    """The message of a Converse response (``{"output": {"message": ...}}``), else None."""
    inner = output.get("output") if isinstance(output, dict) else None
    return inner.get("message") if isinstance(inner, dict) else None


def _invocation(rec: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    """One model invocation log line (one model call) -> its conversation."""
    body = require_dict((rec.get("input") or {}).get("inputBodyJson") if isinstance(rec.get("input"), dict)
                        else None, "input.inputBodyJson")
    out_body = rec["output"].get("outputBodyJson") if isinstance(rec.get("output"), dict) else None
    meta: dict[str, Any] = {"format": "bedrock", "operation": rec.get("operation"), "model_id": rec.get("modelId")}
    if isinstance(rec.get("requestMetadata"), dict):
        meta["request_metadata"] = rec["requestMetadata"]
    if "anthropic_version" in body:
        turns = list(require_list(body.get("messages"), "input.inputBodyJson.messages"))
        if isinstance(out_body, dict) and isinstance(out_body.get("content"), list):
            turns.append({"role": "assistant", "content": out_body["content"]})
        converted = anthropic.convert({"system": body.get("system"), "messages": turns} if "system" in body
                                      else {"messages": turns}, ctx)
        messages = converted["messages"]
    else:
        messages = converse_messages(body, _reply(out_body))
    tid = rec.get("requestId") or f"{ctx.stem}:{ctx.line}"
    return {"trajectory_id": tid, "messages": messages, "meta": meta}


def _strands_session(first: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    """The conversation of the Strands session agent whose ``message_0.json`` is ``ctx.path``
    (``first`` its parsed content): every message file of the folder in index order."""
    limit = int(ctx.state.get("max_record_bytes", 32 * 2**20))
    folder = ctx.path.parent
    by_index: dict[int, Location] = {}
    for name in sorted(folder_names(folder)):
        m = MESSAGE_NAME.match(name)
        if m is not None:
            by_index.setdefault(int(m.group(1)), folder / name)
    last = max(by_index, default=0)
    missing = next((i for i in range(last + 1) if i not in by_index), None)
    if missing is not None:  # never score a conversation with messages left out
        raise AdapterError(f"message_{missing}.json is missing from {folder.name}/ "
                           f"({len(by_index)} message files up to message_{last}.json): the conversation is incomplete")
    turns = [require_dict(first, "message_0.json").get("message")]
    total = 0
    for i in range(1, last + 1):
        # the whole conversation is one record: its files share one record's byte budget,
        # each read within what is left of it (a file past it is refused before parsing)
        entry, size = read_json_file(by_index[i], max(limit - total, 1))
        total += size
        turns.append(require_dict(entry, f"message_{i}.json").get("message"))
    agent_dir = folder.parent
    session = agent_dir.parent.parent.name.removeprefix("session_")
    meta = {"format": "bedrock", "strands_session": session, "messages_read": len(turns)}
    return {"trajectory_id": f"{session}:{agent_dir.name.removeprefix('agent_')}",
            "messages": converse_messages({"messages": turns}), "meta": meta}


def convert(record: Any, ctx: Ctx) -> dict[str, Any]:
    """Convert one Converse record, bare message list, model invocation log line or
    Strands session (its first message file) to a canonical trajectory dict (see the
    module docstring)."""
    if isinstance(record, dict) and record.get("schemaType") == "ModelInvocationLog":
        return _invocation(record, ctx)
    if isinstance(record, dict) and "message" in record and "message_id" in record \
            and session_message_index(ctx.path) == 0:
        return _strands_session(record, ctx)
    rec = require_dict({"messages": record} if isinstance(record, list) else record, "record")
    if isinstance(rec.get("request"), dict) and "messages" in rec["request"]:  # a logged call
        rec = {**rec["request"], "output": (rec.get("response") or {}).get("output")
               if isinstance(rec.get("response"), dict) else None,
               **{k: v for k, v in rec.items() if k in ("trajectory_id", "id", "suite", "meta")}}
    messages = converse_messages(rec, _reply(rec))
    meta = {**rec["meta"], "format": "bedrock"} if isinstance(rec.get("meta"), dict) else {"format": "bedrock"}
    return listed_record(rec, ctx, messages, meta, "id", "sessionId")


def converse_message(value: Any) -> bool:
    """True when ``value`` is one Converse message (a ``role`` and a list of content
    blocks, no record key): the first element of a bare ``agent.messages`` dump."""
    return (isinstance(value, dict) and isinstance(value.get("role"), str) and "messages" not in value
            and isinstance(value.get("content"), list)
            and all(isinstance(b, dict) and "type" not in b for b in value["content"]))
