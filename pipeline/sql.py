"""Load the SQL files of ``sql/`` and run them with named parameters.

Every query is a file ``sql/<table>.sql`` whose final statement is a ``select``; data
enters through registered relations and ``$name`` parameters, never through string
formatting.
"""

from __future__ import annotations

import re
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


def materialize(con: duckdb.DuckDBPyConnection, name: str, append: bool = False, **params: Any) -> None:
    """Run ``sql/<name>.sql`` and store its result as temp table ``<name>`` (``append``:
    add its rows to that table, made by an earlier call)."""
    text = load_sql(name)
    into = f"insert into {name} " if append else f"create or replace temp table {name} as "
    con.execute(into + text, _used(text, params))


def query(con: duckdb.DuckDBPyConnection, name: str, **params: Any) -> duckdb.DuckDBPyRelation:
    """Run ``sql/<name>.sql`` and return the relation (for small result sets)."""
    text = load_sql(name)
    return con.sql(text, params=_used(text, params))


_NEVER = r"[^\s\S]"  # an RE2 pattern that matches nothing: gives the table its columns
_RULE_PARAMS = ("ord", "pattern", "tool_key", "argument", "kind", "luhn", "max_spans", "unless")
_SENTINEL = {"ord": -1, "pattern": _NEVER, "tool_key": "*", "argument": "*", "kind": "none", "luhn": False,
             "max_spans": 1, "unless": _NEVER}
# rules per statement: one statement per rule cost about 1 ms of DuckDB set-up each (a
# shard runs about 80 of them); a bound keeps one statement's plan small for long rule lists
RULES_PER_STATEMENT = 64


def materialize_per_rule(con: duckdb.DuckDBPyConnection, name: str, rules: list[dict[str, Any]]) -> None:
    """Run ``sql/<name>.sql`` once per policy rule and store the union as ``<name>``.

    Each rule's fields are the query's ``$`` parameters (``$ord``, ``$pattern``, ...).
    A regex given as a parameter is a constant, compiled once per query; a pattern
    read from a column would be compiled again for every row. The rules run as
    ``UNION ALL`` branches of one statement (up to ``RULES_PER_STATEMENT``), branch
    ``i`` with its own parameters ``$pattern_i``, ...: the same rows as one statement
    per rule, for a fraction of the statements' fixed cost. A first branch that matches
    nothing gives the table its columns when there are no rules.
    """
    text = load_sql(name)
    names = [k for k in _RULE_PARAMS if f"${k}" in text]
    param = re.compile(r"\$(" + "|".join(names) + r")\b") if names else None
    batch = [_SENTINEL, *rules]
    for first in range(0, len(batch), RULES_PER_STATEMENT):
        branches, values = [], {}
        for i, rule in enumerate(batch[first:first + RULES_PER_STATEMENT], start=first):
            # our own SQL text gets numbered parameter names; every value stays a parameter
            body = param.sub(lambda m, i=i: f"${m.group(1)}_{i}", text) if param is not None else text
            branches.append(f"({body}\n)")
            values.update({f"{k}_{i}": rule[k] for k in names})
        union = "\nunion all\n".join(branches)
        head = f"create or replace temp table {name} as" if first == 0 else f"insert into {name}"
        con.execute(f"{head} {union}", values or None)
