"""The run report's totals: records and verdicts, precision and recall per scorer, route
mix and verdicts per suite, and attrition by reason (sections of
:func:`pipeline.outputs.report.render_report`, read from ``verdicts``, ``attrition`` and
``metrics``).
"""

from __future__ import annotations

import duckdb

from pipeline.outputs.report_cells import CHART_ROWS, ci, dec, fetch, n, pct
from pipeline.outputs.report_svg import PALETTE, Block, Section, interval_chart, stacked_bars

SCORERS = ("flow_aware", "execution_gated", "stepwise_min", "all_safe")
VERDICT_COLORS = ("#009E73", "#E69F00", "#D55E00")  # safe, attempted, unsafe
ROUTE_COLORS = ("#56B4E9", "#0072B2")  # aggregate, flow


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
