"""The local worker pool (pipeline/execution/pool.py): what crosses its pipes stays small,
big jobs and results go through its spool folder intact, and the folder goes with it."""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.execution import driver, pool
from pipeline.execution.pool import INLINE_BYTES, WorkerPool
from pipeline.execution.spool import dumps_referring, loads_referring, pack, shareable, unpack
from pipeline.execution.shard import prepare_worker
from tests.conftest import REPO
from tests.pool_jobs import fail_loudly, first_len, sized, worker_state


def test_pack_keeps_small_values_inline_and_big_ones_in_a_file(tmp_path: Path) -> None:
    small = pack(b"x" * 100, INLINE_BYTES, tmp_path / "a")
    assert isinstance(small, bytes) and unpack(small) == b"x" * 100
    big = pack(b"y" * 10_000, INLINE_BYTES, tmp_path / "b")
    assert big == str(tmp_path / "b") and (tmp_path / "b").is_file()
    assert unpack(big) == b"y" * 10_000
    assert not (tmp_path / "b").exists()  # read once, then removed


def test_a_pool_message_stays_under_pipe_buf() -> None:
    # what the pool writes, with its 4-byte header: a result (job, i, (True, (i, packed)))
    # and a job (job, i, _run_job, ((i, packed, result file),), {}); a spool path of 200 bytes
    from pipeline.execution.pool import _run_job

    result = pickle.dumps((10**9, 10**6, (True, (10**6, b"r" * INLINE_BYTES))))
    job = pickle.dumps((10**9, 10**6, _run_job, ((10**6, b"j" * INLINE_BYTES, "/" + "p" * 199),), {}))
    assert len(result) + 4 <= 4096 and len(job) + 4 <= 4096


def test_big_jobs_and_results_round_trip_and_the_spool_goes_with_the_pool() -> None:
    sizes = [0, 10, INLINE_BYTES, INLINE_BYTES + 1, 200_000]
    with WorkerPool(2) as workers:
        spool = workers._spool
        assert workers.map(sized, sizes, lambda n: None) == [b"r" * n for n in sizes]
        payloads = [b"j" * 10, b"j" * (INLINE_BYTES + 1), b"j" * 1_000_000]
        assert workers.map(len, payloads, lambda n: None) == [len(p) for p in payloads]
        assert list(spool.iterdir()) == []  # every file read once and removed
    assert not spool.exists()


def test_a_shared_value_travels_once_and_the_jobs_stay_inline(tmp_path: Path) -> None:
    big = bytearray(b"s" * 2_000_000)  # shared by identity (bytes would be a scalar)
    tasks = [(big, i) for i in range(6)]
    assert isinstance(pack((first_len, tasks[0]), INLINE_BYTES, tmp_path / "j"), str)  # alone: a file
    with WorkerPool(2) as workers:
        refs = workers._share([big])
        assert isinstance(pack((first_len, tasks[0]), INLINE_BYTES, tmp_path / "j", refs), bytes)
        assert workers.map(first_len, tasks, lambda n: None, shared=[big]) == [(len(big), i) for i in range(6)]
        assert workers.map(first_len, tasks[:2], lambda n: None, shared=[big]) == [(len(big), 0), (len(big), 1)]
        left = sorted(p.name for p in workers._spool.iterdir())
    assert left == ["shared-0-0"]  # the one _share above; each map removes its own
    with WorkerPool(1) as workers:
        assert workers._share([None, 3, "x", big, big]).keys() == {id(big)}  # once; no scalar


def test_a_value_pickled_with_references_gets_the_referred_objects_back() -> None:
    big = bytearray(b"s" * 100_000)
    assert list(shareable([None, 3, "x", big, big, b"b"]).values()) == [big]  # once; no scalar
    job = dumps_referring({"task": 1, "policy": big}, {id(big): 0})
    assert len(job) < 100
    back = loads_referring(job, [big].__getitem__)
    assert back == {"task": 1, "policy": big} and back["policy"] is big


def test_a_runs_shard_tasks_go_inline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the run's policy (170 KB pickled) and labels are shared: each job on the pipe is small
    from pipeline.cli import main

    packed: list[bytes | str] = []
    real = pool.pack

    def recording(value: object, limit: int, file: Path, shared: dict | None = None) -> bytes | str:
        out = real(value, limit, file, shared)
        if limit == INLINE_BYTES:
            packed.append(out)
        return out

    monkeypatch.setattr(pool, "pack", recording)
    sample = REPO / "data" / "sample"
    assert main(["score", str(sample / "corpus"), "--labels", str(sample / "labels.jsonl"), "--out",
                 str(tmp_path / "run"), "--workers", "2", "--shards", "4", "--quiet"]) == 0
    assert len(packed) == 4 and all(isinstance(p, bytes) for p in packed), [type(p) for p in packed]


def test_prepare_runs_in_each_worker_before_its_first_task() -> None:
    with WorkerPool(1) as plain:
        assert plain.map(worker_state, [0], lambda n: None) == [(0, False)]
    with WorkerPool(2, prepare=prepare_worker) as prepared:
        states = prepared.map(worker_state, [0, 1, 2, 3], lambda n: None)
    # the libraries a shard loads lazily are loaded, and the objects the imports made frozen
    assert all(loaded and frozen > 10_000 for frozen, loaded in states), states


def test_a_prepare_that_fails_leaves_the_tasks_to_run() -> None:
    # an initializer's error kills the worker and the pool starts another, for ever: the run
    # would hang. Best effort: the tasks run (one that needs what failed reports it itself)
    code = ("from pipeline.execution.pool import WorkerPool\n"
            "from tests.pool_jobs import fail_to_prepare, sized\n"
            "with WorkerPool(2, prepare=fail_to_prepare) as workers:\n"
            "    print(workers.map(sized, [3, 1], lambda n: None))\n")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the driver and the workers it keeps restarting
        proc.communicate()
        pytest.fail("the pool hung on a failing prepare")
    assert proc.returncode == 0, err
    assert out.strip() == "[b'rrr', b'r']"


def test_a_runs_pool_prepares_its_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline.cli import main

    made: list[object] = []

    class Recording(WorkerPool):
        def __init__(self, workers: int, prepare: object = None) -> None:
            made.append(prepare)
            super().__init__(workers, prepare)  # type: ignore[arg-type]

    monkeypatch.setattr(driver, "WorkerPool", Recording)
    sample = REPO / "data" / "sample"
    assert main(["score", str(sample / "corpus"), "--out", str(tmp_path / "run"), "--workers", "2",
                 "--shards", "2", "--quiet"]) == 0
    assert made == [prepare_worker]


def test_a_workers_error_is_raised_in_the_driver_whatever_its_size() -> None:
    # an error's traceback is unbounded text: it crosses the pipe like a result
    with WorkerPool(2) as workers:
        for n in (10, 50_000):
            with pytest.raises(ValueError) as caught:
                workers.map(fail_loudly, [n], lambda n: None)
            assert str(caught.value) == "e" * n
            assert "fail_loudly" in str(caught.value.__cause__)  # the worker's traceback
        assert list(workers._spool.iterdir()) == []


_KILLED_DRIVER = """
import multiprocessing, sys
from pipeline.execution.pool import WorkerPool
from tests.pool_jobs import hold
with WorkerPool(2) as pool:
    def started(n):
        pass
    import threading
    threading.Timer(1.0, lambda: print(*[p.pid for p in multiprocessing.active_children()], flush=True)).start()
    pool.map(hold, [(120.0, b"")] * 2, started)
"""


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:  # gone, or reaped between two reads
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_workers_die_with_a_driver_killed_by_sigkill() -> None:
    # SIGKILL leaves the driver no chance to stop its workers: each worker's watch thread
    # sees it gone within 0.2 s and ends the worker. Before, each finished its task (here
    # 120 s) first
    import time

    proc = subprocess.Popen([sys.executable, "-c", _KILLED_DRIVER], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        children = [int(p) for p in line.split()]
        assert len(children) >= 2, proc.stderr.read() if proc.stderr else ""
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 5
        alive = children
        while alive and time.monotonic() < deadline:
            time.sleep(0.1)
            alive = [p for p in alive if _running(p)]
        assert alive == [], f"workers alive 5 s after the driver's SIGKILL: {alive}"
        # its spool folder outlived it (no cleanup survives SIGKILL); the next pool's sweep
        # removes it
        import tempfile

        left = list(Path(tempfile.gettempdir()).glob(f"{pool.SPOOL_PREFIX}{proc.pid}@*"))
        assert len(left) == 1
        assert left[0] in pool.sweep_spools(Path(tempfile.gettempdir()))
        assert not left[0].exists()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)


def test_a_pool_whose_workers_were_replaced_stops_cleanly() -> None:
    # more tasks than a worker takes before it is replaced (TASKS_PER_WORKER): the pool's
    # own thread starts the replacements, and terminating the pool ends that thread. With
    # the kernel's parent-death signal (tied to the starting thread) a replacement died
    # holding the task queue's lock and the pool's teardown waited for it for ever
    import subprocess

    code = ("from pipeline.execution.pool import WorkerPool, TASKS_PER_WORKER\n"
            "from tests.pool_jobs import sized\n"
            "with WorkerPool(1) as workers:\n"
            "    got = workers.map(sized, [1] * (TASKS_PER_WORKER * 2 + 1), lambda n: None)\n"
            "print(len(got), flush=True)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == [str(pool.TASKS_PER_WORKER * 2 + 1)], done.stderr[-2000:]


_LOST_WORKER = """
import signal, sys
from pipeline.errors import WorkerLostError
from pipeline.execution.pool import WorkerPool
from tests.pool_jobs import die
with WorkerPool(2) as workers:
    try:
        workers.map(die, [int(sys.argv[1])], lambda n: None)
    except WorkerLostError as exc:
        print(exc.one_line(), flush=True)
"""


def _unhung(code: str, *args: str, what: str) -> tuple[str, str]:
    """Run ``code`` in a child process (its own session); fail with ``what`` if it hangs
    (a guard of 120 s against a wait for ever, not a timing)."""
    proc = subprocess.Popen([sys.executable, "-c", code, *args], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(what)
    assert proc.returncode == 0, err
    return out, err


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
def test_a_worker_killed_mid_task_stops_the_map_with_one_line(signum: int) -> None:
    # the OOM killer or a scheduler ends one worker: the pool starts another and nothing
    # answers for the lost task. Before, the map (and so the run) waited for it for ever
    out, _ = _unhung(_LOST_WORKER, str(int(signum)), what="the pool waited for ever for the task of a killed worker")
    lines = out.splitlines()
    assert lines[0].startswith(f"a worker process died (killed by {signal.Signals(signum).name}) while scoring"), out
    assert "--resume" in lines[0]


_IDLE_KILLED = """
import os, signal, time
from pipeline.errors import WorkerLostError
from pipeline.execution.pool import WorkerPool
from tests.pool_jobs import sized
with WorkerPool(2) as workers:
    workers.map(sized, [1, 1], lambda n: None)  # both back waiting for a job, one holding the read lock
    for process in list(workers._pool.started):
        os.kill(process.pid, signal.SIGKILL)
    while any(p.exitcode is None for p in workers._pool.started[:2]):
        time.sleep(0.05)
    try:
        workers.map(sized, [2, 3], lambda n: None)
    except WorkerLostError as exc:
        print(exc.one_line(), flush=True)
print("left the pool", flush=True)
"""


def test_a_worker_killed_while_idle_stops_the_map_and_the_pool_still_ends() -> None:
    # a worker killed between tasks (while the driver plans, or between a run's two passes)
    # held the task queue's read lock: the map saw it lost, but terminate() then took that
    # lock to drain the queue and the driver waited for ever (chaos harness, a SIGTERM to
    # one worker between the passes)
    out, _ = _unhung(_IDLE_KILLED, what="terminate() waited for ever for the lock of a worker killed while idle")
    lines = out.splitlines()
    assert lines[0].startswith("a worker process died (killed by SIGKILL) while scoring") and lines[-1] == "left the pool"


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
def test_workers_still_ignore_sigint_after_their_imports() -> None:
    # importing Polars (prepare_worker does) installs a native SIGINT handler over the
    # worker's ignore: a Ctrl-C or a scheduler's SIGINT to the process group raised
    # KeyboardInterrupt inside a shard's Polars query, and the worker died printing its
    # traceback beside the driver's one line
    from tests.pool_jobs import sigint_ignored

    with WorkerPool(2, prepare=prepare_worker) as workers:
        assert workers.map(sigint_ignored, [0, 1, 2, 3], lambda n: None) == [True] * 4


def test_a_worker_killed_by_a_nameless_signal_is_reported_by_number() -> None:
    # real-time signals 35-63 have no name in Python: signal.Signals(-code) raised ValueError,
    # so the map raised that instead of WorkerLostError and the pool's teardown was skipped
    from types import SimpleNamespace

    from pipeline.execution.pool import _Pool

    def lost(code: int) -> str | None:
        return _Pool.lost(SimpleNamespace(started=[SimpleNamespace(exitcode=0), SimpleNamespace(exitcode=code)]))  # type: ignore[arg-type]
    assert (lost(-40), lost(-9), lost(3), lost(0)) == ("killed by signal 40", "killed by SIGKILL", "exited with code 3", None)


_DYING_AT_TEARDOWN = """
import os, signal, sys, time
from pipeline.execution.pool import WorkerPool
from tests.pool_jobs import hold, sized
with WorkerPool(2) as workers:
    if sys.argv[1] == "idle":  # both back waiting for a job, one holding the task queue's read lock
        workers.map(sized, [1, 1], lambda n: None)
    else:  # both in a task, more tasks queued behind them than the task pipe holds
        found = workers._pool.imap_unordered(hold, [(60.0, b"x" * 2000)] * 200)
        time.sleep(1.0)
    for process in list(workers._pool.started):
        os.kill(process.pid, signal.SIGKILL)
    # a scheduler's SIGTERM to the process group: the workers are dying as the driver
    # leaves the block, before their exit codes show (lost() still says None)
    workers._pool.lost = lambda: None
print("left the pool", flush=True)
"""


@pytest.mark.parametrize("state", ["idle", "busy"])
def test_workers_dying_as_the_pool_ends_never_hang_its_teardown(state: str) -> None:
    # a SIGTERM to the whole process group kills the workers while the driver leaves the
    # pool: lost() did not see them yet, so the teardown took terminate(), which waits for
    # the task queue's read lock a killed worker held (or for a task pipe nobody reads): the
    # driver hung for ever, holding its run's lock (a chaos loop of group SIGTERMs)
    out, _ = _unhung(_DYING_AT_TEARDOWN, state, what="the pool's teardown waited for ever for killed workers")
    assert out.splitlines() == ["left the pool"]


def test_a_worker_lost_to_a_signal_the_driver_also_got_is_that_signal() -> None:
    # a scheduler's SIGTERM to the process group ends the workers and reaches the driver
    # at once: when the handler recorded it after the wait's last poll, the workers' check
    # saw them dead first and the run ended "a worker process died" (exit 1), not 143
    from types import SimpleNamespace

    from pipeline.errors import Interrupted
    from pipeline.execution import signals

    workers = object.__new__(WorkerPool)
    workers._pool = SimpleNamespace(lost=lambda: "killed by SIGTERM")  # type: ignore[assignment]
    complete = signals._complete[0]  # an earlier run in this process may have left it set
    signals._complete[0] = False
    signals._pending[:] = [int(signal.SIGTERM)]
    try:
        with pytest.raises(Interrupted) as stopped:
            workers._check_workers()
        assert stopped.value.exit_code == 143
    finally:
        signals._pending.clear()
        signals._first.clear()
        signals._unconfirmed.clear()
        signals._complete[0] = complete


_STOPPED_MID_MAP = """
from pipeline.execution.pool import WorkerPool
from tests.pool_jobs import hold
with WorkerPool(2) as workers:
    workers._pool.map_async(hold, [(60.0, b"")] * 2)  # outstanding, as a map a SIGTERM stops
    workers._pool.stop()
    print("result thread alive after stop:", workers._pool._result_handler.is_alive(), flush=True)
"""


def test_stopping_a_pool_mid_map_ends_its_result_thread() -> None:
    # the result thread got the task thread's sentinel while still in its RUN state, went on
    # waiting for the map's outstanding results (no killed worker sends them), and stop()
    # gave up on it only after STOP_WAIT_S: every SIGTERM'd run exited 5 s after the signal
    out, _ = _unhung(_STOPPED_MID_MAP, what="stopping a pool mid-map hung")
    assert out.splitlines() == ["result thread alive after stop: False"]


def test_the_sweep_removes_only_spools_of_gone_drivers_of_this_host(tmp_path: Path) -> None:
    gone = "2147483000"  # above any kernel's pid_max: no process has it, now or later
    host = pool._host()
    dead = tmp_path / f"{pool.SPOOL_PREFIX}{gone}@{host}@abc123"
    live = tmp_path / f"{pool.SPOOL_PREFIX}{os.getpid()}@{host}@def456"
    longer = tmp_path / f"{pool.SPOOL_PREFIX}{gone}@{host}-2@ghi789"  # a host whose name begins with ours
    shorter = tmp_path / f"{pool.SPOOL_PREFIX}{gone}@{host[:-1]}@ghi780"  # one whose name ours begins with
    older = tmp_path / f"{pool.SPOOL_PREFIX}jkl012"  # a folder of an earlier version: no owner to ask
    huge = tmp_path / f"{pool.SPOOL_PREFIX}9999999999@{host}@mno345"  # beyond a pid's type: stays, no error
    link = tmp_path / f"{pool.SPOOL_PREFIX}{gone}@{host}@pqr678"  # a link to a folder elsewhere
    target = tmp_path / "target"
    for folder in (dead, live, longer, shorter, older, huge, target):
        folder.mkdir()
        (folder / "job-0").write_bytes(b"x")
    link.symlink_to(target, target_is_directory=True)
    assert pool.sweep_spools(tmp_path) == [dead]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        p.name for p in (live, longer, shorter, older, huge, link, target))
    assert (target / "job-0").exists()
    assert pool.sweep_spools(tmp_path / "missing") == []
