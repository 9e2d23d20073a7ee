"""Stage ``resources``: what each tool call reads, writes, executes, deletes, sends.

Catalog tools name their resources by argument (``sql/arg_resources.sql``); shell and
code steps go through the shell analyser (``pipeline/analysis/shell/__init__.py``), which is Python
because a real shell tokenizer is needed. A shell/code step that cannot be analysed
is recorded in ``opaque_steps`` (reject reason ``opaque_step`` when it mattered). A step
of a shell session that an earlier step's ``cd`` (or its working-folder argument) put in
another folder also names its relative paths under that folder (``sql/shell_folders.sql``).
A program step that runs a file earlier file-writing calls wrote (``python sync.py``
after ``write_file("sync.py", ...)``) also gets what that written program reads, runs,
deletes and sends (:func:`pipeline.analysis.written.written_programs`). Each distinct
program text is analysed once per process (:func:`pipeline.analysis.analysed.analysed`).
"""

from __future__ import annotations

import json

import duckdb
import pyarrow as pa

from pipeline.analysis.analysed import Found, analysed, arrow_table
from pipeline.analysis.shell.model import PSEUDO_RE
from pipeline.analysis.programs import UnreadableArguments, call_program
from pipeline.analysis.written import written_programs
from pipeline.sql import materialize

_PATH_ACCESS = frozenset({"read", "write", "execute", "delete", "payload"})  # a relative name is a path
_PROGRAM_FOLDER_SCHEMA = pa.schema([("program_id", pa.int64()), ("folder", pa.string())])
_PROGRAM_RES_SCHEMA = pa.schema([("program_id", pa.int64()), ("access", pa.string()), ("resource", pa.string())])
_PROGRAM_OPAQUE_SCHEMA = pa.schema([("program_id", pa.int64()), ("opaque_reason", pa.string())])
_PROGRAM_TEXT_SCHEMA = pa.schema([("program_id", pa.int64()), ("k", pa.int64()), ("name", pa.string())])
_PROGRAM_RUNNER_SCHEMA = pa.schema([("program_id", pa.int64()), ("name", pa.string()), ("runner", pa.string())])
_PROGRAM_RUN_FOLDER_SCHEMA = pa.schema([("program_id", pa.int64()), ("name", pa.string()), ("folder", pa.string())])
_PROGRAM_COPY_SCHEMA = pa.schema([("program_id", pa.int64()), ("k", pa.int64()), ("copy", pa.string()),
                                  ("original", pa.string())])

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

# how each step runs the files it executes (ShellAnalysis.runners), under its own names and,
# for a relative name named where it started (program_here_in), under a carried folder
_RUNNERS = """
select c.trajectory_id, c.step_idx, lg_norm_path_if(r.name) as name, r.runner
from shell_calls c join program_runners_in r using (program_id)
union all
select trajectory_id, step_idx, joined, runner
from (select f.trajectory_id, f.step_idx, r.name, r.runner, lg_norm_path(f.folder || '/' || r.name) as joined
      from shell_folders f join program_runners_in r using (program_id)
      semi join program_here_in h on h.program_id = r.program_id and h.access = 'execute' and h.resource = r.name)
where joined <> name and joined <> '..' and not starts_with(joined, '../')
"""

# the folder each file a step executes runs in, when not where the trajectory's shell
# started (ShellAnalysis.run_folders: a `cd` in the step; or a folder carried from an
# earlier step, sql/shell_folders.sql, for a name named where the step started), under the
# names _RUNNERS gives: written_programs joins the relative names the file's text names
# under it
_RUN_FOLDERS = """
select c.trajectory_id, c.step_idx, lg_norm_path_if(r.name) as name, r.folder
from shell_calls c join program_run_folders_in r using (program_id)
union all
select trajectory_id, step_idx, joined, lg_norm_path(carried || '/' || coalesce(own, '.'))
from (select f.trajectory_id, f.step_idx, f.folder as carried, h.resource, r.folder as own,
             lg_norm_path(f.folder || '/' || h.resource) as joined
      from shell_folders f join program_here_in h on h.program_id = f.program_id and h.access = 'execute'
      left join program_run_folders_in r on r.program_id = h.program_id and r.name = h.resource)
where joined <> resource and joined <> '..' and not starts_with(joined, '../')
union all
-- an absolute name runs in the carried folder too (`bash /opt/setup.sh`), or under it in
-- the folder of a relative `cd` of the step before the run
select f.trajectory_id, f.step_idx, r.resource,
    case when o.folder is null then f.folder when o.folder like '/%' or o.folder like '~%' then o.folder
         else lg_norm_path(f.folder || '/' || o.folder) end
from shell_folders f join program_resources_in r on r.program_id = f.program_id and r.access = 'execute'
left join program_run_folders_in o on o.program_id = r.program_id and o.name = r.resource
where f.folder is not null and (starts_with(r.resource, '/') or starts_with(r.resource, '~'))
"""

_WORKDIR_CALLS = """
select exists (select 1 from policy_tools t where t.workdir_arg is not null
               and t.tool_key in (select lower(tool_name) from steps where kind = 'tool_call'))
"""


def _here_rows(found: Found) -> tuple[tuple[str, str], ...]:
    """The (access, relative path) rows a folder carried to the step applies to."""
    if found.here is not None:
        return found.here
    return tuple((a, r) for a, r in found.rows if a in _PATH_ACCESS and not r.startswith(("/", "~"))
                 and not PSEUDO_RE.match(r))


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
    seen: dict[tuple[bool, str], Found] = {}
    by_id: list[Found | None] = []  # by program_id (0, 1, ...): for the carried folders below
    folder_rows: list[tuple[int, str | None]] = []
    text_rows: list[tuple[int, int, str]] = []  # (program_id, k, name) of Found.texts[k]
    runner_rows: list[tuple[int, str, str]] = []  # (program_id, name, runner) of Found.runners
    copy_rows: list[tuple[int, int, str, str]] = []  # (program_id, k, copy, original) of Found.copies[k]
    folder_run_rows: list[tuple[int, str, str]] = []  # (program_id, name, folder) of Found.run_folders
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
            text_rows.extend((program_id, k, name) for k, (name, _, _) in enumerate(found.texts))
            runner_rows.extend((program_id, name, runner) for name, runner in found.runners)
            copy_rows.extend((program_id, k, copy, original) for k, (copy, original) in enumerate(found.copies))
            folder_run_rows.extend((program_id, name, folder) for name, folder in found.run_folders)
    con.register("program_resources_in", arrow_table(program_rows, _PROGRAM_RES_SCHEMA))
    con.register("program_texts_in", arrow_table(text_rows, _PROGRAM_TEXT_SCHEMA))
    con.register("program_runners_in", arrow_table(runner_rows, _PROGRAM_RUNNER_SCHEMA))
    con.register("program_copies_in", arrow_table(copy_rows, _PROGRAM_COPY_SCHEMA))
    con.register("program_run_folders_in", arrow_table(folder_run_rows, _PROGRAM_RUN_FOLDER_SCHEMA))
    con.register("program_opaque_in", arrow_table(opaque_rows, _PROGRAM_OPAQUE_SCHEMA))
    con.register("program_folders", arrow_table(folder_rows, _PROGRAM_FOLDER_SCHEMA))
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
    con.register("program_here_in", arrow_table(here_rows, _PROGRAM_RES_SCHEMA))
    # how they run the files they execute (`bash x.py`: as shell), also under a folder
    # carried from an earlier step (as _CARRIED): written_programs reads the file's text
    # in that language
    con.execute(f"create or replace temp table shell_runners as {_RUNNERS}")
    con.execute(f"create or replace temp table shell_run_folders as {_RUN_FOLDERS}")
    con.execute(
        "create or replace temp table resources as select distinct * from ("
        " select * from arg_resources union all"
        " select c.trajectory_id, c.step_idx, r.access, r.resource"
        " from shell_calls c join program_resources_in r using (program_id) union all"
        f" {_CARRIED})"
    )
    # the known texts shell steps write (`cat > x.py <<'EOF'`): written_programs follows them
    # the copies shell steps make (`cp x.sh y`, `mv a b`): written_programs follows a file's
    # known text into its copies
    con.execute("create or replace temp table shell_copies as "
                "select c.trajectory_id, c.step_idx, t.k, lg_norm_path_if(t.copy) as copy, "
                "lg_norm_path_if(t.original) as original "
                "from shell_calls c join program_copies_in t using (program_id)")
    con.execute("create or replace temp table shell_texts as "
                "select c.trajectory_id, c.step_idx, t.program_id, t.k, lg_norm_path_if(t.name) as name "
                "from shell_calls c join program_texts_in t using (program_id)")
    for name in ("program_resources_in", "program_opaque_in", "program_folders", "program_here_in",
                 "program_texts_in", "program_runners_in", "program_copies_in", "program_run_folders_in"):
        con.unregister(name)
    written_programs(con, {pid: found.texts for pid, found in enumerate(by_id) if found is not None and found.texts})
    con.execute("drop table shell_texts")
    con.execute("drop table shell_copies")
    con.execute("drop table shell_runners")
    con.execute("drop table shell_run_folders")
    con.execute("drop table shell_folders")
    con.execute("drop table shell_calls")
    con.execute("drop table shell_programs")
