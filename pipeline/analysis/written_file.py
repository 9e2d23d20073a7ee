"""What is known of one written file's text, followed write by write up to each run
(:class:`FileFollower`): the mechanism :func:`pipeline.analysis.written.written_programs`
drives, trajectory by trajectory in step order (its module docstring gives the rules).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable

from pipeline.analysis.analysed import Found, analysed
from pipeline.analysis.shell import MAX_COMMAND_CHARS
from pipeline.analysis.written_languages import program_language, script_folder
from pipeline.analysis.written_pieces import Pieces, applied, fitting, parses
from pipeline.analysis.written_rows import kept_rows
from pipeline.analysis.written_texts import Written


class FileFollower:
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
        self.raw: list[str] = []  # its known texts as written (a whole text first): what a copy of it holds
        self.held: set[str] = set()  # the texts of its partial writes (one written again adds nothing)

    def copy_of(self, stepped_between: Callable[[int], bool]) -> tuple[list[str], bool]:
        """What a copy of the file made now holds, as far as is known, and whether exactly:
        its exact text (while no shell or code step ran since its whole write:
        ``stepped_between``), else its known texts as written."""
        self._stale(stepped_between)
        return ([self.exact], True) if self.exact is not None else (list(self.raw), False)

    def absorb(self, name: str, copied: tuple[list[str], bool], pieces: Pieces, trajectory_id: str,
               step_idx: int) -> None:
        """A copy of another file came over the file ``name`` at ``step_idx`` (``cp x.sh
        y``): the original's texts (:meth:`copy_of`) are added, each analysed whole (never
        cut as an edit's piece is), read as this file's name and runs say; its own known
        texts stay (a copy may fail: a lower bound) until a whole write replaces them. Into
        a file nothing is known of, an exact text is a whole write (an exact edit of the copy
        applies). A text the file already holds is not added again (copies back and forth,
        `cp a b; cp b a`, would else double the texts at each copy)."""
        texts, exact = copied
        if exact and not self.raw and self.exact is None:
            self.wrote(name, Written(True, (texts[0],)), pieces, trajectory_id, step_idx)
            return
        held = set(self.raw)
        for text in dict.fromkeys(texts):
            if text not in held:
                self.wrote(name, Written(False, (text,)), pieces, trajectory_id, as_is=True)
        self.exact = None

    def wrote(self, name: str, written: Written, pieces: Pieces, trajectory_id: str, step_idx: int = -1,
              as_is: bool = False) -> None:
        """A write of ``written`` into the file ``name``: each text analysed alone in each
        of its languages (:meth:`_languages`; the pieces of a partial edit read by ``pieces``,
        within ``trajectory_id``'s budgets; ``as_is``: whole texts, of a copy, added as they are)."""
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
            if not (whole or as_is):
                # a piece the file already holds, written again (an agent re-running `cat >
                # x.sh <<'EOF'` unchanged, each run of a script that writes or appends it):
                # what it does is known, and joined after itself it would only compose with
                # itself (`cd sub` twice: sub/sub), at a cost that grew with the square of
                # the writes (`a`, `b`, `a` is not joined as `b` then `a`: fail open, noted)
                if text in self.held:
                    continue
                self.held.add(text)
            self.raw.append(text)
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
                    piece = self._as_run(shell, text)
                    found = analysed((shell, piece), pieces.seen)
                    readable = readable or found.reason is None
                elif as_is:
                    piece = self._as_run(shell, text)
                    found = analysed((shell, piece), pieces.seen)
                    if found.reason is not None or not (shell or parses(text)):
                        # read whole, it says nothing sure (an opaque line, indented Python):
                        # also as an edit's piece is (cut, dedented), both kept
                        self._found(pieces.piece(trajectory_id, shell, piece, self._kind + "salvage")[1], shell)
                    self.pending.add(shell)
                else:
                    piece, found = pieces.piece(trajectory_id, shell, self._as_run(shell, text), self._kind + "salvage")
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

    def _as_run(self, shell: bool, text: str) -> str:
        """``text`` as the analyser reads it when the file runs: a shell text with its own
        folder (`cd "$(dirname "$0")"`) written as the file's (:func:`script_folder`)."""
        return script_folder(text, self.name) if shell else text

    def _found(self, found: Found, shell: bool) -> set[tuple[str, str]]:
        """What one analysis of a text of the file as ``shell``'s language reads, runs,
        deletes and sends, added to the file's."""
        rows = kept_rows(found)
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
                found = analysed((lang, self._as_run(lang, self.exact)), seen)
                bare = not self.name.lower().endswith((".py", ".sh", ".bash"))  # its line decides, not a name
                if found.reason is None and (lang or parses(self.exact)):
                    self.exact_rows = kept_rows(found)
                    if lang and bare and parses(self.exact):
                        # Python behind a shell `#!` line: `python3 x` runs it as Python
                        self.exact_rows |= kept_rows(analysed((False, self.exact), seen))
                elif not lang and bare and (shell := analysed((True, self._as_run(True, self.exact)), seen)).reason is None:
                    # not Python behind a python `#!` line: `bash x` runs it as shell
                    self.exact_rows = kept_rows(shell)
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
                found = analysed((shell, self._as_run(shell, self.exact)), pieces.seen) \
                    if pieces.budgets.charge(trajectory_id, "named_joined", len(self.exact)) else None
                if found is None or found.reason is not None or not (shell or parses(self.exact)):
                    break
                rows |= kept_rows(found)
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
            if len(texts) < 2 or pieces.budgets.spent(trajectory_id, self._kind + "joined"):
                continue  # (past the budget: not even the texts chosen and joined)
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
