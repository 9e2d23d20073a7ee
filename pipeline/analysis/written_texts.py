"""What one file-writing call wrote (:func:`written_call`, read once per call): its whole
text, or the new texts of a partial edit, per file it wrote, from its arguments: the text
arguments of write and edit tools, lists of edits, and patches (Codex's envelope, unified
diffs, Cline's SEARCH/REPLACE blocks). :mod:`pipeline.analysis.written` follows a file's
text with it. Every parser reads its text line by line, once: a patch is hostile input.
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import Any, NamedTuple

# the argument holding a whole file's text, in this order (generic write_file: content;
# Claude Code Write: content; OpenHands / str_replace_editor create: file_text)
_CONTENT_ARGS = ("content", "contents", "file_text", "text", "code")
# arguments of a partial edit: what the file holds besides them is not known
_PARTIAL_ARGS = frozenset({"old_str", "old_string", "oldString", "new_str", "new_string", "newString", "insert_line",
                           "insert_text", "old_text", "new_text", "newText", "edits", "replacements", "diff",
                           "patch", "patchText", "start_line", "end_line", "code_edit"})
_PARTIAL_TOOL_RE = re.compile(r"append|edit|patch|insert|replace")  # unless its command writes whole
# an editor's commands that write the whole file (str_replace_editor / OpenHands: create;
# Goose's text_editor: write)
_WHOLE_COMMANDS = frozenset({"create", "write"})
# the new text of a partial edit, in this order (Claude Code / Gemini CLI Edit, Cursor's
# search_replace: new_string; str_replace_editor: new_str, or insert_text for `insert`;
# OpenCode, Copilot: newString; Cursor's edit_file: code_edit; an append or an insert: its
# content / code)
_EDIT_TEXT_ARGS = ("new_string", "new_str", "insert_text", "newString", "new_text", "newText", "code_edit",
                   *_CONTENT_ARGS)
# lists of edits, each with its own new text (Claude Code / OpenCode MultiEdit: edits;
# Copilot's multi_replace_string_in_file: replacements, each naming its own file)
_EDIT_LIST_ARGS = ("edits", "replacements")
_ITEM_PATH_ARGS = ("file_path", "filePath", "path", "target_file")
# a patch: Codex's envelope (`*** Add File: x`, `*** Update File: x`; apply_patch's
# `input`, OpenCode's `patchText`), a unified diff, or Cline's SEARCH/REPLACE blocks
_PATCH_ARGS = ("input", "patch", "patchText", "diff")
_CODEX_FILE_RE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.*)$")
_CODEX_MOVE_RE = re.compile(r"^\*\*\* Move to: (.*)$")


class Written(NamedTuple):
    """What one file-writing call wrote into one file."""

    whole: bool  # True: the texts replace what the file held (none: it is gone); False: pieces added
    texts: tuple[str, ...]


def lines_of(text: str) -> list[str]:
    """``text``'s lines as a shell, git and Python's tokenizer cut them: at ``\\n`` (a
    ``\\r`` before it dropped) and nowhere else (``str.splitlines`` also cuts at form
    feeds and other separators a line of code may hold)."""
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


def _key(path: str) -> str | None:
    """A path as files are compared (``sql/written_runs.sql`` normalises its names the
    same way); None for no path."""
    path = path.strip()
    return posixpath.normpath(path) if path else None


class Files:
    """What a call's patches or listed edits wrote, per file, in order: by the path they
    name (:func:`_key`), and by that path without a diff's ``a/`` / ``b/`` prefix."""

    def __init__(self) -> None:
        # key -> (whether the first write was whole, the texts in order): appended to, never
        # copied (a patch may hold a hundred thousand sections of one file)
        self.named: dict[str, tuple[bool, list[str]]] = {}
        self.aliases: dict[str, tuple[bool, list[str]]] = {}

    def add(self, path: str, written: Written) -> None:
        """Record ``written`` for ``path`` (after what the call wrote there before)."""
        if (key := _key(path)) is None:
            return
        self.named.setdefault(key, (written.whole, []))[1].extend(written.texts)
        if path.startswith(("a/", "b/")) and (alias := _key(path[2:])) is not None:
            self.aliases.setdefault(alias, (written.whole, []))[1].extend(written.texts)

    def rebase(self, folder: str) -> None:
        """Also name each relative file under ``folder`` (where the call applied its patch:
        a later step may name it so)."""
        for key, found in list(self.named.items()):
            if not key.startswith(("/", "~")) and (joined := _key(posixpath.join(folder, key))) is not None:
                self.aliases.setdefault(joined, found)

    def get(self, name: str) -> Written | None:
        """What was written into ``name``; with no section of that name, the only file's
        when one file is named (its header may spell the path otherwise)."""
        key = _key(name)
        found = None if key is None else self.named.get(key) or self.aliases.get(key)
        if found is None and len(self.named) == 1:
            found = next(iter(self.named.values()))
        return None if found is None else Written(found[0], tuple(found[1]))


# the argument naming the file a call writes its own text into (write and edit tools)
_OWN_PATH_ARGS = ("path", "file_path", "filePath", "filename", "file", "target_file", "targetFile",
                  "absolute_path")


class WrittenCall(NamedTuple):
    """What one call wrote: per file its patches or its list of edits name (``files``),
    and into the file the call itself names (``own``: its text arguments, Cline's blocks;
    ``own_path``: that file, when an argument names it)."""

    files: Files
    own: Written | None
    own_path: str | None

    def into(self, name: str) -> Written | None:
        """What the call wrote into ``name`` (a file the call's resources say it wrote):
        what its patches or listed edits wrote there, and its own text when ``name`` is
        its own file (the file its path argument names; with none, a file no patch
        section names); with neither, a patch of one file whose header spells the path
        otherwise."""
        key = _key(name)
        named = key is not None and (key in self.files.named or key in self.files.aliases)
        patched = self.files.get(name) if named else None
        mine = self.own if self.own is not None and (
            _key(self.own_path) == key if self.own_path is not None else not named) else None
        if patched is None and mine is None:
            return self.files.get(name) if self.own is None else None
        if patched is None or mine is None:
            return patched or mine
        # both (a patch of the call's own file beside its own text): each hides nothing
        return Written(patched.whole or mine.whole, mine.texts + patched.texts)


def _texts(hunks: list[list[str]]) -> tuple[str, ...]:
    return tuple("\n".join(h) + "\n" for h in hunks if h)


def _codex_sections(lines: list[str], files: Files) -> None:
    """Codex's patch envelope: an added file whole, an updated file as the added lines of
    each hunk; a file moved away is gone (nothing known of it), the moved-to file gets the
    hunks (what it held before is not followed across the move)."""
    path: str | None = None
    add = False
    hunks: list[list[str]] = []

    def close() -> None:
        if path is not None and (add or any(hunks)):
            files.add(path, Written(add, ("".join(_texts(hunks)),) if add else _texts(hunks)))

    for line in lines:
        header = _CODEX_FILE_RE.match(line)
        moved = _CODEX_MOVE_RE.match(line)
        if header or moved or line.startswith("*** End Patch"):
            close()
            gone, path, hunks = path, None, [[]]
            if header and header.group(1) != "Delete":
                path, add = header.group(2), header.group(1) == "Add"
            elif moved:  # the section's file is gone: its hunks are the moved-to file's
                if gone is not None:
                    files.add(gone, Written(True, ()))
                path, add = moved.group(1), False
        elif path is not None:
            if line.startswith("@@"):
                hunks.append([])
            elif line.startswith("+"):
                hunks[-1].append(line[1:])
    close()


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


def _replace_blocks(lines: list[str]) -> tuple[str, ...]:
    """The REPLACE side of each of Cline's ``<<<<<<< SEARCH / ======= / >>>>>>> REPLACE`` blocks."""
    blocks: list[str] = []
    block: list[str] | None = None
    for line in lines:
        if line.rstrip() == "=======":
            block = []
        elif line.startswith(">>>>>>> REPLACE"):
            if block is not None:
                blocks.append("".join(f"{x}\n" for x in block))
            block = None
        elif line.startswith("<<<<<<< SEARCH"):
            block = None
        elif block is not None:
            block.append(line)
    return tuple(blocks)


def _patch(text: str, files: Files) -> Written | None:
    """Read a patch argument: its files' sections into ``files``, in every format whose
    markers it holds (a marker of one format inside another's text must not hide what
    the patch writes); returns the REPLACE blocks (Cline's, which name no file)."""
    lines = lines_of(text)
    if "*** " in text:
        _codex_sections(lines, files)
    if "\n+++ " in text or text.startswith("+++ "):
        _unified_sections(lines, files)
    blocks = _replace_blocks(lines) if ">>>>>>> REPLACE" in text else ()
    return Written(False, blocks) if blocks else None


def _edit_texts(args: dict[str, Any], files: Files) -> tuple[str, ...]:
    """The new texts of a partial edit: its own, then each listed edit's (those that name
    a file of their own go to ``files``)."""
    texts = [v for k in _EDIT_TEXT_ARGS if isinstance(v := args.get(k), str)][:1]
    for key in _EDIT_LIST_ARGS:
        items = args.get(key)
        for item in items if isinstance(items, list) else ():
            if not isinstance(item, dict):
                continue
            text = next((v for k in _EDIT_TEXT_ARGS if isinstance(v := item.get(k), str)), None)
            path = next((item[k] for k in _ITEM_PATH_ARGS if isinstance(item.get(k), str)), None)
            if text is None:
                continue
            if path is None:
                texts.append(text)
            else:
                files.add(path, Written(False, (text,)))
    return tuple(texts)


def _own(tool_key: str, args: dict[str, Any], files: Files) -> Written | None:
    """What the call wrote into the file it names itself, by its text arguments: its whole
    text, or the new texts of a partial edit (a listed edit naming its own file goes to
    ``files``)."""
    command = args.get("command")
    if command is not None:
        partial = not (isinstance(command, str) and command in _WHOLE_COMMANDS)  # str_replace / insert ...
    else:
        partial = bool(_PARTIAL_ARGS & args.keys() or args.get("mode") == "append"
                       or _PARTIAL_TOOL_RE.search(tool_key))
    if partial:
        texts = _edit_texts(args, files)
        return Written(False, texts) if texts else None
    value = next((args[k] for k in _CONTENT_ARGS if k in args), None)
    return Written(True, (value,)) if isinstance(value, str) else None


def written_call(tool_key: str, arguments: str) -> WrittenCall | None:
    """What a file-writing call wrote (see :class:`WrittenCall`); None when no text of it
    can be read. Its patches and its own text arguments are both read: a patch argument
    beside a ``content`` hides neither."""
    try:
        args = json.loads(arguments)
    except (ValueError, RecursionError):
        return None
    if not isinstance(args, dict):
        return None
    files = Files()
    blocks = [b for key in _PATCH_ARGS if isinstance(args.get(key), str) and (b := _patch(args[key], files))]
    for folder in (args.get("cd"), args.get("workdir")):  # Codex's apply_patch run by a shell tool
        if isinstance(folder, str) and folder.strip():
            files.rebase(folder)
    own = _own(tool_key, args, files)
    if blocks:  # Cline's blocks are pieces of the call's own file
        pieces = tuple(t for b in blocks for t in b.texts)
        own = Written(False, pieces) if own is None else Written(own.whole, own.texts + pieces)
    own_path = next((v for k in _OWN_PATH_ARGS if isinstance(v := args.get(k), str) and v.strip()), None)
    return WrittenCall(files, own, own_path) if own is not None or files.named else None


def written_texts(tool_key: str, arguments: str, name: str) -> Written | None:
    """What a file-writing call wrote into the file ``name``: its whole text, or the new
    texts of a partial edit; None when no text of it can be read."""
    call = written_call(tool_key, arguments)
    return None if call is None else call.into(name)
