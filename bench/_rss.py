"""RSS of a ``litmus-gate score`` process tree over time: driver vs workers, by phase.

Every sample reads ``/proc/PID/statm`` of each process in the tree and puts it in one
of three roles: the ``driver`` (the root process), a ``worker`` (a process started by
multiprocessing's spawn: its command line runs ``spawn_main``; a Ray worker) or
``other`` (multiprocessing's resource tracker, Ray's daemons). The phase comes from the
driver's progress lines on stderr (``shards i/n``) and from the workers seen:

- ``plan``: no worker seen and no shard done yet (discover, scan and hash the inputs);
- ``scoring``: from the first worker or the first shard done until the last shard of the
  first pass is done;
- ``final``: after it (the duplicate-id pass, a rescoring pass if any, publish, report).

Without progress lines (``--quiet``) ``final`` starts when no worker is alive any more.
``tree_private`` is the tree's sum without file-backed and shared pages (the libraries'
code, resident once but counted in every process's RSS).
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

_PAGE = os.sysconf("SC_PAGE_SIZE")
PHASES = ("plan", "scoring", "final")
_PROGRESS = re.compile(rb"shards (\d+)/(\d+)")
_WORKER_MARKS = (b"spawn_main", b"default_worker.py", b"ray::")


def tree(pid: int) -> list[int]:
    """``pid`` and every descendant (from ``/proc/*/task/*/children``)."""
    pids, todo = [], [pid]
    while todo:
        p = todo.pop()
        pids.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as handle:
                    todo.extend(int(c) for c in handle.read().split())
        except OSError:
            continue
    return pids


def rss_of(pid: int) -> int:
    """Resident bytes of one process (0 when it is gone)."""
    return resident(pid)[0]


def resident(pid: int) -> tuple[int, int]:
    """Resident bytes of one process and the part of them that is file-backed or shared
    memory (``statm``'s ``shared``: mostly the libraries' code, the same pages in every
    process, so a sum over processes counts them once per process); (0, 0) when it is gone."""
    try:
        with open(f"/proc/{pid}/statm") as handle:
            fields = handle.read().split()
        return int(fields[1]) * _PAGE, int(fields[2]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0, 0


def _is_worker(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            cmdline = handle.read()
    except OSError:
        return False
    return any(mark in cmdline for mark in _WORKER_MARKS)


class Progress:
    """The latest ``shards i/n`` of a growing stderr file, read incrementally."""

    def __init__(self, path: Path | None) -> None:
        self.path, self.offset, self.done, self.total, self._tail = path, 0, 0, 0, b""

    def poll(self) -> None:
        if self.path is None:
            return
        try:
            with self.path.open("rb") as handle:
                handle.seek(self.offset)
                data = handle.read()
        except OSError:
            return
        self.offset += len(data)
        text = self._tail + data
        cut = max(text.rfind(b"\n"), text.rfind(b"\r"))
        complete, self._tail = (text[:cut + 1], text[cut + 1:]) if cut >= 0 else (b"", text)
        found = _PROGRESS.findall(complete)
        if found:
            self.done, self.total = int(found[-1][0]), int(found[-1][1])


class Timeline:
    """Peaks per phase of the summed tree RSS, the driver, the largest worker and the
    workers together; with ``keep``, every sample too (for ``bench/rss_timeline.py``)."""

    def __init__(self, root: int, progress: Path | None = None, keep: bool = False) -> None:
        self.root, self.progress, self.keep = root, Progress(progress), keep
        self.roles: dict[int, str] = {}
        self.seen_worker = False
        self.started = time.monotonic()
        self.samples: list[dict[str, Any]] = []
        self.peaks: dict[str, dict[str, int]] = {}
        self.worker_pids: set[int] = set()
        self.at_peak: dict[str, Any] = {}
        self.tenths: list[dict[str, int] | None] = [None] * 10  # scoring: peaks per tenth of the shards
        # seconds from the start when the first shard was done, then each further tenth of
        # the first pass's shards: where planning ends and how steady the rate is after it
        self.done_at: list[float | None] = [None] * 11

    def _role(self, pid: int) -> str:
        if pid == self.root:
            return "driver"
        if pid in self.roles:
            return self.roles[pid]
        if _is_worker(pid):  # only a worker is remembered: between fork and exec a child shows its parent's command
            self.roles[pid] = "worker"
            return "worker"
        return "other"

    def _phase(self, workers_alive: bool) -> str:
        p = self.progress
        if p.total and p.done >= p.total:
            return "final"
        if not p.total and self.seen_worker and not workers_alive:
            return "final"
        return "scoring" if (self.seen_worker or p.done) else "plan"

    def sample(self) -> int:
        """One sample; returns the summed RSS of the tree."""
        self.progress.poll()
        driver, other, workers, shared = 0, 0, {}, 0
        for pid in tree(self.root):
            rss, file_backed = resident(pid)
            shared += file_backed
            role = self._role(pid)
            if role == "driver":
                driver = rss
            elif role == "worker":
                workers[pid] = rss
            else:
                other += rss
        if workers:
            self.seen_worker = True
            self.worker_pids.update(workers)
        phase = self._phase(bool(workers))
        total = driver + other + sum(workers.values())
        peak = self.peaks.setdefault(phase, {"tree": 0, "driver": 0, "worker": 0, "workers": 0, "tree_private": 0})
        peak["tree"] = max(peak["tree"], total)
        peak["tree_private"] = max(peak["tree_private"], total - shared)  # without file-backed pages
        peak["driver"] = max(peak["driver"], driver)
        peak["worker"] = max(peak["worker"], max(workers.values(), default=0))  # one process
        peak["workers"] = max(peak["workers"], sum(workers.values()))
        largest = max(workers.values(), default=0)
        if total > self.at_peak.get("tree", -1):
            self.at_peak = {"t": round(time.monotonic() - self.started, 1), "phase": phase, "tree": total,
                            "shared": shared,
                            "driver": driver, "other": other, "workers": sorted(workers.values(), reverse=True),
                            "done": self.progress.done, "total": self.progress.total}
        if self.progress.total and self.progress.done:
            crossed = [0] + [k for k in range(1, 11) if self.progress.done * 10 >= k * self.progress.total]
            for k in crossed:
                if self.done_at[k] is None:
                    self.done_at[k] = round(time.monotonic() - self.started, 1)
        if phase == "scoring":
            k = min(9, self.progress.done * 10 // self.progress.total) if self.progress.total else 0
            slot = self.tenths[k] or {"tree": 0, "driver": 0, "worker": 0}
            self.tenths[k] = {"tree": max(slot["tree"], total), "driver": max(slot["driver"], driver),
                              "worker": max(slot["worker"], largest)}
        if self.keep:
            self.samples.append({"t": round(time.monotonic() - self.started, 2), "phase": phase,
                                 "done": self.progress.done, "total": self.progress.total, "tree": total,
                                 "shared": shared,
                                 "driver": driver, "other": other, "workers": {str(k): v for k, v in workers.items()}})
        return total

    def summary(self) -> dict[str, Any]:
        """JSON-ready: ``phases`` (peaks per phase), ``at_peak`` (each process at the tree's
        peak), ``tenths`` (scoring peaks per tenth of the first pass's shards, None where no
        sample fell), ``done_at`` (seconds to the first shard done, then to each tenth of
        them) and ``worker_processes`` (distinct worker pids seen)."""
        return {"phases": {p: dict(self.peaks[p]) for p in PHASES if p in self.peaks}, "at_peak": self.at_peak,
                "tenths": list(self.tenths), "done_at": list(self.done_at),
                "worker_processes": len(self.worker_pids)}
