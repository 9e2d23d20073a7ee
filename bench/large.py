"""The large-corpus run: ``litmus-gate score`` on one big corpus folder, measured whole.

One child process (``bench/_common.py``'s ``measure``): wall time, CPU time, peak RSS of
the largest process and of the whole process tree (sampled every 0.1 s), the tree's,
the driver's and the workers' peaks per phase (``bench/_rss.py``: planning, scoring,
the final phase after the last shard), and the peak bytes of the run's work and
staging folders; the figures are recorded whether the run
succeeds or fails (the exit code and the last lines of its stderr with them). Writes
the figures as JSON to ``--result`` and, with ``--section``, a section of
docs/performance.md. Deletes the run folder at the end unless ``--keep-run`` (the
corpus is the caller's).

Usage: python bench/large.py --corpus DIR --out RUN_DIR --result FILE.json [--section TITLE] [--keep-run]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import MIB, REPO, auto_shards, folder_bytes, gib, machine, measure, update_section  # noqa: E402


def corpus_stats(corpus: Path) -> tuple[int, int, int]:
    """Files, bytes and lines (trajectories) of a corpus file or folder of ``*.jsonl``."""
    files = sorted(corpus.glob("*.jsonl")) if corpus.is_dir() else [corpus]
    n_bytes = sum(f.stat().st_size for f in files)
    lines = 0
    for f in files:
        with f.open("rb") as handle:
            while block := handle.read(1 << 24):
                lines += block.count(b"\n")
    return len(files), n_bytes, lines


def run(corpus: Path, out: Path, workers: int | None) -> dict:
    """Score ``corpus`` into ``out`` once, measured; returns the figures."""
    n_files, n_bytes, lines = corpus_stats(corpus)
    cmd = [sys.executable, "-m", "pipeline.cli", "score", str(corpus), "--out", str(out), "--overwrite"]
    if workers:
        cmd += ["--workers", str(workers)]
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    at_start = machine()  # the load average before the run, not after it
    m = measure(cmd, cwd=REPO, watch=(out.parent, (f".{out.name}.work", f".{out.name}.staging-*")),
                disk_every=5.0)
    published = folder_bytes(out.parent, (out.name,)) if m.returncode == 0 else 0
    return {"started": started, "files": n_files, "bytes": n_bytes, "trajectories": lines, "wall": m.wall,
            "cpu": m.cpu, "peak_rss": m.peak_rss, "tree_rss": m.tree_rss, "disk_peak": m.disk_peak,
            "run_bytes": published, "returncode": m.returncode, "stderr_tail": m.stderr.splitlines()[-5:],
            "shards": auto_shards(n_bytes), "command": " ".join(cmd), "rss_phases": m.rss["phases"] if m.rss else {},
            "worker_processes": m.rss["worker_processes"] if m.rss else 0,
            "rss_at_peak": m.rss["at_peak"] if m.rss else {},
            "rss_tenths": m.rss["tenths"] if m.rss else [], "done_at": m.rss.get("done_at", []) if m.rss else [],
            "machine": at_start}


def phase_lines(res: dict) -> list[str]:
    """Peak RSS per phase, driver vs workers (results written before these keys: none)."""
    phases = res.get("rss_phases") or {}
    if not phases:
        return []
    lines = ["| phase | peak RSS, process tree | driver | largest worker | workers together "
             "| tree without file-backed pages |", "|---|---:|---:|---:|---:|---:|"]
    for name, p in phases.items():
        lines.append(f"| {name} | {gib(p['tree'])} | {gib(p['driver'])} | {gib(p['worker'])} | {gib(p['workers'])} "
                     f"| {gib(p.get('tree_private', 0))} |")
    at = res.get("rss_at_peak") or {}
    workers = ", ".join(gib(w) for w in at.get("workers", [])) or "none"
    lines += ["", f"At the tree's peak ({at.get('phase')}, t = {at.get('t', 0):,.0f} s, shards {at.get('done')}/"
              f"{at.get('total')}): driver {gib(at.get('driver', 0))}, workers {workers}, other {gib(at.get('other', 0))}; "
              f"{res.get('worker_processes', 0)} worker processes over the run. Phases (`bench/_rss.py`): plan = before "
              "the first worker, scoring = until the last shard of the first pass, final = duplicate ids, publishing, "
              "report."]
    tenths = res.get("rss_tenths") or []
    if any(tenths):
        cells = [f"{t['tree'] / 2**30:.2f} / {t['worker'] / 2**30:.2f}" if t else "-" for t in tenths]
        lines += ["", "Scoring, peak RSS per tenth of the shards (GB, process tree / largest worker): "
                  + ", ".join(cells) + "."]
    done_at = res.get("done_at") or []
    if done_at and done_at[0] is not None:
        cells = [f"{t:,.0f} s" if t is not None else "-" for t in done_at[1:]]
        lines += ["", f"First shard done at {done_at[0]:,.1f} s; each tenth of the first pass's shards done at "
                  + ", ".join(cells) + " (seconds from the start, `bench/_rss.py`)."]
    return lines + [""]


def markdown(res: dict) -> str:
    """The figures as a few Markdown lines."""
    mb = res["bytes"] / MIB
    ok = res["returncode"] == 0
    # a run that stopped did not read the whole corpus: no rate of it
    rate = f"{mb / res['wall']:.1f}" if ok else "-"
    per_s = f"{res['trajectories'] / res['wall']:,.0f}" if ok else "-"
    lines = [
        f"Corpus: {mb:,.0f} MB in {res['files']} files, {res['trajectories']:,} trajectories. Started "
        f"{res['started']}; shards {res['shards']}.", "",
        "| outcome | wall s | CPU s | MB/s | trajectories/s | peak RSS, largest process | peak RSS, process tree "
        "| peak work folder (% of corpus) | published run |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        f"| {'finished' if ok else 'FAILED, exit %d' % res['returncode']} | {res['wall']:,.0f} | {res['cpu']:,.0f} "
        f"| {rate} | {per_s} | {gib(res['peak_rss'])} "
        f"| {gib(res['tree_rss'])} | {res['disk_peak'] / MIB:,.0f} MB ({100 * res['disk_peak'] / res['bytes']:.0f}%) "
        f"| {res['run_bytes'] / MIB:,.0f} MB |", "",
    ]
    lines += phase_lines(res)
    if not ok:
        lines += ["Last lines of its stderr:", "", "```", *res["stderr_tail"], "```", ""]
    lines += [res.get("machine") or machine(), f"Command: `{res['command']}`"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--result", type=Path, required=True)
    parser.add_argument("--workers", type=int)
    parser.add_argument("--section", help="write the figures into this section of docs/performance.md")
    parser.add_argument("--keep-run", action="store_true")
    args = parser.parse_args(argv)
    res = run(args.corpus, args.out, args.workers)
    args.result.write_text(json.dumps(res, indent=2) + "\n")
    text = markdown(res)
    print(text)
    if args.section:
        update_section(args.section, text)
    if not args.keep_run:
        shutil.rmtree(args.out, ignore_errors=True)
    return 0 if res["returncode"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
