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
    StoreConnection, columns, info_columns, missing, one, rows, session_rows, text,
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
    """The sessions of one Goose store (:func:`problem` said it is one)."""

    def __init__(self, con: StoreConnection) -> None:
        self.con = con
        self.picked, self.select = info_columns(con, "sessions", _SESSION_COLUMNS)
        self.metadata = "cast(metadata_json as blob)" if "metadata_json" in columns(con, "messages") else "null"

    def sessions(self) -> Iterator[tuple[int, Any, dict[str, Any]]]:
        """``(position, key, session info)``: the session rows in id order, then the messages
        no session row names (:func:`._sqlite.session_rows`)."""
        yield from session_rows(self.con, "sessions", "messages", "id", self.select,
                                lambda row: {k: v for k, v in zip(self.picked, map(text, row)) if v})

    def _messages(self, key: tuple[str, int], named: str, limit: int) -> list[dict[str, Any]]:
        """The messages of one session in Goose's order; SessionAbort when one cannot be read
        or they add up to more than ``limit`` bytes (checked before any is loaded)."""
        which, rowid = key
        size = one(self.con, "select coalesce(sum(length(cast(content_json as blob)) + "  # noqa: S608
                             f"coalesce(length({self.metadata}), 0)), 0) from messages where {which}", (rowid,))
        if size is None or size[0] > limit:
            raise SessionAbort("record_too_large", f"session {named}: messages larger than {limit} bytes")
        out: list[dict[str, Any]] = []
        query = (f"select cast(role as blob), cast(content_json as blob), created_timestamp, {self.metadata} "  # noqa: S608
                 f"from messages where {which} order by created_timestamp, id")
        for n, (role, content, created, meta) in enumerate(rows(self.con, query, (rowid,)), start=1):
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

    def records(self, key: Any, info: dict[str, Any], ctx: Ctx, limit: int) -> Iterator[tuple[int, Any]]:
        """The converted record of one session (the Goose reader's ``(line, record)`` pairs)."""
        named = repr(str(info.get("id", "(no id)"))[:200])
        session = {**info, "conversation": self._messages(key, named, limit)}
        yield from goose.convert([(ctx.line, session)], ctx)
