"""What is known of a file a build or test tool runs (:class:`ToolFile`), followed write by
write for :func:`pipeline.analysis.written.written_programs`: the file's text as written,
whatever its language (a makefile, a ``package.json`` is no program a `#!` line or an
extension names, so :class:`pipeline.analysis.written_file.FileFollower` keeps no exact text
of it), with exact edits applied, and at a tool's run the commands the tool takes from it
(:func:`pipeline.analysis.written_tools.tool_text`) analysed as a shell script.
"""

from __future__ import annotations

from collections.abc import Callable

from pipeline.analysis.analysed import analysed
from pipeline.analysis.shell import MAX_COMMAND_CHARS
from pipeline.analysis.written_rows import kept_rows
from pipeline.analysis.written_pieces import Pieces, applied
from pipeline.analysis.written_texts import Written
from pipeline.analysis.written_tools import tool_targets, tool_text


class ToolFile:
    """A file's known text for the tools that run it: exact (``exact``) while every write
    since a whole one was an exact edit that applied (``since``: that whole write's step);
    and its texts as written (``texts``: a whole write's first, ``whole_first``)."""

    def __init__(self) -> None:
        self.exact: str | None = None
        self.since = -1  # the step of the whole write the exact text starts from
        self.texts: list[str] = []
        self.whole_first = False

    def wrote(self, written: Written, pieces: Pieces, trajectory_id: str, step_idx: int) -> None:
        """A write of ``written`` (a whole text replaces what was known; a piece is added,
        and an exact edit applies to the exact text, within the trajectory's budget)."""
        if written.whole:
            self.texts, self.whole_first = list(written.texts), bool(written.texts)
            one = len(written.texts) == 1 and len(written.texts[0]) <= MAX_COMMAND_CHARS
            self.exact, self.since = (written.texts[0] if one else None), step_idx
            return
        if self.exact is not None:
            fits = written.edits is not None and pieces.budgets.charge(
                trajectory_id, "tool_exact", len(self.exact) * len(written.edits))
            self.exact = applied(self.exact, written.edits) if fits and written.edits is not None else None
        self.texts.extend(written.texts)

    def absorb(self, copied: tuple[list[str], bool], pieces: Pieces, trajectory_id: str, step_idx: int) -> None:
        """A copy of another file came over this one (its texts added: a copy may fail; into
        a file nothing is known of, an exact text is a whole write)."""
        texts, exact = copied
        if exact and not self.texts and self.exact is None:
            self.wrote(Written(True, (texts[0],)), pieces, trajectory_id, step_idx)
            return
        held = set(self.texts)
        self.texts.extend(t for t in dict.fromkeys(texts) if t not in held)
        self.exact = None

    def copy_of(self, stepped_between: Callable[[int], bool]) -> tuple[list[str], bool] | None:
        """What a copy made now holds, as :meth:`FileFollower.copy_of` says: the exact text
        while no shell or code step ran since its whole write (``stepped_between``); None
        without one (the copy then takes what the file's follower as itself knows)."""
        if self.exact is None or stepped_between(self.since):
            return None
        return [self.exact], True

    def rewritten(self) -> None:
        """A shell or code step wrote the file some other way: its text is no longer exact."""
        self.exact = None

    def run_by(self, tool: str, pieces: Pieces, trajectory_id: str,
               stepped_between: Callable[[int], bool]) -> set[tuple[str, str]]:
        """What a run by ``tool`` (``make:...``, ``npm:...``) gets: the commands it takes from
        the exact text (edits applied); and, when there is none or a shell or code step ran
        since its whole write (``stepped_between``: it may have rewritten the file unseen,
        or not), also from each known text alone (a whole text as the file, an edit's piece
        as a piece) and from all of them joined in order (a piece naming a rule or script
        another text holds: `test:` edited into `test: deploy`); joined and analysed as a
        shell script within the trajectory's ``tool_joined`` budget (fail closed). A goal
        one reading has a rule for runs nothing in a reading without one (not every recipe:
        `make typecheck` after an edit added `typecheck:`)."""
        texts = [] if self.exact is None else [(self.exact, False)]  # (text, whether an edit's piece)
        if self.exact is None or stepped_between(self.since):
            texts += [(t, not (k == 0 and self.whole_first)) for k, t in enumerate(self.texts)]
            if len(self.texts) > 1:
                texts.append(("\n".join(self.texts), True))
        # a goal one reading has a rule for is no typo in another that lacks it (the whole
        # text as first written, before an edit added the rule): that one runs nothing for it
        defined = frozenset().union(*(tool_targets(tool, t, piece) for t, piece in texts)) if len(texts) > 1 \
            else frozenset()
        readings = [tool_text(tool, t, piece, defined) for t, piece in texts]
        commands = "\n".join(dict.fromkeys(c for c in readings if c))
        if not commands or not pieces.budgets.charge(trajectory_id, "tool_joined", len(commands)):
            return set()
        return kept_rows(analysed((True, commands), pieces.seen))
