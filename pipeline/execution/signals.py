"""SIGTERM and SIGINT during a run: one line, exit 143 / 130, no worker left behind.

:func:`interruptible` turns both signals into :class:`pipeline.errors.Interrupted`
in the driver (main thread only; elsewhere it is a no-op), also when a library turns
the handler's exception into its own (DuckDB's "Query interrupted", Ray's SystemError),
so the run unwinds through
the engines' ``finally`` blocks: the local pool is terminated and joined, Ray tasks
are cancelled, nothing is published and the work folder stays for ``--resume``.
Worker processes ignore SIGINT (a terminal's Ctrl-C reaches the whole process group):
only the driver decides, and it terminates them.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from pipeline.errors import Interrupted

_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_active = threading.Event()  # set inside interruptible()


_received: list[int] = []  # signals seen inside interruptible(), newest last


def _raise(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    raise Interrupted(signum, signal.Signals(signum).name)


@contextmanager
def interruptible() -> Iterator[None]:
    """Within the block, SIGTERM and SIGINT raise ``Interrupted``; handlers restored after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, _raise) for s in _SIGNALS}
    _active.set()
    _received.clear()
    try:
        yield
    except Interrupted:
        raise
    except BaseException as exc:
        if _received:  # a library caught ours and raised its own (DuckDB: "Query interrupted")
            raise Interrupted(_received[-1], signal.Signals(_received[-1]).name) from exc
        raise
    finally:
        _active.clear()
        for s, handler in previous.items():
            signal.signal(s, handler)


def worker_init() -> None:
    """Pool initializer: workers leave SIGINT to the driver and die on SIGTERM."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def reassert() -> None:
    """Put our handlers back if a library replaced them (``ray.init`` installs its own)."""
    if threading.current_thread() is threading.main_thread() and _active.is_set():
        for s in _SIGNALS:
            signal.signal(s, _raise)
