"""Cursor's ``state.vscdb`` (``<Cursor user folder>/globalStorage/state.vscdb``: on Linux
``~/.config/Cursor/User``, on macOS ``~/Library/Application Support/Cursor/User``): a store
kind of :mod:`pipeline.ingest.adapters.sqlite_store` (its rules), each composer session
converted by :mod:`pipeline.ingest.adapters.cursor_bubbles` (the layout and its sources).

``cursorDiskKV(key, value)`` holds ``composerData:<composerId>`` (a session) and
``bubbleId:<composerId>:<bubbleId>`` rows (its messages), values JSON text. Read in two
ordered passes, merged by composer id (keys read as bytes, the order both sides share,
whatever the keys' storage class or the column's collation): the ``composerData`` rows by
key, and the bubble rows by the composer id in their key (up to the first ``:`` after
``bubbleId:``: Cursor's ids are UUIDs, so a composer id holding ``:`` loses its bubbles to
the id before it), then key. One record per composer in id order (ids read as UTF-8, other
bytes as ``\\xNN``; an empty id: ``<store name>:<position>``); bubbles whose
``composerData`` row is gone are a session of their own at their id's place (never
dropped: their calls ran). A workspace's ``state.vscdb`` (its
``cursorDiskKV`` empty) holds no session; VS Code's own (no ``cursorDiskKV``) is no store.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from typing import Any

from pipeline.ingest.adapters import cursor_bubbles
from pipeline.ingest.adapters._common import Ctx
from pipeline.ingest.adapters._session import SessionAbort, SizeGuard
from pipeline.ingest.adapters._sqlite import StoreConnection, columns, grouped, missing, one, rows

FORMAT = cursor_bubbles.FORMAT
TITLE = "Cursor's state.vscdb (cursorDiskKV composerData and bubbleId rows)"
# keys compared as bytes (`k`), whatever their storage class or the column's collation: a
# key stored as a blob, or under `collate nocase`, sorts and matches as the merge compares;
# every row whose key opens with the prefix is found (no range on the index: a blob key lies
# outside any text range), one scan of the table each. The passes sort keys and row ids
# only: a value is fetched by its row id when its session is read (a sort carrying the
# values held every session at once: 1.4 GB for 200 sessions of 7 MB)
_KEYS = "(select cast(key as blob) as k, rowid from cursorDiskKV)"
_COMPOSERS = f"""
select substr(k, 14), rowid from {_KEYS}
where substr(k, 1, 13) = cast('composerData:' as blob) order by k, rowid"""
# the composer id: the bytes up to the first ':' after `bubbleId:` (all of them when there is
# none: the bubble id is then empty); instr on blobs counts bytes (a NUL is a byte)
_BUBBLES = f"""
select cid, bid, rowid from (
    select *, case when cut > 0 then substr(rest, 1, cut - 1) else rest end as cid,
        case when cut > 0 then substr(rest, cut + 1) else x'' end as bid
    from (select *, substr(k, 10) as rest, instr(substr(k, 10), cast(':' as blob)) as cut from {_KEYS}
          where substr(k, 1, 9) = cast('bubbleId:' as blob)))
order by cid, k, rowid"""
# a value that is no text or blob (SQLite's incremental reader opens only those)
_SCALAR = "select typeof(value), cast(value as blob) from cursorDiskKV where rowid = $rowid"


def _id(value: Any) -> str:
    """A composer or bubble id read as bytes: UTF-8, other bytes kept distinct as ``\\xNN``
    (two ids that differ in invalid bytes stay two ids)."""
    return value.decode("utf-8", "backslashreplace") if isinstance(value, bytes) else str(value or "")


def problem(con: StoreConnection) -> str | None:
    """None when the database holds Cursor's ``cursorDiskKV`` table; else what is missing
    ('' when it is no store of Cursor's at all)."""
    lacking = missing(con, {"cursorDiskKV": {"key", "value"}})
    if lacking is not None:
        return lacking
    shadowed = sorted(c for c in columns(con, "cursorDiskKV") if c.lower() == "rowid")
    if shadowed:  # `rowid` would name that column: the values could not be found by row id
        return f"its cursorDiskKV table has a column named {shadowed[0]}"
    try:
        one(con, "select rowid from cursorDiskKV limit 1")
    except sqlite3.OperationalError:
        return "its cursorDiskKV table has no row ids (WITHOUT ROWID)"
    return None


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
        composers = iter(rows(self.con, _COMPOSERS))
        bubbles = grouped(rows(self.con, _BUBBLES), 1)
        head = next(composers, None)
        group = next(bubbles, None)
        position = 0
        while head is not None or group is not None:
            position += 1
            if group is None or (head is not None and head[0] < group[0][0]):
                yield position, (head[1:], iter(())), {"id": _id(head[0])}
                head = next(composers, None)
            elif head is None or group[0][0] < head[0]:
                yield position, (None, group[1]), {"id": _id(group[0][0])}
                group = next(bubbles, None)
            else:
                yield position, (head[1:], group[1]), {"id": _id(head[0])}
                head, group = next(composers, None), next(bubbles, None)

    def _value(self, rowid: int, room: int) -> tuple[int, Any]:
        """(bytes, value) of the row ``rowid``'s value, the value only when it fits ``room``
        (the session's limit left): its size is read without loading it (SQLite's
        incremental blob reader; a size query would load the whole value, a 300 MB one
        three times over)."""
        try:
            with self.con.budget.armed(), closing(self.con.blobopen("cursorDiskKV", "value", rowid,
                                                                    readonly=True)) as blob:
                size = len(blob)
                return size, (blob.read() if size <= room else None)
        except sqlite3.OperationalError as exc:
            if "interrupted" in str(exc):
                raise
            found = one(self.con, _SCALAR, {"rowid": rowid})  # NULL, a number: no text to open
        if found is None:
            raise SessionAbort("malformed_record", f"row {rowid} of cursorDiskKV cannot be read")
        return (0, None) if found[0] == "null" else (len(found[1] or b""), found[1])

    def _parts(self, key: Any, named: str) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
        """The composer's value and its bubbles by id; SessionAbort past the size limit or
        on a value that is no JSON object."""
        composer_row, bubble_rows = key
        limit = self.limit["limit"]
        total = 0
        composer: dict[str, Any] = {}
        if composer_row is not None:
            total, value = self._value(composer_row[0], limit)
            if total > limit:
                raise SessionAbort("record_too_large", f"session {named}: composerData larger than {limit} bytes")
            composer = _loaded(value, f"session {named}, composerData") or {}
        found: dict[str, list[dict[str, Any]]] = {}
        for n, (bid, rowid) in enumerate(bubble_rows, start=1):
            size, value = self._value(rowid, limit - total)
            total += size
            if total > limit:
                raise SessionAbort("record_too_large", f"session {named}: bubbles larger than {limit} bytes")
            bubble = _loaded(value, f"session {named}, bubble {n}")
            if bubble is not None:  # rows of one id (a store without its UNIQUE key): every one
                found.setdefault(_id(bid), []).append(bubble)
        return composer, found

    def records(self, key: Any, info: dict[str, Any], ctx: Ctx) -> Iterator[tuple[int, Any]]:
        """The converted record of one composer session."""
        sid = str(info.get("id") or f"{ctx.stem}:{ctx.line}")  # an empty id: the store's name and place
        named = repr(sid[:200])
        composer, found = self._parts(key, named)
        guard = SizeGuard(int(ctx.state.get("max_record_bytes", 32 * 2**20)))
        out = cursor_bubbles.record(composer, cursor_bubbles.ordered(composer, found), sid,
                                    ctx.state.get("suite"), guard)
        if key[0] is None:
            out["meta"]["composer_row"] = False  # its composerData row is gone: bubbles only
        yield ctx.line, out
