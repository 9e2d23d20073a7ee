"""The shapes of MCP JSON-RPC traffic logs (:mod:`pipeline.ingest.adapters.mcp`): which log
records hold which messages, and what a response says.

Shapes from the MCP specification (``schema.ts``, revisions 2025-03-26 to 2025-11-25):
a request ``{jsonrpc: "2.0", id, method, params}``, a notification (no ``id``), a response
``{jsonrpc, id, result}`` or ``{jsonrpc, id, error: {code, message, data?}}``; a
``tools/call`` result (``CallToolResult``) holds ``content`` blocks (``text``, ``image``,
``audio``, ``resource_link``, ``resource`` = an embedded resource ``{uri, text | blob}``),
an optional ``structuredContent`` and ``isError``; a ``resources/read`` result
(``ReadResourceResult``) holds ``contents`` (``{uri, mimeType?, text | blob}``).

Log records, as gateways and proxies write them (see the README, "Input formats"):
- a bare message (a JSON-RPC batch, an array of them, is its messages in order);
- a record holding ONE message under ``message``, ``payload`` or ``data`` (``{timestamp,
  direction, session_id, message}``; Spanory-style capture records ``{sessionId,
  direction, payload}``);
- a record holding one exchange, ``request`` + ``response`` (Fiberplane's MCP gateway
  capture records, ``metadata: {serverName, sessionId}``) or ``mcpRequest`` +
  ``mcpResponse`` (hosted MCP server logs with ``mcpSessionId``).
Session and server names come from the record's keys, or from its ``metadata`` object.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

# the methods of the MCP specification (``notifications/*`` too): a message naming one is MCP's
METHODS = {"initialize", "ping", "tools/call", "tools/list", "resources/read", "resources/list",
           "resources/templates/list", "resources/subscribe", "resources/unsubscribe", "prompts/get",
           "prompts/list", "sampling/createMessage", "elicitation/create", "roots/list", "completion/complete",
           "logging/setLevel", "tasks/get", "tasks/list", "tasks/result", "tasks/cancel"}
WRAPPERS = ("message", "payload", "data")  # a record's key holding one message
PAIRS = (("request", "response"), ("mcpRequest", "mcpResponse"))  # one exchange per record
SESSION_KEYS = ("session_id", "sessionId", "mcp_session_id", "mcpSessionId", "mcp-session-id", "Mcp-Session-Id",
                "session")
SERVER_KEYS = ("server", "server_name", "serverName", "server_id", "serverId")
# JSON-RPC error codes -> the canonical error type (``[exec_status.types]``): the request was
# refused before the tool ran (parse error, invalid request, unknown method or tool, invalid
# arguments, resource not found: failed), or the client stopped waiting (the SDKs' request
# timeout, -32001: unknown, it may have run). Other codes: the message goes to the text rules.
ERROR_TYPES = {-32700: "parsing", -32600: "validation", -32601: "validation", -32602: "validation",
               -32002: "not_found", -32001: "timeout"}
# ... unless the message says the request was refused: gateways answer a policy block with
# whatever code (-32602 "Request blocked by security policy"), and a structured type would
# beat the policy's approval/guard text rules, so such a message stays error TEXT
_REFUSAL = re.compile(r"block|\bden(y|ied|ial)|forbid|refus|reject|not (allowed|permitted|approved)|"
                      r"polic(y|ies)|guard|approv|unauthori[sz]|permission|disallow", re.IGNORECASE)


def is_mcp_method(method: Any) -> bool:
    """True for a method of the MCP specification (``notifications/...`` included)."""
    return isinstance(method, str) and (method in METHODS or method.startswith("notifications/"))


def is_message(value: Any) -> bool:
    """True for a JSON-RPC message: an object with ``jsonrpc``, or (a gateway that drops it)
    with a ``method``, or an ``id`` and a ``result`` / ``error``."""
    if not isinstance(value, dict):
        return False
    return "jsonrpc" in value or isinstance(value.get("method"), str) \
        or "id" in value and ("result" in value or "error" in value)


def _field(record: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    """The first non-empty string or integer under ``keys`` in a record or its ``metadata``."""
    meta = record.get("metadata")
    for where in (record, meta if isinstance(meta, dict) else {}):
        for key in keys:
            value = where.get(key)
            if isinstance(value, str) and value or isinstance(value, int) and not isinstance(value, bool):
                return str(value)
    return None


def _header_session(record: dict[str, Any]) -> str | None:
    """The ``Mcp-Session-Id`` of a ``headers`` object (any case; its first 100 names) of a
    record or its ``metadata``: the Streamable HTTP transport's session header."""
    meta = record.get("metadata")
    for where in (record, meta if isinstance(meta, dict) else {}):
        headers = where.get("headers")
        if not isinstance(headers, dict):
            continue
        for name, value in itertools.islice(headers.items(), 100):
            if isinstance(name, str) and name.lower() == "mcp-session-id" and isinstance(value, str) and value:
                return value
    return None


def unwrap(record: Any) -> tuple[list[dict[str, Any]], str | None, str | None]:
    """(the messages of one log record in order, its session, its server); no messages for
    a record that holds none (a gateway's own log line)."""
    if isinstance(record, list):
        return [m for m in record if is_message(m)], None, None
    if not isinstance(record, dict):
        return [], None, None
    if "jsonrpc" in record:
        return [record], None, None
    session, server = _field(record, SESSION_KEYS) or _header_session(record), _field(record, SERVER_KEYS)
    for key in WRAPPERS:
        value = record.get(key)
        if is_message(value):
            return [value], session, server
        if isinstance(value, list) and value and all(is_message(m) for m in value):
            return list(value), session, server
    for ask, answer in PAIRS:
        found = [record[k] for k in (ask, answer) if is_message(record.get(k))]
        if found:
            return found, session, server
    return ([record], None, None) if is_message(record) else ([], session, server)


def json_id(value: Any) -> tuple[str, Any] | None:
    """A JSON-RPC id as a key (``7`` and ``"7"`` are different ids); None for no usable id."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    return type(value).__name__, value


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def content_text(result: dict[str, Any]) -> str:
    """The text of a ``tools/call`` / ``resources/read`` result: ``text`` blocks, embedded
    resources' text, resource links' uri, a read's ``contents`` texts, joined by lines; with
    none of these, ``structuredContent`` as JSON. Images, audio and blobs are left out."""
    parts: list[str] = []
    blocks = [b for key in ("content", "contents") if isinstance(result.get(key), list) for b in result[key]]
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if isinstance(block.get("text"), str) and kind in ("text", None):
            parts.append(block["text"])
        elif kind == "resource" and isinstance(block.get("resource"), dict):
            text = block["resource"].get("text")
            if isinstance(text, str):
                parts.append(text)
        elif kind == "resource_link" and isinstance(block.get("uri"), str):
            parts.append(block["uri"])
    if not parts and result.get("structuredContent") is not None:
        return _dumps(result["structuredContent"])
    return "\n".join(parts)


def outcome(message: dict[str, Any]) -> tuple[str, Any]:
    """(result text, canonical error or None) of a response to a call: a JSON-RPC ``error``
    -> ``{type, message}`` by its code (``ERROR_TYPES``) unless its message words a refusal
    (``_REFUSAL``), else ``JSON-RPC error <code>: <message>`` (text rules); ``isError:
    true`` -> the result text as error text (text rules)."""
    error = message.get("error")
    if error is not None:
        err = error if isinstance(error, dict) else {"message": error}
        code = err.get("code")
        text = f"JSON-RPC error {code}: {err.get('message')}"
        if err.get("data") is not None:
            text += f" ({_dumps(err['data'])[:500]})"
        kind = ERROR_TYPES.get(code) if isinstance(code, int) and not isinstance(code, bool) else None
        kind = None if _REFUSAL.search(str(err.get("message"))[:2000]) else kind
        return text, ({"type": kind, "message": text} if kind else text)
    result = message.get("result")
    result = result if isinstance(result, dict) else {}
    text = content_text(result)
    if result.get("isError") is True:
        return text, text or "isError: true"
    return text, None
