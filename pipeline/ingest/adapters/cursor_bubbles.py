"""Cursor's composer sessions -> canonical trajectories: one ``composerData`` value and its
bubbles (:mod:`pipeline.ingest.adapters.cursor_store` reads them from ``state.vscdb``).

Layout (as the public readers of ``state.vscdb`` parse it: wakatime-cli ``pkg/ai/cursor.go``,
S2thend/cursor-history ``src/core/storage.ts``, vltansky/cursor-chat-history-mcp
``src/database/reader.ts``, thomas-pedersen/cursor-chat-browser; Cursor publishes no schema):

- ``composerData:<composerId>``: the session, ``{composerId, name, createdAt, unifiedMode,
  fullConversationHeadersOnly: [{bubbleId, type}], ...}`` (releases from mid-2025: each
  message a row of its own, in the headers' order) or, older, the messages inline in
  ``conversation: [bubble, ...]``;
- ``bubbleId:<composerId>:<bubbleId>``: one message, ``type`` 1 (user) or 2 (assistant),
  ``text``; an assistant bubble's tool call in ``toolFormerData``: ``name``, ``toolCallId``,
  ``rawArgs`` (the model's arguments, a JSON string), ``params`` (Cursor's own form of
  them, a JSON string), ``status`` (``completed``, ``error``, ``cancelled``, ``running``,
  ``pending``), ``result`` (a JSON string: a terminal command's ``{output, exitCode,
  rejected}``, a read's ``{contents}``), ``error``, ``userDecision`` (also under
  ``additionalData``).

Rules:
- order: the headers' bubbles in their order (a header without its row is skipped), then
  the inline ``conversation``'s (one a header already gave is not read twice), then rows no
  header names, by ``createdAt`` (numbers by value, ISO texts as text, none last) then id
  (a ``/summarize`` marker, a bubble written after the headers; several rows of one id in a
  store without its unique key: every one);
- a user bubble's ``text`` -> a user message; an assistant bubble's ``text`` -> an assistant
  message; a bubble's ``toolFormerData`` (any bubble's, an object or a JSON text of one; any
  other value: a call whose arguments are its text, unreadable: a call is never dropped) -> an
  assistant message with that one call, answered by a tool message at once (Cursor stores a
  call with its result); thinking is no step;
- arguments: ``rawArgs`` when it is a JSON object, else ``params`` when it is one, else
  ``rawArgs`` as it is (a text that is no JSON object: the record's own reject); an MCP call
  (its name opening with ``mcp`` or tool number 19 / 49, arguments ``{toolName, args}`` with
  ``providerIdentifier`` or ``serverName``) -> ``mcp__<server>__<tool>`` with its ``args``;
- the result's text: a terminal's ``output``, a read's ``contents``, else the result's JSON
  text; a user's rejection (``userDecision: rejected``, ``rejected: true``) -> error type
  ``approval`` (blocked), unless the result shows output, contents or a non-zero exit (it
  ran: ``unknown``); a non-zero ``exitCode`` (a number or a numeric text) -> ``exit_code`` (text
  rules: it ran); status ``error`` -> the call's ``error`` text (text rules); ``cancelled``,
  or no result while the session went on (``running``, ``pending``) -> ``unknown`` (it may
  have run: fail closed, never a dropped call).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pipeline.ingest.adapters._session import SizeGuard

FORMAT = "cursor"
USER, ASSISTANT = 1, 2
_MCP_SERVER_KEYS = ("providerIdentifier", "serverName")
_MCP_TOOLS = (19, 49)  # ClientSideToolV2's MCP and CALL_MCP_TOOL


def _object(value: Any) -> dict[str, Any] | None:
    """``value`` as a JSON object: a dict, or a string holding one; else None."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            return None
        return parsed if isinstance(parsed, dict) else None
    return None


def _tool_data(value: Any) -> dict[str, Any] | None:
    """A bubble's ``toolFormerData`` as an object: as stored, or a JSON text of one; anything
    else that is not empty is a call whose arguments are that value's text (unreadable: its
    record's reject, never a dropped call); None when there is none."""
    if isinstance(value, dict):
        return value or None
    if isinstance(value, str) and value:
        return _object(value) or {"rawArgs": value}
    if value in (None, "", [], 0, False):
        return None
    return {"rawArgs": json.dumps(value, ensure_ascii=False)}


def _created(bubble: dict[str, Any]) -> tuple[int, float, str]:
    """Sort key of a bubble's ``createdAt``: numbers by value, ISO texts as text, none last."""
    value = bubble.get("createdAt")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return 0, float(value), ""
    return (1, 0.0, value) if isinstance(value, str) else (2, 0.0, "")


def ordered(composer: dict[str, Any], rows: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The session's bubbles in Cursor's order (module docstring); ``rows``: the bubble rows
    by bubble id (several under one id in a store without its unique key; emptied)."""
    out: list[dict[str, Any]] = []
    named: set[str] = set()
    headers = composer.get("fullConversationHeadersOnly")
    for header in headers if isinstance(headers, list) else []:
        bid = header.get("bubbleId") if isinstance(header, dict) else None
        if isinstance(bid, str) and rows.get(bid):
            out.append(rows[bid].pop(0))
            named.add(bid)
    inline = composer.get("conversation")
    for bubble in inline if isinstance(inline, list) else []:
        if isinstance(bubble, dict):
            bid = bubble.get("bubbleId")
            if isinstance(bid, str) and rows.get(bid):
                out.append(rows[bid].pop(0))
            elif not (isinstance(bid, str) and bid in named):  # a header's bubble is read once
                out.append(bubble)
    rest = sorted(((_created(b), bid, k, b) for bid, found in rows.items() for k, b in enumerate(found)),
                  key=lambda t: t[:3])
    out.extend(b for *_, b in rest)
    rows.clear()
    return out


def _call(data: dict[str, Any], fallback_id: str) -> dict[str, Any]:
    """The canonical tool call of a ``toolFormerData``."""
    name = data.get("name") if isinstance(data.get("name"), str) and data.get("name") else None
    if name is None:
        name = f"cursor_tool_{data.get('tool')}" if isinstance(data.get("tool"), int) else "cursor_tool"
    raw = data.get("rawArgs")
    args: Any = _object(raw)
    if args is None:
        args = _object(data.get("params"))
    if args is None:  # as recorded: a text that is no JSON object is the record's own reject
        args = (raw or {}) if isinstance(raw, str) else ({} if raw is None else json.dumps(raw, ensure_ascii=False))
    mcp = name.lower().startswith(("mcp", "call_mcp")) or name == "CallMcpTool" or data.get("tool") in _MCP_TOOLS
    if mcp and isinstance(args, dict) and isinstance(args.get("toolName"), str):
        server = next((args[k] for k in _MCP_SERVER_KEYS if isinstance(args.get(k), str)), None)
        if server is not None and "args" in args:
            name = f"mcp__{server}__{args['toolName']}"
            inner = args["args"]
            args = inner if isinstance(inner, (dict, str)) else {}
    cid = data.get("toolCallId")
    cid = cid if isinstance(cid, str) and cid else fallback_id
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def _code(value: Any) -> int | None:
    """An exit code given as a number or a numeric text; None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def _decision(data: dict[str, Any]) -> Any:
    extra = data.get("additionalData")
    return data.get("userDecision") or (extra.get("userDecision") if isinstance(extra, dict) else None)


def _result(data: dict[str, Any], cid: str) -> dict[str, Any]:
    """The tool message answering the call of ``data`` (module docstring)."""
    status = data.get("status")
    raw = data.get("result")
    found = _object(raw)
    if found is not None:
        shown = next((found[k] for k in ("output", "contents") if isinstance(found.get(k), str)), None)
        content = shown if shown is not None else json.dumps(found, ensure_ascii=False, sort_keys=True)
    else:
        content = raw if isinstance(raw, str) else ("" if raw is None else json.dumps(raw, ensure_ascii=False))
    error: Any = None
    exit_code = None if found is None else next((c for c in map(_code, (found.get("exitCode"), found.get("exitCodeV2")))
                                                 if c is not None), None)
    if _decision(data) == "rejected" or (found is not None and found.get("rejected") is True):
        # a rejected call whose result holds output or an exit status ran all the same
        ran = bool(found and (found.get("output") or found.get("contents") or exit_code))
        error = ({"type": "unknown", "message": "rejected in Cursor, yet its result shows it ran"} if ran
                 else {"type": "approval", "message": "rejected by the user in Cursor"})
    elif status == "error":
        why = data.get("error")
        error = why if isinstance(why, str) and why else "Cursor marked the tool call as failed (status error)"
    elif exit_code:
        error = {"type": "exit_code", "message": f"exit code {exit_code}"}
    elif status == "cancelled":
        error = {"type": "unknown", "message": "cancelled in Cursor (it may have run)"}
    elif status != "completed" and raw is None:
        error = {"type": "unknown", "message": f"Cursor recorded no result (status {status!r})"}
    return {"role": "tool", "tool_call_id": cid, "content": content, "error": error}


def record(composer: dict[str, Any], bubbles: Iterable[dict[str, Any]], sid: str, suite: str | None,
           guard: SizeGuard) -> dict[str, Any]:
    """The canonical record of one composer session (``sid`` its id) from its ordered
    bubbles; every kept text counts against ``guard``."""
    messages: list[dict[str, Any]] = []
    skipped = calls = 0
    for n, bubble in enumerate(bubbles):
        kind = bubble.get("type")
        text = bubble.get("text") if isinstance(bubble.get("text"), str) else ""
        data = _tool_data(bubble.get("toolFormerData"))
        if kind in (USER, ASSISTANT) and text:
            guard.add(text)
            messages.append({"role": "user" if kind == USER else "assistant", "content": text})
        elif kind not in (USER, ASSISTANT) and data is None:
            skipped += 1
        if data is not None:  # a call, whatever the bubble's type says: never dropped
            bid = bubble.get("bubbleId")
            call = _call(data, bid if isinstance(bid, str) and bid else f"cursor_{n}")
            answer = _result(data, call["id"])
            guard.add(call["function"]["arguments"])
            guard.add(answer["content"])
            messages += [{"role": "assistant", "content": None, "tool_calls": [call]}, answer]
            calls += 1
    meta: dict[str, Any] = {"format": FORMAT, "output_format": "database", "composer_id": sid,
                            "tool_calls": calls}
    if skipped:
        meta["skipped_bubbles"] = skipped
    for key, name in (("name", "name"), ("unifiedMode", "mode"), ("forceMode", "force_mode"),
                      ("createdAt", "created_at")):
        value = composer.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            meta[name] = value[:4096] if isinstance(value, str) else value
    return {"trajectory_id": sid, "suite": suite or "default", "meta": meta, "messages": messages}
