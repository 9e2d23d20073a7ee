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
  by a worker killed while it waited for a task), but by
  :meth:`pipeline.execution.pool_workers.TrackedPool.stop`: kill every worker, then read
  the task pipe empty until the feeding threads end. The spool folders are
  :mod:`pipeline.execution.spool_folders`'.
- A worker that dies in the middle of a task (the kernel's OOM killer, a scheduler's
  SIGKILL or SIGTERM to one process, a crash in a library) takes the task with it: the
  pool starts a replacement, and nothing ever answers for the lost task, so a run waited
  for it for ever. The pool records every worker it starts
  (:class:`pipeline.execution.pool_workers.TrackedPool`) and the wait raises
  :class:`pipeline.errors.WorkerLostError` as soon as one has ended other than by
  retiring (exit code 0, ``maxtasksperchild``).
- A signal handler that raises lands between any two bytecodes of the main thread, also
  inside the pool's own code, where it can leave a lock held that the pool's threads
  need. The wait runs in :func:`pipeline.execution.signals.deferred` and raises a
  SIGTERM / SIGINT between two polls.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import pickle
import shutil
from collections.abc import Callable, Iterator, Sequence
from multiprocessing import resource_tracker
from multiprocessing.pool import ExceptionWithTraceback  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any, TypeVar

from pipeline.errors import Interrupted, WorkerLostError
# the worker processes (TrackedPool, named _Pool here) and the spool folders have modules of
# their own; what was defined here (_Pool, STOP_WAIT_S, SPOOL_PREFIX, sweep_spools, _host) is
# still importable from here
from pipeline.execution.pool_workers import SIGNAL_POLL_S, STOP_WAIT_S, TrackedPool as _Pool
from pipeline.execution.signals import deferred, raise_pending, sigint_held
from pipeline.execution.spool import SharedRef, pack, shareable, unpack
from pipeline.execution.spool_folders import SPOOL_PREFIX, _host, new_spool, sweep_spools
from pipeline.execution.worker_start import worker_init

T = TypeVar("T")
__all__ = ["INLINE_BYTES", "SIGNAL_POLL_S", "SPOOL_PREFIX", "STOP_WAIT_S", "TASKS_PER_WORKER", "WorkerPool",
           "sweep_spools"]

# A pool worker is replaced by a fresh process after this many tasks (0: never). A worker
# keeps what its allocators hold after a shard (DuckDB's, Polars' jemalloc, Python's) and
# that creeps shard after shard (measured: +0.4 MB per shard between shards, see
# docs/design.md "Memory"), so a worker's RSS stays what a fresh one reaches; a new
# worker costs its imports (about 0.9 CPU s, about 0.6% of 32 shards of 32 MB).
TASKS_PER_WORKER = 32
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
        self._spool = new_spool()  # private (0700); before any worker
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
