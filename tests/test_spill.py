"""Where DuckDB spills past ``memory_limit``: a run's work folder for its shards and its
publishing, a folder of its own under the system's temporary directory otherwise; never
DuckDB's default ``.tmp`` in the current directory (a nightly job's working directory may
be ``/`` or a read-only checkout, and a killed run left its spill files there)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import duckdb
import pytest

from pipeline.config import RunConfig
from pipeline.run import score
from pipeline.stages.tables import connect

SPILLING = "create temp table t as select range as i, md5(range::varchar) as s from range(3000000) order by s"


def test_a_connection_spills_outside_the_current_directory_and_cleans_up(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    con = connect(RunConfig(inputs=(), out=tmp_path / "out", threads=1, memory_limit="64MB"), macros=False)
    con.execute("set enable_progress_bar = false")
    [(where,)] = con.execute("select current_setting('temp_directory')").fetchall()
    assert Path(where).parent == Path(tempfile.gettempdir()) and Path(where).name.startswith("litmus-gate-spill-")
    con.execute(SPILLING)  # 3 million sorted rows do not fit in 64 MB: DuckDB spills
    assert any(Path(where).iterdir())
    con.close()
    assert not Path(where).exists() and list(cwd.iterdir()) == []


def test_two_connections_never_share_a_spill_folder() -> None:
    config = RunConfig(inputs=(), out=Path("unused"))
    first, second = (connect(config, macros=False).execute("select current_setting('temp_directory')").fetchall()
                     for _ in range(2))
    assert first != second


def test_a_run_spills_into_its_work_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, Any]] = []
    real = duckdb.connect

    def recording(*args: Any, **kwargs: Any) -> duckdb.DuckDBPyConnection:
        seen.append(dict(kwargs.get("config") or {}))
        return real(*args, **kwargs)

    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"trajectory_id": "t1", "messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}) + "\n")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(duckdb, "connect", recording)
    work = tmp_path / "work"
    score(RunConfig(inputs=(corpus,), out=tmp_path / "run", workers=1, work_dir=work))
    spills = [Path(c["temp_directory"]) for c in seen if "temp_directory" in c and "memory_limit" in c]
    in_work = [p for p in spills if p.parent.resolve() == work.resolve() or work.resolve() in p.resolve().parents]
    names = [p.name for p in in_work]
    assert "spill-publish" in names  # the publishing connection
    assert any(n.startswith("spill-") and n != "spill-publish" for n in names)  # the shard's
    others = [p for p in spills if p not in in_work]  # e.g. the canaries': a few rows
    assert all(p.parent == Path(tempfile.gettempdir()) and p.name.startswith("litmus-gate-spill-") for p in others)
    assert list(cwd.iterdir()) == []
