"""The run report's closer looks: flow lengths, retries collapsed by error kind, the top
unknown tools, the worst trajectories and where the baselines disagree with the product
(sections of :func:`pipeline.outputs.report.render_report`, read from ``verdicts``,
``attrition``, ``flows``, ``actions`` and ``steps``).
"""

from __future__ import annotations

import duckdb

from pipeline.outputs.report_cells import CHART_ROWS, fetch, n, pct
from pipeline.outputs.report_explain import disagreeing
from pipeline.outputs.report_svg import PALETTE, Block, Section, bars, clean, columns, stacked_bars

BASELINES = ("execution_gated", "stepwise_min", "all_safe")
UNKNOWN_TOOL = r"^tool (.*) \(step [0-9]+\) is not in the policy catalog$"
FLOW_CAP, TOP_TOOLS, TOP_WORST, REASON_CHARS = 10, 15, 20, 600


def flow_lengths(con: duckdb.DuckDBPyConnection, with_metrics: bool) -> Section:
    """Histogram of verdicts.max_flow_length, with flows (and violations) by length."""
    per_traj = dict(fetch(con, "select least(max_flow_length, $cap), count(*) from verdicts group by all",
                          {"cap": FLOW_CAP}))
    per_flow = {b: (c, v) for b, c, v in fetch(con, """
        select least(length, $cap), count(*), count(*) filter (where violation) from flows group by all
    """, {"cap": FLOW_CAP})}
    sec = Section("Flow lengths")
    buckets = sorted(set(per_traj) | set(per_flow))
    if not buckets:
        sec.notes.append("no scored trajectories and no flows")
        return sec
    label = lambda b: f">={FLOW_CAP}" if b >= FLOW_CAP else str(b)  # noqa: E731
    sec.notes.append("Length counts the logical actions on a source-to-sink path; a trajectory takes the flow "
                     "route when its longest flow has length >= 2 (0 = no flow).")
    sec.charts.append(columns("trajectories by longest flow length", [(label(b), per_traj.get(b, 0)) for b in buckets],
                              "trajectories by longest flow length (actions)"))
    sec.tables.append(Block(("length", "trajectories (max_flow_length)", "flows", "violating flows"),
                            [(label(b), n(per_traj.get(b, 0)), n(per_flow.get(b, (0, 0))[0]),
                              n(per_flow.get(b, (0, 0))[1])) for b in buckets]))
    return sec


def retries(con: duckdb.DuckDBPyConnection, with_metrics: bool) -> Section:
    """Error types of the failed attempts collapsed into a later retry."""
    total = fetch(con, "select sum(n_retries_collapsed) from verdicts")[0][0]
    got = fetch(con, """
        select coalesce(s.error_type, '(none)') as error_kind, count(*), count(distinct (a.trajectory_id, a.action_idx)),
            count(distinct a.trajectory_id)
        from actions a join steps s on s.trajectory_id = a.trajectory_id and s.kind = 'tool_call'
            and s.step_idx >= a.first_step_idx and s.step_idx < a.call_step_idx
        where a.attempts > 1 and s.exec_status = 'failed'
            and a.trajectory_id in (select trajectory_id from verdicts)  -- scored trajectories only
        group by error_kind order by count(*) desc, error_kind
    """)
    sec = Section("Retries collapsed by error kind",
                  [f"Failed attempts collapsed into retries (sum of n_retries_collapsed): {n(total or 0)}."])
    if not got:
        sec.notes.append("no retries were collapsed")
        return sec
    sec.charts.append(bars("collapsed failed attempts by error type", [(r[0], r[1]) for r in got[:CHART_ROWS]]))
    sec.tables.append(Block(("error type", "failed attempts", "actions", "trajectories"),
                            [(r[0], n(r[1]), n(r[2]), n(r[3])) for r in got]))
    return sec


def unknown_tools(con: duckdb.DuckDBPyConnection, with_metrics: bool) -> Section:
    """The tools most often rejected as not in the policy catalog."""
    got = fetch(con, """
        select coalesce(nullif(regexp_extract(detail, $pattern, 1), ''), '(unparsed detail)') as tool,
            count(*), count(distinct suite), count(*) over (), sum(count(*)) over ()
        from attrition where reason = 'unknown_tool' group by tool order by count(*) desc, tool limit $top
    """, {"pattern": UNKNOWN_TOOL, "top": TOP_TOOLS})
    sec = Section("Top unknown tools")
    if not got:
        sec.notes.append("no record was rejected for an unknown tool")
        return sec
    sec.notes.append(f"{n(got[0][4])} records rejected for an unknown tool; showing {len(got)} of "
                     f"{n(got[0][3])} distinct tools.")
    sec.charts.append(bars("records rejected per unknown tool", [(r[0], r[1]) for r in got], PALETTE[3]))
    sec.tables.append(Block(("tool", "records", "suites"), [(r[0], n(r[1]), n(r[2])) for r in got]))
    return sec


def worst(con: duckdb.DuckDBPyConnection, with_metrics: bool) -> Section:
    """Unsafe and attempted trajectories, flow violations first."""
    got = fetch(con, """
        select v.trajectory_id, v.suite, v.verdict, v.route, v.max_flow_length, v.reason, v.source_file,
            v.source_line, count(*) over ()
        from verdicts v
        where v.verdict in ('unsafe', 'attempted')
        order by (v.route = 'flow' and exists (select 1 from flows f where f.trajectory_id = v.trajectory_id
                                                and f.violation)) desc,
            v.route = 'flow' desc, v.verdict = 'unsafe' desc, v.max_flow_length desc, v.trajectory_id
        limit $top
    """, {"top": TOP_WORST})
    sec = Section("Worst trajectories")
    if not got:
        sec.notes.append("no trajectory was judged unsafe or attempted")
        return sec
    sec.notes.append(f"Showing {len(got)} of {n(got[0][8])} unsafe or attempted trajectories; "
                     "flow violations first. The reason names the witness path.")
    sec.tables.append(Block(("trajectory", "suite", "verdict", "route", "max flow", "reason", "source"),
                            [(r[0], r[1], r[2], r[3], n(r[4]), clean(r[5], REASON_CHARS), f"{r[6]}:{n(r[7])}")
                             for r in got], id_col=0))
    return sec


def disagreements(con: duckdb.DuckDBPyConnection, with_metrics: bool) -> Section:
    """Where the product's is_unsafe differs from each baseline scorer."""
    got = fetch(con, """
        select name, count(*) filter (where is_unsafe and not unsafe),
            count(*) filter (where not is_unsafe and unsafe), count(*)
        from (select is_unsafe, unnest([{'name': 'execution_gated', 'unsafe': execution_gated_unsafe},
                                        {'name': 'stepwise_min', 'unsafe': stepwise_min_unsafe},
                                        {'name': 'all_safe', 'unsafe': all_safe_unsafe}], recursive := true)
              from verdicts)
        group by name order by list_position($order, name)
    """, {"order": list(BASELINES)})
    sec = Section("Baseline disagreements")
    if not got:
        sec.notes.append("no scored trajectories")
        return sec
    sec.notes.append("Counts of scored trajectories where flow_aware (the product) and a baseline disagree.")
    sec.charts.append(stacked_bars("disagreements with the product", [(r[0], r[1:3]) for r in got],
                                   ("product unsafe only", "baseline unsafe only"), ("#D55E00", "#0072B2")))
    sec.tables.append(Block(("baseline", "product unsafe, baseline safe", "product safe, baseline unsafe",
                             "disagreements", "disagreement rate"),
                            [(r[0], n(r[1]), n(r[2]), n(r[1] + r[2]), pct(r[1] + r[2], r[3])) for r in got]))
    sec.tables.extend(b for b in [disagreeing(con)] if b is not None)
    return sec
