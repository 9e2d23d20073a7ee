"""The work one command's analysis may do (:class:`Budget`), shared by every analysis
nested in it, and the error that ends an analysis that spent it (:class:`TooComplex`)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["MAX_WORK", "STAGE_WORK", "ANALYSIS_CPU_SECONDS", "TOO_COMPLEX", "TooComplex", "Budget", "budget"]

MAX_WORK = 1_000_000  # characters parsed + characters of expanded words + resources piped on, per command
STAGE_WORK = 32  # what running one simple command costs beyond its characters (about 16 µs)
ANALYSIS_CPU_SECONDS = 2.0  # CPU time (this thread's) per command: a backstop (each parse has 0.5 s)
TOO_COMPLEX = "command too complex to analyse"


class TooComplex(Exception):
    """A command's analysis spent its :class:`Budget`. Control flow inside the analyser:
    :func:`pipeline.analysis.shell.engine.analyse` turns it into an opaque result; never escapes."""


class Budget:
    """Work one command's analysis may do, shared by every nested analysis of it.

    Text is hostile: loops multiply words (``for x in 7,000 values; do cat $x$x...``),
    a literal variable can be expanded thousands of times in one word, a long pipeline
    hands every stage the resources of all the ones before it, and nested ``bash -c``
    text is parsed again at each level. :meth:`spend` counts characters parsed,
    characters of expanded words, resources piped on and ``STAGE_WORK`` per simple
    command run against ``MAX_WORK`` (1,000,000: about half a second of CPU; the same
    figure on every machine), and checks a CPU-time ``deadline`` as a backstop (the
    parser checks it too, :func:`pipeline.analysis.shell.syntax.parse`).

    The CPU clock starts at the first reading the analysis takes (:meth:`deadline_at`, given
    the reading of the first parse, which needs one for its own deadline anyway), not when
    the budget is made: ``time.thread_time`` is a system call (no vDSO), about 2.5 µs of CPU
    and far more wall time on a loaded virtual machine, and most commands are analysed in
    ~0.1 ms. Nothing that needs bounding runs between the two (a shell command is parsed
    first; a code step reads the clock itself before ``ast.parse``: :func:`pipeline.analysis.shell.analyse_code`)."""

    def __init__(self, work: int = MAX_WORK, seconds: float = ANALYSIS_CPU_SECONDS) -> None:
        self.left = work
        self.seconds = seconds
        self._deadline: float | None = None
        self._calls = 0

    def deadline_at(self, now: float) -> float:
        """The CPU-time deadline, started at ``now`` (a ``time.thread_time()`` reading)
        unless an earlier reading started it."""
        if self._deadline is None:
            self._deadline = now + self.seconds
        return self._deadline

    @property
    def deadline(self) -> float:
        """The CPU-time deadline (``time.thread_time()``), started now if not yet."""
        return self._deadline if self._deadline is not None else self.deadline_at(time.thread_time())

    def spend(self, units: int) -> None:
        """Use ``units`` of work; raise :class:`TooComplex` once the budget is gone."""
        self.left -= units
        self._calls += 1
        if self.left >= 0 and not (self._calls % 64 == 0 and time.thread_time() > self.deadline):
            return
        self.left = -1  # spent for good: every later call raises too
        raise TooComplex


_BUDGET: ContextVar[Budget | None] = ContextVar("shell_budget", default=None)


@contextmanager
def budget() -> Iterator[Budget]:
    """The budget of the command being analysed: a new one at the outermost call (a shell
    command or code step), the same one for everything analysed inside it (substitutions,
    ``bash -c``, shell strings in code, code in shell)."""
    current = _BUDGET.get()
    if current is not None:
        yield current
        return
    fresh = Budget()
    token = _BUDGET.set(fresh)
    try:
        yield fresh
    finally:
        _BUDGET.reset(token)
