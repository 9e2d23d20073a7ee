"""A pool worker's start (``pipeline.execution.pool``'s initializer): it dies with its
driver, leaves SIGINT to the driver and dies on SIGTERM (the driver's side of signals is
``pipeline.execution.signals``)."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable

# how often a worker looks whether its driver is still there
PARENT_POLL_S = 0.2


def _die_with(parent: int) -> None:
    """A daemon thread that ends this worker as soon as its driver (``parent``) is gone:
    a driver killed by SIGKILL can stop nothing, and its workers would finish their shard
    into a work folder a fresh run may own by then (they lived up to 10 s, and died
    returning it). Polled (``getppid`` changes when the parent dies), not the kernel's
    ``PR_SET_PDEATHSIG``: that one fires when the *thread* that started a worker ends,
    and a pool's replacement workers are started by its worker-handling thread, whose end
    at ``terminate()`` then killed workers holding the task queue's lock: the pool's
    teardown waited for that lock for ever."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os._exit(1)  # its driver is gone: nothing it does can count any more

    threading.Thread(target=watch, name="litmus-gate-parent-watch", daemon=True).start()


def worker_init(prepare: Callable[[], None] | None = None, parent: int | None = None) -> None:
    """Pool initializer: workers die with the driver (``parent``, its pid: see
    :func:`_die_with`), leave SIGINT to it and die on SIGTERM; then ``prepare()``, if
    given (the pool's own start-up work, best effort)."""
    if parent is not None:
        _die_with(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if prepare is not None:  # still under sigint_held(): a Ctrl-C now waits, then is ignored
        try:
            prepare()
        except Exception:  # noqa: BLE001 - start-up work only: see below
            # an initializer's error kills the worker, and the pool starts another that
            # fails the same way, for ever; a task that needs what failed meets the error
            # itself and reports it as any task's error (one line in the driver)
            pass
    # again after the imports: importing Polars installs its own native SIGINT handler over
    # the ignore (Python's signal.getsignal still says SIG_IGN), and a Ctrl-C or a
    # scheduler's SIGINT to the process group then raised KeyboardInterrupt inside a
    # shard's Polars query: the worker died printing its traceback beside the driver's line
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):  # started under sigint_held(): a held Ctrl-C is now ignored
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
