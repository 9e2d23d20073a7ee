"""Anthropic Messages API transcripts -> canonical records.

Accepted record: ``{"trajectory_id"?, "suite"?, "system"?, "messages": [...]}`` where
each message is ``{"role": "user"|"assistant", "content": str | [blocks]}``, or the bare
list of messages (one conversation, e.g. Cline's ``api_conversation_history.json``). A
logged ``messages.create`` call with its reply, ``{"model", "system"?, "messages",
"response": Message}`` or ``{"request": {...}, "response": Message}``, is the request's
messages followed by the reply's ``content`` as one more assistant message.

- assistant ``text`` blocks -> assistant text; ``tool_use`` / ``server_tool_use`` ``{id,
  name, input}`` -> tool calls (``input`` kept as an object); ``mcp_tool_use`` (the MCP
  connector) ``{id, name, server_name, input}`` -> a call named ``mcp__<server>__<name>``
  (the MCP names of Claude Code and Codex); ``thinking`` blocks are dropped.
- result blocks inside the assistant's own content (server tools: ``web_search_tool_result``,
  ``web_fetch_tool_result``, ``code_execution_tool_result``, ``bash_code_execution_tool_result``,
  ... any ``*_tool_result``; the MCP connector's ``mcp_tool_result``) split the message: the
  text and calls before them, then one ``role=tool`` message per result block, then an
  assistant message of the blocks after them. A result's text: a string as is, text blocks'
  text, search results as ``{title, url}`` JSON, a fetched document's text, a code run as
  ``{stdout, stderr, return_code}`` JSON, other content as JSON (``encrypted_*`` fields
  dropped). Error: ``is_error: true`` -> the result text; a ``*_error`` content object
  (``web_search_tool_result_error`` ...) -> ``<type>: <error_code>``; a code run's non-zero
  ``return_code`` -> ``{"type": "exit_code"}`` (the policy's text rules, as Codex's).
- user ``text`` blocks -> user message; each ``tool_result`` ``{tool_use_id, content,
  is_error}`` -> one ``role=tool`` message, in block order; ``is_error: true`` -> ``error``
  is the result text.
- ``system`` (string or text blocks) -> a leading system message.
- Cline / Roo Code XML calls: a conversation with no native call block anywhere (``CALL_BLOCKS``)
  and a Cline mark in a user message (``cline_xml.cline_marked``: an
  ``<environment_details>`` block, a result header) reads the calls its assistant text writes as XML and their ``[<tool> for ...] Result:``
  text in the next user message (:mod:`pipeline.ingest.adapters.cline_xml`); in a mixed
  history only the native calls count (XML there is text).
- trajectory_id: ``trajectory_id``, else ``id``, else the reply's ``id``, else
  ``<file stem>:<source_line>``.
"""

from __future__ import annotations

import json
from typing import Any

from pipeline.ingest.adapters._common import (
    AdapterError, Ctx, assistant, require_dict, require_list, text_of, tool_call, tool_result,
)
from pipeline.ingest.adapters.cline_xml import XmlTools, cline_marked
from pipeline.ingest.records import canonical_message

# content blocks that carry a tool call (client tools, server tools, the MCP connector's)
CALL_BLOCKS = ("tool_use", "server_tool_use", "mcp_tool_use")
# keys of a code run's result that are its output
_RUN_KEYS = ("stdout", "stderr", "return_code")


def _as_json(value: Any) -> str:
    """``value`` as JSON text (non-ASCII kept as is)."""
    return json.dumps(value, ensure_ascii=False, default=str)


def _is_result_block(kind: Any) -> bool:
    """True for a result block an assistant message holds itself: a server tool's
    ``*_tool_result`` or the MCP connector's ``mcp_tool_result``."""
    return isinstance(kind, str) and (kind == "mcp_tool_result" or kind.endswith("_tool_result"))


def _call(block: dict[str, Any]) -> dict[str, Any]:
    """The canonical call of a call block (an MCP call named ``mcp__<server>__<name>``)."""
    name = block.get("name")
    server = block.get("server_name")
    if block.get("type") == "mcp_tool_use" and isinstance(server, str) and server:
        name = f"mcp__{server}__{name}"
    return tool_call(block.get("id"), name, block.get("input", {}))


def _without_encrypted(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` without its ``encrypted_*`` fields (opaque blobs the API echoes back)."""
    return {k: v for k, v in value.items() if not (isinstance(k, str) and k.startswith("encrypted_"))}


def _item_text(item: Any) -> str:
    """One item of a result's content list: a text block's text, a search result's
    ``{title, url}``, anything else as JSON."""
    if isinstance(item, str):
        return item
    if isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str):
        return item["text"]
    if isinstance(item, dict) and "url" in item and "title" in item:
        return _as_json({"title": item.get("title"), "url": item.get("url")})
    return _as_json(_without_encrypted(item) if isinstance(item, dict) else item)


def _document_text(value: Any) -> str | None:
    """A fetched document's text (``{"type": "document", "source": {"data": ...}}``)."""
    source = value.get("source") if isinstance(value, dict) else None
    if not isinstance(source, dict):
        return None
    data = source.get("data")
    return data if isinstance(data, str) else text_of(source.get("content"))


def _object_result(content: dict[str, Any]) -> tuple[str, Any]:
    """(text, error) of a result whose content is one object (an error, a fetched page,
    a code run, ...)."""
    kind = content.get("type")
    if isinstance(kind, str) and kind.endswith("_error"):
        return _as_json(content), f"{kind}: {content.get('error_code')}"
    if any(k in content for k in _RUN_KEYS):
        text = _as_json({k: content.get(k) for k in _RUN_KEYS if k in content})
        code = content.get("return_code")
        error = None
        if isinstance(code, int) and code != 0:
            error = {"type": "exit_code", "message": f"exit code {code}: {text[:300]}"}
        return text, error
    document = _document_text(content.get("content"))
    if document is not None:
        return "\n".join(t for t in (content.get("url"), document) if isinstance(t, str)), None
    if isinstance(content.get("content"), list):
        return "\n".join(_item_text(i) for i in content["content"]), None
    return _as_json(_without_encrypted(content)), None


def _result(block: dict[str, Any]) -> dict[str, Any]:
    """The canonical tool message of a result block (server tool or MCP connector)."""
    content = block.get("content")
    error: Any = None
    if isinstance(content, dict):
        text, error = _object_result(content)
    elif isinstance(content, list):
        text = "\n".join(_item_text(i) for i in content)
    else:
        text = text_of(content)
    if block.get("is_error") is True and error is None:
        error = text or "error"
    return tool_result(block.get("tool_use_id"), text, error)


def _assistant(content: Any, xml: XmlTools | None = None) -> list[dict[str, Any]]:
    """An assistant message's canonical messages: its text and calls, split at each run of
    result blocks into assistant -> tool results -> assistant (at least one message);
    with ``xml``, also the calls its text writes as XML."""
    if xml is not None:
        xml.turn()
    if not isinstance(content, list):
        text = text_of(content)
        return [assistant(text, xml.calls([text]) if xml is not None and text else None)]
    out: list[dict[str, Any]] = []
    texts: list[str] = []
    calls: list[dict[str, Any]] = []

    def flush() -> None:
        if xml is not None:
            calls.extend(xml.calls(texts))
        if texts or calls:
            out.append(assistant("\n".join(texts) if texts else None, list(calls)))
            texts.clear()
            calls.clear()

    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind in CALL_BLOCKS:
            calls.append(_call(block))
        elif _is_result_block(kind):
            flush()
            out.append(_result(block))
    flush()
    return out or [assistant(None)]


def _user(content: Any, xml: XmlTools | None = None) -> list[dict[str, Any]]:
    """A user message's canonical messages: its text, and one tool message per ``tool_result``
    (with ``xml``, also per ``[<tool> ...] Result:`` text answering an XML call)."""
    if not isinstance(content, list):
        content = [content] if xml is not None and isinstance(content, str) else content
    if not isinstance(content, list):
        return [canonical_message("user", text_of(content))]
    out: list[dict[str, Any]] = []
    texts: list[str] = []

    def flush() -> None:
        if texts:
            out.append(canonical_message("user", "\n".join(texts)))
            texts.clear()

    for block in content:
        text = block if isinstance(block, str) else block.get("text") if isinstance(block, dict) \
            and block.get("type") == "text" else None
        if xml is not None and isinstance(text, str):
            answered, output = xml.text(text)
            if answered:
                flush()
                out.extend(answered)
            if output:
                continue
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
    if xml is not None:
        xml.close()
    return out


def _native(messages: list[Any]) -> bool:
    """True when a message holds a native call block (Cline's XML calls are then text)."""
    return any(isinstance(b, dict) and b.get("type") in CALL_BLOCKS
               for m in messages if isinstance(m, dict) and isinstance(m.get("content"), list)
               for b in m["content"])


def _reply(rec: dict[str, Any]) -> dict[str, Any] | None:
    """The logged reply (a Message) of a request record: ``response`` when it is an object
    with ``content``, else None."""
    response = rec.get("response")
    return response if isinstance(response, dict) and "content" in response else None


def convert(record: Any, ctx: Ctx) -> dict[str, Any]:
    """Convert one Anthropic-style record (or a bare list of its messages:
    :mod:`pipeline.ingest.adapters.bare_lists`; or a logged request with its ``response``)
    to a canonical trajectory dict."""
    rec = require_dict({"messages": record} if isinstance(record, list) else record, "record")
    request = rec["request"] if isinstance(rec.get("request"), dict) and "messages" in rec["request"] else rec
    reply = _reply(rec)
    messages: list[dict[str, Any]] = []
    system = request.get("system", rec.get("system"))
    if system is not None:
        messages.append(canonical_message("system", text_of(system)))
    listed = require_list(request.get("messages"), "messages")
    reply_content = reply.get("content") if reply is not None else None
    native = _native(listed) or _native([{"content": reply_content}])
    xml = XmlTools(listed) if not native and cline_marked(listed) else None
    for i, msg in enumerate(listed):
        msg = require_dict(msg, f"messages[{i}]")
        role = msg.get("role")
        if role == "assistant":
            messages.extend(_assistant(msg.get("content"), xml))
        elif role == "user":
            messages.extend(_user(msg.get("content"), xml))
        elif isinstance(role, str):
            messages.append(canonical_message(role, text_of(msg.get("content"))))
        else:
            raise AdapterError(f"messages[{i}] has no role")
    if reply is not None:
        messages.extend(_assistant(reply_content, xml))
    if "trajectory_id" in rec:
        tid = rec["trajectory_id"]
    elif "id" in rec:
        tid = rec["id"]
    elif reply is not None and reply.get("id") is not None:
        tid = reply["id"]
    else:
        tid = f"{ctx.stem}:{ctx.line}"
    out: dict[str, Any] = {"trajectory_id": tid, "messages": messages,
                           "meta": {"format": "anthropic"}}
    if "suite" in rec:
        out["suite"] = rec["suite"]
    if isinstance(rec.get("meta"), dict):
        out["meta"] = {**rec["meta"], "format": "anthropic"}
    return out
