"""Goose's SQLite session store (``~/.local/share/goose/sessions/sessions.db``, the store of
the releases after the ``<id>.jsonl`` session files): a store kind of
:mod:`pipeline.ingest.adapters.sqlite_store` (its rules), each session converted by the
Goose reader (:mod:`pipeline.ingest.adapters.goose`).

Schema (block/goose ``crates/goose/src/session/session_manager.rs`` and ``migrations.rs``):
``sessions(id, name, description, working_dir, session_type, schedule_id, provider_name,
parent_session_id, ...)`` and ``messages(id, session_id, role, content_json,
created_timestamp, metadata_json, message_id)``, ``content_json`` a message's ``content``
list as the session files hold it (the first stores have no ``metadata_json``,
``session_type``, ``name``). Sessions are taken in id order; a session's messages in
Goose's own order (``created_timestamp``, then row id), each row made the message ``{role,
created, content, metadata}``, and the session handed to the Goose reader as an export is
(``{id, ..., conversation}``). Rows Goose hid after compaction (``agentVisible: false``)
stay: they ran.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from typing import Any

from pipeline.ingest.adapters import goose
from pipeline.ingest.adapters._common import Ctx
from pipeline.ingest.adapters._session import SessionAbort
from pipeline.ingest.adapters._sqlite import columns, missing

FORMAT = "goose"
TITLE = "Goose's session store (sessions and messages tables)"
_SESSION_COLUMNS = ("name", "description", "working_dir", "session_type", "schedule_id", "provider_name",
                    "parent_session_id")
_MESSAGE_COLUMNS = {"session_id", "role", "content_json", "created_timestamp"}
INFO_CHARS = 4096  # a session's name, folder, ... as kept in meta


def problem(con: sqlite3.Connection) -> str | None:
    """None when the database holds Goose's tables; else what is missing ('' when it is no
    store of Goose's at all)."""
    return missing(con, {"sessions": {"id"}, "messages": _MESSAGE_COLUMNS})


def sessions(con: sqlite3.Connection) -> Iterator[tuple[int, Any, dict[str, Any]]]:
    """``(position, id as stored, session info)`` in id order, read lazily; the info holds the
    columns of ``_SESSION_COLUMNS`` the table has, each cut at ``INFO_CHARS``."""
    have = columns(con, "sessions")
    picked = [c for c in _SESSION_COLUMNS if c in have]
    cut = "".join(f", substr({c}, 1, {INFO_CHARS})" for c in picked)
    for position, (sid, *row) in enumerate(con.execute(f"select id{cut} from sessions order by id"),  # noqa: S608
                                           start=1):
        info = {k: v for k, v in zip(picked, row) if v is not None and v != ""}
        if sid is not None and sid != "":
            info["id"] = str(sid)
        yield position, sid, info


def _messages(con: sqlite3.Connection, sid: Any, limit: int) -> list[dict[str, Any]]:
    """The messages of session ``sid`` in Goose's order; SessionAbort when one cannot be read
    or they add up to more than ``limit`` bytes (checked before any is loaded)."""
    named = repr(str(sid)[:200])
    size = con.execute("select coalesce(sum(length(cast(content_json as blob))), 0) from messages "
                       "where session_id is ?", (sid,)).fetchone()[0]
    if size > limit:
        raise SessionAbort("record_too_large", f"session {named}: messages larger than {limit} bytes")
    metadata = "metadata_json" if "metadata_json" in columns(con, "messages") else "null"
    out: list[dict[str, Any]] = []
    rows = con.execute(f"select role, content_json, created_timestamp, {metadata} from messages "  # noqa: S608
                       "where session_id is ? order by created_timestamp, id", (sid,))
    for n, (role, content, created, meta) in enumerate(rows, start=1):
        try:
            items = json.loads(content) if isinstance(content, (str, bytes)) else None
        except (ValueError, RecursionError) as exc:
            raise SessionAbort("malformed_record", f"session {named}, message {n}: content_json is no JSON: "
                                                   f"{type(exc).__name__}") from exc
        if not isinstance(items, list):
            raise SessionAbort("malformed_record", f"session {named}, message {n}: content_json is no list")
        message: dict[str, Any] = {"role": role, "created": created, "content": items}
        try:
            extra = json.loads(meta) if isinstance(meta, (str, bytes)) else None
        except (ValueError, RecursionError):
            extra = None  # visibility flags only: a message without them is visible
        if isinstance(extra, dict):
            message["metadata"] = extra
        out.append(message)
    return out


def records(con: sqlite3.Connection, key: Any, info: dict[str, Any], ctx: Ctx,
            limit: int) -> Iterator[tuple[int, Any]]:
    """The converted record of one session (the Goose reader's ``(line, record)`` pairs)."""
    session = {**info, "conversation": _messages(con, key, limit)}
    yield from goose.convert([(ctx.line, session)], ctx)
