"""Where a run's memory goes: the RSS of each process of ``litmus-gate score`` over time.

Runs ``litmus-gate score CORPUS --out RUN --overwrite [SCORE ARGS]`` once, measured by
``bench/_common.py``'s ``measure`` with every RSS sample kept (``bench/_rss.py``: driver
vs each worker process, the phase, shards done). Writes the samples and the summary
as JSON to ``--result`` and prints:

- peaks per phase (plan / scoring / final): process tree, driver, largest worker,
  workers together;
- the driver's and each worker's peak RSS per tenth of the first pass (by shards done),
  which shows a process that creeps shard after shard, and each worker's lowest RSS
  in that tenth (what it keeps between shards);
- the breakdown at the moment of the tree's peak (do two workers' peaks coincide?).

Deletes the run folder at the end (the corpus is the caller's).

Usage: python bench/rss_timeline.py --corpus DIR --out RUN_DIR --result FILE.json [-- SCORE ARGS...]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import MIB, REPO, measure  # noqa: E402

BUCKETS = 10


def _mb(n: float) -> str:
    return f"{n / MIB:,.0f}"


def per_tenth(samples: list[dict[str, Any]]) -> dict[str, list[tuple[int, int] | None]]:
    """For the driver and each worker pid: ``(peak, lowest)`` RSS per tenth of the first
    pass (samples of the scoring phase, bucketed by shards done)."""
    rows: dict[str, list[tuple[int, int] | None]] = {}
    total = max((s["total"] for s in samples), default=0)  # 0 until the first shard is done
    for s in samples:
        if s["phase"] != "scoring" or not total:
            continue
        b = min(BUCKETS - 1, s["done"] * BUCKETS // total)
        for name, rss in [("driver", s["driver"])] + [(f"worker {pid}", v) for pid, v in s["workers"].items()]:
            slots = rows.setdefault(name, [None] * BUCKETS)
            hi, lo = slots[b] or (0, rss)
            slots[b] = (max(hi, rss), min(lo, rss))
    return rows


def report(res: dict[str, Any]) -> str:
    """The figures as Markdown."""
    lines = [f"`{res['command']}`: exit {res['returncode']}, wall {res['wall']:,.1f} s, CPU {res['cpu']:,.1f} s, "
             f"peak RSS largest process {_mb(res['peak_rss'])} MB, process tree {_mb(res['tree_rss'])} MB; "
             f"{res['rss']['worker_processes']} worker processes.", "",
             "| phase | tree MB | driver MB | largest worker MB | workers together MB | tree without file-backed MB |",
             "|---|---:|---:|---:|---:|---:|"]
    for phase, p in res["rss"]["phases"].items():
        lines.append(f"| {phase} | {_mb(p['tree'])} | {_mb(p['driver'])} | {_mb(p['worker'])} | {_mb(p['workers'])} "
                     f"| {_mb(p.get('tree_private', 0))} |")
    samples = res["samples"]
    if samples:
        top = max(samples, key=lambda s: s["tree"])
        workers = ", ".join(_mb(v) for v in top["workers"].values()) or "none"
        lines += ["", f"At the tree's peak (t = {top['t']:.1f} s, {top['phase']}, shards {top['done']}/{top['total']}): "
                  f"driver {_mb(top['driver'])} MB, workers {workers} MB, other {_mb(top['other'])} MB "
                  f"(file-backed {_mb(top.get('shared', 0))} MB of the sum)."]
    rows = per_tenth(samples)
    if rows:
        lines += ["", "Peak / lowest RSS (MB) per tenth of the first pass (by shards done):", "",
                  "| process | " + " | ".join(f"{10 * b}-{10 * b + 10}%" for b in range(BUCKETS)) + " |",
                  "|---|" + "---:|" * BUCKETS]
        for name, slots in rows.items():
            cells = [f"{_mb(s[0])} / {_mb(s[1])}" if s else "" for s in slots]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--result", type=Path, required=True)
    parser.add_argument("--every", type=float, default=0.1, help="seconds between samples")
    parser.add_argument("score_args", nargs="*", help="more arguments for litmus-gate score (after --)")
    args = parser.parse_args(argv)
    cmd = [sys.executable, "-m", "pipeline.cli", "score", str(args.corpus), "--out", str(args.out), "--overwrite",
           *args.score_args]
    m = measure(cmd, cwd=REPO, timeline=True, every=args.every)
    res = {"command": " ".join(cmd), "returncode": m.returncode, "wall": m.wall, "cpu": m.cpu,
           "peak_rss": m.peak_rss, "tree_rss": m.tree_rss, "rss": m.rss, "samples": m.samples,
           "stderr_tail": m.stderr.splitlines()[-5:]}
    args.result.write_text(json.dumps(res) + "\n")
    print(report(res))
    shutil.rmtree(args.out, ignore_errors=True)
    return 0 if m.returncode == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
