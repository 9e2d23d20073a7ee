"""Run shard tasks: in this process, in local worker processes, or as Ray tasks.

Every engine runs the same function on the same tasks and returns the results in task
order (the function picklable by reference, as a module's function is: Ray's serializer
also ships a lambda). Whatever stops a run (an error in a shard, SIGTERM/SIGINT as
:class:`pipeline.errors.Interrupted`), the engine cleans up before it returns: the
local pool is terminated and joined (no worker outlives the driver), pending Ray
tasks are cancelled (on a cluster given by address) and a Ray cluster started here is
shut down.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pipeline.errors import Interrupted, UsageError
from pipeline.execution.pool import WorkerPool
from pipeline.execution.spool import dumps_referring, loads_referring, shareable
from pipeline.execution.signals import deferred, reassert

T = TypeVar("T")


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


def _pool(fn: Callable[[T], Any], tasks: Sequence[T], workers: int, on_done: Callable[[int], None],
          shared: Sequence[object]) -> list[Any]:
    with WorkerPool(min(workers, len(tasks))) as pool:
        return pool.map(fn, tasks, on_done, shared)


def _ray_job(job: bytes, *values: Any) -> Any:
    """One Ray task: ``fn(task)`` from ``job``, pickled with references to ``values``
    (passed as object refs: Ray resolves them before the call, from its object store,
    so the values cross the cluster once; each task still deserializes them)."""
    fn, task = loads_referring(job, values.__getitem__)
    return fn(task)


def _ray(fn: Callable[[T], Any], tasks: Sequence[T], workers: int, address: str | None,
         on_done: Callable[[int], None], shared: Sequence[object]) -> list[Any]:
    """The same function as Ray tasks (optional extra: ``litmus-gate[ray]``). Every
    node must see the inputs and the work folder (a shared mount, or URIs). The
    ``shared`` values go into Ray's object store once (``ray.put``), not with every task."""
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
        # the function goes by reference too: Ray's serializer (cloudpickle) ships it, so
        # a function defined in __main__ works as with any Ray task
        values = shareable([fn, *shared])
        stored = [ray.put(v) for v in values.values()]
        references = {key: k for k, key in enumerate(values)}
        remote = ray.remote(_ray_job)
        for t in tasks:  # appended one by one: a task that fails to pickle leaves the earlier ones to cancel
            refs.append(remote.remote(dumps_referring((fn, t), references), *stored))
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
        # a second signal waits until every task is stopped (dropped when the first is
        # already on its way out), as the local pool's teardown does
        with deferred(drop=isinstance(sys.exc_info()[1], Interrupted)):
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
              pool: WorkerPool | None = None, shared: Sequence[object] = ()) -> list[Any]:
    """``[fn(t) for t in tasks]``: serially with one worker (or one task), else in a
    spawn pool of ``workers`` processes (``pool`` when given: started earlier by the
    caller, who stops it), or as Ray tasks with ``engine="ray"``. ``shared``: values
    every task holds (a run's policy and labels), shipped once: to a pool's workers
    through its spool folder, to Ray through its object store."""
    if engine == "ray":
        return _ray(fn, tasks, workers, address, on_done, shared)
    if pool is not None:  # its workers have imported what a task needs; this process may not have
        return pool.map(fn, tasks, on_done, shared)
    if workers <= 1 or len(tasks) <= 1:
        results = []
        for n, task in enumerate(tasks, start=1):
            results.append(fn(task))
            on_done(n)
        return results
    return _pool(fn, tasks, workers, on_done, shared)
