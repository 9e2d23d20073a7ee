"""--engine ray: the same shard function as Ray tasks on a local cluster gives the
same tables as local worker processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.cli import main
from tests.conftest import REPO, parquet_digests

pytest.importorskip("ray")
SAMPLE = REPO / "data" / "sample"




def test_ray_engine_equals_local_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline.execution import engines

    jobs: list[int] = []
    real = engines.dumps_referring

    def recording(value: object, refs: dict) -> bytes:
        jobs.append(len(out := real(value, refs)))
        return out

    monkeypatch.setattr(engines, "dumps_referring", recording)
    args = [str(SAMPLE / "corpus"), "--labels", str(SAMPLE / "labels.jsonl"), "--shards", "3", "--quiet"]
    assert main(["score", *args, "--out", str(tmp_path / "local"), "--workers", "2"]) == 0
    assert main(["score", *args, "--out", str(tmp_path / "ray"), "--workers", "2", "--engine", "ray"]) == 0
    assert parquet_digests(tmp_path / "ray") == parquet_digests(tmp_path / "local") != {}
    # the policy (about 170 KB pickled) and the labels went to Ray's object store once:
    # each task carries references to them, not copies
    assert len(jobs) == 3 and max(jobs) < 4096, jobs


def test_sigterm_stops_a_ray_run_and_its_cluster(tmp_path: Path) -> None:
    import signal
    import time

    from tests.test_signals import _alive, _corpus, _interrupt

    corpus = tmp_path / "c.jsonl"
    _corpus(corpus, "r-", 1600)
    done, children = _interrupt(tmp_path, corpus, tmp_path / "run", signal.SIGTERM, ["--engine", "ray"])
    assert done.returncode == 143, done.stderr[-2000:]
    assert "interrupted by SIGTERM" in done.stderr.strip().splitlines()[-1]
    assert not (tmp_path / "run").exists() and children
    time.sleep(5)
    assert not [p for p in children if _alive(p)], "a Ray process outlived the driver"
