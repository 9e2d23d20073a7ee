"""Labelling benchmark: ``litmus-gate label`` against the fake OpenAI-compatible server.

Generates a corpus with ``litmus-gate synth``, starts ``tests/fake_openai.py`` on
127.0.0.1 in this process (each reply after ``--latency`` seconds, standing in for the
model's time) and runs ``litmus-gate label`` as a measured child process at each
``--concurrency`` level, with an empty cache each time. Reports:

- requests/s as the server saw them (requests / (last reply - first request)), against
  the ideal concurrency / latency;
- the same at zero latency: the ceiling of client and fake server together (they share
  the machine's cores);
- the overhead per judged step: a rerun served entirely by the cache (explode, prompt
  rendering, cache look-ups, parsing, writing), and that minus ``litmus-gate explode``
  alone; and the client's CPU per request.

Writes the section "Labelling (`litmus-gate label`)" of docs/performance.md (replaced in
place, or appended at the end) unless ``--no-doc``.

Usage: python bench/label.py [--trajectories 300] [--latency 0.02] [--concurrency 1,8,32] [--no-doc]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import DOC, REPO, machine, measure, update_section  # noqa: E402

from tests.fake_openai import FakeOpenAI, marker_rule  # noqa: E402

TITLE = "Labelling (`litmus-gate label`)"


def _label(corpus: Path, url: str, out: Path, cache: Path, concurrency: int, *extra: str) -> list[str]:
    return [sys.executable, "-m", "pipeline.cli", "label", str(corpus), "--endpoint", url, "--model", "bench-guard",
            "--out", str(out), "--cache", str(cache), "--concurrency", str(concurrency), "--quiet", *extra]


def run_level(corpus: Path, work: Path, latency: float, concurrency: int, env: dict[str, str]) -> dict[str, float]:
    """One label run with an empty cache; request rate as the server saw it."""
    cache = work / f"cache-{latency}-{concurrency}.sqlite"
    with FakeOpenAI(marker_rule("UNSAFE-MARKER"), latency=latency, log_bodies=False) as server:
        got = measure(_label(corpus, server.url, work / "labels.parquet", cache, concurrency, "--overwrite"), env=env,
                      cwd=REPO)
        log = server.answered()
    if got.returncode != 0:
        raise SystemExit(f"label failed: {got.stderr.strip()[-500:]}")
    span = max(e.replied or 0.0 for e in log) - min(e.received for e in log)
    return {"requests": len(log), "rps": len(log) / span, "wall": got.wall, "cpu": got.cpu, "cache": str(cache)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trajectories", type=int, default=300)
    parser.add_argument("--latency", type=float, default=0.02, help="seconds the fake model takes per reply")
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--no-doc", action="store_true")
    parser.add_argument("--doc", type=Path, default=DOC)
    args = parser.parse_args(argv)
    levels = [int(c) for c in args.concurrency.split(",")]
    command = "python bench/label.py " + " ".join(argv if argv is not None else sys.argv[1:])
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["NO_PROXY"] = "127.0.0.1,localhost"
    env["PYTHONPATH"] = str(REPO)
    work = Path(tempfile.mkdtemp(prefix="lg-bench-label-"))
    try:
        corpus = work / "corpus.jsonl"
        synth = measure([sys.executable, "-m", "pipeline.cli", "synth", "--trajectories", str(args.trajectories),
                         "--out", str(corpus)], env=env, cwd=REPO)
        if synth.returncode != 0:
            raise SystemExit(synth.stderr)
        rows, zero = [], []
        for c in levels:
            print(f"== latency {args.latency:g} s, concurrency {c}", file=sys.stderr)
            rows.append((c, run_level(corpus, work, args.latency, c, env)))
        for c in levels:
            print(f"== latency 0, concurrency {c}", file=sys.stderr)
            zero.append((c, run_level(corpus, work, 0.0, c, env)))
        steps = rows[0][1]["requests"]
        with FakeOpenAI(log_bodies=False) as server:
            cached = measure(_label(corpus, server.url, work / "labels.parquet", Path(rows[-1][1]["cache"]), 8,
                                    "--overwrite"), env=env, cwd=REPO)
            assert not server.log, "the cached rerun sent requests"
        explode = measure([sys.executable, "-m", "pipeline.cli", "explode", str(corpus), "--out", str(work / "steps"),
                           "--overwrite", "--quiet", "--workers", "1"], env=env, cwd=REPO)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    lines = [f"Corpus: `litmus-gate synth --trajectories {args.trajectories}` ({steps:,} judged steps: tool calls "
             "and assistant turns). Server: `tests/fake_openai.py` on 127.0.0.1 in the benchmark's process "
             "(`http.server` threads, the bundled prompt, replies `safe` / `unsafe` with log-probabilities), "
             "so client and server share the 2 cores. Each run starts with an empty cache; requests/s is counted "
             "by the server, from the first request to the last reply.", "",
             f"| concurrency | requests/s, model latency {args.latency * 1000:g} ms | ideal (concurrency / latency) "
             "| requests/s, zero latency | wall s of the command (latency run) |", "|---|---|---|---|---|"]
    for (c, r), (_, z) in zip(rows, zero):
        ideal = c / args.latency if args.latency else float("nan")
        lines.append(f"| {c} | {r['rps']:,.0f} | {ideal:,.0f} | {z['rps']:,.0f} | {r['wall']:.1f} |")
    per_step = cached.wall / steps * 1000
    beyond = (cached.wall - explode.wall) / steps * 1000
    cpu_req = (zero[0][1]["cpu"] - cached.cpu) / zero[0][1]["requests"] * 1000  # minus the fixed costs
    lines += ["", f"- Overhead per judged step, rerun served by the cache (no request): {cached.wall:.2f} s wall for "
                  f"{steps:,} steps = {per_step:.2f} ms/step; `litmus-gate explode` alone takes {explode.wall:.2f} s, "
                  f"so rendering, cache look-ups, parsing and writing cost {beyond:.2f} ms/step.",
              f"- Client CPU per request: {cpu_req:.2f} ms (CPU of the zero-latency run at concurrency "
              f"{zero[0][0]} minus that of the cached rerun, over its requests).", "", machine(), "", f"Command: `{command.strip()}`"]
    body = "\n".join(lines)
    print(f"## {TITLE}\n\n{body}")
    if not args.no_doc:
        update_section(TITLE, body, args.doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
