"""All benchmarks in one run; rewrites docs/performance.md (``make bench`` runs exactly this).

1. Side by side (``bench/compare.py``): one generated corpus of ``--base-mb`` MiB (default
   64), measured in one run by (a) raw DuckDB ``read_json`` -> explode -> Parquet, (b)
   ``litmus-gate score``, (c) the plain-Python reference scorer, (d) Invariant's
   ``LocalPolicy`` with three equivalent rules; ratios of (b) to each.
2. Scaling (``bench/ingest.py``): (a) and (b) on corpora of 1x, 4x and 16x ``--base-mb``
   (``--scales``), throughput and peak RSS, plus the stage profile of (b) at 1x
   (``bench/stages.py``).
3. Reachability (``bench/reachability.py``): ``--trajectories`` graphs (default 1M, ~10
   edges each), ``sql/flows.sql`` on the pipeline's connection (and in ``--batches``
   disjoint batches, as shards run it) and with ``--big-memory`` (default 16GB).

Generated files go to ``--workdir`` (default /tmp/litmus-bench) and are deleted.

Usage: python bench/run.py [--base-mb 64] [--scales 1,4,16] [--trajectories 1000000]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import compare  # noqa: E402
import ingest  # noqa: E402
import reachability  # noqa: E402
from _common import DOC, DOC_HEADER, MIB, REPO, auto_shards, gib  # noqa: E402

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


def scaling_table(runs: list[tuple[int, dict]]) -> str:
    """(a) and (b) at each corpus size, with (b)'s throughput relative to the smallest."""
    base_rate = runs[0][1]["bytes"] / runs[0][1]["score"]["wall"]
    lines = ["| size | MB | trajectories | (a) MB/s | (b) wall s | (b) MB/s | (b) trajectories/s "
             "| (b) vs 1x | (b) peak RSS, largest process | (b) peak RSS, process tree "
             "| (b) peak work folder (% of corpus) | (b) shards | runs (median) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for k, res in runs:
        mb = res["bytes"] / MIB
        sc, raw = res["score"], res["raw"]
        rate = res["bytes"] / sc["wall"]
        lines.append(f"| {k}x | {mb:,.0f} | {res['trajectories']:,} | {mb / raw['wall']:.1f} | {sc['wall']:.1f} "
                     f"| {mb / sc['wall']:.1f} | {res['trajectories'] / sc['wall']:,.0f} | {rate / base_rate:.2f} "
                     f"| {gib(sc['peak_rss'])} | {gib(sc['tree_rss'])} "
                     f"| {sc['disk_peak'] / MIB:,.0f} MB ({100 * sc['disk_peak'] / res['bytes']:.0f}%) "
                     f"| {sc.get('settings', {}).get('shards') or auto_shards(res['bytes'])} | {res['repeat']} |")
    for k, res in runs:
        f = res["score"].get("failed")
        if f:
            lines.append(f"\nA run that fails ({k}x, the same command stopped by SIGTERM after {f['after']:.1f} s): "
                         f"exit {f['exit']}, stopped in {f['wall']:.1f} s, peak RSS of the process tree "
                         f"{gib(f['tree_rss'])}, peak work folder {f['disk_peak'] / MIB:,.0f} MB, left for `--resume` "
                         f"{f['left'] / MIB:,.0f} MB; its message: `{f['stderr'][0]}`.")
    return "\n".join(lines)


def summary(cmp: dict, runs: list[tuple[int, dict]], reach: list[tuple[str, dict]]) -> str:
    tps = cmp["tps"]
    lines = [f"- Side by side on one corpus ({cmp['trajectories']:,} trajectories, {cmp['bytes'] / MIB:.0f} MB): "
             f"(b) `litmus-gate score` {tps['b']:,.0f} trajectories/s, at **{100 * cmp['ratio_ba']:.0f}%** of raw "
             f"DuckDB (a)'s rows per second (target >= 30%); (b)/(d) Invariant **{cmp['ratio_bd']:.2f}x** "
             f"(target >= 25x); (b)/(c) reference scorer per CPU second **{cmp['cpu_bc']:.2f}x** (target >= 2x; "
             f"wall {cmp['ratio_bc']:.2f}x)."]
    first, last = runs[0], runs[-1]
    r0 = first[1]["bytes"] / first[1]["score"]["wall"]
    r1 = last[1]["bytes"] / last[1]["score"]["wall"]
    lines.append(f"- Scaling {first[0]}x -> {last[0]}x ({first[1]['bytes'] / MIB:,.0f} -> {last[1]['bytes'] / MIB:,.0f} MB): "
                 f"(b) throughput {r0 / MIB:.1f} -> {r1 / MIB:.1f} MB/s ({100 * (r1 / r0 - 1):+.0f}%; target within 15%), "
                 f"peak RSS of the process tree {gib(first[1]['score']['tree_rss'])} -> {gib(last[1]['score']['tree_rss'])} "
                 f"(target <= 2.5 GB), peak work folder "
                 + " / ".join(f"{100 * r['score']['disk_peak'] / r['bytes']:.0f}%" for _, r in runs)
                 + " of the corpus (target <= 50%).")
    prof = first[1].get("stages")
    if prof:
        total = sum(s["wall"] for s in prof["stages"]) or 1.0
        top = sorted(prof["stages"], key=lambda s: -s["wall"])[:3]
        lines.append(f"- Heaviest parts of one shard's work in (b) ({prof['bytes'] / MIB:.0f} MB, `bench/stages.py`), "
                     "by share of wall time: " + ", ".join(f"{_part(s)} {100 * s['wall'] / total:.0f}%" for s in top) + ".")
    for label, res in reach:
        lines.append(_reach_line(label, res))
    return "\n".join(lines)


# sections written by their own commands (the hour-long 25 GB run, bench/label.py,
# bench/gzip_input.py, bench/hostile_memory.py):
# carried over as they are
KEPT_PREFIXES = ("## Large corpus", "## Labelling", "## Compressed input", "## Hostile input")


def _kept_sections(doc: Path) -> str:
    """Sections of the old doc that this run does not measure (see KEPT_PREFIXES)."""
    if not doc.exists():
        return ""
    old = doc.read_text(encoding="utf-8")
    heads = "|".join(re.escape(prefix) for prefix in KEPT_PREFIXES)
    found = re.findall(rf"^(?:{heads}).*?(?=^## |\Z)", old, re.S | re.M)
    return "".join("\n" + part.strip() + "\n" for part in found)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-mb", type=float, default=64, help="1x corpus size in MiB (default 64)")
    parser.add_argument("--scales", default="1,4,16", help="corpus sizes for scaling, in multiples of --base-mb")
    parser.add_argument("--trajectories", type=int, default=1_000_000)
    parser.add_argument("--edges", type=int, default=10)
    parser.add_argument("--batches", type=int, default=8,
                        help="with the pipeline's memory_limit, also run sql/flows.sql in this many batches")
    parser.add_argument("--big-memory", default="16GB", help="memory_limit for the second reachability run")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/litmus-bench"))
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--doc", type=Path, default=DOC, help="where to write (default docs/performance.md)")
    args = parser.parse_args(argv)
    command = "python bench/run.py " + " ".join(argv if argv is not None else sys.argv[1:])
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    scales = [int(k) for k in args.scales.split(",")]

    print(f"== side by side, {args.base_mb:g} MB", file=sys.stderr)
    cmp_report, cmp = compare.compare(["--mb", f"{args.base_mb:g}", "--seed", str(args.seed),
                                       "--workdir", str(args.workdir / "compare")])
    runs: list[tuple[int, dict]] = []
    for k in scales:
        mb = args.base_mb * k
        print(f"== scaling {k}x, {mb:g} MB", file=sys.stderr)
        # short runs move most with the machine's load: the median of 3 below 16x, one run at 16x
        res = ingest.run(mb, None, args.workdir, 3 if k < 16 else 1, False, args.seed,
                         stages=(k == scales[0]), failing=(k == scales[0]))
        runs.append((k, res))

    reach: list[tuple[str, dict]] = []
    sections: list[tuple[str, str]] = []
    for limit in (None, args.big_memory):
        label = "pipeline memory_limit" if limit is None else f"memory_limit={limit}"
        print(f"== reachability, {args.trajectories:,} trajectories, {label}", file=sys.stderr)
        batches = 1 if limit else args.batches
        res = reachability.run(args.trajectories, args.edges, profile=False, variants=VARIANTS,
                               workdir=args.workdir, memory_limit=limit, batches=batches, operators=False)
        cmd = (f"python bench/reachability.py --trajectories {args.trajectories} --edges {args.edges}"
               + (f" --memory-limit {limit}" if limit else "") + (f" --batches {batches}" if batches > 1 else "")
               + "".join(f" --variant {Path(v).relative_to(REPO)}" for v in VARIANTS))
        reach.append((label, res))
        sections.append((reachability.section_title(limit), reachability.markdown(res, cmd)))

    text = DOC_HEADER + f"\nWritten by `{command.strip()}` (started {started}); `make bench` runs the same.\n\n"
    text += f"## Summary\n\n{summary(cmp, runs, reach)}\n"
    text += "\n## Side by side: (a) raw DuckDB, (b) litmus-gate, (c) reference scorer, (d) Invariant\n\n"
    text += f"{cmp_report.strip()}\n\nCommand: `{cmp['command']}`\n"
    text += f"\n## Scaling: (b) at {', '.join(f'{k}x' for k in scales)}\n\n{scaling_table(runs)}\n"
    first = runs[0][1]
    text += f"\n### The {scales[0]}x run in detail\n\n" + ingest.markdown(
        first, f"python bench/ingest.py --mb {args.base_mb * scales[0]:g} --stages").strip() + "\n"
    for title, body in sections:
        text += f"\n## {title}\n\n{body.strip()}\n"
    text += _kept_sections(args.doc)
    args.doc.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
