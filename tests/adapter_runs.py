"""What the adapter tests share: writing NDJSON, converting a file, exploding it and
counting its steps, scoring it and reading its verdicts (each adapter test counts calls and
results in the raw file on its own and compares them with these)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb

from pipeline.cli import main
from pipeline.ingest.reader import iter_records
from tests.conftest import rows, stage_connection


def step_counts(inputs: Path, out: Path, fmt: str = "auto") -> tuple[int, int, int]:
    """(tool calls, tool results, results with an error) in the steps table of an
    ``explode`` run of ``inputs`` (read as ``fmt``) into ``out``."""
    assert main(["explode", str(inputs), "--out", str(out), "--workers", "1", "--format", fmt]) == 0
    [(calls, results, errors)] = duckdb.connect().execute(
        "select count(*) filter (where kind = 'tool_call'), count(*) filter (where kind = 'tool_result'), "
        "count(*) filter (where kind = 'tool_result' and error_type is not null) from read_parquet($p)",
        {"p": f"{out}/steps/**/*.parquet"}).fetchall()
    return calls, results, errors


def verdict_rows(inputs: Path, out: Path, fmt: str = "auto") -> list[tuple[str, str, str, str]]:
    """(trajectory_id, route, verdict, reason) of a ``score`` run of ``inputs`` (read as
    ``fmt``) into ``out``, in id order."""
    assert main(["score", str(inputs), "--out", str(out), "--workers", "1", "--format", fmt]) == 0
    return duckdb.connect().execute("select trajectory_id, route, verdict, reason from read_parquet($p) order by 1",
                                    {"p": f"{out}/verdicts/**/*.parquet"}).fetchall()


def write_ndjson(path: Path, *records: Any) -> Path:
    """``records`` as one JSON line each."""
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def converted(path: Path, fmt: str = "auto") -> list[dict[str, Any]]:
    """The canonical records a file converts to (every record must convert)."""
    out = []
    for rec in iter_records([path], fmt):
        assert rec.text is not None, rec.reject_detail
        out.append(json.loads(rec.text))
    return out


def assert_read_retried_then_posted(record: dict[str, Any]) -> None:
    """A converted record whose first read_file failed and was retried, then whose result
    was POSTed: the failed call is one logical action with its retry, and the post a flow."""
    con = stage_connection([record])
    steps = rows(con, "select exec_status from steps where kind = 'tool_call' order by step_idx")
    assert [s["exec_status"] for s in steps] == ["failed", "executed", "executed"]
    actions = rows(con, "select tool_name, attempts from actions order by action_idx")
    assert actions == [{"tool_name": "read_file", "attempts": 2}, {"tool_name": "http_post", "attempts": 1}]
    [verdict] = rows(con, "select route, verdict, n_retries_collapsed from verdicts")
    assert (verdict["route"], verdict["verdict"], verdict["n_retries_collapsed"]) == ("flow", "unsafe", 1)
