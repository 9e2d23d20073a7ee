"""Files a build or test tool runs without being programs themselves: a makefile's recipes
(``make``) and a ``package.json``'s scripts (``npm test``, ``yarn build``). The shell
analyser names such a run's runner ``make:<goals>`` or ``npm:<scripts>``
(``ShellAnalysis.runners``: :mod:`pipeline.analysis.shell.tool_runs`); written programs
(:mod:`pipeline.analysis.written`) read the file's known texts through
:func:`tool_text`: the shell commands the tool runs for those goals or scripts, analysed
as a shell script.

Both readers are for what agents write, not full tools: a makefile's rules, recipes,
simple variables, sub-makes of the same makefile and ``$(shell ...)``; a ``package.json``'s
``scripts``. Where they cannot tell what runs they take more, never less (fail closed): a
goal without an explicit rule (a pattern rule, a typo) or past :data:`MAX_NAMES` takes every
recipe, and every line of an edit's piece that is no rule nor assignment is a command; a
piece of a ``package.json`` that is no JSON gives the scripts its ``"name": "command"``
pairs name, or is itself a command when it holds none. Every reading is linear in the text
and bounded (:data:`_EXPAND_CHARS`, :data:`_COMMAND_CHARS`).
"""

from __future__ import annotations

import json
import re

from pipeline.analysis.shell.model import MAX_COMMAND_CHARS
from pipeline.analysis.shell.tool_runs import EVERY as _EVERY, MAKE_PREFIX, MAX_NAMES, PARSE_ONLY, TOOL_PREFIXES

# expanding make variables stops at this many passes, and a reference is left unexpanded
# once the expansions of a makefile would add more than this many characters in all
# (hostile `A = $(B)$(B)`, `B = $(C)$(C)`, ... doubles at each pass; 2,500 references to a
# 10 KB value in one line): the recipes stay, their references then unknown shell variables
_EXPAND_PASSES = 8
_EXPAND_CHARS = 200_000
# the commands taken from one text stop at this many characters (the analyser reads no more)
_COMMAND_CHARS = 2 * MAX_COMMAND_CHARS

_ASSIGN_RE = re.compile(r"^(?:export\s+|override\s+)*([A-Za-z_.][A-Za-z0-9_.-]*)\s*(::=|:=|\?=|\+=|!=|=)(.*)$")
_VAR_RE = re.compile(r"\$(?:\(([A-Za-z_.][A-Za-z0-9_.-]*)\)|\{([A-Za-z_.][A-Za-z0-9_.-]*)\}|([@<^?*+]))")
_SHELL_CALL_RE = re.compile(r"\$[({]shell[ \t]")
# a recipe's sub-make of the same makefile (`$(MAKE) deploy`; not one with -C or -f: another)
_SUBMAKE_RE = re.compile(r"\$[({]MAKE[)}]((?:[ \t]+[^\s;&|<>()]+)*)")
# a line that is a make function call (`$(warning ...)`, `$(info ...)`), not a rule
_CALL_LINE_RE = re.compile(r"^\$[({](?:warning|info|error|eval|call|foreach|if|or|and)[ \t]")
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


def tool_text(runner: str, text: str, piece: bool = False) -> str:
    """The shell commands a run by ``runner`` (``make:...``, ``npm:...``) takes from a
    file's ``text``, one per line ("" when none); ``piece``: the text is an edit's piece,
    not the whole file (:func:`makefile_commands`, :func:`package_scripts`)."""
    names = [n for n in runner.split(":", 1)[1].split(",") if n]
    if runner.startswith(MAKE_PREFIX):
        out = makefile_commands(text, names, piece)
    else:
        out = package_scripts(text, names, piece)
    return out[:_COMMAND_CHARS]


def _logical_lines(text: str) -> list[str]:
    """The makefile's lines with backslash-newline continuations joined (a recipe's reach
    the shell joined too: the same command); linear in the text."""
    out: list[str] = []
    pending = ""
    for line in text.split("\n"):
        line = line[:-1] if line.endswith("\r") else line
        if line.endswith("\\"):
            pending += line[:-1].rstrip(" \t") + " "
            continue
        out.append(pending + (line.lstrip(" \t") if pending else line))
        pending = ""
    if pending:
        out.append(pending)
    return out


def _expand(line: str, variables: dict[str, str], automatic: dict[str, str], budget: list[int]) -> str:
    """``line`` with make's variables replaced: known simple ones by their value (nested,
    within :data:`_EXPAND_PASSES`, while the characters they add stay within ``budget``,
    the makefile's: :data:`_EXPAND_CHARS` in all), ``$@`` ``$<`` ``$^`` by the rule's
    names, ``$(shell CMD)`` as the shell's ``$(CMD)``, ``$$`` as ``$``; any other reference,
    and one past the budget, stays a shell variable (unknown to the analyser)."""
    def one(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        value = automatic.get(m.group(3)) if name is None else variables.get(name)
        if value is None or len(value) > budget[0]:
            return unknown + re.sub(r"[^A-Za-z0-9_]", "_", name or "AUTO") + "}"
        budget[0] -= len(value)
        return value

    # `$$` and an unknown variable's shell form wait in characters no reference holds
    dollars, unknown = "\x00", "\x01LG_MAKE_"
    out = line.replace("$$", dollars)
    for _ in range(_EXPAND_PASSES):
        if not _VAR_RE.search(out):
            break
        out = _VAR_RE.sub(one, out).replace("$$", dollars)
    out = _SHELL_CALL_RE.sub("$(", out)
    return out.replace(dollars, "$").replace(unknown, "${LG_MAKE_")


def _shell_calls(line: str) -> list[str]:
    """The ``$(shell ...)`` calls of a line (each to its closing parenthesis; one left open
    takes the rest of the line, and the calls inside it are its own): linear in the line."""
    calls, end = [], 0
    for m in _SHELL_CALL_RE.finditer(line):
        if m.start() < end:
            continue  # inside the call before it
        depth, end = 0, len(line)
        for i in range(m.start() + 1, len(line)):
            depth += {"(": 1, "{": 1, ")": -1, "}": -1}.get(line[i], 0)
            if depth == 0:
                end = i + 1
                break
        calls.append(line[m.start():end])
        if end == len(line):
            break
    return calls


def _rule(line: str) -> tuple[list[str], list[str], str] | None:
    """(targets, prerequisites, inline recipe) of a rule line, None for another line."""
    colon = line.find(":")
    if colon <= 0 or line.startswith(("\t", "#")) or _CALL_LINE_RE.match(line):
        return None
    head = line[:colon]
    if "=" in head or "#" in head or line[colon + 1:colon + 2] == "=":
        return None
    rest = line[colon + 2:] if line[colon + 1:colon + 2] == ":" else line[colon + 1:]
    prereqs, _, inline = rest.partition(";")
    return head.split(), prereqs.split("#", 1)[0].replace("|", " ").split(), inline.strip()


_PLUS = "\x02"  # marks a recipe line with make's `+` prefix (it runs even in a dry run)


def _recipe(line: str) -> str:
    """A recipe line without make's prefixes (``@ - +``; a ``+`` line marked :data:`_PLUS`)."""
    line = line.strip()
    head = line[:len(line) - len(line.lstrip("@-+ \t"))]
    return (_PLUS if "+" in head else "") + line.lstrip("@-+ \t").strip()


def makefile_commands(text: str, goals: list[str], piece: bool = False) -> str:
    """The recipes ``make GOALS`` runs from the makefile ``text`` (no goal: ``.DEFAULT_GOAL``,
    else the first rule's first target not starting with '.'), with the recipes of the
    prerequisites and of the goals a recipe's ``$(MAKE) GOAL`` runs, and every ``$(shell
    ...)`` outside recipes (make runs those as it reads the file), variables expanded
    (:func:`_expand`; ``define`` blocks too), recipe prefixes (``@ - +``) dropped. Every
    recipe when a goal has no rule of its own or the goals were too many (``*``); the recipe
    lines above every rule, and in an edit's ``piece`` every line that is no rule nor
    assignment (it may be a recipe line cut from its tab), are commands whatever the goal."""
    # make's own `$(MAKE)` is the make program: a recipe's sub-make (`$(MAKE) -C docs html`)
    # is then a run of make the shell analyser reads (another makefile: followed in a
    # further pass of written_programs); a makefile may set it
    variables: dict[str, str] = {"MAKE": "make"}
    shell_calls: list[str] = []
    rules: list[tuple[list[str], list[str], list[str]]] = []  # (targets, prerequisites, recipe lines)
    orphans: list[str] = []  # recipe lines above every rule (a piece of a makefile)
    defining: tuple[str, list[str]] | None = None
    for line in _logical_lines(text):
        if defining is not None:
            if line.strip() == "endef":
                variables[defining[0]] = "\n".join(defining[1])
                defining = None
            else:
                defining[1].append(line)
            continue
        if line.startswith("\t"):
            recipe = _recipe(line)
            if recipe and not recipe.startswith("#"):
                (rules[-1][2] if rules else orphans).append(recipe)
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        shell_calls.extend(_shell_calls(stripped))
        if stripped.startswith("define "):
            defining = (stripped[7:].strip().split()[0] if stripped[7:].strip() else "", [])
            continue
        assign = _ASSIGN_RE.match(stripped)
        if assign:
            name, op, value = assign.group(1), assign.group(2), assign.group(3).strip()
            if op == "!=":
                shell_calls.append("$(shell " + value + ")")
            variables[name] = (variables.get(name, "") + " " + value).strip() if op == "+=" else value
            continue
        rule = _rule(stripped)
        if rule is not None and "=" in " ".join(rule[1]):
            # a target-specific variable (`deploy: CMD = curl ...`): taken as the makefile's
            specific = _ASSIGN_RE.match(stripped[stripped.index(":") + 1:].strip())
            if specific:
                variables[specific.group(1)] = specific.group(3).strip()
        elif rule is not None:
            rules.append((rule[0], rule[1], [_recipe(rule[2])] if rule[2] else []))
        elif piece:
            orphans.append(_recipe(stripped))  # a piece's line may be a recipe's, cut from its tab
    # targets and prerequisites by their expanded names (`$(OUT)/app` is `build/app`)
    budget = [_EXPAND_CHARS]  # the characters expansions may add, in all
    rules = [([n for t in targets for n in _expand(t, variables, {}, budget).split()],
               [n for p in prereqs for n in _expand(p, variables, {}, budget).split()], recipe)
             for targets, prereqs, recipe in rules]
    by_target: dict[str, list[int]] = {}
    for k, (targets, _, _) in enumerate(rules):
        for t in targets:
            by_target.setdefault(t, []).append(k)
    parse_only = PARSE_ONLY in goals  # a dry run: what runs as make reads the file, `+` lines
    goals = [g for g in goals if g != PARSE_ONLY]
    if not goals:
        default = variables.get(".DEFAULT_GOAL", "").split()
        goals = default[:1] or next(([t] for targets, _, _ in rules for t in targets
                                     if not t.startswith(".") and "%" not in t), [])
    every = _EVERY in goals or any(g not in by_target for g in goals)
    chosen: set[int] = set()
    todo = list(goals)
    while todo and not every:
        for k in by_target.get(todo.pop(), []):
            if k not in chosen:
                chosen.add(k)
                todo.extend(p for p in rules[k][1] if p in by_target)
                for recipe in rules[k][2]:  # `$(MAKE) deploy`: a sub-make of the same makefile
                    for m in _SUBMAKE_RE.finditer(recipe):
                        words = m.group(1).split()
                        if not any(w.startswith(("-C", "--directory", "-f", "--file", "--makefile")) for w in words):
                            todo.extend(w for w in words if not w.startswith("-") and "=" not in w)
    out = [_expand(c, variables, {}, budget) for c in shell_calls + orphans]
    size = sum(len(o) + 1 for o in out)
    for k, (targets, prereqs, recipe) in enumerate(rules):
        if size > _COMMAND_CHARS:
            break
        if every or k in chosen:
            automatic = {"@": targets[0] if targets else "", "<": prereqs[0] if prereqs else "",
                         "^": " ".join(prereqs), "?": " ".join(prereqs), "+": " ".join(prereqs), "*": ""}
            for c in recipe:
                if parse_only and not c.startswith(_PLUS):
                    continue
                out.append(_expand(c.lstrip(_PLUS), variables, automatic, budget))
                size += len(out[-1]) + 1
    return "\n".join(o.lstrip(_PLUS) for o in out)


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
