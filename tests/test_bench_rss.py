"""bench/_rss.py: the RSS timeline tells the driver from its spawn workers and the
scoring phase from the final one (what bench/large.py records per phase)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"
SPEC = importlib.util.spec_from_file_location("_rss", BENCH / "_rss.py")
assert SPEC is not None and SPEC.loader is not None
rss = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(rss)

# a driver with one spawn worker: the worker waits for GO, the driver then prints the
# progress line of its last shard and waits for FIN (no timing: both wait for files)
CHILD = '''
import multiprocessing, pathlib, sys, time

def wait(path):
    while not pathlib.Path(path).exists():
        time.sleep(0.02)
    return 1

if __name__ == "__main__":
    go, fin = sys.argv[1], sys.argv[2]
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        pool.apply(wait, (go,))
    sys.stderr.write("litmus-gate: shards 1/1  1.0 MB/s  ETA 0s\\n")
    sys.stderr.flush()
    wait(fin)
'''


def _until(timeline: object, done: object, what: str) -> None:
    deadline = time.monotonic() + 120  # a bound for a loaded machine, not a measured time
    while not done():
        assert time.monotonic() < deadline, f"never saw {what}"
        timeline.sample()
        time.sleep(0.02)


def test_progress_reads_only_complete_lines(tmp_path: Path) -> None:
    log = tmp_path / "err"
    log.write_bytes(b"litmus-gate: shards 1/4  2.0 MB/s  ETA 9s\nlitmus-gate: shards 2/")
    progress = rss.Progress(log)
    progress.poll()
    assert (progress.done, progress.total) == (1, 4)
    with log.open("ab") as handle:
        handle.write(b"4  2.0 MB/s  ETA 5s\rshards 3/4  2.1 MB/s  ETA 2s\r")
    progress.poll()
    assert (progress.done, progress.total) == (3, 4)


def test_timeline_splits_driver_workers_and_phases(tmp_path: Path) -> None:
    script, go, fin, err = tmp_path / "child.py", tmp_path / "go", tmp_path / "fin", tmp_path / "err"
    script.write_text(CHILD)
    with err.open("wb") as handle:
        proc = subprocess.Popen([sys.executable, str(script), str(go), str(fin)], stderr=handle)
    try:
        timeline = rss.Timeline(proc.pid, err, keep=True)
        _until(timeline, lambda: timeline.seen_worker, "a worker")
        scoring = timeline.peaks["scoring"]
        assert scoring["worker"] > 0 and scoring["driver"] > 0
        assert scoring["tree"] >= scoring["driver"] + scoring["worker"]
        go.touch()
        _until(timeline, lambda: "final" in timeline.peaks, "the final phase")
        fin.touch()
        assert proc.wait(timeout=120) == 0
    finally:
        proc.kill()
    summary = timeline.summary()
    assert summary["worker_processes"] == 1
    assert list(summary["phases"])[-2:] == ["scoring", "final"]
    assert summary["at_peak"]["tree"] == max(s["tree"] for s in timeline.samples)
    assert all(s["tree"] >= s["driver"] + sum(s["workers"].values()) for s in timeline.samples)
    assert {s["phase"] for s in timeline.samples if s["workers"] and s["total"] == 0} == {"scoring"}


def test_timeline_records_when_each_tenth_of_the_shards_is_done(tmp_path: Path) -> None:
    # the progress lines of a run of 4 shards: the first shard, then 2/4 (tenths 1-5) and 4/4
    err = tmp_path / "err"
    err.write_bytes(b"")
    timeline = rss.Timeline(0, err)  # pid 0: no process tree to sample, the progress only
    timeline.sample()
    assert timeline.summary()["done_at"] == [None] * 11
    for line, crossed in ((b"shards 1/4 ", 3), (b"shards 2/4 ", 6), (b"shards 4/4 ", 11)):
        with err.open("ab") as handle:
            handle.write(b"litmus-gate: " + line + b" 1.0 MB/s  ETA 0s\n")
        timeline.sample()
        done_at = timeline.summary()["done_at"]
        assert sum(t is not None for t in done_at) == crossed, (line, done_at)
    assert done_at == sorted(done_at)
