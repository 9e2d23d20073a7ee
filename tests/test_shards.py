"""Sharded execution: identical tables whatever the worker or shard count; resume after
SIGKILL equals a clean run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline.cli import main
from tests.conftest import REPO, parquet_digests, table_contents




SAMPLE = REPO / "data" / "sample"


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ref") / "run"
    assert main(["score", str(SAMPLE / "corpus"), "--labels", str(SAMPLE / "labels.jsonl"), "--out", str(out),
                 "--workers", "1", "--shards", "1", "--quiet"]) == 0
    return out


@pytest.mark.parametrize("workers, shards", [(1, 3), (2, 2), (2, 5)])
def test_tables_do_not_depend_on_workers_or_shards(reference: Path, tmp_path: Path, workers: int, shards: int) -> None:
    out = tmp_path / "run"
    assert main(["score", str(SAMPLE / "corpus"), "--labels", str(SAMPLE / "labels.jsonl"), "--out", str(out),
                 "--workers", str(workers), "--shards", str(shards), "--quiet"]) == 0
    assert table_contents(out) == table_contents(reference)  # SPEC 6: contents, whatever the shards


def test_identical_settings_give_identical_bytes(tmp_path: Path) -> None:
    runs = []
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}"
        assert main(["score", str(SAMPLE / "corpus"), "--labels", str(SAMPLE / "labels.jsonl"), "--out", str(out),
                     "--workers", workers, "--shards", "3", "--quiet"]) == 0
        runs.append(parquet_digests(out))
    assert runs[0] == runs[1] != {}


def test_resume_after_sigkill_equals_a_clean_run(reference: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "pipeline.cli", "score", str(SAMPLE / "corpus"), "--labels",
           str(SAMPLE / "labels.jsonl"), "--out", str(out), "--workers", "1", "--shards", "6", "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    work = tmp_path / ".run.work" / "out"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(work.glob("shard-*.done"))) < 2:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = len(list(work.glob("shard-*.done")))
    assert not out.exists() and 2 <= finished < 6
    resumed = subprocess.run([*cmd, "--resume"], check=True, capture_output=True, text=True)
    assert f"resuming: {finished} of 6 shards already done" in resumed.stderr
    assert table_contents(out) == table_contents(reference)
    assert not (tmp_path / ".run.work").exists()
