"""Agents' SQLite session stores -> one record per session: Goose's ``sessions.db``
(:mod:`.goose_store`) and OpenCode's ``opencode.db`` (:mod:`.opencode_db`), the stores of
their releases after the JSON files.

Rules (a store is hostile input like any file):
- a file that opens with SQLite's header is read as a database, whatever its name, never
  as lines; which store it is, by its tables (each kind's ``problem``); any other database
  is ONE ``malformed_record`` naming its tables, so is one that cannot be opened, and so is
  a store read with a ``--format`` other than its own (or ``auto``).
- opened read-only (``mode=ro``, so writes still in its ``-wal`` file are read; a store
  without a ``-wal`` file on a read-only folder: ``immutable=1``), ``trusted_schema`` off
  (no function of the file's own schema runs), ``query_only``; only the kind's tables read,
  by fixed queries with parameters; every query under one deadline for the store
  (``STORE_SECONDS``), past which the sessions not yet read are one ``malformed_record``.
- one record per session, ``source_line`` its 1-based position in the kind's session
  order; what is wrong with one session (a row that is no JSON, rows adding up to more
  than ``8 x max_record_bytes``, checked before they are loaded, an adapter error) rejects
  that session only.
- a remote store (``s3://...``) is read from a temporary local copy (SQLite needs seeks).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any, Protocol

from pipeline.ingest.adapters import goose_store, opencode_db
from pipeline.ingest.adapters._common import Ctx
from pipeline.ingest.adapters._io import read_head
from pipeline.ingest.adapters._session import emit_records
from pipeline.ingest.adapters._sqlite import tables
from pipeline.ingest.records import RawRecord, rejected
from pipeline.storage import Location, Remote
from pipeline.storage_copy import local_copy

SQLITE_MAGIC = b"SQLite format 3\x00"
STORE_SECONDS = 120.0  # one store's queries together, at most


class StoreKind(Protocol):
    """One agent's store: its format name, what it says of a database, its sessions, and
    the converted records of one session."""

    FORMAT: str
    TITLE: str

    def problem(self, con: sqlite3.Connection) -> str | None: ...

    def sessions(self, con: sqlite3.Connection) -> Iterator[tuple[int, Any, dict[str, Any]]]: ...

    def records(self, con: sqlite3.Connection, key: Any, info: dict[str, Any], ctx: Ctx,
                limit: int) -> Iterator[tuple[int, Any]]: ...


KINDS: tuple[StoreKind, ...] = (goose_store, opencode_db)  # type: ignore[assignment]


def sqlite_file(path: Location) -> bool:
    """True when ``path`` opens with SQLite's header (a database file, whatever its name)."""
    try:
        return read_head(path, len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


class _Deadline:
    """SQLite's progress handler: aborts the running query once ``seconds`` have passed."""

    def __init__(self, seconds: float) -> None:
        self.until = time.monotonic() + seconds

    def __call__(self) -> int:
        return 1 if time.monotonic() > self.until else 0


def connect(path: Path, seconds: float) -> sqlite3.Connection:
    """The store opened read-only (module docstring), under a deadline."""
    uri = path.resolve().as_uri()  # percent-encoded: a name is never read as URI parameters
    try:
        con = sqlite3.connect(f"{uri}?mode=ro", uri=True)
        con.execute("select count(*) from sqlite_master").fetchone()
    except sqlite3.OperationalError:
        if Path(f"{path}-wal").exists():
            raise  # its latest writes are there: never read the store without them
        con = sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True)
    con.execute("pragma trusted_schema = off")
    con.execute("pragma query_only = on")
    con.set_progress_handler(_Deadline(seconds), 1_000)
    return con


def store_kind(con: sqlite3.Connection) -> tuple[StoreKind | None, str]:
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
                  f"OpenCode's opencode.db) (tables: {listed})" + (f"; {near}" if near else ""))


def detect_store(path: Location) -> tuple[str, str]:
    """Detection of a SQLite file: the store's format, else ``skip`` (a folder walk leaves
    it out; given by name it is one ``malformed_record``). A remote file is not opened to
    tell (it would be copied): ``auto``'s reading checks it."""
    if isinstance(path, Remote):
        return "sqlite", "SQLite database: an agent's session store (its tables are checked when read)"
    try:
        with closing(connect(Path(path), STORE_SECONDS)) as con:
            kind, why = store_kind(con)
    except sqlite3.Error as exc:
        return "skip", f"SQLite database that cannot be opened: {exc}"
    return (kind.FORMAT, why) if kind is not None else ("skip", why)


@contextmanager
def _local(path: Location) -> Iterator[Path]:
    if isinstance(path, Remote):
        with local_copy(path) as copy:
            yield copy
    else:
        yield Path(path)


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
            for position, key, info in kind.sessions(con):
                ctx = Ctx(path, position, {"max_record_bytes": max_record_bytes, "suite": suite})
                yield from emit_records(src, name, kind.records(con, key, info, ctx, 8 * max_record_bytes),
                                        serialise, max_record_bytes, position, escape=(sqlite3.Error,))
                done = position
    except sqlite3.Error as exc:
        after = f" after session {done}" if done else ""
        yield rejected(src, done + 1, "malformed_record",
                       f"cannot read the SQLite store{after}: {type(exc).__name__}: {exc}", name)
