"""Written programs: a program step that runs a file earlier file-writing calls wrote
(``python sync.py`` after ``write_file("sync.py", ...)``) also gets what the written text
reads, runs, deletes and sends (:func:`written_programs`).

Each file's text is followed from write to write, in step order, up to each run
(``sql/written_runs.sql`` gives the runs, writes and copies of the files followed,
trajectory by trajectory, in step order; :class:`FileFollower` keeps what is known):

- a whole write (``write_file``'s ``content``, an editor's ``create`` / ``write``, a
  patch's added file) replaces what was known of the file;
- a partial edit (``Edit``'s ``new_string``, ``str_replace``'s ``new_str``, Cursor's
  ``code_edit``, an append's ``content``, the lines a patch adds) adds its new text, each
  piece analysed alone (:class:`Pieces`: one that starts or ends inside a line or a
  block is cut, or read statement by statement) and, at a run, all known texts joined in
  order (within the trajectory's ``JOINED_CHARS_PER_TRAJECTORY``: :mod:`.written_pieces`): what the file
  holds beside them is not known, so the run gets at least what the new text does (a
  lower bound; a step that also removes a line is not followed), except while the file's
  text is known exactly (:func:`applied`): then an edit that names the text it replaces
  (an Edit's old_string, a hunk's old lines, a SEARCH block) is applied to it, and the run
  gets what the edited text does;
- a write whose text cannot be read leaves what is known as it is;
- a copy of another file by a shell or code step (``cp x.sh y``, ``mv``, ``cat x > y``,
  ``shutil.copy``: ``ShellAnalysis.copies``) adds the original's known text then, each
  text analysed whole, read as the copy (the original followed up to the copy:
  :meth:`FileFollower.absorb`); what the file held stays beside it (a copy may fail).

The text is analysed as code (``.py``, a python ``#!``) or as a shell script (``.sh``,
``.bash``, a sh/bash ``#!``); a piece of Python is dedented first (an edit inside a
function is indented). A run that names its interpreter (``bash x.py``, ``python3 x``:
``sql/written_runs.sql``'s ``runners``) also reads the text as that language, whatever
the file's name or ``#!`` line says: a second follower of the file, with budgets of its
own (:meth:`FileFollower.at_named_run`). What the text writes is not added (the run writes what
it writes; the writer's own rows say which file it wrote).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable

import duckdb
import pyarrow as pa

from pipeline.analysis.analysed import Found, arrow_table
from pipeline.analysis.shell.model import PSEUDO_RE
from pipeline.analysis.written_file import FileFollower
from pipeline.analysis.written_nested import PAST_BOUND, PAST_TEXTS, Nested, Texts
from pipeline.analysis.written_rows import COPIED, MARKS, MAX_RUN_FOLDERS, RUN_FOLDER, RUNS_AS, WROTE, in_folders
from pipeline.analysis.written_languages import runner_languages
from pipeline.analysis.written_pieces import Pieces
from pipeline.analysis.written_texts import Written, WrittenCall, written_call
from pipeline.analysis.written_tool_file import ToolFile
from pipeline.analysis.written_tools import tool_runners
from pipeline.sql import query


def _between(steps: list[int], run: int) -> Callable[[int], bool]:
    """Whether a shell or code step (``steps``, in order) ran after a step and before ``run``."""
    return lambda since: bisect.bisect_right(steps, since) < bisect.bisect_left(steps, run)


# passes of written_programs: a written program that runs a written file in turn (`bash
# main.sh` whose text runs `sh helper.sh` or `make test`, a recipe's `python3 up.py`) gives
# that run an `execute` row, its runner and the folder it runs in, and the next pass
# follows it as a run of the step (as sql/written_runs.sql reads a program step's own
# runs), this many levels deep; each further pass follows only the runs the one before
# added, within the trajectory's nested budgets (Nested)
MAX_PASSES = 6
_ROWS = pa.schema([("trajectory_id", pa.string()), ("step_idx", pa.int64()), ("access", pa.string()),
                   ("resource", pa.string())])
_NAMED = pa.schema([("trajectory_id", pa.string()), ("step_idx", pa.int64()), ("name", pa.string()),
                    ("value", pa.string())])
_TEXTS = pa.schema([("trajectory_id", pa.string()), ("step_idx", pa.int64()), ("program_id", pa.int64()),
                    ("k", pa.int64()), ("name", pa.string())])
# the runs added that a further pass follows: of a file written or copied in the trajectory
# (a run of `npm` or of an unwritten `b.sh` has no text to follow; a known text a written
# program wrote counts: shell_texts), or every run of a step a pytest run was added to (its
# collected tests: sql/written_runs.sql's `discovered`)
_FOLLOWABLE = """
select distinct k.trajectory_id, k.step_idx, k.name from written_added k
where k.name is null
   or exists (select 1 from resources w where w.trajectory_id = k.trajectory_id and w.access = 'write'
              and lg_norm_path_if(w.resource) = k.name)
   or exists (select 1 from shell_copies c where c.trajectory_id = k.trajectory_id and c.copy = k.name)
   or exists (select 1 from shell_texts x where x.trajectory_id = k.trajectory_id and x.name = k.name)
"""
# the copies a written program makes (written_in: trajectory_id, step_idx, name = the copy,
# value = its original), into shell_copies before and after the step's own (k below and above
# theirs), each once
_NESTED_COPIES = """
insert into shell_copies
with own as (
    select w.trajectory_id, w.step_idx, coalesce(min(c.k), 0) as lo, coalesce(max(c.k), -1) as hi
    from (select distinct trajectory_id, step_idx from written_in) w
    left join shell_copies c on c.trajectory_id = w.trajectory_id and c.step_idx = w.step_idx
    group by all
),
numbered as (
    select w.trajectory_id, w.step_idx, lg_norm_path_if(w.name) as copy, lg_norm_path_if(w.value) as original,
        row_number() over (partition by w.trajectory_id, w.step_idx order by w.name, w.value) as n,
        count(*) over (partition by w.trajectory_id, w.step_idx) as m, o.lo, o.hi
    from written_in w join own o using (trajectory_id, step_idx)
    anti join shell_copies s on s.trajectory_id = w.trajectory_id and s.step_idx = w.step_idx
        and s.copy = lg_norm_path_if(w.name) and s.original = lg_norm_path_if(w.value)
)
select trajectory_id, step_idx, lo - m - 1 + n, copy, original from numbered
union all
select trajectory_id, step_idx, hi + n, copy, original from numbered
"""
Run = tuple[str, int, "str | None"]  # (trajectory_id, step_idx, name; None: every run of the step)


def written_programs(con: duckdb.DuckDBPyConnection,
                     shell_texts: Texts | None = None) -> None:
    """Add to ``resources`` what each written program a program step runs reads, runs,
    deletes and sends (see the module docstring): each distinct text analysed once, at
    most ``MAX_COMMAND_CHARS`` of it (the analyser's own bound: longer is opaque, and adds
    nothing); the runs and writes come from ``sql/written_runs.sql``. ``shell_texts``: per
    shell program (its ``program_id``), the known texts it writes (``Found.texts``).

    A file a written program runs in turn is followed in a further pass, up to
    :data:`MAX_PASSES` levels: the rows a pass adds include that run (``execute``), how the
    text runs it (``shell_runners``: `make test` runs the recipes of its goal, `sh x` the
    file as shell) and where (``shell_run_folders``), and the next pass follows the runs
    added (:func:`_added`), each pass with budgets of its own (the analyses' memo is
    shared), within the trajectory's nested budgets (:class:`Nested`); a step whose nested
    runs go past them is opaque (``opaque_steps``: fail closed)."""
    seen: dict[tuple[bool, str], Found] = {}
    failed = set(con.execute("select trajectory_id, step_idx from steps where kind = 'tool_call' "
                             "and exec_status = 'failed'").fetchall())
    nested = Nested(shell_texts or {}, failed)
    runs: set[Run] | None = None
    for _ in range(MAX_PASSES):
        runs = _added(con, _followed(con, nested.texts, Pieces(seen), runs, nested), nested)
        if not runs:
            break
    if nested.past:  # fail closed: what such a step runs in turn is not known (attrition opaque_step)
        past = sorted(nested.past)
        con.execute("insert into opaque_steps select t.trajectory_id, t.step_idx, t.reason "
                    "from (select unnest($ids) as trajectory_id, unnest($steps) as step_idx, "
                    "unnest($reasons) as reason) t anti join opaque_steps o using (trajectory_id, step_idx)",
                    {"ids": [t for t, _, _ in past], "steps": [k for _, k, _ in past], "reasons": [r for _, _, r in past]})


def _added(con: duckdb.DuckDBPyConnection, got: set[tuple[str, int, str, str]], nested: Nested) -> set[Run]:
    """Insert a pass's rows (``resources``; :data:`RUNS_AS` rows into ``shell_runners``,
    :data:`RUN_FOLDER` rows into ``shell_run_folders``, :data:`WROTE` rows into
    ``shell_texts``, their texts into ``nested.texts``); the runs they add that a further
    pass follows (:data:`_FOLLOWABLE`: a file a written program writes and runs is followed
    from the text it wrote, the write first in the step)."""
    rows: list[tuple[str, int, str, str]] = []
    marked: dict[str, list[tuple[str, int, str, str]]] = {RUNS_AS: [], RUN_FOLDER: [], WROTE: [], COPIED: []}
    for t, step, access, name in sorted(got):
        mark = next((m for m in MARKS if access.startswith(m)), None)
        if mark is None:
            rows.append((t, step, access, name))
        elif mark in (WROTE, COPIED):  # (WROTE + the file's name, its text), (COPIED + copy, original)
            marked[mark].append((t, step, access[len(mark):], name))
        elif mark in marked:  # HERE / ELSEWHERE marks served in_folders
            marked[mark].append((t, step, name, access[len(mark):]))
    added: list[tuple[str, int, str | None]] = []
    for table, values, insert in (
            ("resources", rows, "insert into resources select distinct * from written_in except select * from resources "
                                "returning trajectory_id, step_idx, access, lg_norm_path_if(resource)"),
            ("shell_runners", marked[RUNS_AS], "insert into shell_runners select distinct trajectory_id, step_idx, "
                                               "lg_norm_path_if(name), value from written_in except select * from "
                                               "shell_runners returning trajectory_id, step_idx, 'execute', name, runner"),
            ("shell_run_folders", marked[RUN_FOLDER], "insert into shell_run_folders select distinct trajectory_id, "
                                                      "step_idx, lg_norm_path_if(name), value from written_in except "
                                                      "select * from shell_run_folders returning trajectory_id, "
                                                      "step_idx, 'execute', name")):
        if not values:
            continue
        con.register("written_in", arrow_table(values, _ROWS if table == "resources" else _NAMED))
        for t, step, access, name, *runner in con.execute(insert).fetchall():
            if access == "execute" and not PSEUDO_RE.match(name):  # a URL run (`curl ... | sh`) is no file's
                added.append((t, step, None if runner == ["pytest"] else name))
        con.unregister("written_in")
    copies = sorted(marked[COPIED])
    if copies:
        # a step's copies are replayed in order (k): where the written program's run came
        # among the step's own copies is not known, so its copies come both before them and
        # after (fail closed: `bash main.sh && cp d2.sh y.sh`, main.sh copying deploy.sh to d2.sh)
        con.register("written_in", arrow_table(copies, _NAMED))
        con.execute(_NESTED_COPIES)
        con.unregister("written_in")
    texts = nested.wrote(marked[WROTE])
    if texts or copies:
        con.register("written_in", arrow_table(texts, _TEXTS))
        con.execute("insert into shell_texts select trajectory_id, step_idx, program_id, k, lg_norm_path_if(name) "
                    "from written_in")
        # the runs of those files from the step on (`bash setup.sh`, which writes deploy.sh,
        # then `bash deploy.sh`), already known before their texts were, and of their copies
        # since, are followed again (sql/written_later_runs.sql)
        con.register("copies_in", arrow_table(copies, _NAMED))
        added.extend(query(con, "written_later_runs").fetchall())
        con.unregister("written_in")
        con.unregister("copies_in")
    if not added:
        return set()
    con.register("written_added", arrow_table(added, _NAMED.remove(3)))
    runs = set(con.execute(_FOLLOWABLE).fetchall())
    con.unregister("written_added")
    return runs


def _followed(con: duckdb.DuckDBPyConnection, texts: dict[int, tuple[tuple[str, str, bool], ...]],
              pieces: Pieces, runs: set[Run] | None, nested: Nested) -> set[tuple[str, int, str, str]]:
    """One pass of :func:`written_programs` over the ``runs`` a pass before added (None:
    every run, the first pass): the rows (trajectory_id, step_idx, access, resource) they
    get, with :data:`RUNS_AS` and :data:`RUN_FOLDER` rows for the files they run. A
    further pass charges its rows to ``nested`` (``NESTED_ROWS_PER_TRAJECTORY``); a run
    not followed past it, or in more than ``MAX_RUN_FOLDERS`` folders, makes its step
    opaque (``Nested.stop``)."""
    only = None if runs is None else {t for t, _, _ in runs}
    rows: set[tuple[str, int, str, str]] = set()
    con.execute("create or replace temp table written_scope as select unnest($ids::varchar[]) as trajectory_id",
                {"ids": sorted(only or ())})
    events = query(con, "written_runs", scoped=only is not None).fetchall()
    con.execute("drop table written_scope")
    # each call read once, however many files it wrote (a patch of thousands of files)
    calls: dict[tuple[str, int], WrittenCall | None] = {}
    # the languages each file's runs name (`bash x.py`): its texts are read as them too
    named: dict[tuple[str, str], frozenset[bool]] = {}
    tooled: set[tuple[str, str]] = set()  # the files a build or test tool runs (`make`, `npm test`)
    for trajectory_id, step_idx, name, is_write, tool_key, arguments, *_, runners, _, _ in events:
        if arguments is not None:  # a write's first row (sql/written_runs.sql)
            calls[trajectory_id, step_idx] = written_call(tool_key, arguments)
        if runners:
            named[trajectory_id, name] = named.get((trajectory_id, name), frozenset()) | runner_languages(runners)
            if tool_runners(runners):
                tooled.add((trajectory_id, name))
    # the shell and code steps of each trajectory, in order: an exact text holds only while
    # none ran since its whole write (other than the run being scored)
    program_steps = {tid: steps for tid, steps in con.execute(
        "select trajectory_id, list(distinct step_idx order by step_idx) from shell_calls "
        "where trajectory_id in (select unnest($ids::varchar[])) group by all",
        {"ids": sorted({e[0] for e in events})}).fetchall()}  # of the trajectories followed
    # per file of the trajectory being followed (rows come trajectory by trajectory, in step
    # order): the file as itself, (when runs name interpreters) as their languages alone,
    # and (when tools run it: `make`, `npm test`) its text as written for them
    files: dict[str, tuple[FileFollower, FileFollower, ToolFile | None]] = {}
    followed: str | None = None
    for trajectory_id, step_idx, name, is_write, tool_key, _, program_id, k, executed, runners, original, \
            folders in events:
        if trajectory_id != followed:
            followed, files = trajectory_id, {}
        if name not in files:
            files[name] = (FileFollower(), FileFollower(named.get((trajectory_id, name), frozenset())),
                           ToolFile() if (trajectory_id, name) in tooled else None)
        known, as_named, as_tool = files[name]
        followers = (known, as_named) if as_named.forced else (known,)
        if original is not None:
            # a copy of another file (`cp x.sh y`): the original's known text (its writes up
            # to the copy came before) is the copy's too, read as the copy; its own stays
            if original in files:
                between = _between(program_steps.get(trajectory_id, []), step_idx)
                copied = files[original][0].copy_of(between)
                for f in followers:
                    f.absorb(name, copied, pieces, trajectory_id, step_idx)
                if as_tool is not None:
                    source = files[original][2]
                    exact = source.copy_of(between) if source is not None else None
                    as_tool.absorb(exact or copied, pieces, trajectory_id, step_idx)
        elif is_write and program_id is None and tool_key is None:  # a shell step's other write
            for f in followers:
                f.exact = None
            if as_tool is not None:
                as_tool.rewritten()
        elif is_write and program_id is not None:
            # a shell or code step's known text: a piece, never the whole file (the step may
            # not have written it as it reads: a condition, a function never called, a
            # subshell in another folder, a run before the write in the same step)
            written = Written(False, (texts[program_id][k][1],))
            for f in followers:
                f.wrote(name, written, pieces, trajectory_id)
            if as_tool is not None:
                as_tool.wrote(written, pieces, trajectory_id, step_idx)
        elif is_write:
            call = calls.get((trajectory_id, step_idx))
            if call is not None and (written := call.into(name)) is not None:
                if not executed:  # it may have run, or not: no exact edit of the known text
                    written = written._replace(edits=None)
                for f in followers:
                    f.wrote(name, written, pieces, trajectory_id, step_idx)
                if as_tool is not None:
                    as_tool.wrote(written, pieces, trajectory_id, step_idx)
        elif runs is None or (trajectory_id, step_idx, name) in runs or (trajectory_id, step_idx, None) in runs:
            if nested.stopped(trajectory_id):
                continue
            if runs is not None and nested.spent(trajectory_id):
                nested.stop(trajectory_id, step_idx, PAST_BOUND)
                continue
            stepped_between = _between(program_steps.get(trajectory_id, []), step_idx)
            # the languages the step's interpreters read it as, beside (never instead of) the
            # file as itself: a name may be rebound (`alias python3=bash`, a `bin/python3` first
            # on PATH), a decoy run may stand beside one the analyser misses (`python3 x.sh ||
            # { cp x.sh y; sh y; }`); its own budgets leave the file as itself as it was. A
            # run by tools alone (`make`, `npm test`) runs what they take from the file, not
            # the file itself
            by, run_tools = runner_languages(runners), tool_runners(runners)
            got = set() if run_tools and len(run_tools) == len(runners or ()) else \
                known.at_run(pieces, trajectory_id, stepped_between)
            if by:
                got = got | as_named.at_named_run(pieces, trajectory_id, stepped_between, by)
            for tool in run_tools if as_tool is not None else ():
                got = got | as_tool.run_by(tool, pieces, trajectory_id, stepped_between)
            if folders and len(folders) > MAX_RUN_FOLDERS:  # read in the first ones only: fail closed
                nested.stop(trajectory_id, step_idx, f"it runs {name} in {len(folders)} folders "
                                                     f"(more than MAX_RUN_FOLDERS = {MAX_RUN_FOLDERS})")
            got = in_folders(got, folders)
            if runs is not None and not nested.charge(trajectory_id, name, folders, got):
                nested.stop(trajectory_id, step_idx, PAST_BOUND)  # its further nested runs are not followed
                continue
            if not nested.texts_fit(trajectory_id, got):  # what it writes then runs is not followed
                nested.stop(trajectory_id, step_idx, PAST_TEXTS)
                got = {(access, r) for access, r in got if not access.startswith(WROTE)}
            rows.update((trajectory_id, step_idx, access, resource) for access, resource in got)
    return rows
