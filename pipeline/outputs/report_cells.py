"""The run report's cells and queries: how a count, a decimal, a share or an interval is
written in the report's tables, and the parameterized queries its sections run.
"""

from __future__ import annotations

from typing import Any

import duckdb

CHART_ROWS = 30  # the most rows a chart shows (its table lists them all)


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
