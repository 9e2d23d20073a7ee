"""Stage ``resources``: what each tool call reads, writes, executes, deletes, sends.

Catalog tools name their resources by argument (``sql/arg_resources.sql``); shell and
code steps go through the shell analyser (``pipeline/analysis/shell/__init__.py``), which is Python
because a real shell tokenizer is needed. A shell/code step that cannot be analysed
is recorded in ``opaque_steps`` (reject reason ``opaque_step`` when it mattered). A step
of a shell session that an earlier step's ``cd`` (or its working-folder argument) put in
another folder also names its relative paths under that folder (``sql/shell_folders.sql``).
A program step that runs a file an earlier file-writing call wrote whole (``python
sync.py`` after ``write_file("sync.py", ...)``) also gets what that written program
reads, runs, deletes and sends (:func:`written_programs`).
"""

from __future__ import annotations

import json
import re
import threading
from typing import NamedTuple

import duckdb
import pyarrow as pa
from cachetools import LRUCache

from pipeline.analysis.shell import ShellAnalysis, analyse_code, analyse_command
from pipeline.analysis.programs import UnreadableArguments, call_program
from pipeline.sql import load_sql, materialize

# a payload is read (its label joins the step's) and, as `payload`, what the step sends
# (sql/self_sends.sql: a secret a step sends itself, not one it merely reads); a
# `credential` (an environment variable in a request's URL or header) is neither read nor
# payload: sql/self_sends.sql reads it for the secrets the policy says are never sent
_ACCESS_FIELDS = (("read", "reads"), ("write", "writes"), ("execute", "executes"),
                  ("delete", "deletes"), ("send", "sends"), ("read", "payloads"), ("payload", "payloads"),
                  ("credential", "credentials"))
_PATH_ACCESS = frozenset({"read", "write", "execute", "delete", "payload"})  # a relative name is a path
_PSEUDO_RE = re.compile(r"^[a-z][a-z0-9+.-]*:")  # a URL or pseudo resource (env:X): as the analyser's model
_PROGRAM_FOLDER_SCHEMA = pa.schema([("program_id", pa.int64()), ("folder", pa.string())])
_PROGRAM_RES_SCHEMA = pa.schema([("program_id", pa.int64()), ("access", pa.string()), ("resource", pa.string())])
_PROGRAM_OPAQUE_SCHEMA = pa.schema([("program_id", pa.int64()), ("opaque_reason", pa.string())])

# Each distinct (arguments, shell/code argument name) is analysed once: nightly corpora
# repeat the same commands (ls, git status, pytest) across thousands of calls.
_PROGRAMS = """
create or replace temp table shell_programs as
select row_number() over (order by arguments, shell_arg, code_arg, inferred) - 1 as program_id, *
from (
    select distinct s.arguments, t.shell_arg, t.code_arg, t.role_source <> 'catalog' as inferred
    from steps s join policy_tools t on t.tool_key = lower(s.tool_name)
    where s.kind = 'tool_call' and s.args_ok and (t.shell_arg is not null or t.code_arg is not null)
)
"""
_SHELL_CALLS = """
select s.trajectory_id, s.step_idx, p.program_id
from steps s join policy_tools t on t.tool_key = lower(s.tool_name)
join shell_programs p on p.arguments = s.arguments
    and p.shell_arg is not distinct from t.shell_arg and p.code_arg is not distinct from t.code_arg
    and p.inferred = (t.role_source <> 'catalog')
where s.kind = 'tool_call' and s.args_ok
"""

# a relative path a step names where it started, also under the folder it runs in
# (sql/shell_folders.sql); as Acc.under_cwd: not when it lands above it (`../x` from `.`)
_CARRIED = """
select trajectory_id, step_idx, access, joined as resource
from (select f.trajectory_id, f.step_idx, h.access, h.resource, lg_norm_path(f.folder || '/' || h.resource) as joined
      from shell_folders f join program_here_in h using (program_id))
where joined <> resource and joined <> '..' and not starts_with(joined, '../')
"""

_WORKDIR_CALLS = """
select exists (select 1 from policy_tools t where t.workdir_arg is not null
               and t.tool_key in (select lower(tool_name) from steps where kind = 'tool_call'))
"""


class _Found(NamedTuple):
    """What ``resources`` records of one analysis."""

    reason: str | None  # opaque reason, or None
    rows: tuple[tuple[str, str], ...]  # (access, resource)
    # where a shell program leaves its shell ("." stays, None unknown: ShellAnalysis.folder)
    folder: str | None
    # (access, relative path) named where it started, which a carried folder applies to;
    # None: every relative path of ``rows`` (ShellAnalysis.here)
    here: tuple[tuple[str, str], ...] | None


def _found(analysis: ShellAnalysis, shell: bool) -> _Found:
    """What ``resources`` records of one analysis (``shell``: of a shell command, not code)."""
    rows = tuple((access, name) for access, field in _ACCESS_FIELDS for name in getattr(analysis, field)
                 # an inline literal sent out: its content links by data edges, not by name
                 if not (field == "payloads" and name.startswith("data:")))
    reason = (analysis.opaque_reason or "cannot be analysed") if analysis.opaque else None
    if not shell:  # a code step neither moves a shell nor runs in one
        return _Found(reason, rows, ".", ())
    here = None if analysis.here is None else tuple(
        (access, name) for field, name in analysis.here for access, f in _ACCESS_FIELDS if f == field)
    return _Found(reason, rows, None if analysis.opaque else analysis.folder, here)


# A worker scores shard after shard of one corpus, and a nightly corpus's shards run one
# another's commands (`ls`, `git status`, `pytest`, a suite's replayed task: 55-70% of a
# shard's distinct programs on the bench corpus were analysed in an earlier shard); the
# analysis is a function of the text alone, so each process keeps its answers across shards.
# Weighed, not counted: a short hostile text can name up to the analyser's work bound of
# resources, so an entry weighs its text and rows (their bytes at most, plus ~100 bytes of
# Python objects per row), one over MEMO_ENTRY_WEIGHT is never kept, and the least recently used
# leave the memo at MEMO_WEIGHT (a few tens of MB of objects at most).
MEMO_WEIGHT = 16 << 20
MEMO_ENTRY_WEIGHT = 256 << 10
_ROW_WEIGHT = 100


def _bytes(text: str) -> int:
    """Bytes a str takes at most (CPython stores 1, 2 or 4 bytes a character)."""
    return len(text) if text.isascii() else 4 * len(text)


def _weight(program: tuple[bool, str], found: _Found) -> int:
    rows = [*found.rows, *(found.here or ())]
    return _bytes(program[1]) + _bytes(found.folder or "") + sum(_bytes(a) + _bytes(r) + _ROW_WEIGHT for a, r in rows)


_MEMO: LRUCache[tuple[bool, str], tuple[_Found, int]] = LRUCache(MEMO_WEIGHT, getsizeof=lambda entry: entry[1])
_MEMO_LOCK = threading.Lock()  # cachetools' caches are not thread-safe (canaries score in a thread)


def analysed(program: tuple[bool, str], seen: dict[tuple[bool, str], _Found]) -> _Found:
    """What ``resources`` records of ``program`` (True and a shell command, False and
    code): remembered by this process (``_MEMO``) or by the caller's ``seen`` (those
    too heavy for the memo, for the caller's shard), else analysed now."""
    with _MEMO_LOCK:
        kept = _MEMO.get(program)
    if kept is not None:
        return kept[0]
    found = seen.get(program)
    if found is None:
        shell, text = program
        found = _found(analyse_command(text) if shell else analyse_code(text), shell)
        weight = _weight(program, found)
        if weight <= MEMO_ENTRY_WEIGHT:
            with _MEMO_LOCK:
                _MEMO[program] = (found, weight)
        else:
            seen[program] = found
    return found


def _here_rows(found: _Found) -> tuple[tuple[str, str], ...]:
    """The (access, relative path) rows a folder carried to the step applies to."""
    if found.here is not None:
        return found.here
    return tuple((a, r) for a, r in found.rows if a in _PATH_ACCESS and not r.startswith(("/", "~"))
                 and not _PSEUDO_RE.match(r))


def _table(rows: list[tuple[object, ...]], schema: pa.Schema) -> pa.Table:
    cols = list(zip(*rows)) if rows else [[] for _ in schema]
    return pa.Table.from_arrays([pa.array(c, f.type) for c, f in zip(cols, schema)], schema=schema)


def resources(con: duckdb.DuckDBPyConnection, batch_rows: int = 20_000) -> None:
    """Materialise ``resources`` and ``opaque_steps`` from ``steps`` and the policy (with the
    relative paths of steps whose shell session was left elsewhere, also under that folder)."""
    materialize(con, "arg_resources")
    con.execute(_PROGRAMS)
    program_rows: list[tuple[int, str, str]] = []
    opaque_rows: list[tuple[int, str]] = []
    inference = json.loads(con.execute("select json from policy_document").fetchall()[0][0]).get("inference", {})
    lexicon = (tuple(str(a) for a in inference.get("shell_args", [])),
               tuple(str(a) for a in inference.get("code_args", [])))
    command_lists = frozenset(str(a) for a in inference.get("command_list_args", []))
    cursor = con.execute(
        "select program_id, arguments, shell_arg, code_arg, inferred from shell_programs order by program_id")
    # Each distinct program text is analysed once (`analysed`): calls whose arguments differ
    # only beside the command (a timeout, a description, OpenHands' security_risk, a
    # working folder) run the same text. The analysis is a function of the text alone.
    seen: dict[tuple[bool, str], _Found] = {}
    by_id: list[_Found | None] = []  # by program_id (0, 1, ...): for the carried folders below
    folder_rows: list[tuple[int, str | None]] = []
    while batch := cursor.fetchmany(batch_rows):
        for program_id, arguments, shell_arg, code_arg, inferred in batch:
            try:
                program = call_program(arguments, shell_arg, code_arg, lexicon, catalog=not inferred,
                                       command_lists=command_lists)
            except UnreadableArguments as exc:  # fail closed: what it runs is not known
                by_id.append(None)
                opaque_rows.append((program_id, str(exc)))
                continue
            found = None if program is None else analysed(program, seen)
            by_id.append(found)
            if found is None:
                continue
            if found.reason is not None:
                opaque_rows.append((program_id, found.reason))
            if found.folder != ".":
                folder_rows.append((program_id, found.folder))
            program_rows.extend((program_id, access, name) for access, name in found.rows)
    con.register("program_resources_in", _table(program_rows, _PROGRAM_RES_SCHEMA))
    con.register("program_opaque_in", _table(opaque_rows, _PROGRAM_OPAQUE_SCHEMA))
    con.register("program_folders", _table(folder_rows, _PROGRAM_FOLDER_SCHEMA))
    con.execute(f"create or replace temp table shell_calls as {_SHELL_CALLS}")
    con.execute(
        "create or replace temp table opaque_steps as "
        "select c.trajectory_id, c.step_idx, o.opaque_reason "
        "from shell_calls c join program_opaque_in o using (program_id)")
    if folder_rows or con.execute(_WORKDIR_CALLS).fetchone() != (False,):
        materialize(con, "shell_folders")
    else:  # no program moves its shell and no call names its folder: nothing is carried
        con.execute("create or replace temp table shell_folders "
                    "(trajectory_id varchar, step_idx bigint, program_id bigint, folder varchar)")
    # the relative names of the programs that run in a carried folder only (most run none)
    here_rows = [(program_id, access, name)
                 for (program_id,) in con.execute("select distinct program_id from shell_folders order by 1").fetchall()
                 if (found := by_id[program_id]) is not None for access, name in _here_rows(found)]
    con.register("program_here_in", _table(here_rows, _PROGRAM_RES_SCHEMA))
    con.execute(
        "create or replace temp table resources as select distinct * from ("
        " select * from arg_resources union all"
        " select c.trajectory_id, c.step_idx, r.access, r.resource"
        " from shell_calls c join program_resources_in r using (program_id) union all"
        f" {_CARRIED})"
    )
    for name in ("program_resources_in", "program_opaque_in", "program_folders", "program_here_in"):
        con.unregister(name)
    written_programs(con)
    con.execute("drop table shell_folders")
    con.execute("drop table shell_calls")
    con.execute("drop table shell_programs")


# the argument holding a whole file's text, in this order (generic write_file: content;
# Claude Code Write: content; OpenHands / str_replace_editor create: file_text)
_CONTENT_ARGS = ("content", "contents", "file_text", "text", "code")
# arguments of a partial edit: what the file holds besides them is not known
_PARTIAL_ARGS = frozenset({"old_str", "old_string", "new_str", "new_string", "insert_line", "old_text",
                           "new_text", "edits", "diff", "patch", "start_line", "end_line"})
_PARTIAL_TOOL_RE = re.compile(r"append|edit|patch|insert|replace")  # unless its command is `create`
_WRITTEN_ACCESS = frozenset({"read", "execute", "delete", "send", "payload"})
_SHEBANG_PY_RE = re.compile(r"^#![^\n]*\bpython[0-9.]*\b")
_SHEBANG_SH_RE = re.compile(r"^#![^\n]*\b(?:ba|da|z|k)?sh\b")


def written_content(tool_key: str, arguments: str) -> str | None:
    """The whole text a file-writing call writes, or None (a partial edit, an append, no
    text argument)."""
    try:
        args = json.loads(arguments)
    except (ValueError, RecursionError):
        return None
    if not isinstance(args, dict) or _PARTIAL_ARGS & args.keys() or args.get("mode") == "append":
        return None
    command = args.get("command")
    if command is not None:
        if command != "create":  # str_replace_editor: str_replace / insert / view
            return None
    elif _PARTIAL_TOOL_RE.search(tool_key):
        return None
    value = next((args[k] for k in _CONTENT_ARGS if k in args), None)
    return value if isinstance(value, str) else None


def program_language(name: str, content: str) -> bool | None:
    """How a written file runs: True shell, False Python, None neither (by its extension,
    else its `#!` line)."""
    base = name.rsplit("/", 1)[-1].lower()
    if base.endswith(".py"):
        return False
    if base.endswith((".sh", ".bash")):
        return True
    if _SHEBANG_PY_RE.match(content):
        return False
    if _SHEBANG_SH_RE.match(content):
        return True
    return None


def written_programs(con: duckdb.DuckDBPyConnection) -> None:
    """Add to ``resources`` what each written program a program step runs reads, runs,
    deletes and sends (not what it writes): the program is analysed as code (``.py``, a
    python `#!`) or as a shell script (``.sh``, ``.bash``, a sh/bash `#!`), at most
    ``MAX_COMMAND_CHARS`` of it (the analyser's own bound: longer is opaque) and each
    distinct text once; the runs and their writers come from ``sql/written_runs.sql``."""
    seen: dict[tuple[bool, str], _Found] = {}
    rows: list[tuple[str, int, str, str]] = []
    for trajectory_id, step_idx, name, tool_key, arguments in con.execute(load_sql("written_runs")).fetchall():
        content = written_content(tool_key, arguments)
        if content is None:
            continue
        shell = program_language(name, content)
        if shell is None:
            continue
        found = analysed((shell, content), seen)
        rows.extend((trajectory_id, step_idx, access, resource) for access, resource in found.rows
                    if access in _WRITTEN_ACCESS)
    if not rows:
        return
    schema = pa.schema([("trajectory_id", pa.string()), ("step_idx", pa.int64()), ("access", pa.string()),
                        ("resource", pa.string())])
    con.register("written_program_in", _table(sorted(set(rows)), schema))
    con.execute("insert into resources select distinct * from written_program_in "
                "except select * from resources")
    con.unregister("written_program_in")
