"""Stage ``resources``: what each tool call reads, writes, executes, deletes, sends.

Catalog tools name their resources by argument (``sql/arg_resources.sql``); shell and
code steps go through the shell analyser (``pipeline/shell.py``), which is Python
because a real shell tokenizer is needed. A shell/code step that cannot be analysed
is recorded in ``opaque_steps`` (reject reason ``opaque_step`` when it mattered).
"""

from __future__ import annotations

import json

import duckdb
import pyarrow as pa

from pipeline.shell import ShellAnalysis, analyse_code, analyse_command
from pipeline.sql import materialize

_ACCESS_FIELDS = (("read", "reads"), ("write", "writes"), ("execute", "executes"),
                  ("delete", "deletes"), ("send", "sends"), ("read", "payloads"))
_RES_SCHEMA = pa.schema([("trajectory_id", pa.string()), ("step_idx", pa.int64()),
                         ("access", pa.string()), ("resource", pa.string())])
_OPAQUE_SCHEMA = pa.schema([("trajectory_id", pa.string()), ("step_idx", pa.int64()),
                            ("opaque_reason", pa.string())])

_SHELL_CALLS = """
select s.trajectory_id, s.step_idx, s.arguments, t.shell_arg, t.code_arg
from steps s join policy_tools t on t.tool_key = lower(s.tool_name)
where s.kind = 'tool_call' and s.args_ok and (t.shell_arg is not null or t.code_arg is not null)
order by s.trajectory_id, s.step_idx
"""


def _program_text(arguments: str, arg: str | None) -> str | None:
    if arg is None:
        return None
    value = json.loads(arguments).get(arg)
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value)


def _analyse(arguments: str, shell_arg: str | None, code_arg: str | None) -> ShellAnalysis | None:
    command = _program_text(arguments, shell_arg)
    if command is not None:
        return analyse_command(command)
    code = _program_text(arguments, code_arg)
    return analyse_code(code) if code is not None else None


def resources(con: duckdb.DuckDBPyConnection, batch_rows: int = 20_000) -> None:
    """Materialise ``resources`` and ``opaque_steps`` from ``steps`` and the policy."""
    materialize(con, "arg_resources")
    shell_rows: list[tuple[str, int, str, str]] = []
    opaque_rows: list[tuple[str, int, str]] = []
    cursor = con.execute(_SHELL_CALLS)
    while batch := cursor.fetchmany(batch_rows):
        for trajectory_id, step_idx, arguments, shell_arg, code_arg in batch:
            analysis = _analyse(arguments, shell_arg, code_arg)
            if analysis is None:
                continue
            if analysis.opaque:
                opaque_rows.append((trajectory_id, step_idx, analysis.opaque_reason or "cannot be analysed"))
            for access, field in _ACCESS_FIELDS:
                for name in getattr(analysis, field):
                    if field == "payloads" and name.startswith("data:"):
                        continue  # an inline literal sent out: its content links by data edges, not by name
                    shell_rows.append((trajectory_id, step_idx, access, name))
    cols = list(zip(*shell_rows)) if shell_rows else [[], [], [], []]
    shell = pa.Table.from_arrays([pa.array(c, t.type) for c, t in zip(cols, _RES_SCHEMA)], schema=_RES_SCHEMA)
    ocols = list(zip(*opaque_rows)) if opaque_rows else [[], [], []]
    opaque = pa.Table.from_arrays([pa.array(c, t.type) for c, t in zip(ocols, _OPAQUE_SCHEMA)], schema=_OPAQUE_SCHEMA)
    con.register("shell_resources_in", shell)
    con.register("opaque_steps_in", opaque)
    con.execute("create or replace temp table opaque_steps as select * from opaque_steps_in")
    con.execute(
        "create or replace temp table resources as "
        "select distinct * from (select * from arg_resources union all select * from shell_resources_in)"
    )
    con.unregister("shell_resources_in")
    con.unregister("opaque_steps_in")
