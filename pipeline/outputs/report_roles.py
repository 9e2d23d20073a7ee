"""Report section: the tool roles inference guessed, per suite, so a user sees them."""

from __future__ import annotations

import duckdb

from pipeline.outputs.report_svg import Block, Section

TOP_INFERRED = 40


def inferred_roles(con: duckdb.DuckDBPyConnection, with_metrics: bool) -> Section:
    """Per suite, the tools whose roles were inferred (not from the catalog), with those roles."""
    sec = Section("Inferred tool roles per suite")
    columns = {r[0] for r in con.execute("select column_name from (describe actions)").fetchall()}
    if "role_source" not in columns:  # a run scored before roles were recorded
        sec.notes.append("this run's actions table does not record role sources")
        return sec
    got = con.execute("""
        select v.suite, a.tool_name, a.role_source, coalesce(a.source_label, '') as source_label,
            coalesce(a.sink_kind, '') as sink_kind, array_to_string(a.control_args, ', ') as control_args,
            count(*) as n, count(*) over () as n_rows
        from actions a join verdicts v using (trajectory_id)
        where a.role_source <> 'catalog'
        group by all
        order by v.suite, n desc, a.tool_name, a.role_source
        limit $top
    """, {"top": TOP_INFERRED}).fetchall()
    if not got:
        sec.notes.append("every tool of the scored trajectories is in the policy catalog")
        return sec
    sec.notes.append(
        "Tools absent from the catalog: roles inferred from their names and argument names "
        "(policy [inference]); role source `none` means nothing placed the tool (a neutral action). "
        "Override any of them with a [tools.NAME] entry in a --policy file "
        "(`litmus-gate policy suggest` drafts one). "
        f"Showing {len(got)} of {got[0][7]} (suite, tool, roles) rows.")
    sec.tables.append(Block(("suite", "tool", "role source", "source label", "sink kind", "control arguments",
                             "actions"), [tuple(str(c) for c in r[:7]) for r in got]))
    return sec
