"""Pool workers are replaced after ``TASKS_PER_WORKER`` shards (docs/design.md, "Memory"):
new processes, the same tables, and no worker left behind when a shard fails."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.execution import engines, pool
from tests.conftest import REPO, parquet_digests

SAMPLE = REPO / "data" / "sample"


def _pid(_: int) -> int:
    return os.getpid()


def _fail_on_three(i: int) -> int:
    if i == 3:
        raise ValueError("shard 3 failed")
    return os.getpid()


@pytest.mark.parametrize("per_worker, least", [(2, 4), (3, 3)])
def test_each_worker_runs_at_most_tasks_per_worker_tasks(monkeypatch: pytest.MonkeyPatch, per_worker: int,
                                                         least: int) -> None:
    monkeypatch.setattr(pool, "TASKS_PER_WORKER", per_worker)
    pids = engines.run_tasks(_pid, list(range(8)), workers=2)
    assert os.getpid() not in pids
    # 8 tasks, at most per_worker in one process: at least ceil(8 / per_worker) processes
    assert len(set(pids)) >= least
    assert max(pids.count(p) for p in set(pids)) <= per_worker


def test_without_recycling_two_workers_run_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool, "TASKS_PER_WORKER", 0)
    assert len(set(engines.run_tasks(_pid, list(range(8)), workers=2))) <= 2


def test_a_failed_shard_leaves_no_worker_while_workers_are_recycled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool, "TASKS_PER_WORKER", 1)
    with pytest.raises(ValueError, match="shard 3 failed"):
        engines.run_tasks(_fail_on_three, list(range(12)), workers=2)
    assert multiprocessing.active_children() == []


def test_recycled_workers_give_identical_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = []
    for per_worker in (0, 1):  # never replaced; replaced after every shard
        monkeypatch.setattr(pool, "TASKS_PER_WORKER", per_worker)
        out = tmp_path / f"run-{per_worker}"
        assert main(["score", str(SAMPLE / "corpus"), "--labels", str(SAMPLE / "labels.jsonl"), "--out", str(out),
                     "--workers", "2", "--shards", "5", "--quiet"]) == 0
        runs.append(parquet_digests(out))
    assert runs[0] == runs[1] != {}
