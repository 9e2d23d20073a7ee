"""--engine ray: the same shard function as Ray tasks on a local cluster gives the
same tables as local worker processes."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from pipeline.cli import main
from tests.conftest import REPO, parquet_digests

pytest.importorskip("ray")
SAMPLE = REPO / "data" / "sample"


def test_ray_tasks_carry_references_to_what_they_share(monkeypatch: pytest.MonkeyPatch,
                                                    request: pytest.FixtureRequest) -> None:
    """The function and the shared values go to Ray's object store once; each task's
    arguments are its small job and object refs. The function may be one pickle cannot
    ship by name (a lambda, a function of ``__main__``): Ray's own serializer ships it."""
    import ray

    from pipeline.execution import engines
    from pipeline.execution.engines import run_tasks

    calls: list[tuple[object, ...]] = []
    real_remote = ray.remote

    def remote(*args, **kwargs):  # type: ignore[no-untyped-def]
        task = real_remote(*args, **kwargs)
        if args[:1] != (engines._ray_job,):  # Ray's own uses
            return task

        class Recording:
            def remote(self, *args: object) -> object:
                calls.append(args)
                return task.remote(*args)

        return Recording()

    monkeypatch.setattr(ray, "remote", remote)
    # ray.init installs its own SIGTERM handler in this process (a run restores the
    # previous handlers as interruptible() ends; this call runs outside one): put them back
    for signum in (signal.SIGTERM, signal.SIGINT):
        handler = signal.getsignal(signum)
        request.addfinalizer(lambda s=signum, h=handler: signal.signal(s, h))
    table = {"words": [f"{i:04d}" + "x" * 996 for i in range(200)]}  # 200 KB pickled (distinct strings)
    offset = 7
    # each task holds the table, as a shard task holds the run's policy and labels
    results = run_tasks(lambda t: len(t[0]["words"]) * t[1] + offset, [(table, 1), (table, 2), (table, 3)], 2,
                        engine="ray", shared=[table, None, offset])
    assert results == [207, 407, 607]
    assert len(calls) == 3
    for job, *stored in calls:
        assert isinstance(job, bytes) and len(job) < 4096, len(job)
        # the lambda and the table (not the scalar): references, not copies
        assert len(stored) == 2 and all(isinstance(ref, ray.ObjectRef) for ref in stored), stored


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
