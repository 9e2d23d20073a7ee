"""Written programs: a program step that runs a file earlier file-writing calls wrote
(``python sync.py`` after ``write_file("sync.py", ...)``) also gets what the written text
reads, runs, deletes and sends (:func:`written_programs`).

The file's text is followed from write to write, in step order, up to each run
(``sql/written_runs.sql`` gives the runs and the writes of each file, in order):

- a whole write (``write_file``'s ``content``, an editor's ``create`` / ``write``, a
  patch's added file) replaces what was known of the file;
- a partial edit (``Edit``'s ``new_string``, ``str_replace``'s ``new_str``, Cursor's
  ``code_edit``, an append's ``content``, the lines a patch adds) adds its new text, each
  piece analysed alone: what the file holds beside it is not known, so the run gets at
  least what the new text does (a lower bound; a step that also removes a line is not
  followed);
- a write whose text cannot be read leaves what is known as it is.

The text is analysed as code (``.py``, a python ``#!``) or as a shell script (``.sh``,
``.bash``, a sh/bash ``#!``); a piece of Python is dedented first (an edit inside a
function is indented). What the text writes is not added (the run writes what it writes;
the writer's own rows say which file it wrote).
"""

from __future__ import annotations

import json
import posixpath
import re
import textwrap
from typing import Any, NamedTuple

import duckdb
import pyarrow as pa

from pipeline.analysis.analysed import Found, analysed, arrow_table
from pipeline.analysis.shell import MAX_COMMAND_CHARS
from pipeline.sql import load_sql

# the argument holding a whole file's text, in this order (generic write_file: content;
# Claude Code Write: content; OpenHands / str_replace_editor create: file_text)
_CONTENT_ARGS = ("content", "contents", "file_text", "text", "code")
# arguments of a partial edit: what the file holds besides them is not known
_PARTIAL_ARGS = frozenset({"old_str", "old_string", "oldString", "new_str", "new_string", "newString", "insert_line",
                           "old_text", "new_text", "newText", "edits", "replacements", "diff", "patch",
                           "patchText", "start_line", "end_line", "code_edit"})
_PARTIAL_TOOL_RE = re.compile(r"append|edit|patch|insert|replace")  # unless its command writes whole
# an editor's commands that write the whole file (str_replace_editor / OpenHands: create;
# Goose's text_editor: write)
_WHOLE_COMMANDS = frozenset({"create", "write"})
# the new text of a partial edit, in this order (Claude Code / Gemini CLI Edit, Cursor's
# search_replace: new_string; str_replace_editor: new_str; OpenCode, Copilot: newString;
# Cursor's edit_file: code_edit; an append or an insert: its content / code)
_EDIT_TEXT_ARGS = ("new_string", "new_str", "newString", "new_text", "newText", "code_edit", *_CONTENT_ARGS)
# lists of edits, each with its own new text (Claude Code / OpenCode MultiEdit: edits;
# Copilot's multi_replace_string_in_file: replacements, each naming its own file)
_EDIT_LIST_ARGS = ("edits", "replacements")
_ITEM_PATH_ARGS = ("file_path", "filePath", "path", "target_file")
# a patch: Codex's envelope (`*** Add File: x`, `*** Update File: x`; apply_patch's
# `input`, OpenCode's `patchText`), a unified diff, or Cline's SEARCH/REPLACE blocks
_PATCH_ARGS = ("input", "patch", "patchText", "diff")
_CODEX_FILE_RE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.*)$")
_CODEX_MOVE_RE = re.compile(r"^\*\*\* Move to: (.*)$")
_REPLACE_BLOCK_RE = re.compile(r"^=======[ \t]*\n(.*?)^>>>>>>> REPLACE", re.M | re.S)
_WRITTEN_ACCESS = frozenset({"read", "execute", "delete", "send", "payload"})
_SHEBANG_PY_RE = re.compile(r"^#![^\n]*\bpython[0-9.]*\b")
_SHEBANG_SH_RE = re.compile(r"^#![^\n]*\b(?:ba|da|z|k)?sh\b")


class Written(NamedTuple):
    """What one file-writing call wrote into one file."""

    whole: bool  # True: ``texts[0]`` is the file's whole text; False: pieces added to it
    texts: tuple[str, ...]


def _same_file(named: str, name: str) -> bool:
    """Whether a path a patch or an edit names is ``name`` (``sql/written_runs.sql``'s
    normalised name): equal once normalised, a diff's ``a/`` / ``b/`` prefix aside."""
    named = named.strip()
    if not named:
        return False
    candidates = [named, named[2:]] if named.startswith(("a/", "b/")) else [named]
    return any(posixpath.normpath(c) == posixpath.normpath(name) for c in candidates)


def _codex_patch(patch: str, name: str) -> Written | None:
    """What Codex's patch envelope writes into ``name``: an added file whole, an updated
    (or moved-to) file as the added lines of each hunk."""
    written: Written | None = None
    section: str | None = None  # "Add" / "Update" when the section is name's, else None
    hunks: list[list[str]] = []
    for line in [*patch.splitlines(), "*** End Patch"]:
        header = _CODEX_FILE_RE.match(line)
        if header or line.startswith("*** End Patch"):
            if section is not None and any(hunks):
                texts = tuple("\n".join(h) + "\n" for h in hunks if h)
                written = Written(True, ("".join(texts),)) if section == "Add" else Written(False, texts)
            section, hunks = None, []
            if header and header.group(1) != "Delete" and _same_file(header.group(2), name):
                section, hunks = header.group(1), [[]]
            continue
        moved = _CODEX_MOVE_RE.match(line)
        if moved:  # an update moved to another name: its hunks are that file's
            section, hunks = ("Update", [[]]) if _same_file(moved.group(1), name) else (None, [])
        elif section is not None:
            if line.startswith("@@"):
                hunks.append([])
            elif line.startswith("+"):
                hunks[-1].append(line[1:])
    return written


def _unified_diff(diff: str, name: str) -> Written | None:
    """What a unified diff writes into ``name``: a new file (``--- /dev/null``) whole, else
    the added lines of each hunk."""
    lines = diff.splitlines()
    written: Written | None = None
    k = 0
    while k < len(lines):
        if not (lines[k].startswith("--- ") and k + 1 < len(lines) and lines[k + 1].startswith("+++ ")):
            k += 1
            continue
        old, new = lines[k][4:].split("\t")[0], lines[k + 1][4:].split("\t")[0]
        k += 2
        hunks: list[list[str]] = []
        while k < len(lines) and not (lines[k].startswith("--- ") and k + 1 < len(lines)
                                      and lines[k + 1].startswith("+++ ")):
            if lines[k].startswith("@@"):
                hunks.append([])
            elif lines[k].startswith("+") and hunks:
                hunks[-1].append(lines[k][1:])
            k += 1
        if _same_file(new, name) and any(hunks):
            texts = tuple("\n".join(h) + "\n" for h in hunks if h)
            written = Written(True, ("".join(texts),)) if old.strip() == "/dev/null" else Written(False, texts)
    return written


def _patch(text: str, name: str) -> Written | None:
    """What a patch argument writes into ``name`` (None: it is no patch of that file)."""
    if "*** Begin Patch" in text or re.search(r"^\*\*\* (?:Add|Update) File: ", text, re.M):
        return _codex_patch(text, name)
    if re.search(r"^@@", text, re.M) and re.search(r"^\+\+\+ ", text, re.M):
        return _unified_diff(text, name)
    blocks = tuple(m.group(1) for m in _REPLACE_BLOCK_RE.finditer(text))
    return Written(False, blocks) if blocks else None


def _edit_texts(args: dict[str, Any], name: str) -> tuple[str, ...]:
    """The new texts of a partial edit: its own, then each listed edit's (of ``name``)."""
    texts = [v for k in _EDIT_TEXT_ARGS if isinstance(v := args.get(k), str)][:1]
    for key in _EDIT_LIST_ARGS:
        items = args.get(key)
        for item in items if isinstance(items, list) else ():
            if not isinstance(item, dict):
                continue
            path = next((item[k] for k in _ITEM_PATH_ARGS if isinstance(item.get(k), str)), None)
            if path is not None and not _same_file(path, name):
                continue
            texts += [v for k in _EDIT_TEXT_ARGS if isinstance(v := item.get(k), str)][:1]
    return tuple(texts)


def written_texts(tool_key: str, arguments: str, name: str) -> Written | None:
    """What a file-writing call wrote into the file ``name``: its whole text, or the new
    texts of a partial edit; None when no text of it can be read."""
    try:
        args = json.loads(arguments)
    except (ValueError, RecursionError):
        return None
    if not isinstance(args, dict):
        return None
    for key in _PATCH_ARGS:
        if isinstance(args.get(key), str) and (patched := _patch(args[key], name)) is not None:
            return patched
    command = args.get("command")
    if command is not None:
        partial = not (isinstance(command, str) and command in _WHOLE_COMMANDS)  # str_replace / insert ...
    else:
        partial = bool(_PARTIAL_ARGS & args.keys() or args.get("mode") == "append"
                       or _PARTIAL_TOOL_RE.search(tool_key))
    if partial:
        texts = _edit_texts(args, name)
        return Written(False, texts) if texts else None
    value = next((args[k] for k in _CONTENT_ARGS if k in args), None)
    return Written(True, (value,)) if isinstance(value, str) else None


def written_content(tool_key: str, arguments: str) -> str | None:
    """The whole text a file-writing call writes, or None (a partial edit, an append, no
    text argument)."""
    written = written_texts(tool_key, arguments, "")
    return written.texts[0] if written is not None and written.whole else None


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


# A file's known texts are also analysed joined, at a run after new pieces, at most this
# many times per file: a hostile trajectory alternating edits and runs would otherwise have
# the whole file analysed again at every run (each piece is still analysed alone)
MAX_JOINED_PER_FILE = 32


class _File:
    """What is known of one file's text, followed write by write (:meth:`wrote`) up to
    each run (:meth:`at_run`)."""

    def __init__(self) -> None:
        self._forget()

    def _forget(self) -> None:
        """Nothing known (before the first write; a whole write replaces the text)."""
        self.shell: bool | None = None  # how it runs (program_language of its name and first text)
        self.rows: set[tuple[str, str]] = set()  # what its known texts read, run, delete, send
        # its known texts in order (pieces dedented) while they fit the analyser's bound
        # together (None past it: joined, they would be opaque)
        self.texts: list[str] | None = []
        self.chars = 0
        self.pending = False  # pieces added since the texts were last analysed joined
        self.joined = 0

    def wrote(self, name: str, written: Written, seen: dict[tuple[bool, str], Found]) -> None:
        """A write of ``written`` into the file ``name``: each text analysed alone."""
        if written.whole:
            self._forget()
        for text in written.texts:
            if self.shell is None:
                self.shell = program_language(name, text)
            if self.shell is None:
                continue
            piece = text if self.shell or written.whole else textwrap.dedent(text)
            self.rows |= _rows(self.shell, piece, seen)
            if self.texts is not None:
                self.texts.append(piece)
                self.chars += len(piece) + 1
                self.texts = self.texts if self.chars <= MAX_COMMAND_CHARS else None
                self.pending = not written.whole

    def at_run(self, seen: dict[tuple[bool, str], Found]) -> set[tuple[str, str]]:
        """What a run of the file gets: what each known text does, and what they do joined
        in order (a value one piece reads and a later piece sends is one program's
        payload, as in the file)."""
        if self.pending and self.texts is not None and self.shell is not None and self.joined < MAX_JOINED_PER_FILE:
            self.rows |= _rows(self.shell, "\n".join(self.texts), seen)
            self.joined += 1
        self.pending = False
        return self.rows


def _rows(shell: bool, text: str, seen: dict[tuple[bool, str], Found]) -> set[tuple[str, str]]:
    return {(a, r) for a, r in analysed((shell, text), seen).rows if a in _WRITTEN_ACCESS}


def written_programs(con: duckdb.DuckDBPyConnection) -> None:
    """Add to ``resources`` what each written program a program step runs reads, runs,
    deletes and sends (see the module docstring): each distinct text analysed once, at
    most ``MAX_COMMAND_CHARS`` of it (the analyser's own bound: longer is opaque, and adds
    nothing); the runs and writes come from ``sql/written_runs.sql``."""
    seen: dict[tuple[bool, str], Found] = {}
    rows: set[tuple[str, int, str, str]] = set()
    followed: tuple[str, str] | None = None  # the file being followed (rows come file by file)
    known = _File()
    for trajectory_id, step_idx, name, is_write, tool_key, arguments in con.execute(load_sql("written_runs")).fetchall():
        if (trajectory_id, name) != followed:
            followed, known = (trajectory_id, name), _File()
        if is_write:
            written = written_texts(tool_key, arguments, name)
            if written is not None:
                known.wrote(name, written, seen)
        else:
            rows.update((trajectory_id, step_idx, access, resource) for access, resource in known.at_run(seen))
    if not rows:
        return
    schema = pa.schema([("trajectory_id", pa.string()), ("step_idx", pa.int64()), ("access", pa.string()),
                        ("resource", pa.string())])
    con.register("written_program_in", arrow_table(sorted(rows), schema))
    con.execute("insert into resources select distinct * from written_program_in "
                "except select * from resources")
    con.unregister("written_program_in")
