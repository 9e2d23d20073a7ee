"""Reachability benchmark: ``materialize(con, "flows")`` on synthetic graphs generated in DuckDB.

Builds, with set-based SQL (no Python loop over rows), ``--trajectories`` trajectories of
8-12 logical actions and about ``--edges`` dependency edges each: mostly forward edges
between nearby actions (DAG-ish) with ~5% backward edges and ~1% self-loops (cycles);
~20% of actions are sources (conf > 0 or integ > 0), ~20% are sinks (egress, send_mail,
payment, execute with the default policy's accepts). They become the relations
``action_roles`` and ``edges`` with exactly the columns and types of ``tests/test_flows.py``
(what ``sql/flows.sql`` reads): generated in a scratch DuckDB connection, exported to Arrow
and registered on a connection from ``pipeline.run.connect`` (so, as in the test, the
inputs do not count against its memory_limit); then the statement of
``pipeline.sql.materialize(con, "flows")`` is timed (run directly so that an
out-of-memory error is reported as a result).

The whole measurement runs in a child process; its peak RSS is reported for the whole
child (generation included) and for each query alone (the kernel's VmHWM, reset through
``/proc/self/clear_refs`` before each query).

``--profile`` also times each CTE of ``sql/flows.sql`` cut off at that CTE
(``select count(*) from <cte>``), so the cost of each step is the difference to the
previous one, and ``--variant FILE.sql`` times a modified copy of the query (a file in
``bench/`` for instance) on the same graphs for comparison.

``--batches N`` also runs ``sql/flows.sql`` on N disjoint sets of trajectories one after the
other (what the pipeline's shards do) and ``--operators`` lists DuckDB's heaviest operators.

Usage: python bench/reachability.py [--trajectories 1000000] [--edges 10] [--memory-limit 16GB] [--profile]
       [--operators] [--batches N] [--variant FILE ...] [--workdir DIR] [--no-doc]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, gib, machine, measure, update_section  # noqa: E402

# u(salt): a deterministic uniform in [0, 1) per row, from hash() of the row's keys
GEN_SQL = """
create or replace temp table bench_traj as
select i, 't' || lpad(i::varchar, 8, '0') as trajectory_id, 8 + (hash(i, 'n') % 5)::bigint as n
from range($trajectories) r(i);

create or replace temp table bench_nodes as
select i, trajectory_id, n, a as action_idx,
    (hash(i, a, 'src') % 1000) / 1000.0 as u_src,
    (hash(i, a, 'sink') % 1000) / 1000.0 as u_sink,
    (hash(i, a, 'kind') % 1000) / 1000.0 as u_kind,
    (hash(i, a, 'lab') % 1000) / 1000.0 as u_lab
from (select i, trajectory_id, n, unnest(range(n)) as a from bench_traj);

create or replace temp table action_roles as
with labelled as (
    select *,
        -- ~20% sources: internal, secret, untrusted, or secret+untrusted
        case when u_src < 0.20 then (case when u_lab < 0.35 then 1 when u_lab < 0.70 then 2 when u_lab < 0.85 then 0 else 2 end)
             else 0 end::bigint as conf,
        case when u_src < 0.20 and u_lab >= 0.70 then 1 else 0 end::bigint as integ,
        case when u_sink < 0.20 then
            case when u_kind < 0.45 then 'egress' when u_kind < 0.75 then 'send_mail'
                 when u_kind < 0.85 then 'payment' else 'execute' end end as sink_kind
    from bench_nodes
)
select trajectory_id, action_idx, conf, integ, sink_kind,
    (sink_kind is not null and (hash(i, action_idx, 'blk') % 10) = 0) as blocked,
    case when sink_kind is null then null when sink_kind = 'execute' then 2 else 1 end::bigint as accepts_conf,
    case when sink_kind is null then null when sink_kind = 'execute' then 0 else 1 end::bigint as accepts_integ,
    case when sink_kind is null then null when sink_kind = 'execute' then 2 else 1 end::bigint as control_conf,
    case when sink_kind is null then null when sink_kind = 'egress' then 1 else 0 end::bigint as control_integ
from labelled;

create or replace temp table edges as
with raw as (
    select i, trajectory_id, n, e,
        (hash(i, e, 'src') % (n - 1))::bigint as s,
        1 + (hash(i, e, 'off') % 4)::bigint as off,
        (hash(i, e, 'dir') % 100)::bigint as dir,
        (hash(i, e, 'kind') % 100)::bigint as k,
        (hash(i, e, 'ctl') % 100)::bigint as c,
        (hash(i, e, 'span') % 100)::bigint as sp
    from (select i, trajectory_id, n, unnest(range($raw_edges)) as e from bench_traj)
),
shaped as (
    select trajectory_id, k, c, sp,
        case when dir < 5 then least(s + off, n - 1) when dir < 6 then s else s end as src,
        case when dir < 5 then s when dir < 6 then s else least(s + off, n - 1) end as dst,
        case when k < 60 then 'data' when k < 85 then 'resource' else 'explicit' end as kind
    from raw
),
dedup as (
    select trajectory_id, src, dst, kind, min(c) as c, min(sp) as sp
    from shaped group by all
)
select d.trajectory_id, d.src as src_action_idx, d.dst as dst_action_idx, d.kind,
    'fragment-' || d.src || '-' || d.dst as evidence,
    r.conf,
    greatest(r.integ, case when d.sp < 10 then 1 else 0 end)::bigint as integ,
    (d.kind <> 'data' or d.c < 40) as control,
    case when d.kind <> 'data' or d.c < 40 then greatest(r.integ, case when d.sp < 5 then 1 else 0 end) end::bigint
        as control_integ,
    false as control_injected
from dedup d
join action_roles r on r.trajectory_id = d.trajectory_id and r.action_idx = d.src;

drop table bench_nodes;
drop table bench_traj;
"""

ROLE_COLS = ["trajectory_id", "action_idx", "conf", "integ", "sink_kind", "blocked",
             "accepts_conf", "accepts_integ", "control_conf", "control_integ"]
EDGE_COLS = ["trajectory_id", "src_action_idx", "dst_action_idx", "kind", "evidence",
             "conf", "integ", "control", "control_integ", "control_injected"]
# the column lists and types of tests/test_flows.py (what sql/flows.sql reads)
ROLE_SCHEMA = None  # filled below (pyarrow imported lazily in the child)
EDGE_SCHEMA = None
CTES = ("nodes", "hops", "seeds", "reach", "at_sinks", "best", "final")


def _cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _hwm() -> int:
    """Peak RSS of this process since the last reset (bytes)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def _reset_hwm() -> None:
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def cut_at(sql: str, cte: str) -> str:
    """The flows query ending in ``select count(*) from <cte>`` instead of its final select."""
    body, last = sql.rstrip().rsplit("\n", 1)
    if not last.strip().startswith("select * from final"):
        raise ValueError(f"unexpected last line of flows.sql: {last!r}")
    return body + f"\nselect count(*) from {cte}"


def _timed(con, statement: str) -> dict:
    """Run one statement; wall, CPU, peak RSS of the statement (VmHWM reset before), or its error."""
    _reset_hwm()
    start, cpu = time.perf_counter(), _cpu()
    try:
        con.execute(statement)
        error = None
    except duckdb_errors() as exc:  # an out-of-memory query is a result, not a crash
        error = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    return {"seconds": time.perf_counter() - start, "cpu": _cpu() - cpu, "hwm": _hwm(), "error": error}


def duckdb_errors() -> tuple[type[BaseException], ...]:
    import duckdb

    return (duckdb.Error,)


def _schemas() -> None:
    import pyarrow as pa

    global ROLE_SCHEMA, EDGE_SCHEMA
    ROLE_SCHEMA = pa.schema([("trajectory_id", pa.string()), ("action_idx", pa.int64()), ("conf", pa.int64()),
                             ("integ", pa.int64()), ("sink_kind", pa.string()), ("blocked", pa.bool_()),
                             ("accepts_conf", pa.int64()), ("accepts_integ", pa.int64()),
                             ("control_conf", pa.int64()), ("control_integ", pa.int64())])
    EDGE_SCHEMA = pa.schema([("trajectory_id", pa.string()), ("src_action_idx", pa.int64()),
                             ("dst_action_idx", pa.int64()), ("kind", pa.string()), ("evidence", pa.string()),
                             ("conf", pa.int64()), ("integ", pa.int64()), ("control", pa.bool_()),
                             ("control_integ", pa.int64()), ("control_injected", pa.bool_())])


def _row_diff(con, key: str, other: str) -> int:
    """Rows of ``flows`` and ``other`` missing from the other one (symmetric difference on ``key``)."""
    return con.execute(
        f"select (select count(*) from (select {key} from flows except all select {key} from {other})) "
        f"+ (select count(*) from (select {key} from {other} except all select {key} from flows))").fetchall()[0][0]


def child(trajectories: int, edges: int, profile: bool, variants: list[str], memory_limit: str | None,
          batches: int = 1, operators: bool = False) -> None:
    """Measured body (runs in a child process); prints one JSON line."""
    from pipeline.config import RunConfig
    from pipeline.run import connect
    from pipeline.sql import load_sql

    import duckdb

    _schemas()

    # generated in a scratch connection, then registered as Arrow relations (like tests/test_flows.py):
    # the inputs do not count against the measured connection's memory_limit
    gen = duckdb.connect(config={"threads": 2, "preserve_insertion_order": False})
    gen.execute("set enable_progress_bar = false")
    start = time.perf_counter()
    for statement in GEN_SQL.split(";\n"):
        if statement.strip():
            gen.execute(statement.replace("$trajectories", str(trajectories))
                        .replace("$raw_edges", str(round(edges * 1.13))))
    roles = gen.execute("select * from action_roles").to_arrow_table().cast(ROLE_SCHEMA)
    edge_table = gen.execute("select * from edges").to_arrow_table().cast(EDGE_SCHEMA)
    gen.close()
    del gen
    gen_s = time.perf_counter() - start
    assert roles.column_names == ROLE_COLS and edge_table.column_names == EDGE_COLS

    con = connect(RunConfig(inputs=(), out=Path("x")))
    if memory_limit:
        con.execute(f"set memory_limit = '{memory_limit}'")
    limit = con.execute("select current_setting('memory_limit'), current_setting('threads')").fetchall()[0]
    con.register("action_roles", roles)
    con.register("edges", edge_table)
    # sql/flows.sql leaves out the trajectories sql/graph_rejects.sql bounds (measured here:
    # none) and reads sql/sink_reachers.sql (the plain reachability it once computed itself:
    # made here, not timed)
    con.execute("create or replace temp table graph_rejects as select ''::varchar as trajectory_id where false")
    con.execute("create or replace temp table edge_rejects as select ''::varchar as trajectory_id where false")
    con.execute(f"create or replace temp table sink_reachers as {load_sql('sink_reachers')}")
    stats = con.execute("""
        select (select count(*) from action_roles), (select count(*) from edges),
            (select count(*) filter (where conf > 0 or integ > 0) from action_roles),
            (select count(*) filter (where sink_kind is not null) from action_roles),
            (select count(*) filter (where src_action_idx >= dst_action_idx) from edges)""").fetchall()[0]
    rss_before = _hwm()
    out: dict = {"gen_s": gen_s, "rss_after_gen": rss_before, "arrow_bytes": roles.nbytes + edge_table.nbytes, "memory_limit": limit[0], "threads": limit[1],
                 "actions": stats[0], "edges": stats[1], "sources": stats[2], "sinks": stats[3],
                 "backward_edges": stats[4]}
    # what materialize(con, "flows") runs (pipeline/sql.py), timed here so an OOM is reported, not fatal
    # the policy default as a constant, and no batch bounds (one batch: pipeline/stages/flow_batches.py)
    flows_sql = load_sql("flows").replace("$injected_control", "true").replace("$first", "NULL").replace("$until", "NULL")
    key = "trajectory_id, source_action_idx, sink_action_idx, length, violation, label, via_control, path"
    if operators:
        prof = Path(f"flows-profile-{os.getpid()}.json").resolve()
        con.execute("pragma enable_profiling = 'json'")
        con.execute(f"pragma profiling_output = '{prof}'")
    res = _timed(con, f"create or replace temp table flows as {flows_sql}")
    if operators:
        con.execute("pragma disable_profiling")
        if prof.exists():
            from stages import _top_operators

            out["operators"] = _top_operators(prof, 10)
            prof.unlink()
    if res["error"] is None:
        res["rows"], res["violations"] = con.execute(
            "select count(*), count(*) filter (where violation) from flows").fetchall()[0]
    out["flows"] = res
    peak = max(rss_before, res["hwm"])
    if profile:
        cuts = {}
        for cte in CTES:
            cut = _timed(con, f"create or replace temp table bench_cut as {cut_at(flows_sql, cte)}")
            if cut["error"] is None:
                cut["rows"] = con.execute("select * from bench_cut").fetchall()[0][0]
            cuts[cte] = cut
            peak = max(peak, cut["hwm"])
            if cut["error"]:
                break
        out["cuts"] = cuts
    out["variants"] = {}
    for path in variants:
        v = _timed(con, f"create or replace temp table flows_variant as {Path(path).read_text(encoding='utf-8')}")
        peak = max(peak, v["hwm"])
        if v["error"] is None:
            v["rows"] = con.execute("select count(*) from flows_variant").fetchall()[0][0]
            if res["error"] is None:
                v["diff"] = _row_diff(con, key, "flows_variant")
            con.execute("drop table flows_variant")
        out["variants"][path] = v
    if batches > 1:
        # sql/flows.sql on `batches` disjoint sets of trajectories, one after the other (what shards do);
        # the split is prepared before the clock starts
        parts = []
        for b in range(batches):
            where = f"where hash(trajectory_id) % {batches} = {b}"
            parts.append((con.execute(f"select * from action_roles {where}").to_arrow_table(),
                          con.execute(f"select * from edges {where}").to_arrow_table()))
        total = {"seconds": 0.0, "cpu": 0.0, "hwm": 0, "error": None, "batches": batches}
        for b, (r_part, e_part) in enumerate(parts):
            con.unregister("action_roles")
            con.unregister("edges")
            con.register("action_roles", r_part)
            con.register("edges", e_part)
            verb = "create or replace temp table flows_batched as" if b == 0 else "insert into flows_batched"
            one = _timed(con, f"{verb} {flows_sql}")
            total["seconds"] += one["seconds"]
            total["cpu"] += one["cpu"]
            total["hwm"] = max(total["hwm"], one["hwm"])
            if one["error"]:
                total["error"] = f"batch {b}: {one['error']}"
                break
        del parts
        peak = max(peak, total["hwm"])
        if total["error"] is None:
            total["rows"] = con.execute("select count(*) from flows_batched").fetchall()[0][0]
            if res["error"] is None:
                total["diff"] = _row_diff(con, key, "flows_batched")
        out["batched"] = total
    out["peak_rss"] = max(peak, _hwm())
    print(json.dumps(out))


def run(trajectories: int, edges: int, profile: bool = False, variants: tuple[str, ...] = (),
        workdir: Path = Path("/tmp/litmus-bench"), memory_limit: str | None = None, batches: int = 1,
        operators: bool = False) -> dict:
    spec = {"trajectories": trajectories, "edges": edges, "profile": profile, "variants": list(variants),
            "memory_limit": memory_limit, "batches": batches, "operators": operators}
    cmd = [sys.executable, __file__, "--_child", json.dumps(spec)]
    workdir.mkdir(parents=True, exist_ok=True)  # the child's cwd: DuckDB spills to ./.tmp there
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    crashed = None
    for _attempt in range(2):
        m = measure(cmd, env=env, cwd=workdir)
        shutil.rmtree(workdir / ".tmp", ignore_errors=True)  # DuckDB's spill folder, if it spilled
        # a child killed by a signal (DuckDB has crashed with SIGSEGV near its memory limit,
        # once in many runs, 2026-12-03) is run once more, and the crash is reported with it
        if m.returncode >= 0 or crashed is not None:
            break
        crashed = m.returncode
        print(f"reachability child killed by signal {-m.returncode}; running it once more", file=sys.stderr)
    if m.returncode:
        raise SystemExit(f"reachability child failed (exit {m.returncode}):\n{m.stderr[-4000:]}")
    res = json.loads(m.stdout.strip().splitlines()[-1])
    res["crashed_first"] = crashed
    res.update(trajectories=trajectories, edges_per=edges, child_wall=m.wall, child_cpu=m.cpu,
               child_peak_rss=max(m.peak_rss, res["peak_rss"]), memory_limit_override=memory_limit)
    return res


def _cell(v: dict, key: str, fmt: str = "{:.1f}") -> str:
    return "-" if v.get(key) is None else fmt.format(v[key])


def _row(name: str, v: dict, diff: bool) -> str:
    if v["error"]:
        return (f"| {name} | failed after {v['seconds']:.1f} | {v['cpu']:.1f} | {v['error']} "
                f"| {gib(v['hwm'])} |")
    rows = f"{v['rows']:,}"
    if "violations" in v:
        rows += f" ({v['violations']:,} violations)"
    if diff:
        rows += f"; {v['diff']:,} rows differ from `sql/flows.sql`" if "diff" in v else "; not compared"
    return f"| {name} | {v['seconds']:.1f} | {v['cpu']:.1f} | {rows} | {gib(v['hwm'])} |"


def _rel(path: str) -> str:
    p = Path(path)
    return str(p.relative_to(REPO)) if p.is_absolute() and p.is_relative_to(REPO) else path


def _describe(path: str) -> str:
    """The variant's header comment (after its first colon), one line."""
    try:
        head = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError:
        return ""
    block = []
    for line in head:
        if not line.startswith("--") or line.startswith("-- flows:"):
            break
        block.append(line[2:].strip())
    text = " ".join(block)
    return text.split(":", 1)[1].strip() if text.startswith("bench variant") and ":" in text else text


def section_title(memory_limit: str | None) -> str:
    return "Reachability" if not memory_limit else f"Reachability, memory_limit={memory_limit}"


def markdown(res: dict, command: str) -> str:
    n = res["trajectories"]
    flows = res["flows"]
    lines = [
        f"Graphs generated in DuckDB (`bench/reachability.py`): {n:,} trajectories, "
        f"{res['actions']:,} actions ({res['sources']:,} sources with conf/integ > 0, {res['sinks']:,} sinks), "
        f"{res['edges']:,} edges ({res['edges'] / n:.1f} per trajectory, {res['backward_edges']:,} backward or "
        f"self-loops, so graphs have cycles), registered as Arrow relations. Generation took {res['gen_s']:.1f} s "
        f"(not counted). Connection: "
        f"`pipeline.run.connect(RunConfig(...))`, threads={res['threads']}, memory_limit={res['memory_limit']}"
        f"{' (overridden with --memory-limit)' if res.get('memory_limit_override') else ' (the pipeline default)'}.",
        "",
        "| query | wall s | CPU s | rows | process peak RSS during the query (inputs included) |",
        "|---|---|---|---|---|",
        _row('`materialize(con, "flows")` (`sql/flows.sql` as is)', flows, False),
    ]
    for path, v in res.get("variants", {}).items():
        lines.append(_row(f"variant `{_rel(path)}`", v, True))
    if "batched" in res:
        lines.append(_row(f"`sql/flows.sql` on {res['batched']['batches']} disjoint batches of trajectories, "
                          "one after the other (as shards do)", res["batched"], True))
    if flows["error"]:
        verdict = f"**failed** ({flows['error']})"
    else:
        verdict = ("under" if flows["seconds"] < 30 else "**over**") + f" ({flows['seconds']:.1f} s)"
    described = [(path, _describe(path)) for path in res.get("variants", {})]
    if described:
        lines += [""] + [f"- `{_rel(path)}`: {text}" for path, text in described if text]
    if res.get("crashed_first"):
        lines += ["", f"The first child of this measurement was killed by signal {-res['crashed_first']} "
                      "(a crash, not a result); the figures are from its second run."]
    lines += ["", f"Target 30 s: {verdict}. After generating the graphs, before the queries: RSS "
              f"{gib(res['rss_after_gen'])}, of which the two Arrow input tables take {gib(res['arrow_bytes'])} "
              f"(outside DuckDB's memory_limit); each query's peak is measured from there (VmHWM reset); "
              f"peak RSS of the whole child: {gib(res['child_peak_rss'])}."]
    if "cuts" in res:
        lines += ["", "Per-CTE profile of `sql/flows.sql`: the query cut off at each CTE "
                  "(`select count(*) from <cte>`); a step's cost is the difference to the cut before.", "",
                  "| cut at | wall s | CPU s | rows | step cost (CPU s) |", "|---|---|---|---|---|"]
        prev = 0.0
        for cte, c in res["cuts"].items():
            if c["error"]:
                lines.append(f"| `{cte}` | failed after {c['seconds']:.1f} | {c['cpu']:.1f} | {c['error']} | |")
                continue
            lines.append(f"| `{cte}` | {c['seconds']:.1f} | {c['cpu']:.1f} | {c['rows']:,} "
                         f"| {max(c['cpu'] - prev, 0):.1f} |")
            prev = max(prev, c["cpu"])
    if res.get("operators"):
        lines += ["", "Heaviest DuckDB operators of `sql/flows.sql` (JSON profiling of the timed run; seconds "
                  "summed over threads; REC_CTE's own time covers the work of its iterations, the rows below it "
                  "are parts of that):", "", "| operator | s | rows | detail |", "|---|---|---|---|"]
        for op in res["operators"]:
            detail = op["detail"].replace("|", "\\|").replace("`", "'")
            lines.append(f"| {op['operator']} | {op['seconds']:.1f} | {op['rows']:,} | `{detail}` |")
    lines += ["", machine(), f"Command: `{command}`"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--_child":
        child(**json.loads(argv[1]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trajectories", type=int, default=1_000_000)
    parser.add_argument("--edges", type=int, default=10)
    parser.add_argument("--profile", action="store_true", help="time each CTE of sql/flows.sql")
    parser.add_argument("--variant", action="append", default=[], help="also time this SQL file (a flows variant)")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/litmus-bench"), help="cwd of the child")
    parser.add_argument("--memory-limit", help="override the pipeline connection's memory_limit (e.g. 16GB)")
    parser.add_argument("--batches", type=int, default=1,
                        help="also run sql/flows.sql on this many disjoint sets of trajectories, one after the other")
    parser.add_argument("--operators", action="store_true", help="DuckDB's heaviest operators of sql/flows.sql")
    parser.add_argument("--no-doc", action="store_true", help="do not write docs/performance.md")
    args = parser.parse_args(argv)
    res = run(args.trajectories, args.edges, args.profile, tuple(str(Path(v).resolve()) for v in args.variant),
              args.workdir, args.memory_limit, args.batches, args.operators)
    text = markdown(res, "python bench/reachability.py " + " ".join(argv))
    print(text)
    if not args.no_doc:
        update_section(section_title(args.memory_limit), text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
