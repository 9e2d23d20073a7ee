"""Helpers shared by the benchmark scripts: measured subprocesses, machine facts, the doc.

Every measurement runs in its own child process; its peak RSS comes from the rusage that
``os.wait4`` returns for that child (the largest single process among the child and the
children it waited for), so measurements taken one after the other in one run do not see
each other's peaks. Because ``litmus-gate score`` runs worker processes side by side, the
sum of RSS over the child's process tree is also sampled (every 0.1 s from /proc).
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _rss import Timeline, rss_of, tree

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "performance.md"
MIB = 1 << 20
DOC_HEADER = """# Performance

Measured by the scripts in `bench/`: `make bench` runs `bench/run.py`, which runs the
others and rewrites this file; each script also runs alone. Every figure
comes from one child process per measurement: wall time from the parent, CPU time
(user + system, all threads and processes) and the peak RSS of the largest process from
the rusage of that child (`os.wait4`), plus the peak of the summed RSS of its process
tree sampled every 0.1 s (`litmus-gate score` runs worker processes). The machine is
shared with other jobs, so wall times carry noise; CPU seconds and ratios measured side
by side in one run are the steadier figures. 1 MB = 2^20 bytes.
"""


@dataclass
class Measured:
    """One child process run: wall seconds, CPU seconds (all processes), peak RSS of the largest
    process (bytes, rusage), peak of the summed RSS of the process tree (sampled), exit code, output."""

    wall: float
    cpu: float
    peak_rss: int
    returncode: int
    stdout: str
    stderr: str
    tree_rss: int = 0
    disk_peak: int = 0  # peak bytes under the watched folders (the run's work and staging folders)
    rss: dict[str, Any] | None = None  # per-phase peaks, driver vs workers (bench/_rss.py's Timeline.summary)
    samples: list[dict[str, Any]] | None = None  # every RSS sample (measure(..., timeline=True))


def _tree_rss(pid: int) -> int:
    return sum(rss_of(p) for p in tree(pid))


def folder_bytes(parent: Path, patterns: tuple[str, ...]) -> int:
    """Bytes of every file under ``parent``'s entries matching ``patterns`` (globs)."""
    total = 0
    for pattern in patterns:
        for top in parent.glob(pattern):
            for root, _, files in os.walk(top):
                for name in files:
                    try:
                        total += os.lstat(os.path.join(root, name)).st_size
                    except OSError:
                        continue
    return total


class _Sampler(threading.Thread):
    def __init__(self, pid: int, watch: tuple[Path, tuple[str, ...]] | None, disk_every: float = 0.1,
                 progress: Path | None = None, keep: bool = False, every: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak, self.disk, self.watch, self.stop = pid, 0, 0, watch, threading.Event()
        self.disk_every = disk_every  # walking a work folder of thousands of files costs CPU
        self.every = every
        self.timeline = Timeline(pid, progress, keep)

    def run(self) -> None:
        walked = 0.0
        while not self.stop.wait(self.every):
            self.peak = max(self.peak, self.timeline.sample())
            if self.watch is not None and time.monotonic() - walked >= self.disk_every:
                self.disk = max(self.disk, folder_bytes(*self.watch))
                walked = time.monotonic()


def measure(cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None,
            watch: tuple[Path, tuple[str, ...]] | None = None, term_after: float | None = None,
            disk_every: float = 0.1, timeline: bool = False, every: float = 0.1) -> Measured:
    """Run ``cmd`` as a child and return its wall time, CPU time and peak RSS (also per
    phase, driver vs workers: ``Measured.rss``); with ``watch`` (a folder and globs in it),
    also the peak bytes of those folders; with ``term_after`` seconds, send SIGTERM then
    (a run that fails, measured the same way); with ``timeline``, every RSS sample
    (taken each ``every`` seconds) in ``Measured.samples``."""
    out_path = Path(f"/tmp/.lg-bench-{os.getpid()}-out")
    err_path = Path(f"/tmp/.lg-bench-{os.getpid()}-err")
    with out_path.open("wb") as out, err_path.open("wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=cwd)
        sampler = _Sampler(proc.pid, watch, disk_every, progress=err_path, keep=timeline, every=every)
        sampler.start()
        timer = threading.Timer(term_after, proc.terminate) if term_after is not None else None
        if timer is not None:
            timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        if timer is not None:
            timer.cancel()
        wall = time.perf_counter() - start
        sampler.stop.set()
        sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    stdout = out_path.read_text(errors="replace")
    stderr = err_path.read_text(errors="replace")
    out_path.unlink()
    err_path.unlink()
    return Measured(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, proc.returncode, stdout, stderr,
                    max(sampler.peak, usage.ru_maxrss * 1024), sampler.disk, sampler.timeline.summary(),
                    sampler.timeline.samples if timeline else None)


def _run(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.rstrip()
    except OSError:
        return "(unavailable)"


def machine() -> str:
    """Markdown lines describing the machine and the versions (nproc, free -g, versions, load)."""
    import duckdb

    versions = [f"Python {platform.python_version()}", f"duckdb {duckdb.__version__}"]
    for dist in ("pyarrow", "polars", "pandera"):
        try:
            from importlib import metadata

            versions.append(f"{dist} {metadata.version(dist)}")
        except Exception:  # noqa: BLE001 - a missing optional package is just not listed
            pass
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"Machine: `nproc` = {_run(['nproc'])}; {platform.platform()}; {', '.join(versions)}; "
            f"load average at start {load}.\n\n```\n$ free -g\n{_run(['free', '-g'])}\n```\n")


def gib(n: float) -> str:
    return f"{n / (1 << 30):.2f} GB"


def update_section(title: str, body: str, doc: Path = DOC) -> None:
    """Replace (or append) the ``## title`` section of docs/performance.md."""
    text = doc.read_text(encoding="utf-8") if doc.exists() else DOC_HEADER
    section = f"## {title}\n\n{body.strip()}\n"
    pattern = re.compile(rf"^## {re.escape(title)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text, count=1).rstrip() + "\n"
    else:
        text = text.rstrip() + "\n\n" + section
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(text, encoding="utf-8")


def auto_shards(nbytes: int, workers: int | None = None) -> str:
    """How many shards ``score`` makes for ``nbytes`` of input by default (``workers``:
    as given to it, default the CPU count as on its command line)."""
    from pipeline.config import RunConfig
    from pipeline.execution.driver import shard_count

    config = RunConfig(inputs=(), out=Path("."), workers=workers or os.cpu_count() or 1)
    per = config.shard_bytes
    return (f"auto ({shard_count(config, nbytes)}, about one per {per // MIB} MB, "
            f"a multiple of {config.workers} workers)")
