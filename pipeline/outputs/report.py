"""The run report: ``report.html`` (self-contained, no JavaScript) and ``report.md``.

Both documents are rendered from the same list of :class:`Section` values, so they state
the same facts; the HTML adds small inline SVG charts. Data is read with parameterized
SQL from the relations ``verdicts``, ``attrition``, ``steps``, ``actions``, ``flows`` and,
when gold labels were given, ``metrics`` (columns as in ``schemas/*.py``). Every
data-derived string is escaped by the renderers in :mod:`pipeline.outputs.report_svg`.

The sections are built in :mod:`pipeline.outputs.report_totals` (summary, precision and
recall, suites, attrition), :mod:`pipeline.outputs.report_details` (flow lengths, retries,
unknown tools, worst trajectories, baseline disagreements), :mod:`pipeline.outputs.report_roles`
and :mod:`pipeline.outputs.report_explain`; cells and queries in :mod:`pipeline.outputs.report_cells`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import duckdb

from pipeline.outputs.report_cells import CHART_ROWS, ci, dec, fetch, has_relation, n, pct
from pipeline.outputs.report_details import (BASELINES, FLOW_CAP, REASON_CHARS, TOP_TOOLS, TOP_WORST, UNKNOWN_TOOL,
                                             disagreements, flow_lengths, retries, unknown_tools, worst)
from pipeline.outputs.report_explain import explain_linked, hallucinations
from pipeline.outputs.report_roles import inferred_roles
from pipeline.outputs.report_svg import Section, to_html, to_markdown
from pipeline.outputs.report_totals import (ROUTE_COLORS, SCORERS, VERDICT_COLORS, attrition, precision_recall,
                                            suites, summary)

# what this module offers: with the names it defined before the sections moved out (still importable here)
__all__ = ["BASELINES", "CHART_ROWS", "FLOW_CAP", "REASON_CHARS", "ROUTE_COLORS", "SCORERS", "SECTION_BUILDERS",
           "SECTION_TITLES", "TOP_TOOLS", "TOP_WORST", "UNKNOWN_TOOL", "VERDICT_COLORS", "attrition", "ci", "dec",
           "disagreements", "fetch", "flow_lengths", "has_relation", "n", "pct", "precision_recall", "render_report",
           "retries", "suites", "summary", "unknown_tools", "worst"]


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


