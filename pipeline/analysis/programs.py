"""Which argument of a shell/code call holds its program, and the program's text
(``resources`` analyses it; ``inert_texts`` masks the data parts of the same command).

A catalogued tool names its program argument (``shell`` / ``code``); an inferred one takes
the first of the policy's ``inference.shell_args`` / ``code_args`` each call passes, and so
does a catalogued tool's call that passes none of its own. A list of strings is an argv or
several command lines (``inference.command_list_args``, :func:`program_text`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection

from pipeline.ingest.argv import argv_command

_PATH_START = re.compile(r"[/~.]|[A-Za-z]:[\\/]")


class UnreadableArguments(ValueError):
    """A call's arguments JSON that DuckDB reads and Python's JSON reader does not: nested
    deeper than its recursion limit, or an integer of more than 4,300 digits (the step has
    arguments, but no program can be taken from them)."""


def _loaded(arguments: str) -> object:
    """``json.loads(arguments)``; :class:`UnreadableArguments` where DuckDB's reader and
    Python's differ (a RecursionError or ValueError that ended the whole run before)."""
    try:
        return json.loads(arguments)
    except RecursionError as exc:
        raise UnreadableArguments("arguments nested too deeply to read") from exc
    except ValueError as exc:
        raise UnreadableArguments(f"arguments Python cannot read: {str(exc)[:120]}") from exc


def _command_line(first: str) -> bool:
    """Whether a list's first string is a command line, not a program's name: it holds
    whitespace, unless it is a path whose whitespace is inside it (the text after the first
    space goes on with the path, ``/Users/Jane Doe/.venv/bin/python``, ``C:\\Program
    Files\\x``: an argv's program), not a path followed by arguments (``./run.sh --flag``,
    ``/usr/bin/python3 x.py``, ``~/bin/deploy prod``: a command line)."""
    parts = first.strip().split(None, 1)
    if len(parts) < 2:
        return False
    rest = parts[1]
    inside_path = bool(_PATH_START.match(first.strip())) and not _PATH_START.match(rest) \
        and not rest.startswith("-") and ("/" in rest or "\\" in rest)
    return not inside_path


def program_text(arguments: str, arg: str | None, command_lists: Collection[str] = ()) -> str | None:
    """The program a call's argument ``arg`` holds (a command or code text), or None. A list
    of strings is an argv (exec-style tools: the command line it runs), or command lines
    run one after the other (joined by ``;``, as LangChain's ShellTool runs its ``commands``)
    under a name of ``command_lists`` (the policy's ``inference.command_list_args``) or when
    its first string is a command line (:func:`_command_line`)."""
    if arg is None:
        return None
    document = _loaded(arguments)
    value = document.get(arg) if isinstance(document, dict) else None
    if value is None:
        return None
    if isinstance(value, list) and value and all(isinstance(w, str) for w in value):
        # one string alone is a command line (no program is named `/bin/rm build/out`)
        lines = arg in command_lists or len(value) == 1 or _command_line(value[0])
        return ";".join(value) if lines else argv_command(value)
    return value if isinstance(value, str) else json.dumps(value)


def program_arg(arguments: str, arg: str | None, candidates: tuple[str, ...], catalog: bool = False) -> str | None:
    """A shell/code tool's program argument in this call. An inferred tool's: the first of
    the lexicon's ``candidates`` the call passes (chosen per call, so it does not depend on
    which other calls share the shard: ``pipeline.analysis.inference``). A catalogued
    tool's (``catalog``): its own ``arg``, else (a call that does not pass it: a LangChain
    terminal handed its command as ``input``) the first of the ``candidates`` the call
    passes, so its program is read, never silently skipped."""
    if arg is None or not candidates:
        return arg
    try:
        present = _loaded(arguments)
    except ValueError:  # UnreadableArguments too: program_text says so
        return arg
    if not isinstance(present, dict) or catalog and arg in present:
        return arg
    return next((c for c in candidates if c in present), arg)


def passes(arguments: str, names: tuple[str | None, ...]) -> bool:
    """Whether the call's arguments (a JSON object) hold one of ``names``."""
    try:
        present = _loaded(arguments)
    except ValueError:  # UnreadableArguments too: program_text says so
        return False
    return isinstance(present, dict) and any(n is not None and n in present for n in names)


def call_program(arguments: str, shell_arg: str | None, code_arg: str | None,
             candidates: tuple[tuple[str, ...], tuple[str, ...]] = ((), ()),
             catalog: bool = False, command_lists: Collection[str] = ()) -> tuple[bool, str] | None:
    """The program a call runs: (True, shell command) or (False, code), None if neither
    (:class:`UnreadableArguments` when Python's JSON reader cannot read the arguments).
    A catalogued tool falls back to ``candidates`` only when the call passes neither of its
    own program arguments (as ``sql/edges.sql`` marks the control arguments)."""
    if catalog and passes(arguments, (shell_arg, code_arg)):
        candidates = ((), ())
    shell_arg = program_arg(arguments, shell_arg, candidates[0], catalog)
    code_arg = program_arg(arguments, code_arg, candidates[1], catalog)
    command = program_text(arguments, shell_arg, command_lists)
    if command is not None:
        return True, command
    code = program_text(arguments, code_arg)
    return (False, code) if code is not None else None
