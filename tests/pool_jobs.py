"""Jobs for a WorkerPool in a subprocess (spawn workers import them from here)."""

from __future__ import annotations

import time


def hold(job: tuple[float, bytes]) -> int:
    """Sleep ``job[0]`` seconds; the payload's length."""
    seconds, payload = job
    time.sleep(seconds)
    return len(payload)


def sized(n: int) -> bytes:
    """A result of ``n`` bytes."""
    return b"r" * n


def first_len(task: tuple[bytes, int]) -> tuple[int, int]:
    """The length of a task's shared payload, and its number."""
    payload, number = task
    return len(payload), number


def fail_loudly(n: int) -> int:
    """Raise an error whose text is ``n`` bytes."""
    raise ValueError("e" * n)


def worker_state(_: int) -> tuple[int, bool]:
    """How many objects this worker's garbage collector has frozen, and whether Pandera's
    polars backend is loaded (what ``pipeline.execution.shard.prepare_worker`` does)."""
    import gc
    import sys

    return gc.get_freeze_count(), "pandera.polars" in sys.modules


def fail_to_prepare() -> None:
    """A worker start-up that fails (a library that will not load)."""
    raise RuntimeError("cannot prepare")


def die(signum: int) -> int:
    """End this worker by signal ``signum`` (the OOM killer's SIGKILL, a scheduler's SIGTERM)."""
    import os

    os.kill(os.getpid(), signum)
    return signum


def sigint_ignored(_: int) -> bool:
    """Whether SIGINT is ignored by this process at the system's level (``/proc``: what
    ``signal.getsignal`` says is only what Python last set)."""
    import signal

    status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
    return bool(int(status["SigIgn"].strip(), 16) >> (signal.SIGINT - 1) & 1)
