"""Planning's read of a corpus, timed alone: ``scan_inputs`` (SHA-256 and cut points of
every input file, ``pipeline/execution/plan.py``) over a folder's ``*.jsonl`` files, as
a run plans ``--shards`` shards, once as the pipeline does it (one file after another)
and once through a thread pool of ``--threads`` (files scanned at once; hashlib
releases the GIL, the line counts do not). Prints wall and CPU seconds of each and
whether both plans are identical (exit 1 if not). Measures whether overlapping or
parallelising planning could pay (docs/design.md, "Measured 2026-12-03 (afternoon)").

Runs its own checkout's code (the repository above this file comes first on sys.path).

Usage: python bench/plan_scan.py DIR [--shards 800] [--threads 2]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.execution.plan import InputFile, ScanJob, scan_inputs, scan_jobs  # noqa: E402
from pipeline.storage import Location, size  # noqa: E402


def scan_threaded(files: list[Location], n_shards: int, fmt: str, threads: int) -> list[InputFile]:
    """``scan_inputs`` with the files' scans run ``threads`` at a time (same result)."""
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(ScanJob.scan, scan_jobs(files, n_shards, fmt)))


def _timed(fn: object, *args: object) -> tuple[list[InputFile], float, float]:
    before, started = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
    result = fn(*args)  # type: ignore[operator]
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return result, time.monotonic() - started, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--shards", type=int, default=800)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    files: list[Location] = sorted(args.folder.glob("*.jsonl"))
    if not files:
        parser.error(f"no *.jsonl file in {args.folder}")
    mb = sum(size(p) for p in files) / 2**20
    plain, wall, cpu = _timed(scan_inputs, files, args.shards, "auto")
    print(f"scan_inputs, {len(files)} files, {mb:,.0f} MB: {wall:.1f} s wall, {cpu:.1f} CPU s")
    threaded, wall, cpu = _timed(scan_threaded, files, args.shards, "auto", args.threads)
    print(f"{args.threads} files at once: {wall:.1f} s wall, {cpu:.1f} CPU s")
    same = plain == threaded
    print("plans identical" if same else "PLANS DIFFER")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
