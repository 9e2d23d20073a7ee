"""Stage ``inert_texts``: shell calls whose command only mentions what a classifier rule looks for.

The built-in classifier's ``argument = "*"`` rules read a call's whole arguments. For a
shell step, the parts of its command that are data, never run (a here-document written
to a notes file, a ``grep`` pattern, a commit message, a comment:
:mod:`pipeline.analysis.shell.inert`, lists in ``[classifier]`` of the policy), are
blanked in the text those rules read (``sql/classifier_calls.sql``). A match only in the
blanked parts is kept as ``written`` (``sql/classifier_hits.sql``): it labels nothing
unless a later action runs a file the step wrote (``sql/executed_writes.sql``).

Only calls some ``*`` rule matches at all are parsed (``classifier_calls``' one RE2 pass,
its ``candidate``), so the cost follows the rules' hits, not the corpus.
"""

from __future__ import annotations

import json
from functools import lru_cache
from collections.abc import Callable, Sequence
from typing import Any

import duckdb
import pyarrow as pa

from pipeline.analysis.programs import UnreadableArguments, passes, program_arg, program_text
from pipeline.analysis.shell import analyse_command
from pipeline.analysis.shell.inert import Effects, inert_text
from pipeline.policy_tables import NEVER

__all__ = ["inert_texts", "INERT_TEXTS_SCHEMA"]

INERT_TEXTS_SCHEMA = pa.schema([("tool_key", pa.string()), ("arguments", pa.string()),
                                ("masked_arguments", pa.string())])
# the shell calls some `*` rule matches at all (classifier_calls' one RE2 pass: `candidate`)
_CANDIDATES = """
select distinct c.tool_key, c.arguments, t.shell_arg, t.code_arg, t.role_source <> 'catalog' as inferred
from classifier_calls c join policy_tools t on t.tool_key = c.tool_key
where c.candidate and c.args_ok and t.shell_arg is not null
order by all
"""
# the rules then read the blanked command; the whole text stays in `arguments_text`, where
# a match only in blanked parts is `written` (sql/classifier_hits.sql)
_MASK = """
update classifier_calls c set command_text = lg_line_breaks(i.code_text), masked = true
from (select tool_key, arguments, lg_code_argvs(argv_text) as code_text
      from (select tool_key, arguments, lg_with_argvs(masked_arguments, true) as argv_text from inert_texts)) i
where c.tool_key = i.tool_key and c.arguments = i.arguments
"""
# (each macro in a projection of its own, as in sql/classifier_calls.sql: a macro's argument
# is copied into each place the macro names it)


def inert_texts(con: duckdb.DuckDBPyConnection, classifier: dict[str, Any], shell_args: tuple[str, ...] = (),
                command_lists: tuple[str, ...] = ()) -> None:
    """Materialise ``inert_texts`` (tool_key, arguments, masked_arguments): for each distinct
    shell call that some ``*`` rule matches (``classifier_calls.candidate``) and whose command
    holds data parts, its arguments with those parts blanked; those calls of
    ``classifier_calls`` then read the blanked text (``masked``). Reads ``classifier_calls``
    and ``policy_tools``; ``classifier`` is the policy's ``[classifier]`` table,
    ``shell_args`` the inference lexicon's command argument names (an inferred tool's
    command is in the first of them a call passes, as in ``resources``), ``command_lists``
    the names whose list of strings is several command lines (``programs.program_text``)."""
    data_programs = [str(p) for p in classifier.get("data_programs", [])]
    print_programs = [str(p) for p in classifier.get("print_programs", [])]
    dry_runs = [str(p) for p in classifier.get("dry_run_flags", [])]
    patterns = [str(classifier.get(k) or NEVER) for k in ("runs_later", "settles", "notes")]

    @lru_cache(maxsize=1024)
    def takes_effect(path: str) -> bool:  # RE2, as everywhere else the patterns are read
        found = con.execute("select regexp_matches($path, $a) or (regexp_matches($path, $b)"
                            " and not regexp_matches($path, $c))",
                            {"path": path, "a": patterns[0], "b": patterns[1], "c": patterns[2]}).fetchall()
        return bool(found[0][0])

    @lru_cache(maxsize=1024)
    def is_note(path: str) -> bool:
        return bool(con.execute("select regexp_matches($path, $c)", {"path": path, "c": patterns[2]}).fetchall()[0][0])

    rows: list[tuple[str, str, str]] = []
    if data_programs or print_programs or dry_runs:
        for tool_key, arguments, shell_arg, code_arg, inferred in con.execute(_CANDIDATES).fetchall():
            # a catalogued tool's call passing its own code argument runs that code, not a command
            own = not inferred and passes(arguments, (shell_arg, code_arg))
            shell_arg = program_arg(arguments, shell_arg, () if own else shell_args, catalog=not inferred)
            masked = _masked_arguments(arguments, shell_arg, data_programs, print_programs, takes_effect, is_note,
                                       dry_runs, command_lists)
            if masked is not None:
                rows.append((tool_key, arguments, masked))
    cols = list(zip(*rows)) if rows else [[], [], []]
    table = pa.Table.from_arrays([pa.array(c, pa.string()) for c in cols], schema=INERT_TEXTS_SCHEMA)
    con.register("inert_texts_in", table)
    con.execute("create or replace temp table inert_texts as select * from inert_texts_in")
    con.unregister("inert_texts_in")
    if rows:
        con.execute(_MASK)


def _masked_arguments(arguments: str, shell_arg: str, data_programs: list[str], print_programs: list[str],
                      takes_effect: Callable[[str], bool], is_note: Callable[[str], bool],
                      dry_runs: Sequence[str] = (), command_lists: Sequence[str] = ()) -> str | None:
    """The arguments JSON with the command's data parts blanked, or None (nothing blanked,
    or the command cannot be analysed: then it is read whole, as before)."""
    try:
        command = program_text(arguments, shell_arg, command_lists)
    except UnreadableArguments:  # read whole (resources marks the step opaque)
        return None
    if command is None:
        return None

    def effects() -> Effects:  # the analyser, only for a command printing into a file
        analysis = analyse_command(command)
        return None if analysis.opaque else (analysis.executes, analysis.writes)

    masked = inert_text(command, data_programs, print_programs, takes_effect, effects, is_note, dry_runs)
    if masked == command:
        return None
    document = json.loads(arguments)
    document[shell_arg] = masked
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))
