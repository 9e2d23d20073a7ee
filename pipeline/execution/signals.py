"""SIGTERM and SIGINT during a run: one line, exit 143 / 130, no worker left behind.

:func:`interruptible` turns both signals into :class:`pipeline.errors.Interrupted`
in the driver (main thread only; elsewhere it is a no-op), also when a library turns
the handler's exception into its own (DuckDB's "Query interrupted", Ray's SystemError),
so the run unwinds through
the engines' ``finally`` blocks: the local pool is terminated and joined, Ray tasks
are cancelled, nothing is published and the work folder stays for ``--resume`` (if
planning got as far as making one).
Worker processes ignore SIGINT (a terminal's Ctrl-C reaches the whole process group):
only the driver decides, and it terminates them. They start with SIGINT blocked
(:func:`sigint_held`) until ``worker_start.worker_init`` ignores it, so a Ctrl-C while they
still import prints no traceback of theirs either.

A handler that raises lands between any two bytecodes of the main thread, also inside
``multiprocessing.Pool``'s own code (a ``with`` on its result condition, its task queue's
lock), where the exception can leave a lock held that the pool's threads need, and
``terminate()`` would then wait for them forever. Code that drives the pool runs in
:func:`deferred`: a signal is recorded there and raised by :func:`raise_pending` at a
point of ours (the pool's wait polls it). (The hang a CI run showed had another cause,
a task bigger than the pipe: ``pool.py``.)

No signal is lost: a handler's exception that something swallowed (a ``__del__`` or a
weakref callback prints it as "Exception ignored" and goes on: a SIGINT held while the
pool started can land in ``Pool.__del__`` when another thread, one of DuckDB's, took
it) is raised again before the run is published and as the block ends. Once the run is
published (:func:`commit`) a signal has nothing left to stop: it is recorded and
dropped, and the run ends as it would have (its clean-up takes a second), never with
"no run was published". The first signal's exit code stands: a second one while the
first stops the run raises the first's ``Interrupted`` again (a Ctrl-C pressed twice is
still one SIGINT).

The CLI's process (:func:`install_cli_handlers`, before its imports) handles both
signals for its whole life, not only inside :func:`interruptible`: before the command
starts (imports, argument parsing) nothing is written, so the process exits at once
with one line; while it runs outside a run's block a signal raises ``Interrupted``;
once the command has ended, or its run is published, or a stop is already on its way,
a signal is dropped (a scheduler's second SIGTERM cannot turn exit 143 into a kill).
A command that goes on after a run it published (``label``: its explode, then the
requests) calls :func:`continue_after_run`: a signal stops it again from there, and one
dropped since that run was published is raised then.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, TypeVar

from pipeline.errors import Interrupted

T = TypeVar("T")
_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_active = threading.Event()  # set inside interruptible()


_received: list[int] = []  # signals seen inside interruptible(), newest last
_pending: list[int] = []  # signals received inside deferred() and not raised yet
_unconfirmed: list[int] = []  # raised, and not yet seen leaving interruptible()
_deferring = [False]  # main thread inside deferred()
_complete = [False]  # the run is published: signals are dropped (kept after the block: the CLI's handler reads it)
_first: list[int] = []  # the first signal raised as Interrupted since the last block began
_phase = ["off"]  # the CLI's: "off" (not the CLI), "starting", "running", "ended"
_dropped: list[int] = []  # signals dropped once a run was published (read by continue_after_run)


def _named(signum: int) -> Interrupted:
    return Interrupted(signum, signal.Signals(signum).name)


def _interrupted(signum: int) -> Interrupted:
    """The handler's exception, recorded until it is seen leaving :func:`interruptible`:
    the first signal's, whichever signal came now."""
    if not _first:
        _first.append(signum)
    _unconfirmed.append(_first[0])
    return _named(_first[0])


def _raise(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    if _complete[0]:
        _dropped.append(signum)
        return
    if _deferring[0]:
        _pending.append(signum)  # raised by raise_pending(), where no library lock is held
        return
    raise _interrupted(signum)


def raise_pending() -> None:
    """Raise ``Interrupted`` for a signal that :func:`deferred` held back (else nothing)."""
    if _pending:
        signum = _pending[0]
        _pending.clear()
        if not _complete[0]:
            raise _interrupted(signum)


def raise_swallowed() -> None:
    """Raise ``Interrupted`` for a signal whose exception was swallowed on its way (see
    the module docstring), else nothing: called before a step that cannot be undone."""
    if _unconfirmed and not _complete[0]:
        raise _named(_unconfirmed[0])


def _cli_handler(signum: int, frame: FrameType | None) -> None:
    """SIGTERM / SIGINT in the CLI's process outside :func:`interruptible` (module docstring)."""
    if _phase[0] == "starting":  # imports, argument parsing: nothing is written yet
        os.write(2, f"litmus-gate: error: interrupted by {signal.Signals(signum).name} before the command "
                    "started; nothing was written\n".encode())
        os._exit(128 + signum)
    if _phase[0] != "running" or _complete[0] or _first:
        if _phase[0] == "running" and _complete[0] and not _first:
            _dropped.append(signum)  # a command that goes on after its run raises it (continue_after_run)
        return  # nothing left to stop, or a stop already on its way: its exit code stands
    _first.append(signum)
    exc = _named(signum)
    exc.hint = "rerun the same command"
    raise exc


def install_cli_handlers() -> None:
    """Make SIGTERM and SIGINT the CLI's for the process's life (module docstring): call
    it first thing, before the imports, in the CLI's own process only."""
    _phase[0] = "starting"
    for s in _SIGNALS:
        signal.signal(s, _cli_handler)


def command_started(run: bool) -> None:
    """The CLI's command begins (when the CLI's handlers are installed; else nothing
    changes). A ``run`` (score, explode, label): a signal now raises ``Interrupted``. Any other
    command (a query, a report) gets Python's defaults back: SIGTERM ends the process at
    once, even inside a DuckDB query, which a Python handler would wait for, and SIGINT
    raises ``KeyboardInterrupt``."""
    if _phase[0] == "off":
        return
    _first.clear()
    _dropped.clear()
    _complete[0] = False
    if run:
        _phase[0] = "running"
        return
    _phase[0] = "off"
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def command_ended() -> None:
    """The CLI's command has returned or raised: a signal now has nothing left to stop.
    Ignored, not merely dropped by our handler: while Python exits it puts the default
    action back for every signal it handles (not for an ignored one), and a SIGTERM in
    those last milliseconds killed a run that had succeeded (exit -15)."""
    if _phase[0] != "off":
        _phase[0] = "ended"
        for s in _SIGNALS:
            signal.signal(s, signal.SIG_IGN)


def commit(step: Callable[[], T]) -> T:
    """Run ``step``, the one after which the run is published (a rename, a manifest's
    upload), with signals deferred, and return what it returns: a signal swallowed
    before it (see the module docstring) stops the run first; one during or after it
    (main thread, inside :func:`interruptible`) is recorded and dropped, since what is
    left is clean-up."""
    with deferred():
        raise_swallowed()
        done = step()
        if threading.current_thread() is threading.main_thread() and _active.is_set():
            _complete[0] = True
            _dropped.extend(_pending)
            _pending.clear()
    return done


def continue_after_run() -> None:
    """The command goes on after a run it published (``label`` after its explode): from
    here a signal stops it again, and one dropped since that run was published (during
    its clean-up, on the way back) raises ``Interrupted`` now."""
    late = _dropped[:1]
    _dropped.clear()
    _complete[0] = False
    _first.clear()
    if late:
        raise _interrupted(late[0])


@contextmanager
def deferred(drop: bool = False) -> Iterator[None]:
    """Within the block (main thread), SIGTERM / SIGINT inside :func:`interruptible` are
    recorded, not raised: the block calls :func:`raise_pending` at its safe points, and a
    signal still pending when the block ends normally is raised then (``drop``: forgotten,
    for a block run while an ``Interrupted`` is already on its way out). Outside the main
    thread, or nested, it changes nothing."""
    if threading.current_thread() is not threading.main_thread() or _deferring[0]:
        yield
        return
    _deferring[0] = True
    try:
        yield
    finally:
        _deferring[0] = False
        if drop:
            _pending.clear()
    raise_pending()


@contextmanager
def interruptible() -> Iterator[None]:
    """Within the block, SIGTERM and SIGINT raise ``Interrupted``; handlers restored after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _received.clear()
    _pending.clear()
    _unconfirmed.clear()
    _first.clear()
    _dropped.clear()
    _complete[0] = False
    previous: dict[int, Any] = {}
    try:
        for s in _SIGNALS:  # inside the try: a signal as they are installed restores them too
            previous[s] = signal.signal(s, _raise)
        _active.set()
        yield
        raise_swallowed()  # raised, then swallowed on its way (a __del__): raised again here
    except Interrupted:
        raise
    except BaseException as exc:
        if _received and not _complete[0]:  # a library caught ours and raised its own (DuckDB: "Query interrupted")
            raise _named(_first[0] if _first else _received[0]) from exc
        raise
    finally:
        _active.clear()
        _pending.clear()  # a deferred block left by an exception: never raised in a later run
        _unconfirmed.clear()
        _restore(previous)


def _restore(previous: dict[int, Any]) -> None:
    """Put the handlers of ``previous`` back, every one: a signal whose handler (still ours)
    runs while they are put back raises there, and left the later ones ours (a CI run: SIGINT
    held while the pool started landed after SIGTERM's was restored, and SIGINT stayed ours
    after the block). Its ``Interrupted`` is raised once all are back."""
    late: Interrupted | None = None
    todo = list(previous.items())
    while todo:
        try:
            while todo:
                signal.signal(*todo[0])
                todo.pop(0)
        except Interrupted as exc:
            late = exc
    if late is not None:
        raise late


@contextmanager
def sigint_held() -> Iterator[None]:
    """SIGINT blocked in this thread within the block. A process (or thread) started in
    it starts with SIGINT blocked: a terminal's Ctrl-C reaches the whole process group,
    and a spawned worker still importing (before ``worker_start.worker_init``) would print a
    KeyboardInterrupt traceback. A SIGINT for this process waits until the block ends."""
    if not hasattr(signal, "pthread_sigmask"):  # not POSIX
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def reassert() -> None:
    """Put our handlers back if a library replaced them (``ray.init`` installs its own)."""
    if threading.current_thread() is threading.main_thread() and _active.is_set():
        for s in _SIGNALS:
            signal.signal(s, _raise)
