"""Written programs: a program step that runs a file earlier file-writing calls wrote
(``python sync.py`` after ``write_file("sync.py", ...)``) also gets what the written text
reads, runs, deletes and sends (:func:`written_programs`).

The file's text is followed from write to write, in step order, up to each run
(``sql/written_runs.sql`` gives the runs and the writes of each file, in order):

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
- a write whose text cannot be read leaves what is known as it is.

The text is analysed as code (``.py``, a python ``#!``) or as a shell script (``.sh``,
``.bash``, a sh/bash ``#!``); a piece of Python is dedented first (an edit inside a
function is indented). A run that names its interpreter (``bash x.py``, ``python3 x``:
``sql/written_runs.sql``'s ``runners``) also reads the text as that language, whatever
the file's name or ``#!`` line says: a second follower of the file, with budgets of its
own (:meth:`_File.at_named_run`). What the text writes is not added (the run writes what
it writes; the writer's own rows say which file it wrote).
"""

from __future__ import annotations

import bisect
import textwrap
from collections.abc import Callable

import duckdb
import pyarrow as pa

from pipeline.analysis.analysed import Found, analysed, arrow_table
from pipeline.analysis.shell import MAX_COMMAND_CHARS
from pipeline.analysis.written_languages import program_language, runner_languages
from pipeline.analysis.written_pieces import Pieces, applied, fitting, parses
from pipeline.analysis.written_texts import Written, WrittenCall, written_call
from pipeline.sql import load_sql

_WRITTEN_ACCESS = frozenset({"read", "execute", "delete", "send", "payload"})


def _kept(found: Found) -> set[tuple[str, str]]:
    """What an analysis of a written text finds that a run of the file does (what it writes
    is the run's own business)."""
    return {(a, r) for a, r in found.rows if a in _WRITTEN_ACCESS}


class _File:
    """What is known of one file's text, followed write by write (:meth:`wrote`) up to
    each run (:meth:`at_run`), read as its name and `#!` lines say; or, ``forced``, read
    as those languages alone (the interpreters the file's runs name: :meth:`at_named_run`),
    with budgets of its own (``named_*``), so that a follower of the file as itself is
    the same whether or not a run names an interpreter."""

    def __init__(self, forced: frozenset[bool] = frozenset()) -> None:
        self.name = ""  # the file's name (its extension says how it runs)
        self.forced = forced
        self._kind = "named_" if forced else ""  # the budgets it charges: Budgets' kinds
        self._forget()

    def _forget(self) -> None:
        """Nothing known (before the first write; a whole write replaces the text)."""
        self.said: set[bool] = set()  # the languages its texts' `#!` lines named
        # what its known texts read, run, delete, send, per language they were read as
        self.rows: dict[bool, set[tuple[str, str]]] = {False: set(), True: set()}
        # its known texts in order, per language they were read as (pieces as analysed),
        # each with whether it does something, and their characters
        self.texts: dict[bool, list[tuple[str, bool]]] = {False: [], True: []}
        self.chars = {False: 0, True: 0}
        self.pending: set[bool] = set()  # languages given pieces since their texts were last analysed joined
        # the file's exact text while every write since a whole one was an exact
        # replacement that applied (an Edit's old_string found in it), and what it does
        # (None: to analyse at the next run); None once a write is not one
        self.exact: str | None = None
        self.exact_rows: set[tuple[str, str]] | None = None
        self.exact_since = -1  # the step of the whole write the exact text starts from

    def wrote(self, name: str, written: Written, pieces: Pieces, trajectory_id: str, step_idx: int = -1) -> None:
        """A write of ``written`` into the file ``name``: each text analysed alone in each
        of its languages (:meth:`_languages`; the pieces of a partial edit read by ``pieces``,
        within ``trajectory_id``'s budgets)."""
        self.name = name
        if written.whole:
            self._forget()
        elif self.exact is not None:
            # each applied edit copies the text: charged to the trajectory (past it: a lower bound)
            edited = applied(self.exact, written.edits) if written.edits is not None and pieces.budgets.charge(
                trajectory_id, self._kind + "exact", len(self.exact) * len(written.edits)) else None
            self.exact, self.exact_rows = edited, None
        for k, text in enumerate(written.texts):
            whole = written.whole and k == 0
            # the file's text known from its first line: a whole text's, or the exact text's
            # forced: the whole text is the file's, whatever it says; its runs decide (no
            # `#!` rules, whose Python parse of each text would be thrown away)
            own, langs = (None, tuple(sorted(self.forced))) if self.forced else \
                self._languages(name, text, text if whole else self.exact)
            whole_rows: set[tuple[str, str]] = set()
            # the whole text analysed as its own language says (forced: known, whatever it reads as)
            readable = bool(self.forced)
            for shell in langs:
                if whole and (shell == own or self.forced):
                    piece, found = text, analysed((shell, text), pieces.seen)
                    readable = readable or found.reason is None
                else:
                    piece, found = pieces.piece(trajectory_id, shell, text, self._kind + "salvage")
                    self.pending.add(shell)
                rows = self._found(found, shell)
                whole_rows |= rows
                self.texts[shell].append((piece, bool(rows)))
                self.chars[shell] += len(piece) + 1
            if whole and readable and len(written.texts) == 1 and len(text) <= MAX_COMMAND_CHARS:
                self.exact, self.exact_rows, self.exact_since = text, whole_rows, step_idx

    def _languages(self, name: str, text: str, first: str | None) -> tuple[bool | None, tuple[bool, ...]]:
        """(the language ``text`` says of itself, the languages to read it as). By the
        file's extension (`.py`, `.sh`); with another extension (`.cgi`), as each language a
        `#!` line of its texts named. Without an extension: while the file's text is known
        from its first line (``first``: a whole text, the exact text), as that line says;
        else as Python, and as shell unless it parses as Python and no `#!` line of its
        texts said shell (which `#!` line comes first is not known when an append, an edit
        or a shell step may put one first or not, or change `python3` into `bash`, and a
        run by `./x`, whose first line decides, may follow: fail closed; Python is not read
        as shell, where `ENV_PATH = '.env'` would be a command reading `.env`). A `#!` line
        naming another interpreter (node, ruby) is no language: the step may run the file
        with `python3` or `bash` whatever its first line says."""
        own = program_language(name, text)
        base = name.rsplit("/", 1)[-1].lower()
        if base.endswith((".py", ".sh", ".bash")):
            return own, (bool(own),)
        if own is not None:
            self.said.add(own)
        if "." in base.lstrip("."):
            return own, tuple(sorted(self.said))
        runs_as = None if first is None else program_language(name, first)
        if runs_as is not None:
            # the step may name the interpreter (`bash x` with a python `#!` line): a whole
            # text that is not what its first line says is read as the other language too
            other = text is first and (not parses(text) if runs_as is False else parses(text))
            return own, (runs_as, not runs_as) if other else (runs_as,)
        python_only = True not in self.said and parses(textwrap.dedent(text))
        return own, (False,) if python_only else (False, True)

    def _found(self, found: Found, shell: bool) -> set[tuple[str, str]]:
        """What one analysis of a text of the file as ``shell``'s language reads, runs,
        deletes and sends, added to the file's."""
        rows = _kept(found)
        self.rows[shell] |= rows
        return rows

    def at_run(self, pieces: Pieces, trajectory_id: str,
               stepped_between: Callable[[int], bool]) -> set[tuple[str, str]]:
        """What a run of the file gets: while its text is known exactly and no shell or code
        step ran since its whole write (``stepped_between``), what that text does; else what
        each known text does, and what they do joined in order, in each language they were
        read as (a value one piece reads and a later piece sends is one program's payload,
        as in the file; past the analyser's bound, the texts :func:`fitting` keeps). Analyses
        of whole texts are charged to the trajectory's ``joined`` budget."""
        seen = pieces.seen
        self._stale(stepped_between)
        # the exact text runs as its own first line says (an edit may have put a `#!` line of
        # another language further down: a comment); without one, not known: what each text does
        lang = None if self.exact is None else program_language(self.name, self.exact)
        if self.exact is not None and lang is not None:
            if self.exact_rows is None and pieces.budgets.charge(trajectory_id, "joined", len(self.exact)):
                found = analysed((lang, self.exact), seen)
                bare = not self.name.lower().endswith((".py", ".sh", ".bash"))  # its line decides, not a name
                if found.reason is None and (lang or parses(self.exact)):
                    self.exact_rows = _kept(found)
                    if lang and bare and parses(self.exact):
                        # Python behind a shell `#!` line: `python3 x` runs it as Python
                        self.exact_rows |= _kept(analysed((False, self.exact), seen))
                elif not lang and bare and (shell := analysed((True, self.exact), seen)).reason is None:
                    # not Python behind a python `#!` line: `bash x` runs it as shell
                    self.exact_rows = _kept(shell)
            if self.exact_rows is not None:  # the file as it is: a line an edit took out is gone
                self.pending.clear()
                return self.exact_rows
            self.exact = None  # past the budget, or not analysable whole: what each text does
        return self._joined(frozenset((False, True)), pieces, trajectory_id)

    def at_named_run(self, pieces: Pieces, trajectory_id: str, stepped_between: Callable[[int], bool],
                     named: frozenset[bool]) -> set[tuple[str, str]]:
        """What a run by an interpreter the step names gets (a ``forced`` follower; ``named``:
        its languages): the exact text read as them, else (Python that does not parse, past
        the budget, not analysable whole) what each text read as them does, alone and joined."""
        self._stale(stepped_between)
        if self.exact is not None:
            rows: set[tuple[str, str]] = set()
            for shell in sorted(named):
                found = analysed((shell, self.exact), pieces.seen) \
                    if pieces.budgets.charge(trajectory_id, "named_joined", len(self.exact)) else None
                if found is None or found.reason is not None or not (shell or parses(self.exact)):
                    break
                rows |= _kept(found)
            else:
                return rows
        return self._joined(named, pieces, trajectory_id)

    def _stale(self, stepped_between: Callable[[int], bool]) -> None:
        """A shell or code step ran since the whole write: it may have rewritten the file
        without a write the analyser sees (`git checkout`, `patch`, `tar x`, a script)."""
        if self.exact is not None and stepped_between(self.exact_since):
            self.exact = None

    def _joined(self, langs: frozenset[bool], pieces: Pieces, trajectory_id: str) -> set[tuple[str, str]]:
        """What the known texts read as ``langs`` do, each alone and joined in order (the
        texts given a piece since they were last joined)."""
        for shell in sorted(self.pending & langs):
            texts = self.texts[shell]
            if len(texts) < 2:
                continue
            chosen = [t for t, _ in texts] if self.chars[shell] <= MAX_COMMAND_CHARS else fitting(texts)
            joined = "\n".join(chosen)
            # not as shell when the joined text parses as Python and no text says shell
            # (Python read as shell invents commands: see _languages), unless a run names it
            if len(chosen) > 1 and (self.forced or not shell or not parses(joined) or any(
                    program_language(self.name, t) for t in chosen)) \
                    and pieces.budgets.charge(trajectory_id, self._kind + "joined", len(joined)):
                self._found(analysed((shell, joined), pieces.seen), shell)
        self.pending -= langs
        return set().union(*(self.rows[shell] for shell in langs))


def written_programs(con: duckdb.DuckDBPyConnection,
                     shell_texts: dict[int, tuple[tuple[str, str, bool], ...]] | None = None) -> None:
    """Add to ``resources`` what each written program a program step runs reads, runs,
    deletes and sends (see the module docstring): each distinct text analysed once, at
    most ``MAX_COMMAND_CHARS`` of it (the analyser's own bound: longer is opaque, and adds
    nothing); the runs and writes come from ``sql/written_runs.sql``. ``shell_texts``: per
    shell program (its ``program_id``), the known texts it writes (``Found.texts``)."""
    seen: dict[tuple[bool, str], Found] = {}
    pieces = Pieces(seen)
    rows: set[tuple[str, int, str, str]] = set()
    events = con.execute(load_sql("written_runs")).fetchall()
    # each call read once, however many files it wrote (a patch of thousands of files)
    calls: dict[tuple[str, int], WrittenCall | None] = {}
    texts = shell_texts or {}
    # the languages each file's runs name (`bash x.py`): its texts are read as them too
    named: dict[tuple[str, str], frozenset[bool]] = {}
    for trajectory_id, step_idx, name, is_write, tool_key, arguments, *_, runners in events:
        if arguments is not None:  # a write's first row (sql/written_runs.sql)
            calls[trajectory_id, step_idx] = written_call(tool_key, arguments)
        if runners:
            named[trajectory_id, name] = named.get((trajectory_id, name), frozenset()) | runner_languages(runners)
    # the shell and code steps of each trajectory, in order: an exact text holds only while
    # none ran since its whole write (other than the run being scored)
    program_steps = {tid: steps for tid, steps in con.execute(
        "select trajectory_id, list(distinct step_idx order by step_idx) from shell_calls group by all").fetchall()}
    followed: tuple[str, str] | None = None  # the file being followed (rows come file by file)
    # the file as itself, and (when runs name interpreters) as their languages alone
    known, as_named = _File(), _File()
    for trajectory_id, step_idx, name, is_write, tool_key, _, program_id, k, executed, runners in events:
        if (trajectory_id, name) != followed:
            followed, known = (trajectory_id, name), _File()
            as_named = _File(named.get((trajectory_id, name), frozenset()))
        followers = (known, as_named) if as_named.forced else (known,)
        if is_write and program_id is None and tool_key is None:  # a shell step's other write
            for f in followers:
                f.exact = None
        elif is_write and program_id is not None:
            # a shell or code step's known text: a piece, never the whole file (the step may
            # not have written it as it reads: a condition, a function never called, a
            # subshell in another folder, a run before the write in the same step)
            for f in followers:
                f.wrote(name, Written(False, (texts[program_id][k][1],)), pieces, trajectory_id)
        elif is_write:
            call = calls.get((trajectory_id, step_idx))
            if call is not None and (written := call.into(name)) is not None:
                if not executed:  # it may have run, or not: no exact edit of the known text
                    written = written._replace(edits=None)
                for f in followers:
                    f.wrote(name, written, pieces, trajectory_id, step_idx)
        else:
            steps = program_steps.get(trajectory_id, [])

            def stepped_between(since: int, steps: list[int] = steps, run: int = step_idx) -> bool:
                return bisect.bisect_right(steps, since) < bisect.bisect_left(steps, run)

            # the languages the step's interpreters read it as, beside (never instead of) the
            # file as itself: a name may be rebound (`alias python3=bash`, a `bin/python3` first
            # on PATH), a decoy run may stand beside one the analyser misses (`python3 x.sh ||
            # { cp x.sh y; sh y; }`); its own budgets leave the file as itself as it was
            by = runner_languages(runners)
            got = known.at_run(pieces, trajectory_id, stepped_between)
            if by:
                got = got | as_named.at_named_run(pieces, trajectory_id, stepped_between, by)
            rows.update((trajectory_id, step_idx, access, resource) for access, resource in got)
    if not rows:
        return
    schema = pa.schema([("trajectory_id", pa.string()), ("step_idx", pa.int64()), ("access", pa.string()),
                        ("resource", pa.string())])
    con.register("written_program_in", arrow_table(sorted(rows), schema))
    con.execute("insert into resources select distinct * from written_program_in "
                "except select * from resources")
    con.unregister("written_program_in")
