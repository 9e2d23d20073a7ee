"""Where ``litmus-gate score`` spends its time: the stages of one shard, timed one by one.

Runs, on one connection from ``pipeline.stages.tables.connect`` (the pipeline's settings), the
calls a worker makes for one shard (``pipeline.execution.shard.score_shard``): read the records,
then ``pipeline.stages.tables.steps``, ``actions``, ``flows``, ``verdicts``, Polars conversion +
Pandera validation (``conform``), Parquet writing, and the report. Inside each stage,
every ``materialize``/``materialize_per_rule`` call is timed under its table name (the
rest of the stage, e.g. the shell analyser, is shown as Python outside SQL). The whole FILE is treated as one shard, so give it a file of
about one shard (``RunConfig.shard_bytes``, 32 MB by default). Prints, per stage,
wall seconds, CPU seconds (all threads) and the process's peak RSS so far, as one JSON
line (``--json``) or a Markdown table. ``--operators STAGE`` also prints DuckDB's heaviest
operators of that SQL stage (JSON profiling; operator times are summed over threads).
``--threads N`` sets the connection's DuckDB threads (default: ``RunConfig.threads``, as a
one-shard run; each worker of a multi-shard run uses 1, see ``pipeline.execution.driver``).
``--warm`` scores the FILE once untimed first, in the same process, so imports (Polars,
Pandera and its backends), SQL loading and other first-use costs are paid before the
timed pass, as in a pool worker from its second shard on (peak RSS then covers both passes);
the process's memory of analysed programs (``pipeline.analysis.analysed._MEMO``) is emptied
between the passes, so the timed pass analyses its programs as a shard of new ones would.

Runs its own checkout's code (the repository above this file comes first on sys.path).

Usage: python bench/stages.py FILE [--json] [--threads N] [--warm] [--operators steps --operators edges]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# as in a worker of the CLI (pipeline/cli.py sets it before PyArrow loads): PyArrow's
# arenas without transparent huge pages
os.environ.setdefault("MIMALLOC_ALLOW_THP", "0")


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _top_operators(profile: Path, n: int = 8) -> list[dict]:
    data = json.loads(profile.read_text())
    found: list[dict] = []

    def walk(node: dict) -> None:
        extra = node.get("extra_info") or {}
        detail = (extra.get("Condition") or extra.get("Conditions") or extra.get("Aggregates")
                  or extra.get("Projections") or "")
        if not detail and node.get("children"):  # e.g. UNNEST: name what it unnests
            child = node["children"][0]
            detail = "of " + str(child.get("name")) + " " + str((child.get("extra_info") or {}).get("Projections", ""))
        found.append({"operator": node.get("name"), "seconds": node.get("timing", 0.0),
                      "rows": node.get("intermediate_rows"), "detail": str(detail)[:160]})
        for child in node.get("children", []):
            walk(child)

    for op in data.get("operator", []):
        walk(op)
    return sorted(found, key=lambda d: -d["seconds"])[:n]


def profile_stages(path: Path, operators: tuple[str, ...] = (), threads: int | None = None) -> dict:
    """Time the stages of one shard (``pipeline.execution.shard.score_shard``) and every SQL table inside them."""
    import pipeline.analysis.resources as pres
    import pipeline.stages.settings as pset
    import pipeline.stages.tables as ps
    from pipeline.config import RunConfig
    from pipeline.policy import load_policy
    from pipeline.ingest.reader import iter_records
    from pipeline.outputs.report import render_report
    from pipeline.ingest.tables_in import read_labels
    from pipeline.outputs.writer import conform

    tmp = Path(tempfile.mkdtemp(prefix="lg-stages-", dir="/tmp"))
    config = RunConfig(inputs=(path,), out=tmp / "run", overwrite=True)
    if threads is not None:
        config = dataclasses.replace(config, threads=threads)
    stages: list[dict] = []
    ops: dict[str, list[dict]] = {}
    depth = [0]

    def entry(stage: str, table: str | None, wall: float, cpu: float) -> None:
        stages.append({"stage": stage, "table": table, "wall": wall, "cpu": cpu,
                       "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024})

    current = ["setup"]

    def timed_sql(fn):  # wraps materialize / materialize_per_rule: one entry per outermost call
        def inner(con, name, *args, **kwargs):
            depth[0] += 1
            profile = depth[0] == 1 and name in operators
            if profile:
                prof = tmp / f"{name}.json"
                con.execute("pragma enable_profiling = 'json'")
                con.execute(f"pragma profiling_output = '{prof}'")
            start, cpu = time.perf_counter(), _cpu()
            try:
                return fn(con, name, *args, **kwargs)
            finally:
                if depth[0] == 1:
                    entry(current[0], name, time.perf_counter() - start, _cpu() - cpu)
                if profile:
                    con.execute("pragma disable_profiling")
                    ops[name] = _top_operators(prof)
                depth[0] -= 1
        return inner

    patched = []
    for module in (ps, pres, pset):
        for attr in ("materialize", "materialize_per_rule"):
            if hasattr(module, attr):
                patched.append((module, attr, getattr(module, attr)))
                setattr(module, attr, timed_sql(getattr(module, attr)))

    def stage(name: str, fn) -> None:
        current[0] = name
        before = len(stages)
        start, cpu = time.perf_counter(), _cpu()
        fn()
        wall, cpu = time.perf_counter() - start, _cpu() - cpu
        inner_wall = sum(s["wall"] for s in stages[before:])
        inner_cpu = sum(s["cpu"] for s in stages[before:])
        if not stages[before:]:
            entry(name, None, wall, cpu)
        elif wall - inner_wall > 0.05:
            entry(name, "(Python outside SQL)", wall - inner_wall, cpu - inner_cpu)
        print(f"{name:<16} {wall:8.1f} s", file=sys.stderr, flush=True)

    try:
        policy = load_policy(None)
        con = ps.connect(config)
        holder: dict = {}
        stage("read records", lambda: holder.update(records=ps.records_table(
            iter_records([path], config.fmt, int(policy.setting("max_record_bytes"))))))
        ps.register_inputs(con, holder.pop("records"), policy, read_labels(con, None))
        stage("steps", lambda: ps.steps(con))
        stage("actions", lambda: ps.actions(con))
        stage("flows", lambda: ps.flows(con, policy))
        stage("verdicts", lambda: ps.verdicts(con, policy))
        frames: dict = {}
        stage("polars+pandera", lambda: frames.update({n: conform(n, con.table(n).pl()) for n in config.tables}))
        stage("write parquet", lambda: [f.write_parquet(tmp / f"{n}.parquet", compression="zstd")
                                        for n, f in frames.items()])
        stage("report", lambda: render_report(con, "bench"))
    finally:
        for module, attr, fn in patched:
            setattr(module, attr, fn)
        shutil.rmtree(tmp, ignore_errors=True)
    return {"stages": stages, "operators": ops}


def markdown(res: dict) -> str:
    total = sum(s["wall"] for s in res["stages"]) or 1.0
    lines = ["| stage | SQL table (or other work) | wall s | share | CPU s | peak RSS so far |",
             "|---|---|---|---|---|---|"]
    for s in res["stages"]:
        table = f"`{s['table']}`" if s["table"] and not s["table"].startswith("(") else (s["table"] or "")
        lines.append(f"| {s['stage']} | {table} | {s['wall']:.1f} | {100 * s['wall'] / total:.0f}% "
                     f"| {s['cpu']:.1f} | {s['peak_rss'] / (1 << 30):.2f} GB |")
    for stage, ops in res.get("operators", {}).items():
        lines += ["", f"Heaviest DuckDB operators of `{stage}` (seconds summed over threads):", "",
                  "| operator | s | rows | detail |", "|---|---|---|---|"]
        for op in ops:
            detail = op["detail"].replace("|", "\\|").replace("`", "'")
            lines.append(f"| {op['operator']} | {op['seconds']:.1f} | {op['rows']:,} | `{detail}` |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--json", action="store_true", help="print one JSON line instead of Markdown")
    parser.add_argument("--operators", action="append", default=[], help="profile this SQL stage's operators")
    parser.add_argument("--threads", type=int, default=None, help="DuckDB threads (default: RunConfig.threads)")
    parser.add_argument("--warm", action="store_true", help="score FILE once untimed first (first-use costs paid)")
    args = parser.parse_args(argv)
    if args.warm:
        profile_stages(args.file, (), args.threads)
        from pipeline.analysis.analysed import _MEMO

        _MEMO.clear()
    res = profile_stages(args.file, tuple(args.operators), args.threads)
    print(json.dumps(res) if args.json else markdown(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
