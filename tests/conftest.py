"""Shared fixtures: run the SQL stages in memory on hand-written trajectories."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest

from pipeline.stages import tables as run
from pipeline.config import RunConfig
from pipeline.policy import Policy, load_policy
from pipeline.ingest.records import RawRecord
from pipeline.ingest.tables_in import LABELS_SCHEMA

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def policy() -> Policy:
    return load_policy()


def _text(record: Any) -> str:
    return record if isinstance(record, str) else json.dumps(record)


def stage_connection(
    records: Sequence[Any],
    policy: Policy | None = None,
    labels: Sequence[dict[str, Any]] = (),
    until: str = "verdicts",
) -> duckdb.DuckDBPyConnection:
    """Run the stages up to ``until`` on in-memory records; returns the connection."""
    pol = policy or load_policy()
    con = run.connect(RunConfig(inputs=(), out=Path("unused")))
    table = run.records_table(RawRecord("mem.jsonl", i + 1, _text(r)) for i, r in enumerate(records))
    run.register_inputs(con, table, pol, pa.Table.from_pylist(list(labels), schema=LABELS_SCHEMA))
    run.steps(con)
    if until == "steps":
        return con
    run.actions(con)
    if until == "actions":
        return con
    run.flows(con, pol)
    if until == "flows":
        return con
    run.verdicts(con, pol)
    return con


@pytest.fixture
def stages() -> Callable[..., duckdb.DuckDBPyConnection]:
    return stage_connection


def parquet_digests(run: Path) -> dict[str, str]:
    """SHA-256 of every Parquet file of a run, by path inside it (byte determinism)."""
    import hashlib

    return {str(p.relative_to(run)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(run.rglob("*.parquet"))}


def table_contents(run: Path) -> dict[str, str]:
    """SHA-256 of each table's rows in a canonical order (SPEC section 6: contents are
    identical across worker counts, shard sizes and engines; file bytes need not be)."""
    import hashlib

    out = {}
    con = duckdb.connect()
    for folder in sorted(p for p in run.iterdir() if p.is_dir()):
        files = sorted(str(f) for f in folder.rglob("*.parquet"))
        if files:
            found = con.execute("select * from read_parquet(?, hive_partitioning = true, union_by_name = true) "
                                "order by all", [files]).fetchall()
            out[folder.name] = hashlib.sha256(repr(found).encode()).hexdigest()
    return out


def rows(con: duckdb.DuckDBPyConnection, sql: str,
         params: Sequence[Any] | Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Query result as a list of dicts (``params``: positional, or named as ``$name``)."""
    cur = con.execute(sql, (dict(params) if isinstance(params, Mapping) else list(params)) if params else None)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def bounded_child(code: str, *args: str, timeout: float = 20) -> subprocess.CompletedProcess[str]:
    """``python -c code args...`` in a child process from the repository root, killed
    after ``timeout`` seconds (``subprocess.TimeoutExpired``): a bound on hostile input that
    was quadratic (minutes), not a benchmark (well under the bound when linear)."""
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout,
                          cwd=Path(__file__).resolve().parents[1])


def traj(tid: str, *messages: dict[str, Any], suite: str = "t") -> dict[str, Any]:
    """A canonical trajectory."""
    return {"trajectory_id": tid, "suite": suite, "messages": list(messages)}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def calls(*items: tuple[str, str, dict[str, Any] | str], text: str | None = None) -> dict[str, Any]:
    """An assistant message with tool calls: (call_id, tool, arguments)."""
    return {"role": "assistant", "content": text, "tool_calls": [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": args}} for cid, name, args in items]}


def result(cid: str, content: str = "ok", error: Any = None) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": cid, "content": content, "error": error}


@pytest.fixture(scope="session", autouse=True)
def _no_shared_canary_cache() -> Iterator[None]:
    """Module and session fixtures (set up before a test's own fixtures) run with the
    canary cache off, never reading or writing the user's ``~/.cache``."""
    from pipeline.stages.canary_cache import CACHE_ENV

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_ENV, "")
        yield


@pytest.fixture(autouse=True)
def _own_canary_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts with an empty canary cache (pipeline/stages/canary_cache.py), so a
    pass remembered by one test never hides a grader another test breaks on purpose."""
    from pipeline.stages.canary_cache import CACHE_ENV

    monkeypatch.setenv(CACHE_ENV, str(tmp_path_factory.mktemp("canary-cache")))


_HANDLERS = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}  # as the test process began


@pytest.fixture(autouse=True)
def _no_remembered_analyses() -> None:
    """Each test starts with a process that has analysed no program
    (``pipeline.analysis.analysed._MEMO`` keeps analyses across the shards a process
    scores): a test's result never depends on which tests ran before it in its worker."""
    from pipeline.analysis.analysed import _MEMO

    _MEMO.clear()


@pytest.fixture(autouse=True)
def _signal_handlers_put_back() -> Iterator[None]:
    """Each test leaves SIGINT / SIGTERM as the test process began: one that leaves a signal
    ignored (a library, an in-process run) made every later subprocess of that pytest worker
    start with it ignored (inherited), and a CI run failed a signal test that expects
    Python's default handler in its child (``handler False``), depending on which tests
    shared its worker."""
    yield
    if threading.current_thread() is threading.main_thread():
        for signum, handler in _HANDLERS.items():
            if handler is not None:  # always: a native library can ignore one behind Python's back
                signal.signal(signum, handler)
