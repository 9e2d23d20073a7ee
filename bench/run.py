"""All benchmarks in one run; rewrites docs/performance.md (``make bench`` calls this).

1. Ingest (``bench/ingest.py``): one generated corpus of ``--ingest-mb`` MiB (default 256),
   (a) raw DuckDB explode -> Parquet vs (b) ``litmus-gate score``, plus the stage profile
   of (b) (``bench/stages.py`` on one shard's worth of the corpus).
2. Reachability (``bench/reachability.py``): ``--trajectories`` graphs (default 1M, ~10
   edges each), ``sql/flows.sql`` (and any variant queries in ``bench/flows_variants/``), on the
   pipeline's connection as is (plus ``sql/flows.sql`` in ``--batches`` disjoint batches,
   as shards run it) and with ``--big-memory`` (default 16GB) so the query can finish.

``--full`` is the full-size run: a 1024 MiB ingest corpus, and the per-CTE and operator
profile of ``sql/flows.sql`` in the big-memory run.
Generated files go to ``--workdir`` (default /tmp/litmus-bench) and are deleted.

Usage: python bench/run.py [--full] [--ingest-mb 256] [--trajectories 1000000] [--big-memory 16GB]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import ingest  # noqa: E402
import reachability  # noqa: E402
from _common import DOC, DOC_HEADER, MIB, REPO  # noqa: E402

VARIANTS = tuple(str(p) for p in sorted((REPO / "bench" / "flows_variants").glob("*.sql")))


def _reach_line(label: str, res: dict) -> str:
    flows = res["flows"]
    if flows["error"]:
        text = f"`sql/flows.sql` fails after {flows['seconds']:.0f} s ({flows['error'].split(':')[0]})"
    else:
        text = (f"`sql/flows.sql` {flows['seconds']:.1f} s wall / {flows['cpu']:.1f} CPU s, "
                f"{flows['rows']:,} rows, process peak RSS during the query {flows['hwm'] / (1 << 30):.1f} GB")
    for path, v in res["variants"].items():
        name = Path(path).stem
        if v["error"]:
            text += f"; `{name}` fails ({v['error'].split(':')[0]})"
        else:
            same = "" if "diff" not in v else (" (same rows)" if v["diff"] == 0 else f" ({v['diff']:,} rows differ)")
            text += f"; `{name}` {v['seconds']:.1f} s / {v['cpu']:.1f} CPU s{same}"
    if "batched" in res:
        b = res["batched"]
        if b["error"]:
            text += f"; `sql/flows.sql` in {b['batches']} batches fails ({b['error'].split(':')[0]})"
        else:
            same = "" if "diff" not in b else (" (same rows)" if b["diff"] == 0 else f" ({b['diff']:,} rows differ)")
            text += (f"; `sql/flows.sql` in {b['batches']} batches one after the other {b['seconds']:.1f} s / "
                     f"{b['cpu']:.1f} CPU s{same}, process peak RSS during the query {b['hwm'] / (1 << 30):.1f} GB")
    return f"- Reachability, {res['trajectories']:,} trajectories, {label}: {text}."


def _part(stage: dict) -> str:
    table = stage.get("table")
    if not table:
        return stage["stage"]
    return f"{stage['stage']} {table}" if table.startswith("(") else f"{stage['stage']} `{table}`"


def summary(ing: dict, reach: list[tuple[str, dict]]) -> str:
    mb = ing["bytes"] / MIB
    raw, sc = ing["raw"], ing["score"]
    lines = [f"- Ingest of {mb:.0f} MB ({ing['trajectories']:,} trajectories): raw DuckDB explode -> Parquet "
             f"{mb / raw['wall']:.1f} MB/s, `litmus-gate score` end to end {mb / sc['wall']:.2f} MB/s: "
             f"(b)/(a) = **{sc['wall'] / raw['wall']:.0f}x** wall, {sc['cpu'] / raw['cpu']:.0f}x CPU."]
    prof = ing.get("stages")
    if prof:
        total = sum(s["wall"] for s in prof["stages"]) or 1.0
        top = sorted(prof["stages"], key=lambda s: -s["wall"])[:3]
        lines.append(f"- Heaviest parts of one shard's work in (b) ({prof['bytes'] / MIB:.0f} MB, `bench/stages.py`), "
                     "by share of wall time: " + ", ".join(f"{_part(s)} {100 * s['wall'] / total:.0f}%" for s in top) + ".")
    for label, res in reach:
        lines.append(_reach_line(label, res))
        ops = res.get("operators") or []
        rec = next((o for o in ops if o["operator"] == "REC_CTE"), None)
        scan = next((o for o in ops if o["operator"] == "REC_REC_CTE_SCAN"), None)
        if rec and scan:
            lines.append(f"- In `sql/flows.sql` ({label}) the recursive CTE takes {rec['seconds']:.1f} operator-seconds, "
                         f"{scan['seconds']:.1f} of them scanning `recurring.reach` for the NOT EXISTS anti-join "
                         f"({scan['rows']:,} rows read: every state found so far, read again at each BFS level).")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", action="store_true", help="1024 MiB ingest and the per-CTE flows profile")
    parser.add_argument("--ingest-mb", type=float, default=None, help="corpus size (default 256, 1024 with --full)")
    parser.add_argument("--trajectories", type=int, default=1_000_000)
    parser.add_argument("--edges", type=int, default=10)
    parser.add_argument("--batches", type=int, default=8,
                        help="with the pipeline's memory_limit, also run sql/flows.sql in this many batches")
    parser.add_argument("--big-memory", default="16GB", help="memory_limit for the second reachability run")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/litmus-bench"))
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--doc", type=Path, default=DOC, help="where to write (default docs/performance.md)")
    args = parser.parse_args(argv)
    mb = args.ingest_mb or (1024 if args.full else 256)
    command = "python bench/run.py " + " ".join(argv if argv is not None else sys.argv[1:])
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())

    print(f"== ingest, {mb:g} MB", file=sys.stderr)
    ing = ingest.run(mb, None, args.workdir, 1, False, args.seed, stages=True)
    ingest_md = ingest.markdown(ing, f"python bench/ingest.py --mb {mb:g} --stages")

    reach: list[tuple[str, dict]] = []
    sections: list[tuple[str, str]] = []
    for limit in (None, args.big_memory):
        label = "pipeline memory_limit" if limit is None else f"memory_limit={limit}"
        print(f"== reachability, {args.trajectories:,} trajectories, {label}", file=sys.stderr)
        deep = bool(args.full and limit)  # per-CTE cuts and operator profile: once, where the query finishes
        batches = 1 if limit else args.batches
        res = reachability.run(args.trajectories, args.edges, profile=deep, variants=VARIANTS,
                               workdir=args.workdir, memory_limit=limit, batches=batches, operators=deep)
        cmd = (f"python bench/reachability.py --trajectories {args.trajectories} --edges {args.edges}"
               + (f" --memory-limit {limit}" if limit else "") + (" --profile --operators" if deep else "")
               + (f" --batches {batches}" if batches > 1 else "")
               + "".join(f" --variant {Path(v).relative_to(REPO)}" for v in VARIANTS))
        reach.append((label, res))
        sections.append((reachability.section_title(limit), reachability.markdown(res, cmd)))

    text = DOC_HEADER + (f"\nWritten by `{command}` (started {started}), which ran the commands named in "
                         f"each section.\n\n")
    text += f"## Summary\n\n{summary(ing, reach)}\n"
    text += f"\n## Ingest\n\n{ingest_md.strip()}\n"
    for title, body in sections:
        text += f"\n## {title}\n\n{body.strip()}\n"
    args.doc.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
