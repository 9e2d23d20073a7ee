"""The run report: ``report.html`` (self-contained, no JavaScript) and ``report.md``.

Both documents are rendered from the same list of :class:`Section` values, so they state
the same facts; the HTML adds small inline SVG charts. Data is read with parameterized
SQL from the relations ``verdicts``, ``attrition``, ``steps``, ``actions``, ``flows`` and,
when gold labels were given, ``metrics`` (columns as in ``schemas/*.py``). Every
data-derived string is escaped by the renderers in :mod:`pipeline.outputs.report_svg`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import duckdb

from pipeline.outputs.report_explain import disagreeing, explain_linked, hallucinations
from pipeline.outputs.report_roles import inferred_roles
from pipeline.outputs.report_svg import (PALETTE, Block, Section, bars, clean, columns, interval_chart, stacked_bars,
                                 to_html, to_markdown)

SCORERS = ("flow_aware", "execution_gated", "stepwise_min", "all_safe")
BASELINES = ("execution_gated", "stepwise_min", "all_safe")
VERDICT_COLORS = ("#009E73", "#E69F00", "#D55E00")  # safe, attempted, unsafe
ROUTE_COLORS = ("#56B4E9", "#0072B2")  # aggregate, flow
UNKNOWN_TOOL = r"^tool (.*) \(step [0-9]+\) is not in the policy catalog$"
FLOW_CAP, TOP_TOOLS, TOP_WORST, CHART_ROWS, REASON_CHARS = 10, 15, 20, 30, 600


def n(value: Any) -> str:
    """An integer count, or n/a."""
    return "n/a" if value is None else str(int(value))


def dec(value: Any, places: int = 3) -> str:
    """A fixed-decimal number, or n/a (also for NaN)."""
    return "n/a" if value is None or value != value else f"{float(value):.{places}f}"


def pct(part: Any, whole: Any) -> str:
    """part / whole as a percentage with one decimal, or n/a when whole is 0 or null."""
    return "n/a" if not whole or part is None else f"{100.0 * part / whole:.1f}%"


def ci(low: Any, high: Any) -> str:
    """A 95% interval as [low, high], or n/a when either bound is null."""
    return "n/a" if low is None or high is None else f"[{dec(low)}, {dec(high)}]"


def fetch(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
    """All rows of a parameterized query."""
    return (con.execute(sql, params) if params else con.execute(sql)).fetchall()


def has_relation(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    """Whether a table or view called ``name`` is in the catalog (temp or not)."""
    sql = ("select count(*) from (select table_name as n from duckdb_tables() union all "
           "select view_name from duckdb_views() where not internal) where n = $name")
    return bool(fetch(con, sql, {"name": name})[0][0])


def summary(con: duckdb.DuckDBPyConnection, with_metrics: bool) -> Section:
    """Totals: records = verdicts + attrition rows."""
    per_suite = fetch(con, """  -- one scan of each table, not one per figure: per suite, summed below
        select true, suite, count(*), count(*) filter (where verdict = 'unsafe'), count(*) filter (where verdict =
            'attempted'), count(*) filter (where verdict = 'safe'), count(*) filter (where hallucinated_outcome)
        from verdicts group by suite union all select false, suite, count(*), 0, 0, 0, 0 from attrition group by suite
    """)
    scored, unsafe, attempted, safe, hallucinated = (sum(r[i] for r in per_suite if r[0]) for i in (2, 3, 4, 5, 6))
    rejected = sum(r[2] for r in per_suite if not r[0])
    suites = len({r[1] for r in per_suite if r[1] is not None})
    records = scored + rejected
    rows = [("records", n(records)), ("scored", n(scored)), ("rejected", n(rejected)),
            ("attrition rate", pct(rejected, records)), ("verdict unsafe", n(unsafe)),
            ("verdict attempted", n(attempted)), ("verdict safe", n(safe)), ("suites", n(suites)),
            ("final text contradicts execution", n(hallucinated)),
            ("gold labels", "given" if with_metrics else "not given")]
    return Section("Run summary", ["Records = scored (verdicts) + rejected (attrition); "
                                   "attrition rate = rejected / records."], [], [Block(("total", "value"), rows)])


def precision_recall(con: duckdb.DuckDBPyConnection, with_metrics: bool) -> Section:
    """Precision/recall per scorer with Wilson 95% intervals (metrics suite '*', slice '*')."""
    sec = Section("Precision and recall per scorer")
    if not with_metrics:
        sec.notes.append("no gold labels given")
        return sec
    got = fetch(con, """
        select scorer, tp, fp, fn, tn, n_unscored, precision, precision_low, precision_high,
            recall, recall_low, recall_high, f1, f1_low, f1_high
        from metrics where suite = '*' and slice = '*'
        order by coalesce(list_position($order, scorer), 99), scorer
    """, {"order": list(SCORERS)})
    if not got:
        sec.notes.append("metrics has no total rows (suite '*', slice '*'): no gold label matched a record")
        return sec
    name = lambda s: f"{s} (product)" if s == "flow_aware" else s  # noqa: E731
    sec.notes.append("Totals over all suites and slices; intervals are Wilson 95% (F1: through the share "
                     "tp / (tp + fp + fn), F1 = 2J / (1 + J)). n_unscored counts gold trajectories not scored: "
                     "rejected, or absent from the run.")
    sec.charts.append(interval_chart("precision and recall per scorer, 95% intervals", [
        (name(r[0]), [("precision", r[6], r[7], r[8]), ("recall", r[9], r[10], r[11])]) for r in got]))
    sec.tables.append(Block(
        ("scorer", "tp", "fp", "fn", "tn", "n_unscored", "precision", "precision 95% CI",
         "recall", "recall 95% CI", "f1", "f1 95% CI"),
        [(name(r[0]), *(n(v) for v in r[1:6]), dec(r[6]), ci(r[7], r[8]), dec(r[9]), ci(r[10], r[11]),
          dec(r[12]), ci(r[13], r[14])) for r in got]))
    return sec


def suites(con: duckdb.DuckDBPyConnection, with_metrics: bool) -> Section:
    """Route mix and verdict counts per suite."""
    got = fetch(con, """
        select suite, count(*), count(*) filter (where route = 'aggregate'), count(*) filter (where route = 'flow'),
            count(*) filter (where verdict = 'safe'), count(*) filter (where verdict = 'attempted'),
            count(*) filter (where verdict = 'unsafe')
        from verdicts group by suite order by suite
    """)
    sec = Section("Route mix and verdicts per suite")
    if not got:
        sec.notes.append("no scored trajectories")
        return sec
    shown = got[:CHART_ROWS]
    sec.charts.append(stacked_bars("route per suite", [(r[0], r[2:4]) for r in shown], ("aggregate", "flow"), ROUTE_COLORS))
    sec.charts.append(stacked_bars("verdicts per suite", [(r[0], r[4:7]) for r in shown],
                                   ("safe", "attempted", "unsafe"), VERDICT_COLORS))
    total = ("(all suites)", *(sum(r[i] for r in got) for i in range(1, 7)))
    sec.tables.append(Block(("suite", "scored", "aggregate", "flow", "flow share", "safe", "attempted", "unsafe"),
                            [(r[0], n(r[1]), n(r[2]), n(r[3]), pct(r[3], r[1]), n(r[4]), n(r[5]), n(r[6]))
                             for r in [*got, total]]))
    return sec


def attrition(con: duckdb.DuckDBPyConnection, with_metrics: bool) -> Section:
    """Rejected records by reason, per suite and overall."""
    got = fetch(con, """
        with records as (select suite, count(*) as n from (select suite from verdicts union all
                                                           select suite from attrition) group by suite)
        select a.suite, a.reason, count(*), any_value(r.n) from attrition a join records r using (suite)
        group by a.suite, a.reason order by a.suite, count(*) desc, a.reason
    """)
    sec = Section("Attrition by reason per suite")
    if not got:
        sec.notes.append("no record was rejected")
        return sec
    totals: dict[str, int] = {}
    per_suite: dict[str, dict[str, int]] = {}
    for suite, reason, count, _ in got:
        totals[reason] = totals.get(reason, 0) + count
        per_suite.setdefault(suite, {})[reason] = count
    reasons = sorted(totals, key=lambda k: (-totals[k], k))
    sec.charts.append(stacked_bars("rejected records per suite, by reason",
                                   [(s, [c.get(k, 0) for k in reasons]) for s, c in list(per_suite.items())[:CHART_ROWS]],
                                   reasons, PALETTE))
    records = fetch(con, "select (select count(*) from verdicts) + (select count(*) from attrition)")[0][0]
    sec.tables.append(Block(("reason", "rejected", "share of all records"),
                            [(k, n(totals[k]), pct(totals[k], records)) for k in reasons], "All suites"))
    sec.tables.append(Block(("suite", "reason", "rejected", "share of suite records"),
                            [(s, k, n(c), pct(c, m)) for s, k, c, m in got], "Per suite"))
    return sec


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


SECTION_BUILDERS: tuple[Callable[[duckdb.DuckDBPyConnection, bool], Section], ...] = (
    summary, precision_recall, suites, attrition, flow_lengths, retries, unknown_tools, inferred_roles, worst,
    disagreements, hallucinations)
SECTION_TITLES = ("Run summary", "Precision and recall per scorer", "Route mix and verdicts per suite",
                  "Attrition by reason per suite", "Flow lengths", "Retries collapsed by error kind",
                  "Top unknown tools", "Inferred tool roles per suite", "Worst trajectories",
                  "Baseline disagreements", "Execution hallucinations")


def render_report(con: duckdb.DuckDBPyConnection, run_name: str, explain_dir: Path | None = None,
                  explain_pages: int = 0, label_notes: Sequence[str] = ()) -> tuple[str, str]:
    """(report.html, report.md) from the tables visible in ``con``.

    ``con`` must expose relations named verdicts, attrition, steps, actions and flows,
    and optionally metrics (absent when no gold labels were given) and edges. With
    ``explain_dir``, the pages of the first ``explain_pages`` listed trajectories are
    written there (see :mod:`pipeline.outputs.report_explain`) and linked from report.html.
    ``label_notes`` (which model labelled the steps) are shown beside the metrics.
    """
    with_metrics = has_relation(con, "metrics")
    sections = [build(con, with_metrics) for build in SECTION_BUILDERS]
    sections[SECTION_TITLES.index("Precision and recall per scorer")].notes[:0] = list(label_notes)
    links = explain_linked(con, sections, explain_dir, explain_pages, run_name) if explain_dir else {}
    return to_html(run_name, sections, links), to_markdown(run_name, sections)


