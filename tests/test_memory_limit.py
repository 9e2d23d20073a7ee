"""DuckDB's memory cap of the connections that score shards (pipeline/config.py): by default
the workers of one machine share one budget (1.25 GiB: 640 MiB each for two workers, at
least 512 MiB each), so a shard of hostile records (each just under the per-trajectory
bounds) cannot take a two-worker run past 2.5 GB (docs/performance.md, "Hostile input:
memory"); ``--memory-limit`` sets the cap per worker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.cli import main
from pipeline.config import RunConfig, memory_bytes, shard_memory_limit
from pipeline.execution import driver
from pipeline.execution.shard import ShardTask
from pipeline.run import score
from tests.conftest import table_contents

MIB = 2**20


@pytest.mark.parametrize(("text", "n"), [("800MB", 800 * 1000**2), ("1.5GiB", 3 * 2**29), ("640 MiB", 640 * MIB),
                                         ("2gb", 2 * 1000**3), ("671088640B", 640 * MIB)])
def test_sizes_read_as_duckdb_reads_them(text: str, n: int) -> None:
    assert memory_bytes(text) == n


@pytest.mark.parametrize("text", ["5", "lots", "1.5 GiBs", "-1GB", "1e9B", "", "\uff12GB"])
def test_what_is_not_a_size_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a size"):
        memory_bytes(text)


def test_a_size_duckdb_cannot_hold_is_refused_here_not_in_every_worker() -> None:
    with pytest.raises(ValueError, match="above 1024 TiB"):
        memory_bytes("99999999999TB")  # DuckDB: "Memory value out of range", a traceback per shard


def test_the_default_is_one_budget_shared_by_a_machines_workers() -> None:
    config = RunConfig(inputs=(), out=Path("unused"))
    assert shard_memory_limit(config, 1) == f"{1280 * MIB}B"
    assert shard_memory_limit(config, 2) == f"{640 * MIB}B"
    assert shard_memory_limit(config, 3) == f"{512 * MIB}B"  # the floor: below it normal shards spill
    assert shard_memory_limit(config, 64) == f"{512 * MIB}B"
    given = RunConfig(inputs=(), out=Path("unused"), memory_limit="3GB")
    assert shard_memory_limit(given, 2) == shard_memory_limit(given, 1) == f"{3 * 1000**3}B"  # as given, per worker


def _corpus(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"trajectory_id": f"t{i}", "messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": f"hello {i}"}]}) + "\n" for i in range(n)))
    return path


def _task_limits(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = driver._score

    def recording(config: RunConfig, tasks: list[ShardTask], *args: Any) -> Any:
        seen.extend(t.memory_limit for t in tasks)
        return real(config, tasks, *args)

    monkeypatch.setattr(driver, "_score", recording)
    return seen


@pytest.mark.parametrize(("flags", "expected"), [
    (["--workers", "2", "--shards", "2"], f"{640 * MIB}B"),  # two workers at once: a share each
    (["--workers", "1", "--shards", "2"], f"{1280 * MIB}B"),  # one shard at a time: the whole budget
    (["--workers", "2", "--shards", "1"], f"{1280 * MIB}B"),  # one shard: scored alone
    (["--workers", "2", "--shards", "2", "--memory-limit", "300MB"], "300000000B"),
])
def test_each_shard_is_given_its_share(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       flags: list[str], expected: str) -> None:
    seen = _task_limits(monkeypatch)
    corpus = _corpus(tmp_path / "c.jsonl", 6)
    assert main(["score", str(corpus), "--out", str(tmp_path / "run"), "--quiet", *flags]) == 0
    assert seen and set(seen) == {expected}
    counts = json.loads((tmp_path / "run" / "manifest.json").read_text())["row_counts"]
    assert counts["verdicts"] == 6


def test_a_bad_memory_limit_is_one_line_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = _corpus(tmp_path / "c.jsonl", 1)
    for bad, why in (("lots", "not a size"), ("200MB", "below 256 MiB")):
        with pytest.raises(SystemExit) as exc:
            main(["score", str(corpus), "--out", str(tmp_path / "run"), "--memory-limit", bad])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and why in err and "--memory-limit" in err
    assert not (tmp_path / "run").exists()


def _heavy(tid: str, n: int) -> dict[str, Any]:
    """n writes of one file, then n reads of it: n x n resource edges."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "keep notes"}]
    for step, (name, args) in enumerate([("write_file", {"path": "notes.txt", "content": f"line {i}"})
                                         for i in range(n)] + [("read_file", {"path": "notes.txt"})] * n):
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{step}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{step}", "content": f"ok {step}"})
    return {"trajectory_id": tid, "messages": messages}


def _spill_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*")
               if any(part.startswith("spill-") for part in f.relative_to(folder).parts) and f.is_file())


def test_a_tight_cap_spills_and_changes_no_table(tmp_path: Path) -> None:
    """1.35 million edges under a 128 MiB cap: DuckDB spills into the work folder (seen
    there while the run scores), and every table holds what the default cap gives."""
    import threading

    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps(_heavy(f"h{k}", 300)) + "\n" for k in range(15)))
    assert main(["score", str(corpus), "--out", str(tmp_path / "roomy"), "--quiet", "--workers", "1"]) == 0
    peak, done = [0], threading.Event()

    def watch() -> None:
        while not done.is_set():
            try:
                peak[0] = max(peak[0], _spill_bytes(tmp_path))
            except FileNotFoundError:  # a spill file removed while counted
                pass
            done.wait(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        # the library takes a cap under the command line's 256 MiB floor (a small corpus fits it)
        score(RunConfig(inputs=(corpus,), out=tmp_path / "tight", workers=1, memory_limit="128MiB"))
    finally:
        done.set()
        watcher.join()
    assert peak[0] > 0  # it did spill
    assert table_contents(tmp_path / "roomy") == table_contents(tmp_path / "tight")  # every table, row for row


def test_running_out_of_the_cap_is_one_line_and_keeps_the_work_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Some operators cannot spill (sql/flows.sql's recursive reachability: 200 chains of
    100 secret reads fail at 640 MiB, score at 2 GB): a one-line error naming the cap and
    --resume with a larger --memory-limit, not a DuckDB traceback."""
    import duckdb

    from pipeline.execution import shard

    def out_of_memory(con: Any) -> None:
        raise duckdb.OutOfMemoryException("Out of Memory Error: failed to allocate data of size 16.0 MiB\n\nmore")

    monkeypatch.setattr(shard, "steps", out_of_memory)
    corpus = _corpus(tmp_path / "c.jsonl", 2)
    assert main(["score", str(corpus), "--out", str(tmp_path / "run"), "--quiet", "--workers", "1",
                 "--memory-limit", "300MB"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "memory limit (286 MiB)" in err and "--resume" in err, err
    assert not (tmp_path / "run").exists() and (tmp_path / ".run.work").is_dir()


@pytest.mark.parametrize(("flags", "expected"), [([], "2000000000B"), (["--memory-limit", "300MB"], "300000000B")])
def test_publishing_keeps_the_drivers_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          flags: list[str], expected: str) -> None:
    """The driver publishes once every worker is gone: its connection keeps the 2 GB every
    connection had before the workers' shared budget (unless --memory-limit says)."""
    import duckdb

    seen: list[dict[str, Any]] = []
    real = duckdb.connect

    def recording(*args: Any, **kwargs: Any) -> duckdb.DuckDBPyConnection:
        seen.append(dict(kwargs.get("config") or {}))
        return real(*args, **kwargs)

    monkeypatch.setattr(duckdb, "connect", recording)
    corpus = _corpus(tmp_path / "c.jsonl", 4)
    assert main(["score", str(corpus), "--out", str(tmp_path / "run"), "--quiet", "--workers", "1", *flags]) == 0
    publishing = [c for c in seen if str(c.get("temp_directory", "")).endswith("spill-publish")]
    assert [c["memory_limit"] for c in publishing] == [expected]
