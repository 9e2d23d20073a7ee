"""Patches as what they write into each file (:func:`patch`): Codex's envelope (``***
Add File:`` whole, ``*** Update File:`` as the added lines of each hunk, ``*** Move to:``),
unified diffs (hunks read by their counts), Cline's SEARCH/REPLACE blocks. Every parser
reads its text line by line, once: a patch is hostile input. For
:mod:`pipeline.analysis.written_texts`.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any, NamedTuple

_CODEX_FILE_RE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.*)$")
_CODEX_MOVE_RE = re.compile(r"^\*\*\* Move to: (.*)$")


Edit = tuple[str, str, bool]
"""An exact replacement: (old text, new text, every occurrence or the first)."""


class Written(NamedTuple):
    """What one file-writing call wrote into one file."""

    whole: bool  # True: the texts replace what the file held (none: it is gone); False: pieces added
    texts: tuple[str, ...]
    # a partial write as exact replacements of the file's text, when every piece of it is
    # one (an Edit's old_string -> new_string, a patch hunk's old lines -> new lines, a
    # SEARCH/REPLACE block); None when some piece is not (an insert, an append, a sketch)
    edits: tuple[Edit, ...] | None = None


def lines_of(text: str) -> list[str]:
    """``text``'s lines as a shell, git and Python's tokenizer cut them: at ``\\n`` (a
    ``\\r`` before it dropped) and nowhere else (``str.splitlines`` also cuts at form
    feeds and other separators a line of code may hold)."""
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


def key_of(path: str) -> str | None:
    """A path as files are compared (``sql/written_runs.sql`` normalises its names the
    same way); None for no path."""
    path = path.strip()
    return posixpath.normpath(path) if path else None


class Files:
    """What a call's patches or listed edits wrote, per file, in order: by the path they
    name (:func:`key_of`), and by that path without a diff's ``a/`` / ``b/`` prefix."""

    def __init__(self) -> None:
        # key -> [whether the first write was whole, the texts in order, the edits in order
        # (None once one piece is no exact replacement)]: appended to, never copied (a patch
        # may hold a hundred thousand sections of one file)
        self.named: dict[str, list[Any]] = {}
        self.aliases: dict[str, list[Any]] = {}

    def add(self, path: str, written: Written) -> None:
        """Record ``written`` for ``path`` (after what the call wrote there before)."""
        if (key := key_of(path)) is None:
            return
        places: list[tuple[dict[str, list[Any]], str]] = [(self.named, key)]
        if path.startswith(("a/", "b/")) and (alias := key_of(path[2:])) is not None:
            places.append((self.aliases, alias))
        for target, name in places:
            entry = target.setdefault(name, [written.whole, [], None if written.whole else []])
            entry[1].extend(written.texts)
            if entry[2] is not None:
                if written.edits is None:
                    entry[2] = None
                else:
                    entry[2].extend(written.edits)

    def rebase(self, folder: str) -> None:
        """Also name each relative file under ``folder`` (where the call applied its patch:
        a later step may name it so)."""
        for key, found in list(self.named.items()):
            if not key.startswith(("/", "~")) and (joined := key_of(posixpath.join(folder, key))) is not None:
                self.aliases.setdefault(joined, found)

    def get(self, name: str) -> Written | None:
        """What was written into ``name``; with no section of that name, the only file's
        when one file is named (its header may spell the path otherwise)."""
        key = key_of(name)
        found = None if key is None else self.named.get(key) or self.aliases.get(key)
        if found is None and len(self.named) == 1:
            found = next(iter(self.named.values()))
        if found is None:
            return None
        return Written(found[0], tuple(found[1]), None if found[2] is None else tuple(found[2]))


def _texts(hunks: list[list[str]]) -> tuple[str, ...]:
    return tuple("\n".join(h) + "\n" for h in hunks if h)


def _codex_sections(lines: list[str], files: Files) -> None:
    """Codex's patch envelope: an added file whole, an updated file as the added lines of
    each hunk; a file moved away is gone (nothing known of it), the moved-to file gets the
    hunks (what it held before is not followed across the move)."""
    path: str | None = None
    add = moving = False
    hunks: list[list[str]] = []
    olds: list[list[str]] = []  # per hunk, its context and removed lines; news: context and added
    news: list[list[str]] = []

    def close() -> None:
        if path is not None and (add or any(hunks)):
            if add:
                files.add(path, Written(True, ("".join(_texts(hunks)),)))
            else:  # moved: the hunks edit the old file's text, not the moved-to one's
                files.add(path, Written(False, _texts(hunks), None if moving else _edits(olds, news)))

    for line in lines:
        header = _CODEX_FILE_RE.match(line)
        moved = _CODEX_MOVE_RE.match(line)
        if header or moved or line.startswith("*** End Patch"):
            close()
            gone, path, hunks, olds, news, moving = path, None, [[]], [[]], [[]], False
            if header and header.group(1) != "Delete":
                path, add = header.group(2), header.group(1) == "Add"
            elif moved:  # the section's file is gone: its hunks are the moved-to file's
                if gone is not None:
                    files.add(gone, Written(True, ()))
                path, add, moving = moved.group(1), False, True
        elif path is not None:
            if line.startswith("@@"):
                hunks.append([])
                olds.append([])
                news.append([])
            elif line.startswith("+"):
                hunks[-1].append(line[1:])
                news[-1].append(line[1:])
            elif line.startswith("-"):
                olds[-1].append(line[1:])
            elif line.startswith(" ") or line == "":
                olds[-1].append(line[1:])
                news[-1].append(line[1:])
    close()


def _edits(olds: list[list[str]], news: list[list[str]]) -> tuple[Edit, ...] | None:
    """A patch section's hunks as exact replacements (their old lines -> their new lines);
    None when a hunk that changes something has no old line to place it by."""
    edits: list[Edit] = []
    for old, new in zip(olds, news):
        if old == new:
            continue
        if not any(line.strip() for line in old):
            return None
        edits.append(("\n".join(old), "\n".join(new), False))
    return tuple(edits)


# counts of at most 9 digits (int() of a hostile 5,000-digit count raises): longer is no count
_HUNK_RE = re.compile(r"^@@ -\d{1,9}(?:,(\d{1,9}))? \+\d{1,9}(?:,(\d{1,9}))? @@")


def _hunk(lines: list[str], k: int, old: int, new: int) -> tuple[list[str], int] | None:
    """The added lines of the hunk whose body starts at ``lines[k]`` (``old`` and ``new``
    lines, as its header counts them: a body line `--- x` is a removed line, not a header),
    and the index after it; None when its lines do not match its counts."""
    added: list[str] = []
    n = len(lines)
    while k < n and (old > 0 or new > 0):
        line = lines[k]
        if line.startswith("+"):
            added.append(line[1:])
            new -= 1
        elif line.startswith("-"):
            old -= 1
        elif line.startswith(" ") or line == "":
            old, new = old - 1, new - 1
        elif not line.startswith("\\"):  # `\ No newline at end of file`
            return None  # not a hunk line: the counts are wrong
        k += 1
    return (added, k) if old <= 0 and new <= 0 else None


def _unified_sections(lines: list[str], files: Files) -> None:
    """A unified diff: a new file (``--- /dev/null``) whole, else the added lines of each
    hunk, each hunk read by its header's line counts (as ``git apply`` and ``patch`` do;
    a hunk without counts or whose lines do not match them, as models write them, up to
    the next header)."""
    k, n = 0, len(lines)
    path: str | None = None
    whole = False
    hunks: list[list[str]] = []

    def close() -> None:
        if path is not None and any(hunks):
            files.add(path, Written(whole, ("".join(_texts(hunks)),) if whole else _texts(hunks)))

    while k < n:
        line = lines[k]
        if line.startswith("--- ") and k + 1 < n and lines[k + 1].startswith("+++ "):
            close()
            path, hunks = lines[k + 1][4:].split("\t")[0], []
            whole = line[4:].split("\t")[0].strip() == "/dev/null"
            k += 2
        elif path is not None and line.startswith("@@"):
            m = _HUNK_RE.match(line)
            counted = _hunk(lines, k + 1, int(m.group(1) or 1), int(m.group(2) or 1)) if m else None
            # no counts (a model's bare `@@`), or counts its lines do not match (models
            # miscount): up to the next hunk or file header; after a counted hunk, its `+`
            # lines up to there too (`git apply` drops them; a tool that ignores counts
            # writes them: fail closed)
            hunk, k = (counted[0], counted[1]) if counted is not None else ([], k + 1)
            while k < n and not lines[k].startswith("@@") and not (
                    lines[k].startswith("--- ") and k + 1 < n and lines[k + 1].startswith("+++ ")):
                if lines[k].startswith("+"):
                    hunk.append(lines[k][1:])
                k += 1
            hunks.append(hunk)
        else:
            k += 1
    close()


def _replace_blocks(lines: list[str]) -> tuple[tuple[str, str | None], ...]:
    """Each of Cline's ``<<<<<<< SEARCH / ======= / >>>>>>> REPLACE`` blocks: its REPLACE
    side, and its SEARCH side (None when the block has none)."""
    blocks: list[tuple[str, str | None]] = []
    block: list[str] | None = None
    search: list[str] | None = None
    for line in lines:
        if line.rstrip() == "=======":
            block = []
        elif line.startswith(">>>>>>> REPLACE"):
            if block is not None:
                blocks.append(("".join(f"{x}\n" for x in block),
                               None if search is None else "".join(f"{x}\n" for x in search)))
            block, search = None, None
        elif line.startswith("<<<<<<< SEARCH"):
            block, search = None, []
        elif block is not None:
            block.append(line)
        elif search is not None:
            search.append(line)
    return tuple(blocks)


def patch(text: str, files: Files) -> Written | None:
    """Read a patch argument: its files' sections into ``files``, in every format whose
    markers it holds (a marker of one format inside another's text must not hide what
    the patch writes); returns the REPLACE blocks (Cline's, which name no file)."""
    lines = lines_of(text)
    if "*** " in text:
        _codex_sections(lines, files)
    if "\n+++ " in text or text.startswith("+++ "):
        _unified_sections(lines, files)
    blocks = _replace_blocks(lines) if ">>>>>>> REPLACE" in text else ()
    if not blocks:
        return None
    exact = None if any(search is None or not search.strip() for _, search in blocks) else tuple(
        (search, replace, False) for replace, search in blocks)
    return Written(False, tuple(replace for replace, _ in blocks), exact)  # type: ignore[arg-type]
