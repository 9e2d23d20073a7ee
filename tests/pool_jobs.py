"""Jobs for a WorkerPool in a subprocess (spawn workers import them from here)."""

from __future__ import annotations

import time
from typing import Any


def hold(job: tuple[float, bytes]) -> int:
    """Sleep ``job[0]`` seconds; the payload's length."""
    seconds, payload = job
    time.sleep(seconds)
    return len(payload)


class SlowToPickle:
    """A task the driver takes 0.4 s to pickle into 1 MB (a shard task carries the run's
    policy, 170 KB pickled, and its labels)."""

    def __reduce__(self) -> tuple[Any, ...]:
        time.sleep(0.4)
        return (tuple, ((1.0, b"x" * 2**20),))


def sized(n: int) -> bytes:
    """A result of ``n`` bytes."""
    return b"r" * n


def first_len(task: tuple[bytes, int]) -> tuple[int, int]:
    """The length of a task's shared payload, and its number."""
    payload, number = task
    return len(payload), number
