"""What one file-writing call wrote (:func:`written_call`, read once per call): its whole
text, or the new texts of a partial edit, per file it wrote, from its arguments: the text
arguments of write and edit tools, lists of edits, and patches (read by
:mod:`pipeline.analysis.patches`). :mod:`pipeline.analysis.written` follows a file's text
with it.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from pipeline.analysis.patches import Edit, Files, Written, key_of, lines_of, patch

__all__ = ["Files", "Written", "WrittenCall", "lines_of", "written_call", "written_texts"]

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
        key = key_of(name)
        named = key is not None and (key in self.files.named or key in self.files.aliases)
        patched = self.files.get(name) if named else None
        mine = self.own if self.own is not None and (
            key_of(self.own_path) == key if self.own_path is not None else not named) else None
        if patched is None and mine is None:
            return self.files.get(name) if self.own is None else None
        if patched is None or mine is None:
            return patched or mine
        # both (a patch of the call's own file beside its own text): each hides nothing
        edits = None if patched.edits is None or mine.edits is None or patched.whole or mine.whole \
            else mine.edits + patched.edits
        return Written(patched.whole or mine.whole, mine.texts + patched.texts, edits)


# the text an edit replaces, beside its new text (Edit: old_string; str_replace: old_str;
# OpenCode, Copilot: oldString), and whether every occurrence is replaced
_OLD_TEXT_ARGS = ("old_string", "old_str", "oldString", "old_text", "oldText")
_ALL_ARGS = ("replace_all", "replaceAll")
_JS_REPLACEMENT = re.compile(r"\$[&$`']")


def _edit_of(args: dict[str, Any]) -> tuple[str | None, Edit | None]:
    """An edit's new text, and it as an exact replacement when it names the text it
    replaces (else None: an insert, an append, a sketch such as Cursor's code_edit)."""
    key = next((k for k in _EDIT_TEXT_ARGS if isinstance(args.get(k), str)), None)
    if key is None:
        return None, None
    old = next((v for k in _OLD_TEXT_ARGS if isinstance(v := args.get(k), str)), None)
    # a JavaScript tool's String.replace reads `$&`, `$$`, `` $` ``, `$'` in the new text as
    # patterns (Gemini CLI, older OpenCode): what it wrote is not the text as given
    exact = key in ("new_string", "new_str", "newString", "new_text", "newText") and old is not None and old != "" \
        and _JS_REPLACEMENT.search(args[key]) is None
    return args[key], (old, args[key], any(args.get(k) is True for k in _ALL_ARGS)) if exact else None


def _edit_texts(args: dict[str, Any], files: Files) -> tuple[tuple[str, ...], tuple[Edit, ...] | None]:
    """The new texts of a partial edit, its own then each listed edit's (those that name a
    file of their own go to ``files``), and them as exact replacements (None when one is
    not)."""
    texts: list[str] = []
    # str_replace_editor's `insert` (and any other command) inserts its new text: no replacement
    edits: list[Edit] | None = [] if args.get("command") in (None, "str_replace") else None
    text, edit = _edit_of(args)
    if text is not None:
        texts.append(text)
        edits = None if edit is None or edits is None else [edit]
    for key in _EDIT_LIST_ARGS:
        items = args.get(key)
        for item in items if isinstance(items, list) else ():
            if not isinstance(item, dict):
                continue
            text, edit = _edit_of(item)
            path = next((item[k] for k in _ITEM_PATH_ARGS if isinstance(item.get(k), str)), None)
            if text is None:
                continue
            if path is None:
                texts.append(text)
                edits = None if edits is None or edit is None else [*edits, edit]
            else:
                files.add(path, Written(False, (text,), None if edit is None else (edit,)))
    return tuple(texts), None if edits is None else tuple(edits)


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
        texts, edits = _edit_texts(args, files)
        return Written(False, texts, edits) if texts else None
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
    blocks = [b for key in _PATCH_ARGS if isinstance(args.get(key), str) and (b := patch(args[key], files))]
    for folder in (args.get("cd"), args.get("workdir")):  # Codex's apply_patch run by a shell tool
        if isinstance(folder, str) and folder.strip():
            files.rebase(folder)
    own = _own(tool_key, args, files)
    if blocks:  # Cline's blocks are pieces of the call's own file
        pieces = tuple(t for b in blocks for t in b.texts)
        exact = None if any(b.edits is None for b in blocks) else tuple(e for b in blocks for e in b.edits or ())
        own = Written(False, pieces, exact) if own is None else Written(
            own.whole, own.texts + pieces, None if own.whole or own.edits is None or exact is None
            else own.edits + exact)
    own_path = next((v for k in _OWN_PATH_ARGS if isinstance(v := args.get(k), str) and v.strip()), None)
    return WrittenCall(files, own, own_path) if own is not None or files.named else None


def written_texts(tool_key: str, arguments: str, name: str) -> Written | None:
    """What a file-writing call wrote into the file ``name``: its whole text, or the new
    texts of a partial edit; None when no text of it can be read."""
    call = written_call(tool_key, arguments)
    return None if call is None else call.into(name)
