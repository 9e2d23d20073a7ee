"""Counters, the progress line and the closing summary of ``litmus-gate label``."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

REFRESH_SECONDS = 0.5


@dataclass
class Counters:
    """What one ``label`` run did. Request counters cover this run only (cached steps
    cost nothing); label counters come from the written file."""

    started: float = 0.0
    done: int = 0  # judged steps settled (a reply, a cache hit or a failure)
    requests: int = 0  # requests sent this run (retries of one request count once)
    cached: int = 0  # judged steps answered without a request (cache, or a duplicate request)
    failed: int = 0  # requests that failed after their retries
    attempts: int = 0  # HTTP attempts, retries included
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    steps: int = 0  # rows written
    unsafe: int = 0
    safe: int = 0
    unparseable: int = 0  # a reply came but gave no label
    unanswered: int = 0  # no reply: the request failed
    seconds: float = 0.0

    def count_label(self, label: str | None, has_reply: bool) -> None:
        """Count one written row."""
        self.steps += 1
        if label == "unsafe":
            self.unsafe += 1
        elif label == "safe":
            self.safe += 1
        elif has_reply:
            self.unparseable += 1
        else:
            self.unanswered += 1


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m" if seconds >= 3600 else \
        f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class Progress:
    """One self-rewriting line on stderr (only when enabled: a terminal and not --quiet)."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total = total
        self.enabled = enabled
        self._shown = 0.0

    def line(self, c: Counters, now: float) -> str:
        """The progress text: steps settled, requests/s, ETA, cache hits, failures."""
        elapsed = max(now - c.started, 1e-6)
        rate = c.requests / elapsed
        left = max(self.total - c.done, 0)
        eta = _duration(left * elapsed / c.done) if c.done else "?"
        return (f"label {c.done}/{self.total} steps  {rate:,.1f} req/s  ETA {eta}  "
                f"cache hits {c.cached}  failed {c.failed}")

    def show(self, c: Counters) -> None:
        """Redraw at most every REFRESH_SECONDS."""
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._shown >= REFRESH_SECONDS:
            self._shown = now
            sys.stderr.write("\r" + self.line(c, now) + "\033[K")
            sys.stderr.flush()

    def finish(self, c: Counters) -> None:
        """The last state, then a newline."""
        if self.enabled:
            sys.stderr.write("\r" + self.line(c, time.monotonic()) + "\033[K\n")
            sys.stderr.flush()


def summary(c: Counters, out: str) -> str:
    """The closing summary (stdout): requests, cached, failed, tokens, labels."""
    null = c.unparseable + c.unanswered
    return (f"litmus-gate: wrote {out}: {c.steps} steps judged ({c.unsafe} unsafe, {c.safe} safe, {null} null: "
            f"{c.unanswered} failed requests, {c.unparseable} unparseable replies)\n"
            f"litmus-gate: {c.requests} requests ({c.attempts} attempts, {c.retries} retries), {c.cached} cached, "
            f"{c.failed} failed; tokens {c.prompt_tokens + c.completion_tokens} "
            f"(prompt {c.prompt_tokens}, completion {c.completion_tokens}); {c.seconds:.1f} s")
