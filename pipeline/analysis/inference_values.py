"""Argument-value evidence for role inference (policy ``[[inference.values]]``).

Which value rules the arguments of each uncatalogued tool match, over the calls of the
shard: an argument one of whose string values (or string elements of a list value) is,
say, an e-mail address counts as a recipient. Patterns are RE2 run inside DuckDB, each
as a query parameter (a constant, compiled once); values longer than ``MAX_VALUE_CHARS``
are no address and are not scanned, so the work per call is bounded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb

from pipeline.sql import materialize, query


@dataclass(frozen=True)
class ValueRule:
    """What an argument whose value matches ``pattern`` (RE2, whole value) is: a
    ``destination`` (control and sends of a sink) and/or a ``resource``; ``sink`` is the
    kind suggested for a name that places nothing by itself."""

    name: str
    pattern: str
    roles: frozenset[str]
    sink: str | None


MAX_VALUE_CHARS = 512

def value_kinds(con: duckdb.DuckDBPyConnection, rules: Sequence[ValueRule]) -> dict[str, dict[str, set[str]]]:
    """tool key -> argument name -> names of the value rules some value of it matched."""
    if not rules:
        return {}
    materialize(con, "inference_arg_values", max_chars=MAX_VALUE_CHARS)
    out: dict[str, dict[str, set[str]]] = {}
    try:
        for rule in rules:
            for key, arg in query(con, "inference_value_matches", pattern=rule.pattern).fetchall():
                out.setdefault(key, {}).setdefault(arg, set()).add(rule.name)
    finally:
        con.execute("drop table if exists inference_arg_values")
    return out
