"""The report's trajectory lists and their explain pages.

The report lists trajectories in three places: the worst trajectories, the baseline
disagreements and the execution hallucinations. Each such table is a
:class:`pipeline.outputs.report_svg.Block` with ``id_col`` set; :func:`explain_linked` writes the
page of the first ``limit`` distinct ids listed (in section order) under
``RUN_DIR/explain/`` and returns the links the HTML report puts on those ids.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from pipeline.outputs.report_svg import Block, Section, clean

TOP_LISTED, REASON_CHARS, FINAL_CHARS = 20, 300, 200


def _fetch(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    return con.execute(sql, params).fetchall()


def _yes(value: Any) -> str:
    return "unsafe" if value else "safe"


def disagreeing(con: duckdb.DuckDBPyConnection) -> Block | None:
    """The first trajectories where the product's is_unsafe differs from a baseline's."""
    got = _fetch(con, """
        select trajectory_id, suite, is_unsafe, execution_gated_unsafe, stepwise_min_unsafe, all_safe_unsafe,
            reason, count(*) over ()
        from verdicts
        where is_unsafe <> execution_gated_unsafe or is_unsafe <> stepwise_min_unsafe or is_unsafe <> all_safe_unsafe
        -- both directions alternate (product unsafe first), so neither hides the other
        order by row_number() over (partition by is_unsafe order by trajectory_id), is_unsafe desc
        limit $top
    """, {"top": TOP_LISTED})
    if not got:
        return None
    return Block(("trajectory", "suite", "flow_aware (product)", "execution_gated", "stepwise_min", "all_safe",
                  "reason"),
                 [(r[0], r[1], *(_yes(v) for v in r[2:6]), clean(r[6], REASON_CHARS)) for r in got],
                 f"Trajectories where a baseline disagrees: {len(got)} of {got[0][7]} (both directions in turn)",
                 id_col=0)


def hallucinations(con: duckdb.DuckDBPyConnection, with_metrics: bool) -> Section:
    """Trajectories whose final assistant text contradicts what executed."""
    listed = _fetch(con, """
        select trajectory_id, suite, verdict, route, reason, count(*) over () as total
        from verdicts where hallucinated_outcome order by verdict = 'unsafe' desc, trajectory_id limit $top
    """, {"top": TOP_LISTED})
    sec = Section("Execution hallucinations")
    if not listed:
        sec.notes.append("no final text contradicts what executed")
        return sec
    # their final texts in a second query: as one statement (a semi join on the listed
    # CTE) DuckDB decoded every assistant text of the run when nothing was listed (0.19
    # CPU s on 64 MB); with 20 listed, both forms cost about the same (~50 ms)
    final = dict(_fetch(con, """
        select trajectory_id, arg_max(left(content, $chars + 1), step_idx) as text
        from steps where kind = 'assistant_text' and trajectory_id in (select unnest($ids::varchar[]))
        group by trajectory_id
    """, {"ids": [r[0] for r in listed], "chars": FINAL_CHARS}))
    sec.notes.append(f"Showing {len(listed)} of {listed[0][5]} trajectories whose final text claims a refusal or "
                     "failure while the verdict is unsafe, or claims success while no tool call executed.")
    sec.tables.append(Block(("trajectory", "suite", "verdict", "route", "final text", "reason"),
                            [(r[0], r[1], r[2], r[3], clean(final.get(r[0]) or "", FINAL_CHARS),
                              clean(r[4], REASON_CHARS)) for r in listed], id_col=0))
    return sec


def listed_ids(sections: list[Section]) -> list[str]:
    """Distinct trajectory ids of the tables that list trajectories, in report order."""
    ids: dict[str, None] = {}
    for sec in sections:
        for block in sec.tables:
            if block.id_col is not None:
                ids.update((row[block.id_col], None) for row in block.rows)
    return list(ids)


def explain_linked(con: duckdb.DuckDBPyConnection, sections: list[Section], folder: Path,
                   limit: int, run_name: str) -> dict[str, str]:
    """Write the pages of the first ``limit`` listed ids under ``folder`` (the old pages
    are replaced); returns id -> relative link. Ids past the limit stay unlinked."""
    from pipeline.outputs.explain_html import write_pages

    ids = listed_ids(sections)[: max(limit, 0)]
    if not {"steps", "actions"} <= _relations(con):
        return {}
    return write_pages(con, folder, ids, run_name)


def _relations(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {r[0] for r in con.execute("select table_name from duckdb_tables() union all "
                                      "select view_name from duckdb_views() where not internal").fetchall()}


def recorded_policy(run_dir: Path) -> Path | None:
    """The user policy file a run was scored with (from its manifest), when it still
    exists; None means the bundled policy (also when the manifest names no user file)."""
    import json

    try:
        sources = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))["policy"]["sources"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    users = [Path(s) for s in sources if isinstance(s, str) and not s.startswith("bundled:")]
    return users[-1] if users and users[-1].is_file() else None
