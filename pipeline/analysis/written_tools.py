"""Files a build or test tool runs without being programs themselves: a makefile's recipes
(``make``) and a ``package.json``'s scripts (``npm test``, ``yarn build``). The shell
analyser names such a run's runner ``make:<goals>`` or ``npm:<scripts>``
(``ShellAnalysis.runners``: :mod:`pipeline.analysis.shell.tool_runs`); written programs
(:mod:`pipeline.analysis.written`) read the file's known texts through
:func:`tool_text`: the shell commands the tool runs for those goals or scripts, analysed
as a shell script.

Both readers are for what agents write, not full tools: a makefile's (its reader is
:mod:`pipeline.analysis.written_makefile`) and a ``package.json``'s ``scripts``. Where they
cannot tell what runs they take more, never less (fail closed): a piece of a
``package.json`` that is no JSON gives the scripts its ``"name": "command"`` pairs name,
or is itself a command when it holds none. Every reading is linear in the text and
bounded (:data:`pipeline.analysis.written_makefile.COMMAND_CHARS`)."""

from __future__ import annotations

import json
import re

from pipeline.analysis.shell.tool_runs import EVERY as _EVERY, MAKE_PREFIX, MAX_NAMES, TOOL_PREFIXES
from pipeline.analysis.written_makefile import COMMAND_CHARS, makefile_commands, makefile_targets

__all__ = ["makefile_commands", "package_scripts", "tool_runners", "tool_targets", "tool_text"]

# nested script runs inside a script (`npm run lint`, `npm run -s lint`, `yarn -s lint`,
# `pnpm --silent run lint`): the first word after the command and its options
# (possessive: the options are never given back, so a long run of them costs one pass)
_NESTED_RUN_RE = re.compile(
    r"\b(?:npm|pnpm|yarn)(?:[ \t]+-{1,2}[\w-]++)*+(?:[ \t]+(?:run|run-script)\b)?+(?:[ \t]+-{1,2}[\w-]++)*+"
    r"[ \t]+([A-Za-z0-9_:.][A-Za-z0-9_:.-]*+)")
_STRING_END_RE = re.compile(r'(?:[^"\\]|\\.)*+"')  # the rest of a JSON string, its closing quote


def tool_runners(runners: list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """The runners of ``runners`` that read a file as a tool's (:data:`TOOL_PREFIXES`)."""
    return tuple(r for r in runners or () if r.startswith(TOOL_PREFIXES))


def tool_text(runner: str, text: str, piece: bool = False, defined: frozenset[str] = frozenset()) -> str:
    """The shell commands a run by ``runner`` (``make:...``, ``npm:...``) takes from a
    file's ``text``, one per line ("" when none); ``piece``: the text is an edit's piece,
    not the whole file (:func:`makefile_commands`, :func:`package_scripts`); ``defined``:
    the goals another reading of the same file has a rule for (:func:`tool_targets`)."""
    names = [n for n in runner.split(":", 1)[1].split(",") if n]
    if runner.startswith(MAKE_PREFIX):
        out = makefile_commands(text, names, piece, defined)
    else:
        out = package_scripts(text, names, piece)
    return out[:COMMAND_CHARS]


def tool_targets(runner: str, text: str, piece: bool = False) -> frozenset[str]:
    """The names a run by ``runner`` may ask for that ``text`` defines: a makefile's rule
    targets (none for a ``package.json``: a script it lacks runs nothing)."""
    return makefile_targets(text, piece) if runner.startswith(MAKE_PREFIX) else frozenset()


def _json_strings(text: str) -> list[tuple[str, int]]:
    """The JSON string literals of ``text`` in order, each with where it ends (for the first)
    or starts (for the next): (literal with its quotes, end offset); one past the last
    quote when the text ends inside a string. Linear: each character is read once."""
    out: list[tuple[str, int]] = []
    i = text.find('"')
    while i >= 0:
        m = _STRING_END_RE.match(text, i + 1)
        if m is None:
            break
        out.append((text[i:m.end()], m.end()))
        i = text.find('"', m.end())
    return out


def _scripts_of(text: str) -> dict[str, str] | None:
    """A ``package.json``'s scripts: its ``scripts`` object when the text parses as an
    object, else every ``"name": "command"`` pair it holds (a piece of an edit); None when
    it parses as no object and holds no pair."""
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        doc = None
    if isinstance(doc, dict):
        scripts = doc.get("scripts")
        return {k: v for k, v in scripts.items() if isinstance(v, str)} if isinstance(scripts, dict) else {}
    pairs: dict[str, str] = {}
    strings = _json_strings(text)
    for (key, key_end), (value, value_start) in zip(strings, strings[1:]):
        if text[key_end:value_start - len(value)].strip() == ":":
            try:
                name, command = json.loads(key), json.loads(value)
            except ValueError:
                continue
            # a name written twice (the whole text and an edit's piece joined): both commands
            pairs[name] = pairs[name] + "\n" + command if name in pairs else command
    return pairs or None


def package_scripts(text: str, names: list[str], piece: bool = False) -> str:
    """The commands running the scripts ``names`` of the ``package.json`` ``text`` runs, in
    order, with the scripts they run in turn (``npm run build`` inside ``test``). Every
    script past :data:`MAX_NAMES` names (``*``: the runner's list was cut), and an edit's
    ``piece`` that holds no ``"name": "command"`` pair is itself a command (a script's
    text edited inside its string: ``jest --ci`` into ``jest --ci && ...``)."""
    scripts = _scripts_of(text)
    if scripts is None:
        return text if piece else ""
    if _EVERY in names:
        return "\n".join(scripts.values())
    out: list[str] = []
    todo, seen = list(names), set()
    while todo:
        name = todo.pop(0)
        if name in seen or name not in scripts:
            continue
        if len(seen) >= MAX_NAMES:  # past the bound: every script (fail closed)
            return "\n".join(scripts.values())
        seen.add(name)
        out.append(scripts[name])
        # the scripts it runs in turn run within it: next
        todo[0:0] = [n for nested in _NESTED_RUN_RE.findall(scripts[name])
                     for n in (f"pre{nested}", nested, f"post{nested}")]
    return "\n".join(out)
