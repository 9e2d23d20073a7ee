"""Load the SQL files of ``sql/`` and run them with named parameters.

Every query is a file ``sql/<table>.sql`` whose final statement is a ``select``; data
enters through registered relations and ``$name`` parameters, never through string
formatting.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import duckdb

_HERE = Path(__file__).resolve().parent


@cache
def sql_dir() -> Path:
    """The folder of the ``.sql`` files (inside the package when installed from a wheel)."""
    installed = _HERE / "sql"  # inside a wheel (see pyproject force-include)
    return installed if installed.is_dir() else _HERE.parent / "sql"


@cache
def load_sql(name: str) -> str:
    """Text of ``sql/<name>.sql``."""
    return (sql_dir() / f"{name}.sql").read_text(encoding="utf-8")


def _used(text: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """The parameters a query text names (DuckDB refuses unused ones)."""
    return {k: v for k, v in params.items() if f"${k}" in text} or None


def materialize(con: duckdb.DuckDBPyConnection, name: str, **params: Any) -> None:
    """Run ``sql/<name>.sql`` and store its result as temp table ``<name>``."""
    text = load_sql(name)
    con.execute(f"create or replace temp table {name} as {text}", _used(text, params))


def query(con: duckdb.DuckDBPyConnection, name: str, **params: Any) -> duckdb.DuckDBPyRelation:
    """Run ``sql/<name>.sql`` and return the relation (for small result sets)."""
    text = load_sql(name)
    return con.sql(text, params=_used(text, params))


_NEVER = r"[^\s\S]"  # an RE2 pattern that matches nothing: gives the table its columns


def materialize_per_rule(con: duckdb.DuckDBPyConnection, name: str, rules: list[dict[str, Any]]) -> None:
    """Run ``sql/<name>.sql`` once per policy rule and store the union as ``<name>``.

    Each rule's fields are the query's ``$`` parameters (``$ord``, ``$pattern``, ...).
    A regex given as a parameter is a constant, compiled once per query; a pattern
    read from a column would be compiled again for every row.
    """
    text = load_sql(name)
    names = [k for k in ("ord", "pattern", "tool_key", "argument", "kind", "luhn", "max_spans") if f"${k}" in text]
    sentinel = {"ord": -1, "pattern": _NEVER, "tool_key": "*", "argument": "*", "kind": "none", "luhn": False,
                "max_spans": 1}
    con.execute(f"create or replace temp table {name} as {text}", {k: sentinel[k] for k in names})
    for rule in rules:
        con.execute(f"insert into {name} {text}", {k: rule[k] for k in names})
