"""OpenCode's SQLite store (``pipeline/ingest/adapters/opencode_db.py``, read through
``sqlite_store.py``). Before, ``opencode.db`` (where OpenCode keeps its sessions since 1.2)
was read as NDJSON lines ("NUL byte" rejects) and a folder walk left it out: only an
``opencode export`` per session could be scored. The store is made here with the tables of
OpenCode's first database migration; its sessions must read as the same sessions do from
the storage folder, and calls and results are counted in the raw store with sqlite3 and json."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import duckdb

from pipeline.ingest.discovery import detect_format, discover_inputs
from pipeline.ingest.reader import iter_records
from tests.adapter_runs import converted, step_counts, verdict_rows
from tests.test_adapters_opencode import S1, S2, export_doc, raw_counts, steps, subagent_docs, write_storage

SCHEMA = """
create table project (id text primary key, worktree text not null, vcs text, name text,
    time_created integer not null, time_updated integer not null, time_initialized integer,
    sandboxes text not null);
create table session (id text primary key, project_id text not null references project(id) on delete cascade,
    parent_id text, slug text not null, directory text not null, title text not null, version text not null,
    share_url text, summary_additions integer, summary_deletions integer, summary_files integer,
    summary_diffs text, revert text, permission text, time_created integer not null,
    time_updated integer not null, time_compacting integer, time_archived integer);
create table message (id text primary key, session_id text not null references session(id) on delete cascade,
    time_created integer not null, time_updated integer not null, data text not null);
create table part (id text primary key, message_id text not null references message(id) on delete cascade,
    session_id text not null, time_created integer not null, time_updated integer not null, data text not null);
create table todo (session_id text not null, content text not null, status text not null, priority text not null,
    position integer not null, time_created integer not null, time_updated integer not null,
    primary key (session_id, position));
create index message_session_time_created_id_idx on message (session_id, time_created, id);
create index part_message_id_id_idx on part (message_id, id);
"""


def write_db(path: Path, *docs: dict[str, Any], reverse: bool = False) -> Path:
    """Exported sessions written as OpenCode's store holds them: ``data`` without the ids
    (``reverse``: rows inserted last first; OpenCode's order comes from times and ids)."""
    con = sqlite3.connect(path)
    con.executescript(SCHEMA)
    rows: list[tuple[str, tuple[Any, ...]]] = []
    for doc in docs:
        info = doc["info"]
        con.execute("insert or ignore into project values (?, ?, 'git', null, 1, 1, null, '[]')",
                    (info["projectID"], info["directory"]))
        con.execute("insert into session (id, project_id, parent_id, slug, directory, title, version, "
                    "time_created, time_updated) values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (info["id"], info["projectID"], info.get("parentID"), info["slug"], info["directory"],
                     info["title"], info["version"], info["time"]["created"], info["time"]["updated"]))
        for n, msg in enumerate(doc["messages"]):
            m = msg["info"]
            data = {k: v for k, v in m.items() if k not in ("id", "sessionID")}
            created = m["time"]["created"] + n  # OpenCode's times are milliseconds
            rows.append(("insert into message values (?, ?, ?, ?, ?)",
                         (m["id"], m["sessionID"], created, created, json.dumps(data))))
            for part in msg["parts"]:
                pdata = {k: v for k, v in part.items() if k not in ("id", "sessionID", "messageID")}
                rows.append(("insert into part values (?, ?, ?, ?, ?, ?)",
                             (part["id"], m["id"], part["sessionID"], created, created, json.dumps(pdata))))
    for query, values in reversed(rows) if reverse else rows:
        con.execute(query, values)
    con.commit()
    con.close()
    return path


def db_counts(path: Path) -> tuple[int, int, int]:
    """(tool parts, those with a result, those in error) in the raw store."""
    con = sqlite3.connect(path)
    parts = [json.loads(data) for (data,) in con.execute("select data from part")]
    con.close()
    return raw_counts(parts)


def test_a_store_reads_as_the_storage_folder_and_its_exfiltration_is_a_flow(tmp_path: Path) -> None:
    doc = export_doc()
    path = write_db(tmp_path / "opencode.db", doc, reverse=True)
    assert detect_format(path)[0] == "opencode"
    write_storage(tmp_path / "storage", doc)
    [from_db], [from_folder] = converted(path), converted(tmp_path / "storage")
    assert from_db["meta"].pop("output_format") == "database"
    assert from_folder["meta"].pop("output_format") == "storage"
    assert from_db == from_folder
    assert step_counts(path, tmp_path / "steps") == db_counts(path) == (4, 4, 2)
    [(tid, route, verdict, _)] = verdict_rows(path, tmp_path / "out")
    assert (tid, route, verdict) == (S1, "flow", "unsafe")


def test_a_subagent_session_names_its_task_call(tmp_path: Path) -> None:
    """The parent's ``task`` part names the child session in ``state.metadata.sessionId``:
    found in the store, as in the storage folder."""
    parent, child = subagent_docs()
    path = write_db(tmp_path / "opencode.db", child, parent)
    records = list(iter_records([path]))
    assert [r.source_line for r in records] == [1, 2]  # id order: OpenCode's newest first, the child
    by_id = {json.loads(r.text)["trajectory_id"]: json.loads(r.text) for r in records}
    assert list(by_id) == [S2, S1]
    assert [m["role"] for m in by_id[S2]["messages"]] == ["user", "assistant", "tool"]
    assert [m["role"] for m in by_id[S1]["messages"]] == ["user", "assistant", "tool"]
    assert (by_id[S2]["parent_trajectory_id"], by_id[S2]["parent_call_id"]) == (S1, "toolu_01")
    assert "parent_trajectory_id" not in by_id[S1]
    step_counts(path, tmp_path / "steps")
    assert sorted(steps(tmp_path / "steps")) == [("grep", "executed"), ("task", "unknown")]


def test_one_bad_row_rejects_its_session_only_and_walks_find_the_store(tmp_path: Path) -> None:
    other = export_doc()
    other["info"].update(id=S2, time={"created": 1767000005000, "updated": 1767000006000})
    for m in other["messages"]:
        m["info"]["sessionID"] = S2
        m["info"]["id"] += "x"
        for p in m["parts"]:
            p.update(sessionID=S2, messageID=m["info"]["id"], id=p["id"] + "x")
    (tmp_path / "data").mkdir()
    path = write_db(tmp_path / "data" / "opencode.db", export_doc(), other)
    con = sqlite3.connect(path)
    con.execute("update part set data = '{\"type\": ' where id = 'prt_b006x'")
    con.commit()
    con.close()
    records = list(iter_records([path]))
    # id order: S2 ('ses_4f0e...') before S1
    assert [(r.source_line, r.reject_reason) for r in records] == [(1, "malformed_record"), (2, None)]
    assert "message 3, part 2: data is no JSON" in records[0].reject_detail
    assert discover_inputs([tmp_path]) == [path]
    assert main_score(path, tmp_path / "out") == ([(S1,)], [(1, "malformed_record")])


def main_score(path: Path, out: Path) -> tuple[list[Any], list[Any]]:
    from pipeline.cli import main

    assert main(["score", str(path), "--out", str(out), "--workers", "1"]) == 0
    db = duckdb.connect()
    return (db.execute("select trajectory_id from read_parquet($p)", {"p": f"{out}/verdicts/**/*.parquet"}).fetchall(),
            db.execute("select source_line, reason from read_parquet($p)",
                       {"p": f"{out}/attrition/**/*.parquet"}).fetchall())


def test_ids_count_in_the_limit_and_a_missing_parent_call_is_none(tmp_path: Path) -> None:
    """Part ids of megabytes count against ``8 x max_record_bytes`` as data does; a subagent
    whose parent's task part is not in the store gets ``parent_call_id`` None, as the storage
    folder's reader gives it."""
    child = export_doc()
    child["info"].update(parentID="ses_gone")
    path = write_db(tmp_path / "opencode.db", child)
    [record] = converted(path)
    assert record["parent_trajectory_id"] == "ses_gone" and record["parent_call_id"] is None
    write_storage(tmp_path / "storage", child)
    [folder] = converted(tmp_path / "storage")
    assert folder["parent_call_id"] is None
    con = sqlite3.connect(path)
    con.execute("update part set id = id || hex(zeroblob(400000)) where id = 'prt_b006'")
    con.commit()
    con.close()
    [rec] = list(iter_records([path], max_record_bytes=100_000))
    assert rec.reject_reason == "record_too_large"


def test_the_parent_call_is_the_one_the_storage_folder_names(tmp_path: Path) -> None:
    """Two task parts started the same child: the first by message id, then part id (the
    storage folder's file order), whatever the part ids alone say; a tool name written with a
    JSON escape (``\\u0074ask``) is still ``task``."""
    parent, child = subagent_docs()
    first = parent["messages"][1]["parts"][0]
    second = {**json.loads(json.dumps(first)), "id": "prt_a000", "messageID": "msg_a003", "callID": "toolu_later"}
    first["callID"] = "toolu_earlier"
    parent["messages"].append({"info": {**parent["messages"][1]["info"], "id": "msg_a003"}, "parts": [second]})
    path = write_db(tmp_path / "opencode.db", child, parent)
    write_storage(tmp_path / "storage", parent)
    write_storage(tmp_path / "storage", child)
    from_db = {r["trajectory_id"]: r for r in converted(path)}
    from_folder = {r["trajectory_id"]: r for r in converted(tmp_path / "storage")}
    assert from_db[S2]["parent_call_id"] == from_folder[S2]["parent_call_id"] == "toolu_earlier"
    con = sqlite3.connect(path)
    con.execute("update part set data = replace(data, '\"tool\": \"task\"', '\"tool\": \"\\u0074ask\"')")
    con.execute("update part set data = replace(data, 'task_id', 'job_id')")  # no 'task' left in plain text
    con.execute("delete from part where id = 'prt_b001'")
    con.commit()
    con.close()
    assert {r["trajectory_id"]: r for r in converted(path)}[S2]["parent_call_id"] == "toolu_later"
