"""Cursor's ``state.vscdb`` (``<Cursor user folder>/globalStorage/state.vscdb``: on Linux
``~/.config/Cursor/User``, on macOS ``~/Library/Application Support/Cursor/User``): a store
kind of :mod:`pipeline.ingest.adapters.sqlite_store` (its rules), each composer session
converted by :mod:`pipeline.ingest.adapters.cursor_bubbles` (the layout and its sources).

``cursorDiskKV(key, value)`` holds ``composerData:<composerId>`` (a session) and
``bubbleId:<composerId>:<bubbleId>`` rows (its messages), values JSON text. Read in two
ordered passes, merged by composer id (a byte order both sides share): the
``composerData`` rows by key, and the bubble rows by the composer id in their key (up to
the first ``:`` after ``bubbleId:``: Cursor's ids are UUIDs), then key. One record per
composer in id order; bubbles whose ``composerData`` row is gone are a session of their own
at their id's place (never dropped: their calls ran). A workspace's ``state.vscdb`` (its
``cursorDiskKV`` empty) holds no session; VS Code's own (no ``cursorDiskKV``) is no store.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from pipeline.ingest.adapters import cursor_bubbles
from pipeline.ingest.adapters._common import Ctx
from pipeline.ingest.adapters._session import SessionAbort, SizeGuard
from pipeline.ingest.adapters._sqlite import StoreConnection, grouped, guarded, missing, rows, text

FORMAT = cursor_bubbles.FORMAT
TITLE = "Cursor's state.vscdb (cursorDiskKV composerData and bubbleId rows)"
_SIZE = "(8 + coalesce(length(cast(key as blob)), 0) + coalesce(length(cast(value as blob)), 0))"
_VALUE = guarded(_SIZE, ["cast(value as blob)"])
# the key's text ranges: ';' follows ':' (an index on key serves both, SQLite's automatic
# one of Cursor's `key TEXT UNIQUE`)
_COMPOSERS = f"""
select cast(substr(key, 14) as blob), {_VALUE} from cursorDiskKV
where key >= 'composerData:' and key < 'composerData;' order by key, rowid"""
_BUBBLES = f"""
select cid, cast(substr(rest, instr(rest, ':') + 1) as blob), {_VALUE} from (
    select *, cast(substr(rest, 1, instr(rest, ':') - 1) as blob) as cid from (
        select key, value, rowid, substr(key, 10) as rest from cursorDiskKV
        where key >= 'bubbleId:' and key < 'bubbleId;'))
where instr(rest, ':') > 1
order by cid, key, rowid"""


def problem(con: StoreConnection) -> str | None:
    """None when the database holds Cursor's ``cursorDiskKV`` table; else what is missing
    ('' when it is no store of Cursor's at all)."""
    return missing(con, {"cursorDiskKV": {"key", "value"}})


def _loaded(value: Any, what: str) -> dict[str, Any] | None:
    """A value's JSON object (read as bytes); None for JSON ``null`` (Cursor writes it);
    SessionAbort for anything else that is no object."""
    try:
        found = json.loads(value) if isinstance(value, bytes) else None
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError too
        raise SessionAbort("malformed_record", f"{what}: value is no JSON: {type(exc).__name__}") from exc
    if found is None or isinstance(found, dict):
        return found
    raise SessionAbort("malformed_record", f"{what}: value is no JSON object")


class Reader:
    """The composer sessions of one store (:func:`problem` said it is one)."""

    def __init__(self, con: StoreConnection, limit: int) -> None:
        self.con = con
        self.limit = {"limit": limit}  # a session's bytes at most (a row over it is never loaded)

    def sessions(self) -> Iterator[tuple[int, Any, dict[str, Any]]]:
        """``(position, (composer row or None, its bubble rows), {"id": composer id})`` in
        composer id order (module docstring)."""
        composers = iter(rows(self.con, _COMPOSERS, self.limit))
        bubbles = grouped(rows(self.con, _BUBBLES, self.limit), 1)
        head = next(composers, None)
        group = next(bubbles, None)
        position = 0
        while head is not None or group is not None:
            position += 1
            if group is None or (head is not None and head[0] < group[0][0]):
                yield position, (head[1:], iter(())), {"id": text(head[0])}
                head = next(composers, None)
            elif head is None or group[0][0] < head[0]:
                yield position, (None, group[1]), {"id": text(group[0][0])}
                group = next(bubbles, None)
            else:
                yield position, (head[1:], group[1]), {"id": text(head[0])}
                head, group = next(composers, None), next(bubbles, None)

    def _parts(self, key: Any, named: str) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        """The composer's value and its bubbles by id; SessionAbort past the size limit or
        on a value that is no JSON object."""
        composer_row, bubble_rows = key
        limit = self.limit["limit"]
        total = 0
        composer: dict[str, Any] = {}
        if composer_row is not None:
            total = composer_row[0] or 0
            if total > limit:
                raise SessionAbort("record_too_large", f"session {named}: composerData larger than {limit} bytes")
            composer = _loaded(composer_row[1], f"session {named}, composerData") or {}
        found: dict[str, dict[str, Any]] = {}
        for n, (bid, size, value) in enumerate(bubble_rows, start=1):
            total += size or 0
            if total > limit:
                raise SessionAbort("record_too_large", f"session {named}: bubbles larger than {limit} bytes")
            bubble = _loaded(value, f"session {named}, bubble {n}")
            if bubble is not None:
                found.setdefault(text(bid) or f"#{n}", bubble)
        return composer, found

    def records(self, key: Any, info: dict[str, Any], ctx: Ctx) -> Iterator[tuple[int, Any]]:
        """The converted record of one composer session."""
        sid = str(info.get("id") or ctx.stem)
        named = repr(sid[:200])
        composer, found = self._parts(key, named)
        guard = SizeGuard(int(ctx.state.get("max_record_bytes", 32 * 2**20)))
        out = cursor_bubbles.record(composer, cursor_bubbles.ordered(composer, found), sid,
                                    ctx.state.get("suite"), guard)
        if key[0] is None:
            out["meta"]["composer_row"] = False  # its composerData row is gone: bubbles only
        yield ctx.line, out
