"""Run shard tasks: in this process, in local worker processes, or as Ray tasks.

Every engine runs the same picklable function on the same tasks and returns the
results in task order. Whatever stops a run (an error in a shard, SIGTERM/SIGINT as
:class:`pipeline.errors.Interrupted`), the engine cleans up before it returns: the
local pool is terminated and joined (no worker outlives the driver), pending Ray
tasks are cancelled (on a cluster given by address) and a Ray cluster started here is
shut down.
"""

from __future__ import annotations

import itertools
import multiprocessing
import pickle
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from multiprocessing import resource_tracker
from pathlib import Path
from typing import Any, TypeVar

from pipeline.errors import Interrupted, UsageError
from pipeline.execution.signals import deferred, raise_pending, reassert, sigint_held, worker_init

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
# A job (function and task, pickled) goes to a worker through the pool's pipe while it is
# at most this big, else through a file of the pool's spool folder. Pool.terminate()
# drains the pipe once, kills the workers, then joins the thread that feeds the pipe: a
# write larger than the pipe's buffer begun after the drain never ends, and the driver
# hangs (a SIGTERM'd run did, in task_handler.join(): a shard task carries the run's
# policy, 170 KB pickled, and its labels). Linux pipes hold 64 KB.
INLINE_JOB_BYTES = 16 * 1024


class Progress:
    """``shards i/n  R MB/s  ETA s`` lines on stderr (a ``\\r`` line on a tty)."""

    def __init__(self, total: int, n_bytes: int, enabled: bool) -> None:
        self.total, self.bytes, self.enabled = total, n_bytes, enabled and total > 1
        self.started = time.monotonic()

    def __call__(self, done: int) -> None:
        if not self.enabled:
            return
        elapsed = max(time.monotonic() - self.started, 1e-6)
        rate = self.bytes * done / self.total / elapsed / 2**20 if self.total else 0.0
        eta = elapsed / done * (self.total - done) if done else 0.0
        line = f"shards {done}/{self.total}  {rate:,.1f} MB/s  ETA {eta:,.0f}s"
        if sys.stderr.isatty():
            sys.stderr.write("\r" + line + ("\n" if done == self.total else ""))
        else:
            sys.stderr.write(f"litmus-gate: {line}\n")
        sys.stderr.flush()


def _run_job(job: tuple[int, bytes | str]) -> tuple[int, Any]:
    """A worker's side of :meth:`WorkerPool.map`: the job inline or in a spool file
    (read once, then removed), run."""
    i, body = job
    if isinstance(body, str):
        path = Path(body)
        body = path.read_bytes()
        path.unlink()
    fn, task = pickle.loads(body)  # pickled by our driver (the pool would pickle it too)
    return i, fn(task)


class WorkerPool:
    """Local worker processes (a spawn pool), started before the tasks exist: the driver
    starts them, then plans the run (policy, labels, hashing the inputs) while they
    import their libraries (about 0.4 s each), and runs both passes of a run on them.
    Leaving the ``with`` block, however it is left (SIGTERM/SIGINT included), terminates
    and joins them: no worker outlives it."""

    def __init__(self, workers: int) -> None:
        ctx = multiprocessing.get_context("spawn")  # DuckDB threads do not survive fork
        # the first spawn starts multiprocessing's resource tracker, which unblocks SIGINT
        # in the calling thread when it has: start it before SIGINT is held
        resource_tracker.ensure_running()
        try:
            # the workers (and the pool's threads, which start the replacements) start with
            # SIGINT held until worker_init ignores it; a SIGINT for the driver meanwhile
            # is raised as the block ends, and the workers started go with it; a SIGTERM
            # waits too (deferred), so it never lands inside the pool's constructor
            with deferred(), sigint_held():
                self._pool = ctx.Pool(processes=workers, initializer=worker_init,
                                      maxtasksperchild=TASKS_PER_WORKER or None)
        except BaseException:
            if hasattr(self, "_pool"):
                self._pool.terminate()
                self._pool.join()
            raise
        self._spool = Path(tempfile.mkdtemp(prefix="litmus-gate-pool-"))  # private (0700); removed on exit
        self._numbers = itertools.count()

    def _jobs(self, fn: Callable[[T], Any], tasks: Sequence[T]) -> Iterator[tuple[int, bytes | str]]:
        """Each task's job, inline or as a spool file's path (INLINE_JOB_BYTES). The pool's
        feeding thread draws them one at a time, so only the files of the tasks a worker
        has not read yet are on disk."""
        for i, task in enumerate(tasks):
            body = pickle.dumps((fn, task), protocol=pickle.HIGHEST_PROTOCOL)
            if len(body) <= INLINE_JOB_BYTES:
                yield i, body
            else:
                path = self._spool / f"job-{next(self._numbers)}.pickle"
                path.write_bytes(body)
                yield i, str(path)

    def map(self, fn: Callable[[T], Any], tasks: Sequence[T], on_done: Callable[[int], None]) -> list[Any]:
        """``[fn(t) for t in tasks]`` on the workers, in task order; ``on_done(n)`` as each ends."""
        results: list[Any] = [None] * len(tasks)
        # signals are raised here, between waits, never inside the pool's code (signals.py)
        with deferred():
            found = self._pool.imap_unordered(_run_job, self._jobs(fn, tasks))
            for n in range(1, len(tasks) + 1):
                while True:
                    raise_pending()
                    try:
                        i, result = found.next(timeout=SIGNAL_POLL_S)
                        break
                    except multiprocessing.TimeoutError:
                        continue
                results[i] = result
                on_done(n)
        return results

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        with deferred():  # a second signal waits until the workers are gone
            self._pool.terminate()  # the tasks are done (or abandoned): kill the workers now
            self._pool.join()
            shutil.rmtree(self._spool, ignore_errors=True)


def _pool(fn: Callable[[T], Any], tasks: Sequence[T], workers: int, on_done: Callable[[int], None]) -> list[Any]:
    with WorkerPool(min(workers, len(tasks))) as pool:
        return pool.map(fn, tasks, on_done)


def _ray(fn: Callable[[T], Any], tasks: Sequence[T], workers: int, address: str | None,
         on_done: Callable[[int], None]) -> list[Any]:
    """The same function as Ray tasks (optional extra: ``litmus-gate[ray]``). Every
    node must see the inputs and the work folder (a shared mount, or URIs)."""
    try:
        import ray
    except ImportError as exc:
        raise UsageError("--engine ray needs Ray", "pip install 'litmus-gate[ray]'") from exc
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=address, num_cpus=None if address else workers, include_dashboard=False,
                 log_to_driver=False, configure_logging=False)
        reassert()
    refs: list[Any] = []
    try:
        remote = ray.remote(fn)
        refs = [remote.remote(t) for t in tasks]
        index = {ref: i for i, ref in enumerate(refs)}
        results: list[Any] = [None] * len(tasks)
        pending, done = list(refs), 0
        while pending:
            try:
                ready, pending = ray.wait(pending, num_returns=1)
            except SystemError as exc:  # a signal handler raised inside Ray's C++ wait
                cause = exc.__cause__ or exc.__context__
                raise (cause if isinstance(cause, Interrupted) else exc) from None
            results[index[ready[0]]] = ray.get(ready[0])
            done += 1
            on_done(done)
        refs = []
        return results
    finally:
        if started_here:
            ray.shutdown()  # stops the local cluster and its workers with it
        else:
            for ref in refs:  # a shared cluster: ask its workers to stop our tasks
                # (force=True can abort the driver in Ray 2.x: "Tried to complete task that was not pending")
                try:
                    ray.cancel(ref, force=False)
                except Exception:  # noqa: BLE001 - a finished task cannot be cancelled
                    pass


def run_tasks(fn: Callable[[T], Any], tasks: Sequence[T], workers: int, engine: str = "local",
              address: str | None = None, on_done: Callable[[int], None] = lambda n: None,
              pool: WorkerPool | None = None) -> list[Any]:
    """``[fn(t) for t in tasks]``: serially with one worker (or one task), else in a
    spawn pool of ``workers`` processes (``pool`` when given: started earlier by the
    caller, who stops it), or as Ray tasks with ``engine="ray"``."""
    if engine == "ray":
        return _ray(fn, tasks, workers, address, on_done)
    if pool is not None:  # its workers have imported what a task needs; this process may not have
        return pool.map(fn, tasks, on_done)
    if workers <= 1 or len(tasks) <= 1:
        results = []
        for n, task in enumerate(tasks, start=1):
            results.append(fn(task))
            on_done(n)
        return results
    return _pool(fn, tasks, workers, on_done)
