"""The pieces of a written file's text (pipeline/analysis/written.py): each read once
per shard, cut or read statement by statement when it starts or ends inside a line or a
block (:class:`Pieces`), exact edits applied to a text known whole (:func:`applied`), the
texts joined at a run past the analyser's bound (:func:`fitting`), and the per-trajectory
budgets of that work (:class:`Budgets`)."""

from __future__ import annotations

import ast
import textwrap
import warnings

from pipeline.analysis.analysed import Found, analysed
from pipeline.analysis.shell import MAX_COMMAND_CHARS
from pipeline.analysis.written_texts import lines_of

__all__ = ["JOINED_CHARS_PER_TRAJECTORY", "SALVAGE_CHARS_PER_TRAJECTORY", "EXACT_CHARS_PER_TRAJECTORY", "Budgets",
           "Pieces", "applied", "fitting", "parses"]


# A file's known texts are also analysed joined, at a run after new pieces, until the
# joined texts analysed for one trajectory reach this many characters: a hostile trajectory
# alternating edits and runs of big files would otherwise have each whole file analysed
# again at every run (each piece is still analysed alone, once)
JOINED_CHARS_PER_TRAJECTORY = 10 * MAX_COMMAND_CHARS


def parses(text: str) -> bool:
    """Whether ``text`` parses as Python."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return True


# A piece none of whose cuts parses is read statement by statement (one or two parses per
# line: far more work per character than a parse of the whole); each trajectory may read
# this many characters so (a hostile record of thousands of such pieces would otherwise
# cost minutes). Charged the same whether the piece was read before or not, so what a
# trajectory gets never depends on which trajectories a shard scored before it. The cuts
# themselves (at most 8 parses of a piece, each distinct piece once a shard) are not
# budgeted: linear in the record.
SALVAGE_CHARS_PER_TRAJECTORY = 200_000
# Applying an exact edit copies the file's known text; a trajectory may copy this many
# characters so (25,000 edits of a 100 KB file took 16 s before), then follows the file as a
# lower bound
EXACT_CHARS_PER_TRAJECTORY = 10_000_000


def _statements(text: str) -> str:
    """The lines of ``text`` that parse alone as Python statements (a block's header, such
    as ``with open('.env') as f:``, with ``pass`` as its body), each at the top level, in
    order: what a piece says when it opens or closes inside a block of the file
    (``except ...:``, ``else:``, a dedented context line)."""
    kept: list[str] = []
    for line in lines_of(text):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if parses(stripped):
            kept.append(stripped)
        elif stripped.endswith(":") and parses(stripped + " pass"):
            kept.append(stripped + " pass")
    return "".join(f"{line}\n" for line in kept)


def _cuts(text: str) -> list[str]:
    """``text`` without up to its first two and up to its last two lines (an edit's text
    may start or end inside a line or a block: ``old_string`` the tail of a line, lines
    from a ``try:`` body into its ``except:``), fewest first lines dropped first."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the text's final newline ends its last line
    n = len(lines)
    spans = [(a, n - b) for a in (0, 1, 2) for b in (0, 1, 2)][1:]
    return ["".join(f"{x}\n" for x in lines[a:b]) for a, b in spans if b - a >= 1]


_LIMITS = {"joined": lambda: JOINED_CHARS_PER_TRAJECTORY, "salvage": lambda: SALVAGE_CHARS_PER_TRAJECTORY,
           "exact": lambda: EXACT_CHARS_PER_TRAJECTORY}
# the same work of the follower reading a file as the interpreters its runs name: budgets of
# its own, so it never takes from the file read as itself (pipeline/analysis/written.py)
# and of reading a file as the build or test tools that run it take it (written_tool_file.py)
_LIMITS.update({f"{who}_{kind}": limit for kind, limit in list(_LIMITS.items()) for who in ("named", "tool")})
# the rows the further passes of written_programs (pipeline/analysis/written.py) get from a
# trajectory's nested runs, in all (rows, not characters): a file running n written files
# that each run n more, at s steps, gets s*n*n of them
NESTED_ROWS_PER_TRAJECTORY = 100_000
# ... counted once per distinct run (an agent re-running an unchanged `ci.sh` step after step
# is charged once); every nested run's rows count towards this many, whatever repeats
NESTED_WORK_PER_TRAJECTORY = 10 * NESTED_ROWS_PER_TRAJECTORY
# the known texts written programs write that a trajectory's runs of them hand on (each a
# row of `shell_texts` for the next pass, read again under each folder a run happens in):
# distinct (file, text) pairs, each counted once (an agent re-running a setup script that
# writes 260 config files, 20 times in a folder: 520), in all passes; each pair written
# under its own folder is an analysis of its own
NESTED_TEXTS_PER_TRAJECTORY = 10_000
# ... and every run's, whatever repeats: a script that appends 2,000 lines to a file, run in
# 8,000 steps of a 1 MB record, would hand on 16 million rows
NESTED_TEXT_WORK_PER_TRAJECTORY = 10 * NESTED_TEXTS_PER_TRAJECTORY
_LIMITS["nested_rows"] = lambda: NESTED_ROWS_PER_TRAJECTORY
_LIMITS["nested_work"] = lambda: NESTED_WORK_PER_TRAJECTORY
_LIMITS["nested_texts"] = lambda: NESTED_TEXTS_PER_TRAJECTORY
_LIMITS["nested_text_work"] = lambda: NESTED_TEXT_WORK_PER_TRAJECTORY


class Budgets:
    """What each trajectory may still spend of each bounded kind of work, in characters
    (``joined``, ``salvage``, ``exact``: the limits above; ``named_*`` and ``tool_*`` the
    same again)."""

    def __init__(self) -> None:
        self.left: dict[tuple[str, str], int] = {}

    def charge(self, trajectory_id: str, kind: str, chars: int) -> bool:
        """Whether ``trajectory_id`` may still spend ``chars`` of ``kind``; charged when it may."""
        left = self.left.get((trajectory_id, kind))
        left = _LIMITS[kind]() if left is None else left
        if left < chars:
            return False
        self.left[trajectory_id, kind] = left - chars
        return True

    def spent(self, trajectory_id: str, kind: str) -> bool:
        """Whether ``trajectory_id`` has nothing left of ``kind``."""
        return self.left.get((trajectory_id, kind), 1) <= 0

    def end(self, trajectory_id: str, kind: str) -> None:
        """Leave ``trajectory_id`` nothing more of ``kind`` (a charge it could not pay: the
        work after it is not started, nor paid for part by part)."""
        self.left[trajectory_id, kind] = 0


class Pieces:
    """The pieces edits added, each read once per shard (a call that writes many files
    gives each the same pieces): as it is when it parses, else its first cut that parses,
    else statement by statement (Python), within its trajectory's budget of that."""

    def __init__(self, seen: dict[tuple[bool, str], Found]) -> None:
        self.seen = seen
        self.read: dict[tuple[bool, str], tuple[str, Found, bool]] = {}  # -> piece, analysis, salvaged
        self.budgets = Budgets()  # every bounded kind of work, per trajectory

    def _whole(self, shell: bool, text: str) -> tuple[str, Found] | None:
        """The text as it is, when it parses (Python) or is not opaque (shell)."""
        if not shell and (len(text) > MAX_COMMAND_CHARS or not parses(text)):
            return None
        found = analysed((shell, text), self.seen)
        return (text, found) if not shell or found.reason is None else None

    def piece(self, trajectory_id: str, shell: bool, text: str, kind: str = "salvage") -> tuple[str, Found]:
        """A piece ``text`` an edit added (dedented when Python), as analysed, and its
        analysis; read statement by statement within the trajectory's ``kind`` budget."""
        key = (shell, text)
        kept = self.read.get(key)
        if kept is None:
            kept = self.read[key] = self._repaired(shell, text if shell else textwrap.dedent(text))
        # read statement by statement: within the trajectory's budget (past it: the piece as it is)
        if kept[2] and not self.budgets.charge(trajectory_id, kind, len(text)):
            plain = text if shell else textwrap.dedent(text)
            return plain, analysed((shell, plain), self.seen)
        return kept[0], kept[1]

    def _repaired(self, shell: bool, text: str) -> tuple[str, Found, bool]:
        """(the piece as analysed, its analysis, whether it was read statement by statement)."""
        for cut in [text, *_cuts(text)]:
            cut = cut if shell else textwrap.dedent(cut)
            if cut.strip() and (whole := self._whole(shell, cut)) is not None:
                return (*whole, False)
        if not shell and len(text) <= MAX_COMMAND_CHARS and (statements := _statements(text)):
            return statements, analysed((False, statements), self.seen), True
        return text, analysed((shell, text), self.seen), False


def applied(text: str, edits: tuple[tuple[str, str, bool], ...]) -> str | None:
    """``text`` after the exact replacements ``edits``, in order; None when one's old text
    is not in it exactly once (every occurrence: at least once), so the edit is not known
    to have applied as read, or the text grows past the analyser's bound."""
    for old, new, every in edits:
        # once only, unless every occurrence is replaced: where a tool placed an edit of a
        # text found twice (Codex's `@@` context, Cline's search from the previous block) is
        # not read here
        if not old or (text.count(old) != 1 if not every else old not in text):
            return None
        text = text.replace(old, new) if every else text.replace(old, new, 1)
        if len(text) > MAX_COMMAND_CHARS:
            return None
    return text


def fitting(texts: list[tuple[str, bool]]) -> list[str]:
    """The known texts to join when all of them pass the analyser's bound: those that do
    something (inert padding pieces of their own between a read and a send must not hide
    the payload; an inert piece that relays the value, or padding inside a piece that does
    something, still can), dropping the longest while still over it; in their order."""
    doing = [(k, text) for k, (text, does) in enumerate(texts) if does]
    total = sum(len(t) + 1 for _, t in doing)
    dropped: set[int] = set()
    for k, text in sorted(doing, key=lambda kt: -len(kt[1])):
        if total <= MAX_COMMAND_CHARS:
            break
        dropped.add(k)
        total -= len(text) + 1
    return [text for k, text in doing if k not in dropped]
