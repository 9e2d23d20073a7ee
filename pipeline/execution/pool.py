"""The local worker pool: spawned processes that run shard tasks, stopped cleanly however
a run ends.

Two hazards of ``multiprocessing.Pool`` shape it:

- ``Pool.terminate()`` drains the task pipe once, kills the workers, then joins the thread
  that feeds the pipe. A write larger than the pipe's buffer that the thread begins after
  the drain never ends, and the driver hangs (a SIGTERM'd run did, in
  ``task_handler.join()``: a shard task carries the run's policy, 170 KB pickled, and its
  labels; Linux pipes hold 64 KB, and 4-8 KB for a user over ``pipe-user-pages-soft``).
  And a worker killed while it writes a result larger than ``PIPE_BUF`` leaves half a
  message, on which the result thread waits forever. So what crosses a pipe stays under
  ``PIPE_BUF``: the values every task of a map shares (a run's policy and labels) are
  written once to the pool's spool folder and each worker reads them once (pickle's
  persistent ids), which leaves a shard task at about 1.1 KB; a job, result or error
  still over the bound goes through a file of that folder, the pipe carrying its name.
  (One hazard is CPython's own and stays: a worker killed while it holds the result
  queue's write lock, a window of a few instructions per result.) The pool is never
  ended by ``terminate()`` (which also takes the task queue's read lock, held for good
  by a worker killed while it waited for a task), but by :meth:`_Pool.stop`: kill every
  worker, then read the task pipe empty until the feeding threads end.
- A worker that dies in the middle of a task (the kernel's OOM killer, a scheduler's
  SIGKILL or SIGTERM to one process, a crash in a library) takes the task with it: the
  pool starts a replacement, and nothing ever answers for the lost task, so a run waited
  for it for ever. The pool records every worker it starts (:class:`_Pool`) and the wait
  raises :class:`pipeline.errors.WorkerLostError` as soon as one has ended other than
  by retiring (exit code 0, ``maxtasksperchild``).
- A signal handler that raises lands between any two bytecodes of the main thread, also
  inside the pool's own code, where it can leave a lock held that the pool's threads
  need. The wait runs in :func:`pipeline.execution.signals.deferred` and raises a
  SIGTERM / SIGINT between two polls.
"""

from __future__ import annotations

import itertools
import os
import multiprocessing
import multiprocessing.pool
import pickle
import re
import socket
import shutil
import signal
import stat
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from multiprocessing import resource_tracker
from multiprocessing.pool import ExceptionWithTraceback  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any, TypeVar

from pipeline.errors import Interrupted, WorkerLostError
from pipeline.execution.signals import deferred, raise_pending, sigint_held
from pipeline.execution.spool import SharedRef, pack, shareable, unpack
from pipeline.execution.worker_start import worker_init

T = TypeVar("T")

# A pool worker is replaced by a fresh process after this many tasks (0: never). A worker
# keeps what its allocators hold after a shard (DuckDB's, Polars' jemalloc, Python's) and
# that creeps shard after shard (measured: +0.4 MB per shard between shards, see
# docs/design.md "Memory"), so a worker's RSS stays what a fresh one reaches; a new
# worker costs its imports (about 0.9 CPU s, about 0.6% of 32 shards of 32 MB).
TASKS_PER_WORKER = 32
# How often the pool's wait looks for a deferred SIGTERM / SIGINT: the longest delay
# before an interrupted run starts to stop its workers.
SIGNAL_POLL_S = 0.1
# The most the pool's teardown waits for its feeding threads once every worker is gone
# (they end in milliseconds unless a killed worker left a lock held: see _Pool.stop).
STOP_WAIT_S = 5.0
# The most a job or a result (pickled) may weigh on a pipe: with the pool's framing the
# whole message stays under PIPE_BUF (4,096 bytes on Linux). A result is then written
# atomically (a worker killed mid-run never leaves half of one), and the drained task pipe,
# however small, always takes the one job write begun after terminate()'s drain.
INLINE_BYTES = 3 * 1024


def _run_job(job: tuple[int, bytes | str, str]) -> tuple[int, bytes | str]:
    """A worker's side of :meth:`WorkerPool.map`: unpack the job, run it, pack its outcome
    (``(True, result)`` or ``(False, error)``: an error's traceback is unbounded text, so
    it is bounded like a result) into ``result_file`` when it is over the bound."""
    i, packed, result_file = job
    try:
        fn, task = unpack(packed)
        outcome: tuple[bool, Any] = (True, fn(task))
    except Exception as exc:  # noqa: BLE001 - re-raised in the driver by map()
        outcome = (False, ExceptionWithTraceback(exc, exc.__traceback__))
    return i, pack(outcome, INLINE_BYTES, Path(result_file))


class _Pool(multiprocessing.pool.Pool):
    """A ``multiprocessing.Pool`` that keeps every worker process it starts (``started``),
    replacements included (started by the pool's own thread), so that a worker that died
    is seen even after the pool has reaped it and started another."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.started: list[Any] = []  # multiprocessing's Process objects (appended by the pool's thread too)
        super().__init__(*args, **kwargs)

    def Process(self, ctx: Any, *args: Any, **kwds: Any) -> Any:  # noqa: N802 - the pool's hook
        process = ctx.Process(*args, **kwds)
        self.started.append(process)
        return process

    def stop(self) -> None:
        """End the pool whatever its workers are doing, never through :meth:`terminate`:
        its teardown takes the task queue's read lock (to drain the queue), which a worker
        killed while it waited for a task holds for good, so the driver waited for ever;
        and a worker may be dying unseen as the pool ends (a SIGTERM to the whole process
        group reaches the workers and the driver at once). Stops starting replacements,
        kills every worker and waits for each, then ends the pool's two feeding threads:
        the task pipe is read empty here (no worker reads it any more) so the task thread
        can finish its writes and its sentinels, which end the result thread. A thread
        still blocked after ``STOP_WAIT_S`` (on the result queue's write lock, held by a
        worker killed as it wrote) is a daemon, left to end with the process.

        The two threads are told first: a result thread still in its RUN state when the task
        thread's sentinel reaches it goes on waiting for the tasks outstanding (a stopped
        map's), which no killed worker sends, and every SIGTERM'd run waited the whole
        ``STOP_WAIT_S`` for it (5.1 s from the signal to the exit; 0.1 s now)."""
        self._task_handler._state = multiprocessing.pool.TERMINATE  # no further task written
        self._result_handler._state = multiprocessing.pool.TERMINATE  # leaves at the sentinel
        self._worker_handler._state = multiprocessing.pool.TERMINATE
        self._change_notifier.put(None)  # wakes the handler to see it: no replacement after the join
        self._worker_handler.join()  # its last act: the sentinel that ends the task thread's loop
        for process in list(self.started):
            if process.exitcode is None:
                process.kill()
            process.join()
        reader, deadline = self._inqueue._reader, time.monotonic() + STOP_WAIT_S
        while self._task_handler.is_alive() and time.monotonic() < deadline:
            if reader.poll(SIGNAL_POLL_S):
                os.read(reader.fileno(), 1 << 16)  # raw bytes: a killed reader may have left half a message
        self._result_handler.join(max(0.0, deadline - time.monotonic()))
        self._state = multiprocessing.pool.TERMINATE
        self._terminate.cancel()  # the teardown terminate() would run at exit

    def lost(self) -> str | None:
        """How a worker ended that did not retire (exit code 0): ``killed by SIGKILL``,
        ``exited with code 3``; None while every worker is running or retired."""
        for process in list(self.started):
            code = process.exitcode
            if code is not None and code != 0:
                if code > 0:
                    return f"exited with code {code}"
                try:  # real-time signals 35-63 have no name
                    return f"killed by {signal.Signals(-code).name}"
                except ValueError:
                    return f"killed by signal {-code}"
        return None


SPOOL_PREFIX = "litmus-gate-pool-"


def _host() -> str:
    """This host's name as spool folder names hold it: never an ``@`` (it ends the name)."""
    return "".join(c if c.isalnum() or c in ".-" else "_" for c in socket.gethostname())[:64]


def _spool_tag() -> str:
    """``<pid>@<host>@``: whose spool folder it is, so a later run can tell one left by a
    driver that is gone from one in use (``mkdtemp`` adds a random suffix after it)."""
    return f"{os.getpid()}@{_host()}@"


_SPOOL_NAME = re.compile(r"([0-9]{1,10})@([^@]*)@[^@]*")


def sweep_spools(root: Path) -> list[Path]:
    """Remove the spool folders under ``root`` of drivers of this host that are gone: a
    driver killed by SIGKILL (a scheduler's, the OOM killer's) runs no cleanup, and every
    such run left one folder behind in the temporary directory. A folder of a live process,
    of another host, of another user, a symbolic link or a name not of this form stays.
    Containers that share both a host name and ``/tmp`` are not told apart (their process
    ids are): give them distinct host names or temporary folders. Never raises: a folder
    it cannot judge stays. Returns the folders removed."""
    removed = []
    try:
        folders = sorted(root.glob(f"{SPOOL_PREFIX}*@*@*"))
    except OSError:
        return removed
    host = _host()
    for folder in folders:
        name = _SPOOL_NAME.fullmatch(folder.name[len(SPOOL_PREFIX):])
        if name is None or name.group(2) != host:
            continue
        try:
            st = folder.lstat()
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or _alive(int(name.group(1))):
                continue
            shutil.rmtree(folder, ignore_errors=True)
        except (OSError, OverflowError, ValueError):
            continue
        removed.append(folder)
    return removed


def _alive(pid: int) -> bool:
    """Whether process ``pid`` may be running (of any user); 0 counts as alive (a signal
    to it would go to our own process group)."""
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


class WorkerPool:
    """Local worker processes (a spawn pool), started before the tasks exist: the driver
    starts them, then plans the run (policy, labels, hashing the inputs) while they
    import their libraries (about 0.5 CPU s each; ``prepare``, a module-level function, runs
    in each worker as it starts, replacements included), and runs both passes of a run on them.
    Leaving the ``with`` block, however it is left (SIGTERM/SIGINT included), terminates
    and joins them (no worker outlives it) and removes the spool folder."""

    def __init__(self, workers: int, prepare: Callable[[], None] | None = None) -> None:
        ctx = multiprocessing.get_context("spawn")  # DuckDB threads do not survive fork
        # the first spawn starts multiprocessing's resource tracker, which unblocks SIGINT
        # in the calling thread when it has: start it before SIGINT is held
        resource_tracker.ensure_running()
        sweep_spools(Path(tempfile.gettempdir()))
        self._spool = Path(tempfile.mkdtemp(prefix=SPOOL_PREFIX + _spool_tag()))  # private (0700); before any worker
        try:
            # the workers (and the pool's threads, which start the replacements) start with
            # SIGINT held until worker_init ignores it; a SIGINT for the driver meanwhile
            # is raised as the block ends, and the workers started go with it; a SIGTERM
            # waits too (deferred), so it never lands inside the pool's constructor
            with deferred(), sigint_held():
                self._pool = _Pool(processes=workers, initializer=worker_init, initargs=(prepare, os.getpid()),
                                   maxtasksperchild=TASKS_PER_WORKER or None, context=ctx)
        except BaseException:
            with deferred():
                if hasattr(self, "_pool"):
                    self._pool.stop()
                shutil.rmtree(self._spool, ignore_errors=True)
            raise
        self._numbers = itertools.count()
        self._maps = itertools.count()

    def _share(self, shared: Sequence[object]) -> dict[int, SharedRef]:
        """Write each shared value (:func:`shareable`) to the spool folder once; their
        references by identity."""
        number, refs = next(self._maps), {}
        for k, (key, value) in enumerate(shareable(shared).items()):
            file = self._spool / f"shared-{number}-{k}"
            file.write_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
            refs[key] = (number, str(file))
        return refs

    def _jobs(self, fn: Callable[[T], Any], tasks: Sequence[T],
              shared: dict[int, SharedRef]) -> Iterator[tuple[int, bytes | str, str]]:
        """Each task's job: its index, the job packed, where an oversized outcome goes.
        The pool's feeding thread draws them as the task pipe takes them, so the spool
        holds the files of the jobs queued there (rare: a shard task is about 1.1 KB)."""
        for i, task in enumerate(tasks):
            number = next(self._numbers)
            packed = pack((fn, task), INLINE_BYTES, self._spool / f"job-{number}", shared)
            yield i, packed, str(self._spool / f"result-{number}")

    def map(self, fn: Callable[[T], Any], tasks: Sequence[T], on_done: Callable[[int], None],
            shared: Sequence[object] = ()) -> list[Any]:
        """``[fn(t) for t in tasks]`` on the workers, in task order; ``on_done(n)`` as each
        ends. ``shared``: values the tasks hold in common (by identity), shipped once."""
        results: list[Any] = [None] * len(tasks)
        refs = self._share(shared)
        try:
            # signals are raised here, between waits, never inside the pool's code
            with deferred():
                found = self._pool.imap_unordered(_run_job, self._jobs(fn, tasks, refs))
                for n in range(1, len(tasks) + 1):
                    while True:
                        raise_pending()
                        self._check_workers()
                        try:
                            i, packed = found.next(timeout=SIGNAL_POLL_S)
                            break
                        except multiprocessing.TimeoutError:
                            continue
                    ok, results[i] = unpack(packed)
                    if not ok:
                        raise results[i]  # the worker's exception, its traceback as the cause
                    on_done(n)
        finally:
            for _, file in refs.values():  # no worker of this map needs them any more
                Path(file).unlink(missing_ok=True)
        return results

    def _check_workers(self) -> None:
        """Raise :class:`WorkerLostError` when a worker died (its task is lost: see the
        module docstring)."""
        how = self._pool.lost()
        if how is not None:
            # a signal to the whole process group kills the workers as it reaches this
            # process: when it arrived since the last poll, it is the cause (exit 143 / 130)
            raise_pending()
            raise WorkerLostError(f"a worker process died ({how}) while scoring; no run was published",
                                  "the work folder is kept: rerun with --resume to continue; if memory "
                                  "ran out, use fewer --workers or more --shards")

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        # a second signal waits until the workers are gone, and is dropped when the
        # block is already leaving on one (the first signal's exit code stands)
        with deferred(drop=isinstance(exc[1], Interrupted)):
            self._pool.stop()  # see there: terminate() could wait for ever
            shutil.rmtree(self._spool, ignore_errors=True)
