"""What the SQLite store readers share: a connection that carries its store's time budget,
rows fetched under it, text read as bytes and decoded here, the catalog's tables and columns
(names of our own code, given as parameters)."""

from __future__ import annotations

import itertools
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

INFO_CHARS = 4096  # a session's name, folder, title, ... as kept in meta


class Budget:
    """The time SQLite may spend on one store's queries, in all (SQLite's progress handler:
    it stops the running query past it). Only time inside SQLite counts (while ``armed``),
    not what the records' readers do between rows; once spent, no query starts."""

    def __init__(self, seconds: float) -> None:
        self.left = seconds
        self.since: float | None = None

    def __call__(self) -> int:
        return 1 if self.since is not None and time.monotonic() - self.since > self.left else 0

    @contextmanager
    def armed(self) -> Iterator[None]:
        """Count the time of the SQLite calls inside."""
        if self.left <= 0:
            raise sqlite3.OperationalError("interrupted: the store's time budget is spent")
        self.since = time.monotonic()
        try:
            yield
        finally:
            self.left -= time.monotonic() - self.since
            self.since = None


class StoreConnection(sqlite3.Connection):
    """A store's connection (``sqlite3.connect(factory=...)``) with its :class:`Budget`."""

    budget: Budget


Params = tuple[Any, ...] | dict[str, Any]


def rows(con: StoreConnection, query: str, params: Params = ()) -> Iterator[tuple[Any, ...]]:
    """The rows of ``query``, fetched one at a time under the store's budget: a row may hold
    up to a session's limit (8 x max_record_bytes), and a batch of 256 such rows held
    gigabytes (200 sessions of 7 MB: 2.8 GB); one row per fetch costs ~1 µs more a row."""
    with con.budget.armed():
        cursor = con.execute(query, params)
    while True:
        with con.budget.armed():
            row = cursor.fetchone()
        if row is None:
            return
        yield row


def one(con: StoreConnection, query: str, params: Params = ()) -> tuple[Any, ...] | None:
    """The first row of ``query`` (None: no row), under the store's budget."""
    with con.budget.armed():
        return con.execute(query, params).fetchone()


def text(value: Any) -> str | None:
    """A column read ``cast(... as blob)`` as text: bytes that are no UTF-8 replaced (a value
    sqlite3 would refuse to decode, failing the whole query); None stays None."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return None if value is None else str(value)


def tables(con: StoreConnection) -> dict[str, str]:
    """The database's tables and views: name -> ``table`` | ``view``."""
    return {text(n) or "": text(t) or "" for n, t in rows(
        con, "select cast(name as blob), type from sqlite_master where type in ('table', 'view') order by name")}


def columns(con: StoreConnection, table: str) -> set[str]:
    """The columns of ``table``."""
    return {text(name) or "" for (name,) in rows(con, "select cast(name as blob) from pragma_table_info(?)", (table,))}


def missing(con: StoreConnection, needed: dict[str, set[str]]) -> str | None:
    """None when every table of ``needed`` is a table with those columns; '' when one of
    them is no table (no store of this kind); else the columns a table lacks."""
    found = tables(con)
    if any(found.get(name) != "table" for name in needed):
        return ""
    for name, cols in needed.items():
        lacking = cols - columns(con, name)
        if lacking:
            return f"its {name} table has no {', '.join(sorted(lacking))} column"
    return None


def info_columns(con: StoreConnection, table: str, wanted: tuple[str, ...], alias: str) -> tuple[list[str], str]:
    """The columns of ``wanted`` that ``table`` (as ``alias``) has, and their select list
    (each cut at ``INFO_CHARS``, read as bytes: :func:`text`)."""
    have = columns(con, table)
    picked = [c for c in wanted if c in have]
    return picked, "".join(f", cast(substr({alias}.{c}, 1, {INFO_CHARS}) as blob)" for c in picked)


def guarded(size: str, cols: list[str]) -> str:
    """``size`` (an expression of a row's bytes) and ``cols`` read only when that size is at
    most the parameter ``$limit``: a row over a session's whole limit is never loaded."""
    return ", ".join([size, *(f"case when {size} <= $limit then {c} end" for c in cols)])


def grouped(found: Iterator[tuple[Any, ...]], width: int) -> Iterator[tuple[tuple[Any, ...], Iterator[tuple[Any, ...]]]]:
    """Consecutive rows with the same first ``width`` columns, as ``(those columns, the rows'
    other columns)``; rows a reader leaves unread are skipped when it takes the next group."""
    for key, rows_of in itertools.groupby(found, key=lambda row: row[:width]):
        yield key, (row[width:] for row in rows_of)


def sessions_of(joined: Iterator[tuple[Any, ...]], orphans: Iterator[tuple[Any, ...]],
                info_of: Callable[[int], dict[str, Any]],
                orphan_of: Callable[[int], dict[str, Any]]) -> Iterator[tuple[int, Any, dict[str, Any]]]:
    """``(position, the session's rows, session info)`` of a store's two ordered passes:
    ``joined`` (a session's rowid, then one row of its messages, NULL when it has none; rows
    of one session together) and ``orphans`` (the messages no session row names: the rowid of
    the first message of their ``session_id``, then the same message columns). The session's
    id and info are read once per session (``info_of`` its rowid, ``orphan_of`` the rowid of
    its first message), never once per row: a long id is one copy."""
    position = 0
    for (rowid,), group in grouped(joined, 1):
        first = next(group)
        position += 1
        yield position, itertools.chain([first], group) if first[0] is not None else iter(()), info_of(rowid)
    for (rowid,), group in grouped(orphans, 1):
        position += 1
        yield position, group, orphan_of(rowid)


def orphans_query(sessions: str, messages: str, select: str, joins: str, order: str) -> str:
    """The second pass (:func:`sessions_of`): each message no row of ``sessions`` names, with
    the rowid of the first message of its ``session_id`` (equal as the first pass's join
    compares them: ``collate binary``, so 7 and 7.0 are one id), then ``select``."""
    return f"""
with orphan as (
    select m.rowid as r, first_value(m.rowid) over (partition by m.session_id collate binary order by m.rowid) as rep
    from {messages} m where not exists (select 1 from {sessions} s where m.session_id collate binary = s.id))
select o.rep, {select} from orphan o join {messages} m on m.rowid = o.r {joins}
order by o.rep, {order}"""  # noqa: S608 - our own table and column names


def joined_query(sessions: str, messages: str, select: str, joins: str, order: str) -> str:
    """The first pass (:func:`sessions_of`): each session row (by id) with its messages."""
    return (f"select s.rowid, {select} from {sessions} s left join {messages} m "  # noqa: S608 - our own names
            f"on m.session_id collate binary = s.id {joins} order by s.id collate binary, s.rowid, {order}")


def session_info(con: StoreConnection, sessions: str, info: str, picked: list[str],
                 keys: dict[str, str]) -> Callable[[int], dict[str, Any]]:
    """A session row's info by its rowid: its id and the ``picked`` columns (``info`` their
    select list), named by ``keys``."""
    def of(rowid: int) -> dict[str, Any]:
        row = one(con, f"select cast(s.id as blob){info} from {sessions} s where s.rowid = ?", (rowid,))  # noqa: S608
        if row is None:
            return {}
        found = {keys.get(k, k): v for k, v in zip(picked, map(text, row[1:])) if v}
        if text(row[0]):
            found["id"] = text(row[0])
        return found
    return of


def orphan_info(con: StoreConnection, messages: str) -> Callable[[int], dict[str, Any]]:
    """The info of the messages no session row names, by the rowid of their first: their id."""
    def of(rowid: int) -> dict[str, Any]:
        row = one(con, f"select cast(session_id as blob) from {messages} where rowid = ?", (rowid,))  # noqa: S608
        return {"id": text(row[0])} if row is not None and text(row[0]) else {}
    return of
