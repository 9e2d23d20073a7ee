"""MCP JSON-RPC traffic logs (what an MCP gateway or proxy writes between agents and their
tool servers, one message or record a line) -> one trajectory per MCP session.

Layouts and message shapes: :mod:`pipeline.ingest.adapters.mcp_messages`. Rules:
- One file is one trajectory, id ``<file stem>``; when records name a session
  (``session_id``, ``sessionId``, ``mcp_session_id``, ``mcpSessionId``, ``mcp-session-id``,
  also under ``metadata``: the Streamable HTTP transport's ``Mcp-Session-Id``), one per
  session, id ``<file stem>:<session>`` (characters other than letters, digits and
  ``._:@+-`` replaced by ``-``, 128 at most), in order of their first line. Records without
  a session then form a trajectory ``<file stem>`` only when they hold a step.
- ``tools/call`` -> a call of ``params.name`` with ``params.arguments``, named
  ``mcp__<server>__<tool>`` when the record names its server (``server``, ``server_name``,
  ``serverName``, ``server_id``; the naming of the Anthropic and Codex readers' MCP calls);
  ``resources/read`` -> a ``read_resource`` call ``{"uri": ...}`` (role inference: the verb
  ``read`` and the resource argument ``uri``). Other methods (``initialize``,
  ``tools/list``, ``prompts/get``, ``sampling/createMessage``, notifications, ...) are no
  steps; they are counted in ``meta.methods``. The log holds no user or assistant text:
  none is made up (each call is an assistant message of its own, in log order).
- A response answers the request of its ``id`` in the same session and server (ids restart
  per connection): a request that reuses a pending id supersedes it. Client and server
  number their requests apart: a response is given to the server's pending request
  (``sampling/createMessage``, ``elicitation/create``, ``roots/list``) of that id only when
  no client request of it waits or its result is not a call's (no ``content`` list,
  ``contents``, ``isError`` or ``structuredContent``; or a sampling result's ``model``). A response that answers no request
  in the log (the log began later) is no step (``meta.unmatched_responses``).
- A call never answered keeps no result: as the last step it is scored ``unknown`` (a log
  cut while the call ran); followed by other steps, the trajectory is rejected
  ``missing_tool_result`` as in every reader (``meta.unanswered_calls``). A
  ``notifications/cancelled`` naming it answers it with ``{"type": "unknown"}`` (the client
  stopped waiting; the tool may have run).
- Errors: ``isError: true`` -> the result text as error text; a JSON-RPC ``error`` ->
  ``{type, message}`` by its code (``mcp_messages.ERROR_TYPES``), else its text (text rules).
- suite = ``--suite``, else ``mcp``; ``meta``: ``format``, ``session``, ``servers``
  (wrapper names and ``initialize`` results' ``serverInfo.name``), ``methods``, counts.
- Memory: one :class:`SizeGuard` of ``max_record_bytes`` for all of a file's sessions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pipeline.ingest.adapters._common import AdapterError, Ctx, tool_call, tool_result
from pipeline.ingest.adapters._session import DROPPED, SizeGuard
from pipeline.ingest.adapters.mcp_messages import SERVER_METHODS, is_mcp_method, json_id, outcome, unwrap
from pipeline.ingest.records import canonical_message

FORMAT = "mcp"
_UNSAFE_ID = re.compile(r"[^A-Za-z0-9._:@+-]+")
_CALL_RESULT_KEYS = ("contents", "isError", "structuredContent")  # and a `content` list


@dataclass(slots=True)
class _Request:
    """A request waiting for its response: its canonical call id (None: no step)."""

    call_id: str | None
    method: str


class _Session:
    """One trajectory: its messages, its pending requests, its counts."""

    def __init__(self, first_line: int, guard: SizeGuard) -> None:
        self.first_line = first_line
        self.guard = guard
        self.messages: list[dict[str, Any]] = []
        self.pending: dict[tuple[Any, ...], _Request] = {}  # (server, id, side) -> request
        self.used: dict[str, int] = {}
        self.methods: dict[str, int] = {}
        self.servers: list[str] = []
        self.unmatched = 0
        self.superseded = 0

    def take(self, msg: dict[str, Any], server: str | None) -> None:
        """Take one JSON-RPC message of this session."""
        if server is not None and server not in self.servers and len(self.servers) < 50:
            self.servers.append(server)
        method = msg.get("method")
        if isinstance(method, str):
            self._request(method, msg, server)
        elif "result" in msg or "error" in msg:
            self._response(msg, server)

    def _request(self, method: str, msg: dict[str, Any], server: str | None) -> None:
        name = method if is_mcp_method(method) else "(other)"
        if name in self.methods or len(self.methods) < 100:
            self.methods[name] = self.methods.get(name, 0) + 1
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        if method == "notifications/cancelled":
            self._cancelled(params, server)
            return
        rid = json_id(msg.get("id"))
        call = _call(method, params, server)
        call_id = None
        if call is not None:
            call_id = self._call_id(server, msg.get("id") if rid is not None else None)
            self.guard.add(call[1])
            self.messages.append(canonical_message("assistant", None, tool_calls=[tool_call(call_id, *call)]))
        if rid is not None:
            key = (server, rid, "server" if method in SERVER_METHODS else "client")
            self.superseded += key in self.pending and self.pending[key].call_id is not None
            self.pending[key] = _Request(call_id, method)

    def _call_id(self, server: str | None, rid: Any) -> str:
        base = f"{server}:{rid}" if server is not None else str(rid if rid is not None else "call")
        n = self.used.get(base, 0)
        self.used[base] = n + 1
        return base if n == 0 else f"{base}~{n}"

    def _response(self, msg: dict[str, Any], server: str | None) -> None:
        rid = json_id(msg.get("id"))
        client, other = (server, rid, "client"), (server, rid, "server")
        result = msg.get("result")
        call_like = "error" in msg or isinstance(result, dict) and "model" not in result and (
            isinstance(result.get("content"), list) or any(k in result for k in _CALL_RESULT_KEYS))
        key = client if client in self.pending and (call_like or other not in self.pending) else other
        request = self.pending.pop(key, None) if rid is not None else None
        if request is None:
            self.unmatched += 1
            return
        if request.method == "initialize" and isinstance(result, dict) and isinstance(result.get("serverInfo"), dict):
            info = result["serverInfo"].get("name")
            if isinstance(info, str) and info not in self.servers and len(self.servers) < 50:
                self.servers.append(info[:200])
        if request.call_id is not None:
            text, error = outcome(msg)
            self.guard.add(text)
            self.messages.append(tool_result(request.call_id, text, error))

    def _cancelled(self, params: dict[str, Any], server: str | None) -> None:
        rid = json_id(params.get("requestId"))
        request = self.pending.pop((server, rid, "client"), None) if rid is not None else None
        if request is None or request.call_id is None:
            return
        reason = params.get("reason") if isinstance(params.get("reason"), str) else "no reason given"
        text = f"cancelled by the client (notifications/cancelled): {reason[:500]}"
        self.messages.append(tool_result(request.call_id, "", {"type": "unknown", "message": text}))

    def meta(self) -> dict[str, Any]:
        """What this session's record says in ``meta`` beside ``format``."""
        meta: dict[str, Any] = {"methods": self.methods}
        if self.servers:
            meta["servers"] = self.servers
        unanswered = self.superseded + sum(r.call_id is not None for r in self.pending.values())
        if unanswered:
            meta["unanswered_calls"] = unanswered
        if self.unmatched:
            meta["unmatched_responses"] = self.unmatched
        return meta


def _call(method: str, params: dict[str, Any], server: str | None) -> tuple[str, dict[str, Any]] | None:
    """(tool name, arguments) of a request that is a step; None for the others."""
    prefix = f"mcp__{server}__" if server is not None else ""
    if method == "tools/call":
        name = params.get("name") if isinstance(params.get("name"), str) and params.get("name") else "(unnamed)"
        args = params.get("arguments")
        return prefix + name, args if isinstance(args, dict) else {} if args is None else {"arguments": args}
    if method == "resources/read":
        return prefix + "read_resource", {"uri": params.get("uri")}
    return None


def _trajectory_id(stem: str, session: str | None, taken: set[str]) -> str:
    """``<stem>`` or ``<stem>:<session>`` (sanitised), unique among ``taken``."""
    tid = stem if session is None else f"{stem}:{_UNSAFE_ID.sub('-', session)[:128]}"
    base, n = tid, 0
    while tid in taken:
        n += 1
        tid = f"{base}~{n}"
    taken.add(tid)
    return tid


def convert_session(items: Iterable[tuple[int, Any]], ctx: Ctx) -> Iterator[tuple[int, dict[str, Any]]]:
    """Convert one MCP traffic log (the reader's ``session`` layout): one record per session."""
    guard = SizeGuard(int(ctx.state.get("max_record_bytes", 32 * 2**20)))
    sessions: dict[str | None, _Session] = {}
    dropped: list[int] = []
    other = seen = 0
    for number, value in items:
        if value is DROPPED:
            dropped.append(number)
            continue
        messages, session, server = unwrap(value)
        if not messages:
            other += 1
            continue
        seen += len(messages)
        state = sessions.get(session) or sessions.setdefault(session, _Session(number, guard))
        for msg in messages:
            state.take(msg, server)
    if not seen:
        raise AdapterError("no JSON-RPC message: not an MCP traffic log")
    named = any(s is not None for s in sessions)
    taken: set[str] = set()
    for session, state in sorted(sessions.items(), key=lambda kv: kv[1].first_line):
        if session is None and named and not state.messages:
            continue  # a gateway's own lines beside its sessions: no trajectory of their own
        meta: dict[str, Any] = {"format": FORMAT, **state.meta()}
        if session is not None:
            meta["session"] = session[:200]
        if other:
            meta["other_lines"] = other
        if dropped:
            meta["dropped_lines"] = dropped
        yield state.first_line, {"trajectory_id": _trajectory_id(ctx.stem, session, taken),
                                 "suite": ctx.state.get("suite") or "mcp", "meta": meta,
                                 "messages": state.messages}
