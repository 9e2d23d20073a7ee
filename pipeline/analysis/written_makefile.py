"""A makefile's recipes as ``make GOALS`` runs them (:func:`makefile_commands`), for
:func:`pipeline.analysis.written_tools.tool_text`: a reader for what agents write, not
make itself: rules, recipes, simple variables (``$(MAKE)`` is ``make``), sub-makes of the
same makefile and ``$(shell ...)``. Where it cannot tell what runs it takes more, never
less (fail closed): a goal without an explicit rule (a pattern rule, a typo) in any
reading of the file, or past ``MAX_NAMES`` goals, takes every recipe, and every line of an
edit's piece that is no rule nor assignment is a command. Linear in the text and bounded
(:data:`_EXPAND_CHARS`, :data:`COMMAND_CHARS`).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from pipeline.analysis.shell.model import MAX_COMMAND_CHARS
from pipeline.analysis.shell.tool_runs import EVERY as _EVERY, MAKE_NO_RECIPES, PARSE_ONLY

# expanding make variables stops at this many passes, and a reference is left unexpanded
# once the expansions of a makefile would add more than this many characters in all
# (hostile `A = $(B)$(B)`, `B = $(C)$(C)`, ... doubles at each pass; 2,500 references to a
# 10 KB value in one line): the recipes stay, their references then unknown shell variables
_EXPAND_PASSES = 8
_EXPAND_CHARS = 200_000
# the commands taken from one text stop at this many characters (the analyser reads no more)
COMMAND_CHARS = 2 * MAX_COMMAND_CHARS

_ASSIGN_RE = re.compile(r"^(?:export\s+|override\s+)*([A-Za-z_.][A-Za-z0-9_.-]*)\s*(::=|:=|\?=|\+=|!=|=)(.*)$")
_VAR_RE = re.compile(r"\$(?:\(([A-Za-z_.][A-Za-z0-9_.-]*)\)|\{([A-Za-z_.][A-Za-z0-9_.-]*)\}|([@<^?*+]))")
_SHELL_CALL_RE = re.compile(r"\$[({]shell[ \t]")
# a recipe's sub-make of the same makefile (`$(MAKE) deploy`; not one with -C or -f: another)
_SUBMAKE_RE = re.compile(r"\$[({]MAKE[)}]((?:[ \t]+[^\s;&|<>()]+)*)")
# a line that is a make function call (`$(warning ...)`, `$(info ...)`), not a rule
_CALL_LINE_RE = re.compile(r"^\$[({](?:warning|info|error|eval|call|foreach|if|or|and)[ \t]")
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


class _Makefile(NamedTuple):
    """A makefile's text read once: its variables, ``$(shell ...)`` calls outside recipes,
    recipe lines above every rule, rules (targets and prerequisites expanded), and what is
    left of the expansion budget (:data:`_EXPAND_CHARS`)."""

    variables: dict[str, str]
    shell_calls: list[str]
    orphans: list[str]
    rules: list[tuple[list[str], list[str], list[str]]]  # (targets, prerequisites, recipe lines)
    budget: list[int]


def _dry(word: str) -> bool:
    """Whether a sub-make's option runs no recipe (``-n``, ``--dry-run``, ``-q``, ``-t``;
    also in a group of short options, ``-ns``, up to one that takes a value: ``-Otarget``)."""
    if word in MAKE_NO_RECIPES:
        return True
    if not word.startswith("-") or word.startswith("--"):
        return False
    for letter in word[1:]:
        if letter in "CfIjlOoW":
            return False
        if letter in "nqt":
            return True
    return False


def _read(text: str, piece: bool) -> _Makefile:
    """The makefile ``text`` read (an edit's ``piece``: a line that is no rule nor
    assignment may be a recipe line cut from its tab, an orphan)."""
    # make's own `$(MAKE)` is the make program: a recipe's sub-make (`$(MAKE) -C docs html`)
    # is then a run of make the shell analyser reads (another makefile: followed in a
    # further pass of written_programs); a makefile may set it
    variables: dict[str, str] = {"MAKE": "make"}
    shell_calls: list[str] = []
    rules: list[tuple[list[str], list[str], list[str]]] = []
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
        if assign and assign.group(1) == "MAKE":
            continue  # `$(MAKE)` stays make (`MAKE ?= echo`, one set in a dead `ifeq`: make's own)
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
            if specific and specific.group(1) != "MAKE":
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
    return _Makefile(variables, shell_calls, orphans, rules, budget)


def makefile_targets(text: str, piece: bool = False) -> frozenset[str]:
    """The targets the rules of the makefile ``text`` name (expanded)."""
    return frozenset(t for targets, _, _ in _read(text, piece).rules for t in targets)


def makefile_commands(text: str, goals: list[str], piece: bool = False,
                      defined: frozenset[str] = frozenset()) -> str:
    """The recipes ``make GOALS`` runs from the makefile ``text`` (no goal: ``.DEFAULT_GOAL``,
    else the first rule's first target not starting with '.'), with the recipes of the
    prerequisites and of the goals a recipe's ``$(MAKE) GOAL`` runs, and every ``$(shell
    ...)`` outside recipes (make runs those as it reads the file), variables expanded
    (:func:`_expand`; ``define`` blocks too), recipe prefixes (``@ - +``) dropped. Every
    recipe when a goal has no rule of its own (unless another reading of the file has one:
    ``defined``, :func:`makefile_targets` of the file's other texts; this one then runs
    nothing for it) or the goals were too many (``*``); the recipe lines above every rule,
    and in an edit's ``piece`` every line that is no rule nor assignment (it may be a
    recipe line cut from its tab), are commands whatever the goal."""
    variables, shell_calls, orphans, rules, budget = _read(text, piece)
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
    # a goal another reading defines (an edit added its rule) is no typo nor pattern rule here
    every = _EVERY in goals or any(g not in by_target and g not in defined for g in goals)
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
                        if not any(w.startswith(("-C", "--directory", "-f", "--file", "--makefile")) or _dry(w)
                                   for w in words):
                            todo.extend(w for w in words if not w.startswith("-") and "=" not in w)
    out = [_expand(c, variables, {}, budget) for c in shell_calls + orphans]
    size = sum(len(o) + 1 for o in out)
    for k, (targets, prereqs, recipe) in enumerate(rules):
        if size > COMMAND_CHARS:
            break
        if every or k in chosen:
            automatic = {"@": targets[0] if targets else "", "<": prereqs[0] if prereqs else "",
                         "^": " ".join(prereqs), "?": " ".join(prereqs), "+": " ".join(prereqs), "*": ""}
            for c in recipe:
                # a dry run still runs `+` lines and those naming $(MAKE) (GNU make: a sub-make
                # is run, told to be dry in turn)
                if parse_only and not c.startswith(_PLUS) and "$(MAKE)" not in c and "${MAKE}" not in c:
                    continue
                out.append(_expand(c.lstrip(_PLUS), variables, automatic, budget))
                size += len(out[-1]) + 1
    return "\n".join(o.lstrip(_PLUS) for o in out)
