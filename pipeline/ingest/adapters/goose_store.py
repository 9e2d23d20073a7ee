"""Goose's SQLite session store (``~/.local/share/goose/sessions/sessions.db``, the store of
the releases after the ``<id>.jsonl`` session files) -> one record per session, converted
by the Goose reader (:mod:`pipeline.ingest.adapters.goose`).

Schema (block/goose ``crates/goose/src/session/session_manager.rs`` and ``migrations.rs``):
``sessions(id, name, description, working_dir, session_type, schedule_id, provider_name,
...)`` and ``messages(id, session_id, role, content_json, created_timestamp,
metadata_json, message_id)``, ``content_json`` a message's ``content`` list as the session
files hold it. A session's messages are read in Goose's order (``created_timestamp``,
then ``id``), each row made the message ``{role, created, content, metadata}``, and the
session handed to the Goose reader as an export is (``{id, ..., conversation}``).

Rules (the store is hostile input like any file):
- opened read-only (``mode=ro``; a store without its ``-wal`` file on a read-only folder:
  ``immutable=1``), ``trusted_schema`` off (no function of the file's own schema runs),
  only the two tables read, by fixed queries with parameters; every query runs under a
  deadline (``STORE_SECONDS``), past which the rest of the store is one ``malformed_record``.
- one record per session, ``source_line`` its 1-based position in id order; what is wrong
  with one session (a row whose ``content_json`` is no JSON list, messages adding up to
  more than ``8 x max_record_bytes``, a Goose reader error) rejects that session only.
- a SQLite file that is not a Goose store (no ``sessions`` and ``messages`` tables with
  Goose's columns: OpenCode's ``opencode.db``, any other database) is ONE
  ``malformed_record`` naming what it holds; so is one that cannot be opened.
- a remote store (``s3://...``) is read from a temporary local copy (SQLite needs seeks).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from pipeline.ingest.adapters._common import Ctx
from pipeline.ingest.adapters._io import read_head
from pipeline.ingest.adapters._session import SessionAbort, emit_records
from pipeline.ingest.records import RawRecord, rejected
from pipeline.storage import Location, Remote
from pipeline.storage_copy import local_copy

SQLITE_MAGIC = b"SQLite format 3\x00"
STORE_SECONDS = 120.0  # one store's queries together, at most
_SESSION_COLUMNS = ("id", "name", "description", "working_dir", "session_type", "schedule_id", "provider_name",
                    "parent_session_id")
_MESSAGE_COLUMNS = {"session_id", "role", "content_json", "created_timestamp"}
_FORMAT = "goose"
_INFO_CHARS = 4096  # a session's name, folder, ... as kept in meta


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


def _connect(path: Path, seconds: float) -> sqlite3.Connection:
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


def detect_store(path: Location) -> tuple[str, str]:
    """Detection of a SQLite file: ``goose`` for Goose's session store, else ``skip`` (a
    folder walk leaves it out; given by name it is one ``malformed_record``). A remote file
    is not opened to tell (it would be copied): ``goose``, checked when read."""
    if isinstance(path, Remote):
        return _FORMAT, "SQLite database: read as Goose's session store (its tables are checked when read)"
    try:
        with closing(_connect(Path(path), STORE_SECONDS)) as con:
            problem = store_problem(con)
    except sqlite3.Error as exc:
        return "skip", f"SQLite database that cannot be opened: {exc}"
    if problem is None:
        return _FORMAT, "SQLite database with Goose's sessions and messages tables: Goose's session store"
    return "skip", problem


def store_problem(con: sqlite3.Connection) -> str | None:
    """None when the database holds Goose's tables; else what it holds instead."""
    tables = {name: kind for name, kind in con.execute(
        "select name, type from sqlite_master where type in ('table', 'view') order by name")}
    if tables.get("sessions") == "table" and tables.get("messages") == "table":
        columns = {row[1] for row in con.execute("select * from pragma_table_info('messages')")}
        if _MESSAGE_COLUMNS <= columns:
            return None
        return f"its messages table has no {', '.join(sorted(_MESSAGE_COLUMNS - columns))} column"
    listed = ", ".join(sorted(tables)[:12]) or "no tables"
    return f"a SQLite database that is no Goose session store (tables: {listed})"


def _messages(con: sqlite3.Connection, sid: Any, limit: int) -> list[dict[str, Any]]:
    """The messages of session ``sid`` in Goose's order; SessionAbort when one cannot be read
    or they add up to more than ``limit`` bytes (checked before any is loaded)."""
    named = repr(str(sid)[:200])
    size = con.execute("select coalesce(sum(length(cast(content_json as blob))), 0) from messages "
                       "where session_id is ?", (sid,)).fetchone()[0]
    if size > limit:
        raise SessionAbort("record_too_large", f"session {named}: messages larger than {limit} bytes")
    columns = {row[1] for row in con.execute("select * from pragma_table_info('messages')")}
    metadata = "metadata_json" if "metadata_json" in columns else "null"
    out: list[dict[str, Any]] = []
    rows = con.execute(f"select role, content_json, created_timestamp, {metadata} from messages "  # noqa: S608 - fixed names
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


def _sessions(con: sqlite3.Connection) -> Iterator[tuple[int, Any, dict[str, Any]]]:
    """``(position, id as stored, session info)`` in id order, read lazily; the info holds the
    columns of ``_SESSION_COLUMNS`` the table has, each cut at ``_INFO_CHARS`` but the id."""
    have = {row[1] for row in con.execute("select * from pragma_table_info('sessions')")}
    picked = [c for c in _SESSION_COLUMNS if c in have and c != "id"]
    cut = ", ".join(f"substr({c}, 1, {_INFO_CHARS})" for c in picked)
    query = f"select id{', ' if cut else ''}{cut} from sessions order by id"  # noqa: S608 - fixed names
    for position, (sid, *row) in enumerate(con.execute(query), start=1):
        info = {k: v for k, v in zip(picked, row) if v is not None and v != ""}
        if sid is not None and sid != "":
            info["id"] = str(sid)
        yield position, sid, info


@contextmanager
def _local(path: Location) -> Iterator[Path]:
    if isinstance(path, Remote):
        with local_copy(path) as copy:
            yield copy
    else:
        yield Path(path)


def store_records(path: Location, fmt: str, max_record_bytes: int, suite: str | None,
                  convert: Callable[..., Any], serialise: Callable[[Any], str]) -> Iterator[RawRecord]:
    """The records of one SQLite file (module docstring): one per Goose session."""
    src = str(path)
    if fmt not in ("auto", _FORMAT):
        yield rejected(src, 1, "malformed_record", f"a SQLite database, no {fmt} input: only Goose's session "
                                                   "store is read (--format goose or auto)", fmt)
        return
    done = 0
    try:
        with _local(path) as local, closing(_connect(local, STORE_SECONDS)) as con:
            problem = store_problem(con)
            if problem is not None:
                yield rejected(src, 1, "malformed_record", problem + "; OpenCode's opencode.db and other "
                               "databases are not read (export their sessions)", _FORMAT)
                return
            for position, sid, info in _sessions(con):
                ctx = Ctx(path, position, {"max_record_bytes": max_record_bytes, "suite": suite})
                try:
                    session = {**info, "conversation": _messages(con, sid, 8 * max_record_bytes)}
                except SessionAbort as exc:
                    yield rejected(src, position, exc.reason, exc.detail, _FORMAT)
                    done = position
                    continue
                yield from emit_records(src, _FORMAT, convert([(position, session)], ctx), serialise,
                                        max_record_bytes, position)
                done = position
    except sqlite3.Error as exc:
        after = f" after session {done}" if done else ""
        yield rejected(src, done + 1, "malformed_record",
                       f"cannot read the SQLite store{after}: {type(exc).__name__}: {exc}", _FORMAT)
