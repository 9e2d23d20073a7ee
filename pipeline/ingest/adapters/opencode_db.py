"""OpenCode's SQLite store (``~/.local/share/opencode/opencode.db``, releases from 1.2 on,
which moved the storage folder into it): a store kind of
:mod:`pipeline.ingest.adapters.sqlite_store` (its rules), each session read as the storage
folder's sessions are (:func:`pipeline.ingest.adapters.opencode.record`).

Schema (anomalyco/opencode ``packages/opencode/src/session/session.sql.ts`` and its
migrations): ``session(id, project_id, parent_id, directory, title, time_created, ...)``,
``message(id, session_id, time_created, data)`` and ``part(id, message_id, session_id,
time_created, data)``; ``message.data`` is a message's info without ``id`` and
``sessionID``, ``part.data`` a part without ``id``, ``sessionID`` and ``messageID`` (the
storage folder's JSON otherwise). Read as OpenCode reads them: sessions in creation order
(``time_created``, then id), then the messages no session row names (one session per
``session_id``, id order); a session's messages by ``time_created`` then id, a message's
parts by id (OpenCode's ids sort by creation; a part whose message is gone is not read, as
OpenCode does not). A subagent's session (``parent_id``) gets ``parent_call_id``: the
parent's ``task`` part whose ``state.metadata.sessionId`` names it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from pipeline.ingest.adapters import opencode
from pipeline.ingest.adapters._common import Ctx
from pipeline.ingest.adapters._session import SessionAbort, SizeGuard
from pipeline.ingest.adapters._sqlite import StoreConnection, info_columns, missing, one, rows, session_rows, text

FORMAT = "opencode"
TITLE = "OpenCode's store (session, message and part tables)"
_NEEDED = {"session": {"id", "time_created"}, "message": {"id", "session_id", "time_created", "data"},
           "part": {"id", "message_id", "session_id", "data"}}
_SESSION_COLUMNS = ("directory", "title", "parent_id")
_KEYS = {"directory": "directory", "title": "title", "parent_id": "parentID"}
_PARTS = ("select cast(id as blob), cast(data as blob) from part "
          "where message_id = (select id from message where rowid = ?) order by id")
# the parent's task part that started a subagent session (as opencode_storage.parent_call)
_PARENT_CALL = """
select cast(callid as blob) from (
    select case when json_valid(data) then json_extract(data, '$.callID') end as callid,
           case when json_valid(data) then json_extract(data, '$.tool') end as tool,
           case when json_valid(data) then json_extract(data, '$.state.metadata.sessionId') end as child, id
    from part where session_id = ?)
where tool = 'task' and child = ? and typeof(callid) = 'text'
order by id limit 1
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
    """The sessions of one OpenCode store (:func:`problem` said it is one)."""

    def __init__(self, con: StoreConnection) -> None:
        self.con = con
        self.picked, self.select = info_columns(con, "session", _SESSION_COLUMNS)

    def sessions(self) -> Iterator[tuple[int, Any, dict[str, Any]]]:
        """``(position, key, session info as the storage folder's file holds it)``: the
        session rows in creation order, then the messages no session row names
        (:func:`._sqlite.session_rows`)."""
        yield from session_rows(self.con, "session", "message", "time_created, id", self.select,
                                lambda row: {_KEYS[k]: v for k, v in zip(self.picked, map(text, row)) if v})

    def _messages(self, key: tuple[str, int], sid: str | None, named: str,
                  limit: int) -> Iterator[tuple[dict[str, Any], list[Any]]]:
        """``(message info, parts)`` of one session in OpenCode's order; SessionAbort when a
        row cannot be read or they add up to more than ``limit`` bytes (checked first)."""
        which, rowid = key
        size = one(self.con, "select coalesce(sum(length(cast(data as blob))), 0) + (select "  # noqa: S608
                             "coalesce(sum(length(cast(p.data as blob))), 0) from part p join message m on "
                             f"p.message_id = m.id where m.{which}) from message where {which}", (rowid, rowid))
        if size is None or size[0] > limit:
            raise SessionAbort("record_too_large", f"session {named}: messages and parts larger than {limit} bytes")
        listed = list(rows(self.con, f"select rowid, cast(id as blob), cast(data as blob) from message "  # noqa: S608
                                     f"where {which} order by time_created, id", (rowid,)))
        for n, (mrow, mid, data) in enumerate(listed, start=1):
            info = {**_loaded(data, f"session {named}, message {n}"), "id": text(mid), "sessionID": sid}
            parts = [{**_loaded(pdata, f"session {named}, message {n}, part {k}"), "id": text(pid),
                      "messageID": text(mid), "sessionID": sid}
                     for k, (pid, pdata) in enumerate(rows(self.con, _PARTS, (mrow,)), start=1)]
            yield info, parts

    def records(self, key: Any, info: dict[str, Any], ctx: Ctx, limit: int) -> Iterator[tuple[int, Any]]:
        """The converted record of one session (``output_format`` ``database``)."""
        sid = info.get("id")
        named = repr(str(sid or "(no id)")[:200])
        guard = SizeGuard(int(ctx.state.get("max_record_bytes", 32 * 2**20)))
        out = opencode.record(info, self._messages(key, sid, named, limit), ctx, "database", guard)
        parent = out.get("parent_trajectory_id")
        if parent is not None:
            found = one(self.con, _PARENT_CALL, (parent, out["trajectory_id"]))
            if found is not None and text(found[0]):
                out["parent_call_id"] = text(found[0])
        yield ctx.line, out
