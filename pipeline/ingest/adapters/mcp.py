"""MCP JSON-RPC traffic logs (what an MCP gateway or proxy writes between agents and their
tool servers, one message or record a line) -> one trajectory per MCP session.

Layouts and message shapes: :mod:`pipeline.ingest.adapters.mcp_messages`. Rules:
- One file is one trajectory, id ``<folder>/<file stem>``; when records name a session
  (``mcp_messages.SESSION_KEYS``, also under ``metadata``, or a ``headers`` object's
  ``Mcp-Session-Id``), one per session, id ``<file stem>:<session>`` (characters other than
  letters, digits and ``._:@+-`` replaced by ``-``, 128 at most), in order of their first
  line. Records without a session then form a trajectory only when they hold a step. A
  top-level array (a ``.json`` document, a batch line) is its elements, each a record.
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
  number their requests apart: who sent a message is told by :mod:`mcp_sides` (method,
  record direction, result shape); an error reply to an id waiting on both sides with no
  direction is paired with neither (``meta.ambiguous_responses``). Task-augmented calls
  (2025-11-25): the ``tasks/result`` response answers the call. A response that answers no request
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
- Memory: one :class:`SizeGuard` of ``max_record_bytes`` per session (the reader bounds the
  file at 8 x ``max_record_bytes``): only an oversize session is rejected.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pipeline.ingest.adapters._common import AdapterError, Ctx, tool_call, tool_result
from pipeline.ingest.adapters._io import Problem
from pipeline.ingest.adapters._session import DROPPED, SessionAbort, SizeGuard
from pipeline.ingest.adapters.mcp_messages import is_mcp_method, json_id, outcome, unwrap
from pipeline.ingest.adapters.mcp_sides import CLIENT, SERVER, Directions, fits, task_of
from pipeline.ingest.records import canonical_message

FORMAT = "mcp"
_UNSAFE_ID = re.compile(r"[^A-Za-z0-9._:@+-]+")


@dataclass(slots=True)
class _Request:
    """A request waiting for its response: its canonical call id (None: no step)."""

    call_id: str | None
    method: str
    task: tuple[Any, ...] | None = None  # a tasks/result request: the task it fetches


class _Session:
    """One trajectory: its messages, its pending requests, its counts."""

    def __init__(self, first_line: int, guard: SizeGuard) -> None:
        self.first_line = first_line
        self.guard = guard
        self.messages: list[dict[str, Any]] = []
        self.pending: dict[tuple[Any, ...], _Request] = {}  # (server, id, side of the requester) -> request
        self.tasks: dict[tuple[Any, ...], str] = {}  # (server, taskId) -> the call a task runs
        self.used: dict[str, int] = {}
        self.methods: dict[str, int] = {}
        self.servers: list[str] = []
        self.unmatched = 0
        self.superseded = 0
        self.ambiguous = 0
        self.too_large: str | None = None  # the session outgrew max_record_bytes

    def take(self, msg: dict[str, Any], server: str | None, sender: str | None) -> None:
        """Take one JSON-RPC message of this session (``sender``: who sent it, if known)."""
        if server is not None and server not in self.servers and len(self.servers) < 50:
            self.servers.append(server)
        method = msg.get("method")
        if isinstance(method, str):
            self._request(method, msg, server, sender)
        elif "result" in msg or "error" in msg:
            self._response(msg, server, sender)

    def _request(self, method: str, msg: dict[str, Any], server: str | None, sender: str | None) -> None:
        name = method if is_mcp_method(method) else "(other)"
        if name in self.methods or len(self.methods) < 100:
            self.methods[name] = self.methods.get(name, 0) + 1
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        if method == "notifications/cancelled":
            self._cancelled(params, server, sender)
            return
        if method == "notifications/tasks/status":
            self._task_status(params, server)
            return
        rid = json_id(msg.get("id"))
        call = _call(method, params, server)
        call_id = None
        if call is not None:
            call_id = self._call_id(server, msg.get("id") if rid is not None else None)
            self.guard.add(call[1])
            self.messages.append(canonical_message("assistant", None, tool_calls=[tool_call(call_id, *call)]))
        if rid is None:
            return
        fetched = params.get("taskId") if method == "tasks/result" else None
        task = (server, fetched) if isinstance(fetched, str) else None
        if task is not None and task in self.tasks:
            sender = CLIENT  # the client fetches its own tool task's result
        elif sender is None:  # ping, tasks/*: a client never reuses an id it still waits on
            sender = SERVER if (server, rid, CLIENT) in self.pending and (server, rid, SERVER) not in self.pending \
                else CLIENT
        key = (server, rid, sender)
        self.superseded += key in self.pending and self.pending[key].call_id is not None
        self.pending[key] = _Request(call_id if task is None else self.tasks.get(task), method, task)

    def _call_id(self, server: str | None, rid: Any) -> str:
        base = f"{server}:{rid}" if server is not None else str(rid if rid is not None else "call")
        n = self.used.get(base, 0)
        self.used[base] = n + 1
        return base if n == 0 else f"{base}~{n}"

    def _side(self, msg: dict[str, Any], server: str | None, sender: str | None) -> tuple[Any, ...] | None:
        """The pending request a response answers (mcp_sides: direction, then result shape);
        None when no request of its id waits, or the id waits on both sides and nothing tells
        which (an error reply never picks a call then: the call is left waiting)."""
        rid = json_id(msg.get("id"))
        if rid is None:
            return None
        cands = {side: self.pending[(server, rid, side)] for side in (CLIENT, SERVER)
                 if (server, rid, side) in self.pending}
        answered = {CLIENT: SERVER, SERVER: CLIENT}.get(sender or "")  # a response answers the other side
        if answered in cands and fits(cands[answered].method, msg) is not False:
            return (server, rid, answered)
        if len(cands) == 1:
            side, request = next(iter(cands.items()))
            return (server, rid, side) if answered is None or fits(request.method, msg) is not False else None
        if not cands:
            return None
        fc, fs = fits(cands[CLIENT].method, msg), fits(cands[SERVER].method, msg)
        if fc and not fs:
            return (server, rid, CLIENT)
        if fs and not fc:
            return (server, rid, SERVER)
        if cands[CLIENT].call_id is None:
            return (server, rid, CLIENT)  # neither is a step: no harm either way
        if cands[SERVER].call_id is None and fc is False:
            return (server, rid, SERVER)
        self.ambiguous += 1
        return None

    def _response(self, msg: dict[str, Any], server: str | None, sender: str | None) -> None:
        key = self._side(msg, server, sender)
        request = self.pending.pop(key, None) if key is not None else None
        if request is None:
            self.unmatched += 1
            return
        result = msg.get("result")
        if request.method == "initialize" and isinstance(result, dict) and isinstance(result.get("serverInfo"), dict):
            info = result["serverInfo"].get("name")
            if isinstance(info, str) and info not in self.servers and len(self.servers) < 50:
                self.servers.append(info[:200])
        if request.method in ("tasks/get", "tasks/cancel") and isinstance(result, dict):
            self._task_status(result, server)
        if request.call_id is None:
            return
        task = task_of(result) if request.method == "tools/call" else None
        if task is not None and len(self.tasks) < 10_000:  # a task-augmented call: its result comes later
            self.tasks[(server, task["taskId"])] = request.call_id
            self._task_status({**task}, server)
            return
        if request.task is not None:
            self.tasks.pop(request.task, None)
        text, error = outcome(msg)
        self.guard.add(text)
        self.messages.append(tool_result(request.call_id, text, error))

    def _task_status(self, task: dict[str, Any], server: str | None) -> None:
        """A task's status (tasks/get, tasks/cancel, notifications/tasks/status): a task that
        ended ``failed`` answers its call with the status message as error text (text rules),
        ``cancelled`` with ``{"type": "unknown"}``; a ``completed`` one waits for tasks/result."""
        status = task.get("status")
        if status not in ("failed", "cancelled") or not isinstance(task.get("taskId"), str):
            return
        call_id = self.tasks.pop((server, task.get("taskId")), None)
        if call_id is None:
            return
        note = task.get("statusMessage") if isinstance(task.get("statusMessage"), str) else "no message"
        text = f"MCP task {status}: {note[:500]}"
        error = text if status == "failed" else {"type": "unknown", "message": text}
        self.messages.append(tool_result(call_id, "", error))

    def _cancelled(self, params: dict[str, Any], server: str | None, sender: str | None) -> None:
        rid = json_id(params.get("requestId"))
        if rid is None:
            return
        side = sender  # who cancels: its own request
        if side is None:  # both waiting: the server's request, never a call on a guess
            side = SERVER if (server, rid, SERVER) in self.pending else CLIENT
        request = self.pending.pop((server, rid, side), None)
        if request is None or request.call_id is None:
            return
        if request.task is not None:
            self.tasks.pop(request.task, None)
        reason = params.get("reason") if isinstance(params.get("reason"), str) else "no reason given"
        text = f"cancelled by the client (notifications/cancelled): {reason[:500]}"
        self.messages.append(tool_result(request.call_id, "", {"type": "unknown", "message": text}))

    def meta(self) -> dict[str, Any]:
        """What this session's record says in ``meta`` beside ``format``."""
        meta: dict[str, Any] = {"methods": self.methods}
        if self.servers:
            meta["servers"] = self.servers
        waiting = {r.call_id for r in self.pending.values() if r.call_id is not None} | set(self.tasks.values())
        unanswered = self.superseded + len(waiting)
        if unanswered:
            meta["unanswered_calls"] = unanswered
        if self.unmatched:
            meta["unmatched_responses"] = self.unmatched
        if self.ambiguous:
            meta["ambiguous_responses"] = self.ambiguous
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


def _trajectory_id(ctx: Ctx, session: str | None, taken: set[str]) -> str:
    """``<stem>:<session>`` (sanitised), or without a session ``<folder>/<stem>`` (a
    gateway writing ``<day>/gateway.jsonl`` names every day's file alike), unique among ``taken``."""
    folder = ctx.path.parent.name
    if session is not None:
        tid = f"{ctx.stem}:{_UNSAFE_ID.sub('-', session)[:128]}"
    else:
        tid = f"{_UNSAFE_ID.sub('-', folder)[:128]}/{ctx.stem}" if folder else ctx.stem
    base, n = tid, 0
    while tid in taken:
        n += 1
        tid = f"{base}~{n}"
    taken.add(tid)
    return tid


def _records(value: Any) -> list[Any]:
    """The log records of one line: a top-level array of records (a ``.json`` document, a
    batch line) is its elements, each a record of its own (a bare message or a wrapper)."""
    return value if isinstance(value, list) else [value]


def convert_session(items: Iterable[tuple[int, Any]], ctx: Ctx) -> Iterator[tuple[int, dict[str, Any]]]:
    """Convert one MCP traffic log (the reader's ``session`` layout): one record per session."""
    limit = int(ctx.state.get("max_record_bytes", 32 * 2**20))
    sessions: dict[str | None, _Session] = {}
    directions = Directions()
    dropped: list[int] = []
    other = seen = 0
    for number, value in items:
        if value is DROPPED:
            dropped.append(number)
            continue
        for record in _records(value):
            messages, session, server = unwrap(record)
            if not messages:
                other += 1
                continue
            seen += len(messages)
            state = sessions.get(session) or sessions.setdefault(session, _Session(number, SizeGuard(limit)))
            try:
                for msg in messages if state.too_large is None else ():
                    state.take(msg, server, directions.sender(record, msg))
            except SessionAbort as exc:  # this session alone is rejected; its text is let go
                state.too_large, state.messages, state.pending = exc.detail, [], {}
    if not seen:
        raise AdapterError("no JSON-RPC message: not an MCP traffic log")
    named = any(s is not None for s in sessions)
    taken: set[str] = set()
    for session, state in sorted(sessions.items(), key=lambda kv: kv[1].first_line):
        if state.too_large is not None:
            tid = _trajectory_id(ctx, session, taken)
            yield state.first_line, Problem(state.first_line, "record_too_large", f"{tid}: {state.too_large}")
            continue
        if session is None and named and not state.messages:
            continue  # a gateway's own lines beside its sessions: no trajectory of their own
        meta: dict[str, Any] = {"format": FORMAT, **state.meta()}
        if session is not None:
            meta["session"] = session[:200]
        if other:
            meta["other_lines"] = other
        if dropped:
            meta["dropped_lines"] = dropped
        yield state.first_line, {"trajectory_id": _trajectory_id(ctx, session, taken),
                                 "suite": ctx.state.get("suite") or "mcp", "meta": meta,
                                 "messages": state.messages}
