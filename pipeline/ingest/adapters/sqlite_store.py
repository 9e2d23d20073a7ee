"""Agents' SQLite session stores -> one record per session: Goose's ``sessions.db``
(:mod:`.goose_store`) and OpenCode's ``opencode.db`` (:mod:`.opencode_db`), the stores of
their releases after the JSON files, and Cursor's ``state.vscdb`` (:mod:`.cursor_store`).

Rules (a store is hostile input like any file):
- a file that opens with SQLite's header is read as a database, never as lines, unless it
  is named as a transcript (``.jsonl``, ``.json``, ``.eval``, ...: read as that); which store it is, by its tables (each kind's ``problem``); any other database
  is ONE ``malformed_record`` naming its tables, so is one that cannot be opened, and so is
  a store read with a ``--format`` other than its own (or ``auto``). A folder walk takes a
  ``.db`` file unless it opens and is no store (a remote one is not opened to tell).
- opened read-only (``mode=ro``: writes still in its ``-wal`` file are read; SQLite makes
  the ``-wal`` / ``-shm`` files of a WAL store when they are missing, as any reader of it
  does). Only a store that cannot be opened so (a read-only folder) and has neither a
  ``-wal`` nor a ``-journal`` file beside it (where it really is: links resolved) is opened
  ``immutable=1``: a store with an unfinished write, or locked by its writer, is refused
  (one ``malformed_record``) rather than read from pages half written.
- ``trusted_schema`` off (no function of the file's own schema runs), ``query_only``; only
  the kind's tables read, by fixed queries with parameters; text read as bytes and decoded
  here (bytes that are no UTF-8: replaced in names, a reject of their session in content);
  SQLite's time on one store at most ``STORE_SECONDS`` in all (:class:`._sqlite.Budget`), past
  which the sessions not yet read are one ``malformed_record``.
- one record per session, ``source_line`` its 1-based position in the kind's session
  order (the messages no session row names come last, as sessions of their own); what is
  wrong with one session (a row that is no JSON, rows adding up to more than
  ``8 x max_record_bytes``, checked before they are loaded, an adapter error, an error of
  SQLite reading it) rejects that session only.
- a remote store (``s3://...``) is read from a temporary local copy (SQLite needs seeks).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any, Protocol

from pipeline.ingest.adapters import cursor_store, goose_store, opencode_db
from pipeline.ingest.adapters._common import Ctx
from pipeline.ingest.adapters._io import read_head
from pipeline.ingest.adapters._session import emit_records
from pipeline.ingest.adapters._sqlite import Budget, StoreConnection, tables
from pipeline.ingest.records import RawRecord, rejected
from pipeline.storage import Location, Remote
from pipeline.storage_copy import local_copy

SQLITE_MAGIC = b"SQLite format 3\x00"
STORE_SECONDS = 120.0  # SQLite's time on one store, at most
_TRANSCRIPT_NAMES = (".jsonl", ".jsonl.gz", ".json", ".json.gz", ".eval", ".traj", ".ndjson", ".ndjson.gz")


class Reader(Protocol):
    """The sessions of one store and the converted records of each."""

    def sessions(self) -> Iterator[tuple[int, Any, dict[str, Any]]]: ...

    def records(self, key: Any, info: dict[str, Any], ctx: Ctx) -> Iterator[tuple[int, Any]]: ...


class StoreKind(Protocol):
    """One agent's store: its format name, what it says of a database, its reader."""

    FORMAT: str
    TITLE: str

    def problem(self, con: StoreConnection) -> str | None: ...

    def Reader(self, con: StoreConnection, limit: int) -> Reader: ...  # noqa: N802 - the kind module's class


KINDS: tuple[StoreKind, ...] = (goose_store, opencode_db, cursor_store)  # type: ignore[assignment]
# formats read from a store only (no file of theirs is a transcript)
STORE_ONLY = (cursor_store.FORMAT,)


def sqlite_file(path: Location) -> bool:
    """True when ``path`` opens with SQLite's header (a database file), unless it is named as
    a transcript (``.jsonl``, ``.json``, ...: not opened again to tell, every remote check is
    a request)."""
    if path.name.lower().endswith(_TRANSCRIPT_NAMES):
        return False
    try:
        return read_head(path, len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def connect(path: Path, seconds: float) -> StoreConnection:
    """The store opened read-only (module docstring), with a time budget of ``seconds``."""
    real = path.resolve()
    uri = real.as_uri()  # percent-encoded: a name is never read as URI parameters
    con: StoreConnection | None = None
    try:
        con = sqlite3.connect(f"{uri}?mode=ro", uri=True, factory=StoreConnection)
        con.execute("select count(*) from sqlite_master").fetchone()
    except sqlite3.OperationalError as exc:
        if con is not None:
            con.close()
        beside = [p.name for p in (Path(f"{real}-wal"), Path(f"{real}-journal")) if p.exists()]
        if getattr(exc, "sqlite_errorname", "") != "SQLITE_CANTOPEN" or beside:
            why = f" ({', '.join(beside)} beside it: a write not finished or not checkpointed)" if beside else ""
            raise sqlite3.OperationalError(f"{exc}{why}; score a copy made while its agent is idle") from exc
        con = sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, factory=StoreConnection)
    con.budget = Budget(seconds)
    con.execute("pragma trusted_schema = off")
    con.execute("pragma query_only = on")
    con.set_progress_handler(con.budget, 1_000)
    return con


def store_kind(con: StoreConnection) -> tuple[StoreKind | None, str]:
    """(the store kind of the database, why) or (None, what it holds instead)."""
    problems = []
    for kind in KINDS:
        problem = kind.problem(con)
        if problem is None:
            return kind, f"SQLite database: {kind.TITLE}"
        problems.append(problem)
    found = sorted(tables(con))
    listed = ", ".join(found[:12]) + (", ..." if len(found) > 12 else "") or "no tables"
    near = next((p for p in problems if p), "")
    return None, (f"a SQLite database that is no agent session store read here (Goose's sessions.db, "
                  f"OpenCode's opencode.db, Cursor's state.vscdb) (tables: {listed})" + (f"; {near}" if near else ""))


def detect_store(path: Location) -> tuple[str, str]:
    """Detection of a SQLite file: the store's format; ``skip`` for a database that opens
    and is no store (a folder walk leaves it out; given by name it is one
    ``malformed_record``); ``sqlite`` for one that cannot be opened, and for a remote file
    (not opened to tell: it would be copied): reading it says what it is."""
    if isinstance(path, Remote):
        return "sqlite", "SQLite database: an agent's session store? (its tables are checked when read)"
    try:
        with closing(connect(Path(path), STORE_SECONDS)) as con:
            kind, why = store_kind(con)
    except sqlite3.Error as exc:
        return "sqlite", f"SQLite database that cannot be opened ({exc}): read, it is one malformed_record"
    return (kind.FORMAT, why) if kind is not None else ("skip", why)


@contextmanager
def _local(path: Location) -> Iterator[Path]:
    if isinstance(path, Remote):
        with local_copy(path) as copy:
            yield copy
    else:
        yield Path(path)


def _stopped(exc: sqlite3.Error) -> bool:
    """True for an error that ends the store's reading (its time budget spent)."""
    return "interrupted" in str(exc)


def store_records(path: Location, fmt: str, max_record_bytes: int, suite: str | None,
                  serialise: Callable[[Any], str]) -> Iterator[RawRecord]:
    """The records of one SQLite file (module docstring): one per session of its store."""
    src = str(path)
    done = 0
    name = fmt
    try:
        with _local(path) as local, closing(connect(local, STORE_SECONDS)) as con:
            kind, why = store_kind(con)
            if kind is None:
                yield rejected(src, 1, "malformed_record", why, fmt)
                return
            name = kind.FORMAT
            if fmt not in ("auto", name):
                yield rejected(src, 1, "malformed_record", f"{why}, no {fmt} input: read it with --format {name} "
                                                           "or auto", fmt)
                return
            reader = kind.Reader(con, 8 * max_record_bytes)
            for position, key, info in reader.sessions():
                ctx = Ctx(path, position, {"max_record_bytes": max_record_bytes, "suite": suite})
                try:
                    yield from emit_records(src, name, reader.records(key, info, ctx),
                                            serialise, max_record_bytes, position, escape=(sqlite3.Error,))
                except sqlite3.Error as exc:
                    if _stopped(exc):
                        raise
                    yield rejected(src, position, "malformed_record",
                                   f"session {position}: SQLite cannot read it: {type(exc).__name__}: {exc}", name)
                done = position
    except sqlite3.Error as exc:
        after = f" after session {done}" if done else ""
        why = (f"SQLite's time on this store passed its {STORE_SECONDS:g} s budget ({exc})" if _stopped(exc)
               else f"{type(exc).__name__}: {exc}")
        yield rejected(src, done + 1, "malformed_record", f"cannot read the SQLite store{after}: {why}", name)
