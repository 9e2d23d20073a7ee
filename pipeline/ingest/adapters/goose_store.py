"""Goose's SQLite session store (``~/.local/share/goose/sessions/sessions.db``, the store of
the releases after the ``<id>.jsonl`` session files): a store kind of
:mod:`pipeline.ingest.adapters.sqlite_store` (its rules), each session converted by the
Goose reader (:mod:`pipeline.ingest.adapters.goose`).

Schema (block/goose ``crates/goose/src/session/session_manager.rs`` and ``migrations.rs``):
``sessions(id, name, description, working_dir, session_type, schedule_id, provider_name,
parent_session_id, ...)`` and ``messages(id, session_id, role, content_json,
created_timestamp, metadata_json, message_id)``, ``content_json`` a message's ``content``
list as the session files hold it (the first stores have no ``metadata_json``,
``session_type``, ``name``). Sessions are taken in id order, then the messages no session
row names (one session per ``session_id``, id order: their session was deleted, or never
written); a session's messages in Goose's own order (``created_timestamp``, then row id),
each row made the message ``{role, created, content, metadata}``, and the session handed to
the Goose reader as an export is (``{id, ..., conversation}``). Rows Goose hid after
compaction (``agentVisible: false``) stay: they ran.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from pipeline.ingest.adapters import goose
from pipeline.ingest.adapters._common import Ctx
from pipeline.ingest.adapters._session import SessionAbort
from pipeline.ingest.adapters._sqlite import (
    StoreConnection, columns, guarded, info_columns, joined_query, missing, orphan_info, orphans_query, rows,
    session_info, sessions_of, text,
)

FORMAT = "goose"
TITLE = "Goose's session store (sessions and messages tables)"
_SESSION_COLUMNS = ("name", "description", "working_dir", "session_type", "schedule_id", "provider_name",
                    "parent_session_id")
_MESSAGE_COLUMNS = {"session_id", "role", "content_json", "created_timestamp"}


def problem(con: StoreConnection) -> str | None:
    """None when the database holds Goose's tables; else what is missing ('' when it is no
    store of Goose's at all)."""
    return missing(con, {"sessions": {"id"}, "messages": _MESSAGE_COLUMNS})


class Reader:
    """The sessions of one Goose store (:func:`problem` said it is one): two ordered passes,
    the session rows with their messages (one join: SQLite indexes it itself when the store
    has no index) and the messages no session row names."""

    def __init__(self, con: StoreConnection, limit: int) -> None:
        self.con = con
        self.limit = {"limit": limit}  # a session's bytes at most (a row over it is never loaded)
        self.picked, self.info = info_columns(con, "sessions", _SESSION_COLUMNS, "s")
        metadata = "m.metadata_json" if "metadata_json" in columns(con, "messages") else "null"
        size = ("(8 + coalesce(length(cast(m.role as blob)), 0) + coalesce(length(cast(m.content_json as blob)), 0)"
                f" + coalesce(length(cast({metadata} as blob)), 0)"
                " + coalesce(length(cast(m.created_timestamp as blob)), 0))")
        self.message = "m.rowid, " + guarded(size, ["cast(m.role as blob)", "cast(m.content_json as blob)",
                                                    f"cast({metadata} as blob)", "m.created_timestamp"])

    def sessions(self) -> Iterator[tuple[int, Any, dict[str, Any]]]:
        """``(position, the session's message rows, session info)``: the session rows in id
        order, then the messages no session row names, one session per ``session_id``."""
        order = "m.created_timestamp, m.id, m.rowid"
        joined = rows(self.con, joined_query("sessions", "messages", self.message, "", order), self.limit)
        orphans = rows(self.con, orphans_query("sessions", "messages", self.message, "", order), self.limit)
        yield from sessions_of(joined, orphans, session_info(self.con, "sessions", self.info, self.picked, {}),
                               orphan_info(self.con, "messages"))

    @staticmethod
    def _messages(found: Iterator[tuple[Any, ...]], named: str, limit: int) -> list[dict[str, Any]]:
        """The messages of one session (its rows ``(rowid, size, role, content_json,
        metadata_json, created_timestamp)`` in Goose's order); SessionAbort when one cannot be
        read or they add up to more than ``limit`` bytes."""
        out: list[dict[str, Any]] = []
        total = 0
        for n, (_, size, role, content, meta, created) in enumerate(found, start=1):
            total += size or 0
            if total > limit:
                raise SessionAbort("record_too_large", f"session {named}: messages larger than {limit} bytes")
            try:
                items = json.loads(content) if isinstance(content, bytes) else None
            except (ValueError, RecursionError) as exc:  # UnicodeDecodeError too
                raise SessionAbort("malformed_record", f"session {named}, message {n}: content_json is no JSON: "
                                                       f"{type(exc).__name__}") from exc
            if not isinstance(items, list):
                raise SessionAbort("malformed_record", f"session {named}, message {n}: content_json is no list")
            message: dict[str, Any] = {"role": text(role), "created": created, "content": items}
            try:
                extra = json.loads(meta) if isinstance(meta, bytes) else None
            except (ValueError, RecursionError):
                extra = None  # visibility flags only: a message without them is visible
            if isinstance(extra, dict):
                message["metadata"] = extra
            out.append(message)
        return out

    def records(self, key: Any, info: dict[str, Any], ctx: Ctx) -> Iterator[tuple[int, Any]]:
        """The converted record of one session (the Goose reader's ``(line, record)`` pairs)."""
        named = repr(str(info.get("id", "(no id)"))[:200])
        session = {**info, "conversation": self._messages(key, named, self.limit["limit"])}
        yield from goose.convert([(ctx.line, session)], ctx)
