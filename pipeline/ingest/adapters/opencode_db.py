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
(``time_created``, then id), a session's messages by ``time_created`` then id, a message's
parts by id (OpenCode's ids sort by creation). A subagent's session (``parent_id``) gets
``parent_call_id``: the parent's ``task`` part whose ``state.metadata.sessionId`` names it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from typing import Any

from pipeline.ingest.adapters import opencode
from pipeline.ingest.adapters._common import Ctx
from pipeline.ingest.adapters._session import SessionAbort, SizeGuard
from pipeline.ingest.adapters._sqlite import columns, missing

FORMAT = "opencode"
TITLE = "OpenCode's store (session, message and part tables)"
INFO_CHARS = 4096  # a session's title, folder, ... as kept in meta
_NEEDED = {"session": {"id", "time_created"}, "message": {"id", "session_id", "time_created", "data"},
           "part": {"id", "message_id", "session_id", "data"}}
_SESSION_COLUMNS = {"directory": "directory", "title": "title", "parent_id": "parentID"}
# the parent's task part that started a subagent session (as opencode_storage.parent_call)
_PARENT_CALL = """
select callid from (
    select case when json_valid(data) then json_extract(data, '$.callID') end as callid,
           case when json_valid(data) then json_extract(data, '$.tool') end as tool,
           case when json_valid(data) then json_extract(data, '$.state.metadata.sessionId') end as child, id
    from part where session_id = ?)
where tool = 'task' and child = ? and typeof(callid) = 'text'
order by id limit 1
"""


def problem(con: sqlite3.Connection) -> str | None:
    """None when the database holds OpenCode's tables; else what is missing ('' when it is
    no store of OpenCode's at all)."""
    return missing(con, _NEEDED)


def sessions(con: sqlite3.Connection) -> Iterator[tuple[int, Any, dict[str, Any]]]:
    """``(position, id as stored, session info as the storage folder's file holds it)`` in
    creation order, read lazily; each column cut at ``INFO_CHARS``."""
    have = columns(con, "session")
    picked = [c for c in _SESSION_COLUMNS if c in have]
    cut = "".join(f", substr({c}, 1, {INFO_CHARS})" for c in picked)
    query = f"select id{cut} from session order by time_created, id"  # noqa: S608 - fixed names
    for position, (sid, *row) in enumerate(con.execute(query), start=1):
        info = {_SESSION_COLUMNS[k]: v for k, v in zip(picked, row) if isinstance(v, str) and v}
        if sid is not None and sid != "":
            info["id"] = str(sid)
        yield position, sid, info


def _loaded(data: Any, what: str) -> dict[str, Any]:
    """A ``data`` column's JSON object; SessionAbort when it is none."""
    try:
        value = json.loads(data) if isinstance(data, (str, bytes)) else None
    except (ValueError, RecursionError) as exc:
        raise SessionAbort("malformed_record", f"{what}: data is no JSON: {type(exc).__name__}") from exc
    if not isinstance(value, dict):
        raise SessionAbort("malformed_record", f"{what}: data is no JSON object")
    return value


def _messages(con: sqlite3.Connection, sid: Any, limit: int) -> Iterator[tuple[dict[str, Any], list[Any]]]:
    """``(message info, parts)`` of session ``sid`` in OpenCode's order; SessionAbort when a
    row cannot be read or they add up to more than ``limit`` bytes (checked first)."""
    named = repr(str(sid)[:200])
    size = sum(con.execute(f"select coalesce(sum(length(cast(data as blob))), 0) from {table} "  # noqa: S608
                           "where session_id is ?", (sid,)).fetchone()[0] for table in ("message", "part"))
    if size > limit:
        raise SessionAbort("record_too_large", f"session {named}: messages and parts larger than {limit} bytes")
    ids = con.execute("select id, data from message where session_id is ? order by time_created, id", (sid,))
    for n, (mid, data) in enumerate(ids.fetchall(), start=1):
        info = {**_loaded(data, f"session {named}, message {n}"), "id": mid, "sessionID": sid}
        parts = [{**_loaded(pdata, f"session {named}, message {n}, part {k}"), "id": pid, "messageID": mid,
                  "sessionID": sid}
                 for k, (pid, pdata) in enumerate(con.execute(
                     "select id, data from part where message_id is ? order by id", (mid,)), start=1)]
        yield info, parts


def records(con: sqlite3.Connection, key: Any, info: dict[str, Any], ctx: Ctx,
            limit: int) -> Iterator[tuple[int, Any]]:
    """The converted record of one session (``output_format`` ``database``)."""
    guard = SizeGuard(int(ctx.state.get("max_record_bytes", 32 * 2**20)))
    out = opencode.record(info, _messages(con, key, limit), ctx, "database", guard)
    parent = out.get("parent_trajectory_id")
    if parent is not None:
        found = con.execute(_PARENT_CALL, (parent, out["trajectory_id"])).fetchone()
        if found is not None:
            out["parent_call_id"] = found[0]
    yield ctx.line, out
