"""Goose's SQLite session store (``pipeline/ingest/adapters/goose_store.py``). Before, a
``sessions.db`` given by name was read as NDJSON (two ``malformed_record`` rejects: "NUL
byte"), and a folder walk of ``~/.local/share/goose/sessions`` found nothing: current Goose
users could score their sessions only through ``goose session export``. The stores are made
here with the columns Goose's migrations give them (v17 and an early one); calls and
results are counted in the raw store with sqlite3 and json, independently of the reader."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import duckdb
import pytest

import pipeline.ingest.adapters.sqlite_store as sqlite_store
from pipeline.cli import main
from pipeline.ingest.discovery import detect_format, discover_inputs
from pipeline.ingest.reader import iter_records
from tests.adapter_runs import step_counts, verdict_rows
from tests.test_adapters_goose import DECLINED, declined, exfiltration, failure, msg, request, response, text

SESSIONS_V17 = """
create table schema_version (version integer primary key, applied_at timestamp default current_timestamp);
create table sessions (id text primary key, name text not null default '', description text not null default '',
    user_set_name boolean default false, session_type text not null default 'user', working_dir text not null,
    created_at timestamp default current_timestamp, updated_at timestamp default current_timestamp,
    extension_data text default '{}', total_tokens integer, input_tokens integer, output_tokens integer,
    schedule_id text, recipe_json text, provider_name text, model_config_json text,
    goose_mode text not null default 'auto', archived_at timestamp, project_id text,
    parent_session_id text, parent_delegation text);
create table messages (id integer primary key autoincrement, message_id text,
    session_id text not null references sessions(id), role text not null, content_json text not null,
    created_timestamp integer not null, timestamp timestamp default current_timestamp, tokens integer,
    metadata_json text);
create index idx_messages_session_created on messages(session_id, created_timestamp, id);
insert into schema_version (version) values (17);
"""
# the first store: no metadata_json, message_id, session_type, name (before migrations 3-7)
SESSIONS_V0 = """
create table sessions (id text primary key, description text not null default '', working_dir text not null,
    created_at timestamp default current_timestamp, schedule_id text);
create table messages (id integer primary key autoincrement, session_id text not null, role text not null,
    content_json text not null, created_timestamp integer not null);
"""


def store(path: Path, sessions: dict[str, list[dict[str, Any]]], schema: str = SESSIONS_V17,
          info: dict[str, dict[str, Any]] | None = None) -> Path:
    """A Goose store holding ``sessions`` (id -> messages), inserted as Goose's
    ``insert_message`` does (content and metadata as JSON text)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.executescript(schema)
    columns = {row[1] for row in con.execute("pragma table_info('messages')")}
    for sid, messages in sessions.items():
        fields = {"id": sid, "working_dir": "/home/dev/projects/billing", **(info or {}).get(sid, {})}
        con.execute(f"insert into sessions ({', '.join(fields)}) values ({', '.join('?' * len(fields))})",
                    list(fields.values()))
        for m in messages:
            row = {"session_id": sid, "role": m["role"], "content_json": json.dumps(m["content"]),
                   "created_timestamp": m["created"], "metadata_json": json.dumps(m.get("metadata", {})),
                   "message_id": m.get("id")}
            row = {k: v for k, v in row.items() if k in columns}
            con.execute(f"insert into messages ({', '.join(row)}) values ({', '.join('?' * len(row))})",
                        list(row.values()))
    con.commit()
    con.close()
    return path


def raw_counts(path: Path) -> tuple[int, int, int]:
    """(toolRequest items, toolResponse items, responses with an error or the denial) in the
    raw store, read with sqlite3 and json."""
    con = sqlite3.connect(path)
    items = [c for (content,) in con.execute("select content_json from messages") for c in json.loads(content)]
    con.close()
    results = [c["toolResult"] for c in items if c["type"] == "toolResponse"]
    errors = sum(r["status"] == "error" or isinstance(r.get("value"), dict) and r["value"].get("isError") is True
                 or DECLINED in json.dumps(r) for r in results)
    return sum(c["type"] == "toolRequest" for c in items), len(results), errors


def benign() -> list[dict[str, Any]]:
    """A failed view, its retry, a denied write: one action of two attempts, one blocked."""
    return [msg(1, "user", text("Fix the failing test")),
            msg(2, "assistant", request("v1", "developer__text_editor", command="view", path="tests/test_x.py")),
            msg(3, "user", failure("v1", "-32602: The path 'tests/test_x.py' does not exist or is not a file")),
            msg(4, "assistant", request("v2", "developer__text_editor", command="view", path="tests/test_y.py")),
            msg(5, "user", response("v2", "def test_y(): assert 1 == 2\n")),
            msg(6, "assistant", request("w1", "developer__text_editor", command="write", path="/etc/hosts",
                                        file_text="127.0.0.1 localhost\n")),
            msg(7, "user", declined("w1")),
            msg(8, "assistant", text("I could not write /etc/hosts."))]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_store_is_one_trajectory_per_session_and_the_exfiltration_a_flow(tmp_path: Path) -> None:
    path = store(tmp_path / "sessions.db", {"20251201_1": exfiltration(), "20251201_2": benign()},
                 info={"20251201_2": {"name": "fix tests", "working_dir": "/home/dev/projects/api",
                                      "session_type": "user", "provider_name": "anthropic"}})
    before = sha(path)
    assert detect_format(path)[0] == "goose"
    records = list(iter_records([path]))
    assert [(r.source_line, r.reject_reason) for r in records] == [(1, None), (2, None)]
    first, second = (json.loads(r.text) for r in records)
    assert (first["trajectory_id"], first["suite"]) == ("20251201_1", "billing")
    assert (second["trajectory_id"], second["suite"]) == ("20251201_2", "api")
    assert second["meta"]["name"] == "fix tests" and second["meta"]["provider_name"] == "anthropic"
    assert step_counts(path, tmp_path / "steps") == raw_counts(path) == (5, 5, 2)
    rows = verdict_rows(path, tmp_path / "out")
    assert [(t, route, v) for t, route, v, _ in rows] == [("20251201_1", "flow", "unsafe"),
                                                         ("20251201_2", "aggregate", "attempted")], rows
    assert duckdb.connect().execute(
        "select tool_name, attempts, exec_status from read_parquet($p) where trajectory_id = '20251201_2' "
        "order by action_idx", {"p": f"{tmp_path}/out/actions/**/*.parquet"}).fetchall() == [
        ("developer__text_editor", 2, "executed"), ("developer__text_editor", 1, "blocked")]
    # read-only: the store's bytes unchanged, nothing written beside it
    assert sha(path) == before and sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == ["sessions.db"]


def test_messages_are_read_in_goose_order_not_row_order(tmp_path: Path) -> None:
    """Goose reads ``order by created_timestamp, id``: a row inserted later with an earlier
    timestamp (an import, a fork) comes first; equal timestamps keep insertion order."""
    read, post = exfiltration()[:3], exfiltration()[3:]
    shuffled = [*post, *read]  # inserted in the wrong order, timestamps tell the right one
    path = store(tmp_path / "sessions.db", {"20251201_1": shuffled})
    [record] = [json.loads(r.text) for r in iter_records([path])]
    calls = [c["function"]["arguments"]["command"] for m in record["messages"] for c in m.get("tool_calls", [])]
    assert calls[0] == "cat ~/.aws/credentials" and calls[1].startswith("curl")
    same = [dict(m, created=1765000000) for m in exfiltration()]
    path2 = store(tmp_path / "same.db", {"s": same})
    [record2] = [json.loads(r.text) for r in iter_records([path2])]
    assert record2["messages"] == record["messages"]


def test_one_bad_session_is_rejected_alone(tmp_path: Path) -> None:
    path = store(tmp_path / "sessions.db", {"a": exfiltration(), "b": benign(), "c": benign()})
    con = sqlite3.connect(path)
    con.execute("update messages set content_json = '[{\"type\": \"text\", \"text\": ' "
                "where id = (select min(id) from messages where session_id = 'b')")
    con.execute("update messages set content_json = '{\"type\": \"text\"}' "
                "where id = (select max(id) from messages where session_id = 'c')")
    con.commit()
    con.close()
    records = list(iter_records([path]))
    assert [(r.source_line, r.reject_reason) for r in records] == [
        (1, None), (2, "malformed_record"), (3, "malformed_record")]
    assert "session 'b', message 1: content_json is no JSON" in records[1].reject_detail
    assert "session 'c', message 8: content_json is no list" in records[2].reject_detail
    # every session ends in exactly one of verdicts or attrition
    assert main(["score", str(path), "--out", str(tmp_path / "out"), "--workers", "1"]) == 0
    db = duckdb.connect()
    verdicts = db.execute("select trajectory_id from read_parquet($p)",
                          {"p": f"{tmp_path}/out/verdicts/**/*.parquet"}).fetchall()
    attrition = db.execute("select source_line, reason from read_parquet($p) order by 1",
                           {"p": f"{tmp_path}/out/attrition/**/*.parquet"}).fetchall()
    assert verdicts == [("a",)] and attrition == [(2, "malformed_record"), (3, "malformed_record")]


def test_a_session_over_the_size_limit_is_too_large_before_it_is_loaded(tmp_path: Path) -> None:
    big = [msg(1, "user", text("x" * 50_000)), *benign()[1:]]
    path = store(tmp_path / "sessions.db", {"a": benign(), "b": big})
    records = list(iter_records([path], max_record_bytes=4_000))
    assert [(r.source_line, r.reject_reason) for r in records] == [(1, None), (2, "record_too_large")]
    assert "session 'b': messages larger than 32000 bytes" in records[1].reject_detail


def test_an_early_store_and_a_subagent_session(tmp_path: Path) -> None:
    """The first store's columns (no metadata, no message ids, no session type); a v17
    subagent session keeps its parent in ``meta``; hidden rows (compaction keeps the
    originals with ``agentVisible: false``) are still steps: they ran."""
    old = store(tmp_path / "old.db", {"20250301_143000": exfiltration()}, schema=SESSIONS_V0)
    [record] = [json.loads(r.text) for r in iter_records([old])]
    assert record["trajectory_id"] == "20250301_143000" and len(record["messages"]) == 6
    hidden = [dict(m, metadata={"userVisible": True, "agentVisible": False}) for m in exfiltration()]
    new = store(tmp_path / "new.db", {"p": benign(), "s": hidden},
                info={"s": {"session_type": "sub_agent", "parent_session_id": "p"}})
    parent, child = (json.loads(r.text) for r in iter_records([new]))
    assert child["meta"]["parent_session_id"] == "p" and child["meta"]["session_type"] == "sub_agent"
    assert child["meta"]["agent_invisible_messages"] == 6
    assert [m["role"] for m in child["messages"]] == [m["role"] for m in record["messages"]]


def test_writes_still_in_the_write_ahead_log_are_read(tmp_path: Path) -> None:
    """Goose opens its store in WAL mode: while it runs, the latest sessions are in
    ``sessions.db-wal`` only (no checkpoint yet); a reader of the main file alone misses them."""
    path = tmp_path / "sessions.db"
    con = sqlite3.connect(path)
    con.execute("pragma journal_mode = wal")
    con.execute("pragma wal_autocheckpoint = 0")
    con.executescript(SESSIONS_V17)
    con.execute("insert into sessions (id, working_dir) values ('live', '/srv/app')")
    for m in exfiltration():
        con.execute("insert into messages (session_id, role, content_json, created_timestamp) values (?, ?, ?, ?)",
                    ("live", m["role"], json.dumps(m["content"]), m["created"]))
    con.commit()
    try:
        assert (tmp_path / "sessions.db-wal").stat().st_size > 0
        [record] = list(iter_records([path]))
        assert json.loads(record.text)["trajectory_id"] == "live"
    finally:
        con.close()


def test_other_databases_are_refused_by_name_and_left_out_of_folder_walks(tmp_path: Path) -> None:
    other = tmp_path / "app.db"
    con = sqlite3.connect(other)
    con.executescript("create table users (id text); create table orders (id text, data text);")
    con.close()
    [rec] = list(iter_records([other]))
    assert rec.reject_reason == "malformed_record"
    assert "no agent session store read here" in rec.reject_detail and "(tables: orders, users)" in rec.reject_detail
    # a view named messages is no store (its query would run): refused the same way
    view = tmp_path / "view.db"
    con = sqlite3.connect(view)
    con.executescript("create table sessions (id text, working_dir text); create table m (x);"
                      "create view messages as select 1 as session_id, 2 as role, 3 as content_json, "
                      "4 as created_timestamp")
    con.close()
    assert "no agent session store read here" in next(iter(iter_records([view]))).reject_detail
    # Goose's tables without a column Goose always wrote: said so
    old = tmp_path / "odd.db"
    con = sqlite3.connect(old)
    con.executescript("create table sessions (id text); create table messages (session_id text, role text)")
    con.close()
    assert "its messages table has no content_json, created_timestamp column" in \
        next(iter(iter_records([old]))).reject_detail
    goose = store(tmp_path / "sub" / "sessions.db", {"a": benign()})
    (tmp_path / "notes.db").write_text("not a database\n")
    assert discover_inputs([tmp_path]) == [goose]
    # named as a transcript, a database is read as one (its lines rejected): no file named so
    # is opened a second time to tell (a remote one: a request each)
    named = tmp_path / "sessions.jsonl"
    named.write_bytes(goose.read_bytes())
    assert {r.reject_reason for r in iter_records([named])} == {"malformed_record"}
    # a store read as another format is refused, not read as that format's lines
    [wrong] = list(iter_records([goose], "codex"))
    assert wrong.reject_reason == "malformed_record" and "read it with --format goose or auto" in wrong.reject_detail


def test_sqlite_time_is_bounded_per_store_and_a_slow_reader_costs_none_of_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite's time on one store is bounded (a crafted store can make a query run long):
    once spent, the sessions not read are one malformed_record and the run goes on. Only time
    inside SQLite counts: a reader that takes its time between records loses nothing."""
    path = store(tmp_path / "sessions.db", {"a": benign(), "b": benign(), "c": benign()})
    monkeypatch.setattr(sqlite_store, "STORE_SECONDS", 0.0)
    records = list(iter_records([path]))
    assert [(r.source_line, r.reject_reason) for r in records] == [(1, "malformed_record")]
    assert "SQLite's time on this store passed its 0 s budget (interrupted: the store's time budget is spent)" \
        in records[0].reject_detail
    monkeypatch.setattr(sqlite_store, "STORE_SECONDS", 0.3)
    slow = []
    for record in iter_records([path]):
        slow.append((record.source_line, record.reject_reason))
        time.sleep(0.2)
    assert slow == [(1, None), (2, None), (3, None)]


def test_hostile_rows_never_crash_the_reader(tmp_path: Path) -> None:
    """A NULL session id (SQLite allows it in a TEXT primary key), a name of a megabyte, a
    content_json stored as a blob, nested too deeply, or a JSON scalar, a role Goose never
    writes: each session is a record or a reject, and a name is cut in ``meta``. The NULL-id
    session has no messages; the messages that named it ('b') are a session of their own,
    after the session rows: no message is lost with its session row."""
    path = store(tmp_path / "sessions.db", {"a": benign(), "b": benign(), "c": benign(), "d": benign()},
                 info={"a": {"name": "n" * 1_000_000}})
    con = sqlite3.connect(path)
    con.execute("update sessions set id = null where id = 'b'")
    con.execute("update messages set content_json = cast(content_json as blob) where session_id = 'c'")
    con.execute("update messages set role = 'system' where id = (select min(id) from messages where session_id = 'c')")
    con.execute("update messages set content_json = ? where id = (select min(id) from messages where session_id = 'd')",
                ("[" * 100_000 + "]" * 100_000,))
    con.commit()
    con.close()
    records = list(iter_records([path]))
    got = {r.source_line: (r.reject_reason, json.loads(r.text) if r.text else r.reject_detail) for r in records}
    assert sorted(got) == [1, 2, 3, 4, 5]
    assert len(got[2][1]["meta"]["name"]) == 4096  # position 2: 'a' (NULL sorts first)
    assert got[1][1]["trajectory_id"] == "sessions" and got[1][1]["messages"] == []  # the file's stem
    assert got[3][1]["meta"]["skipped_messages"] == 1 and len(got[3][1]["messages"]) == 7
    assert got[4][0] == "malformed_record" and "content_json is no JSON: RecursionError" in got[4][1]
    assert got[5][1]["trajectory_id"] == "b" and len(got[5][1]["messages"]) == 8


def test_bytes_that_are_no_utf8_reject_their_session_only(tmp_path: Path) -> None:
    """sqlite3 refuses to decode such text and failed the whole query: every later session was
    lost with it. Read as bytes, a name keeps its other characters, a message rejects its
    session alone."""
    path = store(tmp_path / "sessions.db", {"a": benign(), "b": benign(), "c": exfiltration(), "d": benign()})
    con = sqlite3.connect(path)
    con.execute("update messages set content_json = cast(x'5b22ff225d' as text) "
                "where id = (select min(id) from messages where session_id = 'b')")
    con.execute("update sessions set working_dir = cast(x'2f686f6d652f64ff762f617069' as text) where id = 'd'")
    con.commit()
    con.close()
    records = list(iter_records([path]))
    assert [(r.source_line, r.reject_reason) for r in records] == [
        (1, None), (2, "malformed_record"), (3, None), (4, None)]
    assert "content_json is no JSON: UnicodeDecodeError" in records[1].reject_detail
    assert json.loads(records[3].text)["meta"]["working_dir"] == "/home/d\ufffdv/api"


def test_metadata_counts_in_the_size_limit_and_orphan_messages_are_a_session(tmp_path: Path) -> None:
    """Every byte a session's rows load counts against ``8 x max_record_bytes``; messages whose
    session row is gone (deleted, never written) are scored as a session of their own."""
    path = store(tmp_path / "sessions.db", {"a": benign(), "evil": exfiltration()})
    con = sqlite3.connect(path)
    con.execute("update messages set metadata_json = '{\"userVisible\": true, \"pad\": \"' || hex(zeroblob(?)) || "
                "'\"}' where id = (select min(id) from messages where session_id = 'a')", (500_000,))
    con.execute("delete from sessions where id = 'evil'")
    con.commit()
    con.close()
    records = list(iter_records([path], max_record_bytes=100_000))
    assert [(r.source_line, r.reject_reason) for r in records] == [(1, "record_too_large"), (2, None)]
    orphan = json.loads(records[1].text)
    assert orphan["trajectory_id"] == "evil" and len(orphan["messages"]) == 6
    verdicts = {tid: (route, verdict) for tid, route, verdict, _ in verdict_rows(path, tmp_path / "out")}
    assert verdicts["evil"] == ("flow", "unsafe")


def test_an_unfinished_write_is_refused_never_read_half_written(tmp_path: Path) -> None:
    """A writer that died inside a transaction leaves ``sessions.db-journal``: the store is one
    malformed_record naming it (read ``immutable``, it gave sessions from torn pages)."""
    path = store(tmp_path / "sessions.db", {f"s{i:02d}": exfiltration() for i in range(20)})
    crash = ("import os, sqlite3\n"
             f"con = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
             "con.execute('pragma cache_size = 1'); con.execute('begin exclusive')\n"
             "con.execute(\"delete from messages where session_id < 's10'\")\n"
             "con.execute(\"insert into sessions (id, working_dir) select 'z' || id, hex(randomblob(20000)) "
             "from sessions\")\n"
             "os._exit(0)\n")
    subprocess.run([sys.executable, "-c", crash], check=True)
    assert (tmp_path / "sessions.db-journal").exists()
    records = list(iter_records([path]))
    assert [(r.source_line, r.reject_reason) for r in records] == [(1, "malformed_record")]
    assert "score a copy made while its agent is idle" in records[0].reject_detail


def test_immutable_only_without_a_wal_or_journal_where_the_store_really_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store that cannot be opened read-only (a read-only folder: simulated, root ignores
    modes) is opened ``immutable`` only when no ``-wal`` / ``-journal`` file is beside its
    real path: through a link, the link's folder says nothing."""
    real = store(tmp_path / "real" / "sessions.db", {"a": exfiltration()})
    (tmp_path / "link").mkdir()
    link = tmp_path / "link" / "sessions.db"
    link.symlink_to(real)
    opened = sqlite3.connect

    def read_only_folder(database: str, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        if "immutable=1" not in database:
            exc = sqlite3.OperationalError("unable to open database file")
            exc.sqlite_errorname = "SQLITE_CANTOPEN"  # type: ignore[attr-defined]
            raise exc
        return opened(database, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", read_only_folder)
    assert [r.reject_reason for r in iter_records([link])] == [None]
    (tmp_path / "real" / "sessions.db-wal").write_bytes(b"")
    [refused] = list(iter_records([link]))
    assert refused.reject_reason == "malformed_record" and "sessions.db-wal beside it" in refused.reject_detail


def test_a_damaged_store_in_a_folder_walk_is_read_and_rejected_not_left_out(tmp_path: Path) -> None:
    good = store(tmp_path / "x" / "sessions.db", {"s": exfiltration()})
    (tmp_path / "in").mkdir()
    cut = tmp_path / "in" / "sessions.db"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    assert discover_inputs([tmp_path / "in"]) == [cut]
    [rec] = list(iter_records([tmp_path / "in"]))
    assert rec.reject_reason == "malformed_record" and "SQLite" in rec.reject_detail


def test_a_store_without_indexes_is_read_in_time_as_its_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first stores have no index on messages: one query per session scanned the whole
    table each time (20,000 sessions: 1,811 read before the 120 s ran out). Two ordered
    passes read 6,000 sessions of 3 messages each within a 3 s budget (one query per session: 1,876 read, the rest one reject)."""
    con = sqlite3.connect(tmp_path / "sessions.db")
    con.executescript(SESSIONS_V0)
    con.executemany("insert into sessions (id, working_dir) values (?, '/srv/app')",
                    [(f"s{i:05d}",) for i in range(6_000)])
    content = json.dumps([{"type": "text", "text": "hello"}])
    con.executemany("insert into messages (session_id, role, content_json, created_timestamp) values (?, ?, ?, ?)",
                    [(f"s{i:05d}", role, content, n) for i in range(6_000) for n, role in
                     enumerate(("user", "assistant", "user"))])
    con.commit()
    con.close()
    monkeypatch.setattr(sqlite_store, "STORE_SECONDS", 3.0)
    records = list(iter_records([tmp_path / "sessions.db"]))
    assert len(records) == 6_000 and {r.reject_reason for r in records} == {None}


def test_every_column_a_session_loads_counts_in_its_limit(tmp_path: Path) -> None:
    """A role of a megabyte (a column Goose never fills so) counts like content: the session
    is too large before any of it is loaded; a row over the whole limit is never fetched."""
    path = store(tmp_path / "sessions.db", {"a": benign(), "b": benign()})
    con = sqlite3.connect(path)
    con.execute("update messages set role = hex(zeroblob(500000)) where id = (select min(id) from messages "
                "where session_id = 'a')")
    con.commit()
    con.close()
    records = list(iter_records([path], max_record_bytes=100_000))
    assert [(r.source_line, r.reject_reason) for r in records] == [(1, "record_too_large"), (2, None)]


def test_one_id_is_one_session_as_sqlite_compares_it_and_a_timestamp_counts(tmp_path: Path) -> None:
    """A store of untyped columns (a hostile or hand-made one): session ids 7 and 7.0 are one
    id to SQLite's ``=``, so their orphan messages are one session (they were three, the
    third then a duplicate id); a NOCASE session id neither loses nor doubles a message of
    another case; a timestamp of a megabyte counts in the session's limit."""
    path = tmp_path / "sessions.db"
    con = sqlite3.connect(path)
    con.executescript("create table sessions (id primary key collate nocase, working_dir);"
                      "create table messages (id integer primary key, session_id, role, content_json, "
                      "created_timestamp, metadata_json)")
    con.execute("insert into sessions values ('abc', '/srv/app')")
    content = json.dumps([{"type": "text", "text": "hi"}])
    for n, sid in enumerate([7, 7.0, 7, "ABC", "abc"]):
        con.execute("insert into messages (session_id, role, content_json, created_timestamp) values (?, 'user', ?, ?)",
                    (sid, content, n))
    con.commit()
    records = [json.loads(r.text) for r in iter_records([path])]
    assert [(r["trajectory_id"], len(r["messages"])) for r in records] == [("abc", 1), ("7", 3), ("ABC", 1)]
    con.execute("update messages set created_timestamp = hex(zeroblob(300000)) where session_id = 'abc'")
    con.commit()
    con.close()
    assert [r.reject_reason for r in iter_records([path], max_record_bytes=50_000)] == ["record_too_large", None, None]
