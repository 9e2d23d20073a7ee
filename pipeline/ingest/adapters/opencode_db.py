"""OpenCode's SQLite store (``~/.local/share/opencode/opencode.db``, releases from 1.2 on,
which moved the storage folder into it): a store kind of
:mod:`pipeline.ingest.adapters.sqlite_store` (its rules), each session read as the storage
folder's sessions are (:func:`pipeline.ingest.adapters.opencode.record`).

Schema (anomalyco/opencode ``packages/opencode/src/session/session.sql.ts`` and its
migrations): ``session(id, project_id, parent_id, directory, title, time_created, ...)``,
``message(id, session_id, time_created, data)`` and ``part(id, message_id, session_id,
time_created, data)``; ``message.data`` is a message's info without ``id`` and
``sessionID``, ``part.data`` a part without ``id``, ``sessionID`` and ``messageID`` (the
storage folder's JSON otherwise). Sessions in id order (OpenCode's session ids sort newest
first), then the messages no session row names (one session per ``session_id``); a
session's messages as OpenCode reads them, by ``time_created`` then id, a message's parts by
id (OpenCode's ids sort by creation; a part whose message is gone is not read, as OpenCode
does not). A subagent's session (``parent_id``) gets ``parent_call_id``: the
parent's ``task`` part whose ``state.metadata.sessionId`` names it.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

from pipeline.ingest.adapters import opencode
from pipeline.ingest.adapters._common import Ctx
from pipeline.ingest.adapters._session import SessionAbort, SizeGuard
from pipeline.ingest.adapters._sqlite import (
    StoreConnection, grouped, guarded, info_columns, joined_query, missing, orphan_info, orphans_query, rows,
    session_info, sessions_of, text,
)

FORMAT = "opencode"
TITLE = "OpenCode's store (session, message and part tables)"
_NEEDED = {"session": {"id", "time_created"}, "message": {"id", "session_id", "time_created", "data"},
           "part": {"id", "message_id", "session_id", "data"}}
_SESSION_COLUMNS = ("directory", "title", "parent_id")
_KEYS = {"directory": "directory", "title": "title", "parent_id": "parentID"}
# the task parts that started subagent sessions (as opencode_storage.parent_call: the
# parent's messages by id, each one's parts by id): (the parent's session id, the child's,
# the call id); every part is read (a raw-text filter would miss JSON escapes: "\u0074ask")
_TASK_CALLS = """
select cast(session_id as blob), cast(child as blob), cast(callid as blob) from (
    select session_id, message_id, id, rowid,
           case when json_valid(data) then json_extract(data, '$.callID') end as callid,
           case when json_valid(data) then json_extract(data, '$.tool') end as tool,
           case when json_valid(data) then json_extract(data, '$.state.metadata.sessionId') end as child
    from part)
where tool = 'task' and typeof(child) = 'text' and typeof(callid) = 'text'
order by session_id, message_id, id, rowid
"""


def problem(con: StoreConnection) -> str | None:
    """None when the database holds OpenCode's tables; else what is missing ('' when it is
    no store of OpenCode's at all)."""
    return missing(con, _NEEDED)


def _loaded(data: Any, what: str) -> dict[str, Any]:
    """A ``data`` column's JSON object (read as bytes); SessionAbort when it is none."""
    try:
        value = json.loads(data) if isinstance(data, bytes) else None
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError too
        raise SessionAbort("malformed_record", f"{what}: data is no JSON: {type(exc).__name__}") from exc
    if not isinstance(value, dict):
        raise SessionAbort("malformed_record", f"{what}: data is no JSON object")
    return value


class Reader:
    """The sessions of one OpenCode store (:func:`problem` said it is one): two ordered
    passes, the session rows with their messages and parts (one join: SQLite indexes it
    itself when the store has no index) and the messages no session row names."""

    def __init__(self, con: StoreConnection, limit: int) -> None:
        self.con = con
        self.limit = {"limit": limit}  # a session's bytes at most (a row over it is never loaded)
        self.picked, self.info = info_columns(con, "session", _SESSION_COLUMNS, "s")
        message = guarded("(8 + coalesce(length(cast(m.id as blob)), 0) + coalesce(length(cast(m.data as blob)), 0))",
                          ["cast(m.id as blob)", "cast(m.data as blob)"])
        part = guarded("(8 + coalesce(length(cast(p.id as blob)), 0) + coalesce(length(cast(p.data as blob)), 0))",
                       ["cast(p.id as blob)", "cast(p.data as blob)"])
        self.select = f"m.rowid, {message}, p.rowid, {part}"
        self.order = "m.time_created, m.id, m.rowid, p.id, p.rowid"
        self.calls: dict[tuple[str | None, str | None], str | None] | None = None  # (parent, child) -> call

    def sessions(self) -> Iterator[tuple[int, Any, dict[str, Any]]]:
        """``(position, the session's message and part rows, session info as the storage
        folder's file holds it)``: the session rows in id order, then the messages no session
        row names, one session per ``session_id``."""
        parts = "left join part p on p.message_id = m.id"
        joined = rows(self.con, joined_query("session", "message", self.select, parts, self.order), self.limit)
        orphans = rows(self.con, orphans_query("session", "message", self.select, parts, self.order), self.limit)
        yield from sessions_of(joined, orphans, session_info(self.con, "session", self.info, self.picked, _KEYS),
                               orphan_info(self.con, "message"))

    def _parent_call(self, parent: str, child: str) -> str | None:
        """The ``callID`` of session ``parent``'s first ``task`` part that started session
        ``child``: all of them found in one pass over the parts when the first subagent
        asks (a query per subagent scanned every part each time in a store without indexes)."""
        if self.calls is None:
            self.calls = {}
            for sid, started, call in rows(self.con, _TASK_CALLS):
                self.calls.setdefault((text(sid), text(started)), text(call))
        return self.calls.get((parent, child))

    @staticmethod
    def _messages(found: Iterator[tuple[Any, ...]], sid: str | None, named: str,
                  limit: int) -> Iterator[tuple[dict[str, Any], list[Any]]]:
        """``(message info, parts)`` of one session from its rows (a message's rowid, size,
        id, data, then a part's rowid, size, id, data; one row per part) in OpenCode's order;
        SessionAbort when a row cannot be read or they add up to more than ``limit`` bytes."""
        total = 0
        for n, (_, message) in enumerate(grouped(found, 1), start=1):
            first = next(message)
            total += first[0] or 0
            if total > limit:
                raise SessionAbort("record_too_large", f"session {named}: messages and parts larger than {limit} bytes")
            mid = text(first[1])
            info = {**_loaded(first[2], f"session {named}, message {n}"), "id": mid, "sessionID": sid}
            parts: list[Any] = []
            for k, (_, _, _, prow, psize, pid, pdata) in enumerate(itertools.chain([first], message), start=1):
                if prow is None:
                    continue  # a message without parts
                total += psize or 0
                if total > limit:
                    raise SessionAbort("record_too_large",
                                       f"session {named}: messages and parts larger than {limit} bytes")
                parts.append({**_loaded(pdata, f"session {named}, message {n}, part {k}"), "id": text(pid),
                              "messageID": mid, "sessionID": sid})
            yield info, parts

    def records(self, key: Any, info: dict[str, Any], ctx: Ctx) -> Iterator[tuple[int, Any]]:
        """The converted record of one session (``output_format`` ``database``; a subagent's
        ``parent_call_id`` None when its parent's task part is not in the store, as the
        storage folder's reader says)."""
        sid = info.get("id")
        named = repr(str(sid or "(no id)")[:200])
        guard = SizeGuard(int(ctx.state.get("max_record_bytes", 32 * 2**20)))
        out = opencode.record(info, self._messages(key, sid, named, self.limit["limit"]), ctx, "database", guard)
        parent = out.get("parent_trajectory_id")
        if parent is not None:
            out["parent_call_id"] = self._parent_call(parent, out["trajectory_id"])
        yield ctx.line, out
