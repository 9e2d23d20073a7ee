"""The local pool's worker processes (:class:`TrackedPool`, run by
:class:`pipeline.execution.pool.WorkerPool`): every worker it starts is recorded, so one
that died is seen (:meth:`TrackedPool.lost`), and the pool is stopped whatever its workers
are doing, without ``Pool.terminate()`` (:meth:`TrackedPool.stop`). Why: the hazards in
:mod:`pipeline.execution.pool`'s docstring.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.pool
import os
import signal
import time
from typing import Any

# How often the pool's wait looks for a deferred SIGTERM / SIGINT: the longest delay
# before an interrupted run starts to stop its workers.
SIGNAL_POLL_S = 0.1
# The most the pool's teardown waits for its feeding threads once every worker is gone
# (they end in milliseconds unless a killed worker left a lock held: see TrackedPool.stop).
STOP_WAIT_S = 5.0


class TrackedPool(multiprocessing.pool.Pool):
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
