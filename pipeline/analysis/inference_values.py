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

_VALUES = f"""
create or replace temp table inference_arg_values as
with args as (
    select lower(e.tool_name) as tool_key, k.arg, json_extract(e.arguments, '$."' || k.arg || '"') as v
    from events e, unnest(json_keys(e.arguments)) as k(arg)
    anti join policy_tools t on t.tool_key = lower(e.tool_name)
    where e.kind = 'tool_call' and e.args_ok and e.tool_name is not null and json_type(e.arguments) = 'OBJECT'
        and k.arg not like '%"%' and k.arg not like '%\\%'
),
strings as (
    -- a string value, or each string of a list value (recipients, attachments)
    select tool_key, arg, unnest(case json_type(v) when 'VARCHAR' then [v ->> '$']
                                               when 'ARRAY' then v ->> '$[*]' else [] end) as value
    from args
)
select distinct tool_key, arg, value from strings
where value is not null and length(value) between 1 and {MAX_VALUE_CHARS}
"""

_MATCHES = """
select distinct tool_key, arg from inference_arg_values where regexp_full_match(value, $pattern)
"""


def value_kinds(con: duckdb.DuckDBPyConnection, rules: Sequence[ValueRule]) -> dict[str, dict[str, set[str]]]:
    """tool key -> argument name -> names of the value rules some value of it matched."""
    if not rules:
        return {}
    con.execute(_VALUES)
    out: dict[str, dict[str, set[str]]] = {}
    try:
        for rule in rules:
            for key, arg in con.execute(_MATCHES, {"pattern": rule.pattern}).fetchall():
                out.setdefault(key, {}).setdefault(arg, set()).add(rule.name)
    finally:
        con.execute("drop table if exists inference_arg_values")
    return out
