"""Files a build or test tool runs without being programs themselves: a makefile's recipes
(``make``) and a ``package.json``'s scripts (``npm test``, ``yarn build``). The shell
analyser names such a run's runner ``make:<goals>`` or ``npm:<scripts>``
(``ShellAnalysis.runners``: :mod:`pipeline.analysis.shell.tool_runs`); written programs
(:mod:`pipeline.analysis.written`) read the file's known texts through
:func:`tool_text`: the shell commands the tool runs for those goals or scripts, analysed
as a shell script.

Both readers are for what agents write, not full tools: a makefile's rules, recipes,
simple variables and ``$(shell ...)``; a ``package.json``'s ``scripts``. Where they cannot
tell what runs they take more, never less (fail closed): a goal without an explicit rule
(a pattern rule, a typo) or a piece of a makefile with no rule line takes every recipe; a
piece of a ``package.json`` that is no JSON gives the scripts its ``"name": "command"``
pairs name.
"""

from __future__ import annotations

import json
import re

from pipeline.analysis.shell.tool_runs import MAKE_PREFIX, MAX_NAMES, TOOL_PREFIXES

# expanding make variables stops at this many passes or characters (hostile
# `A = $(B)$(B)`, `B = $(C)$(C)`, ... doubles at each pass); the rest stays unexpanded
_EXPAND_PASSES = 8
_EXPAND_CHARS = 200_000

_ASSIGN_RE = re.compile(r"^(?:export\s+|override\s+)*([A-Za-z_][A-Za-z0-9_.-]*)\s*(::=|:=|\?=|\+=|!=|=)\s*(.*)$")
_RULE_RE = re.compile(r"^([^:=#\t][^:=#]*?)\s*::?(?!=)\s*(.*)$")
_VAR_RE = re.compile(r"\$(?:\(([A-Za-z_][A-Za-z0-9_.-]*)\)|\{([A-Za-z_][A-Za-z0-9_.-]*)\}|([@<^?*+]))")
_SHELL_CALL_RE = re.compile(r"\$[({]shell\s+")
_NESTED_RUN_RE = re.compile(r"\b(?:npm|pnpm|yarn)\s+(?:run(?:-script)?\s+)?([A-Za-z0-9_:.-]+)")
_SCRIPT_PAIR_RE = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*"((?:[^"\\]|\\.)*)"')


def tool_runners(runners: list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """The runners of ``runners`` that read a file as a tool's (:data:`TOOL_PREFIXES`)."""
    return tuple(r for r in runners or () if r.startswith(TOOL_PREFIXES))


def tool_text(runner: str, text: str) -> str:
    """The shell commands a run by ``runner`` (``make:...``, ``npm:...``) takes from a
    file's ``text``, one per line ("" when none)."""
    names = [n for n in runner.split(":", 1)[1].split(",") if n]
    if runner.startswith(MAKE_PREFIX):
        return makefile_commands(text, names)
    return package_scripts(text, names)


def _logical_lines(text: str) -> list[str]:
    """The makefile's lines with backslash-newline continuations joined (a recipe's reach
    the shell joined too: the same command)."""
    return re.sub(r"[ \t]*\\\r?\n[ \t]*", " ", text).split("\n")


def _expand(line: str, variables: dict[str, str], automatic: dict[str, str]) -> str:
    """``line`` with make's variables replaced: known simple ones by their value (nested,
    within bounds), ``$@`` ``$<`` ``$^`` by the rule's names, ``$(shell CMD)`` as the
    shell's ``$(CMD)``, ``$$`` as ``$``; any other reference stays a shell variable
    (unknown to the analyser)."""
    def one(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        if name is None:
            return automatic.get(m.group(3), unknown + "AUTO}")
        return variables.get(name, unknown + re.sub(r"[^A-Za-z0-9_]", "_", name) + "}")

    # `$$` and an unknown variable's shell form wait in characters no reference holds
    dollars, unknown = "\x00", "\x01LG_MAKE_"
    out = line.replace("$$", dollars)
    for _ in range(_EXPAND_PASSES):
        if len(out) > _EXPAND_CHARS or not _VAR_RE.search(out):
            break
        out = _VAR_RE.sub(one, out).replace("$$", dollars)
    out = _SHELL_CALL_RE.sub("$(", out)
    return out.replace(dollars, "$").replace(unknown, "${LG_MAKE_")


def makefile_commands(text: str, goals: list[str]) -> str:
    """The recipes ``make GOALS`` runs from the makefile ``text`` (no goal: the first
    rule's first target not starting with '.'), with their prerequisites' recipes, and
    every ``$(shell ...)`` of its variables (make runs those as it reads the file),
    variables expanded (:func:`_expand`), recipe prefixes (``@ - +``) dropped. Every
    recipe when a goal has no rule of its own, or the text (a piece of an edit) has no
    rule line above a recipe line."""
    variables: dict[str, str] = {}
    shell_calls: list[str] = []
    rules: list[tuple[list[str], list[str], list[str]]] = []  # (targets, prerequisites, recipe lines)
    orphans: list[str] = []  # recipe lines above every rule (a piece of a makefile)
    for line in _logical_lines(text):
        if line.startswith("\t"):
            recipe = line[1:].lstrip().lstrip("@-+").strip()
            if recipe and not recipe.startswith("#"):
                (rules[-1][2] if rules else orphans).append(recipe)
            continue
        stripped = line.split("#", 1)[0].strip() if "#" in line and "$(" not in line else line.strip()
        if not stripped or stripped.startswith(("include ", "-include ", "ifeq", "ifneq", "ifdef", "ifndef",
                                                "else", "endif", "define ", "endef", "vpath", ".PHONY")):
            continue
        assign = _ASSIGN_RE.match(stripped)
        if assign:
            name, op, value = assign.groups()
            if _SHELL_CALL_RE.search(value) or op == "!=":
                shell_calls.append(value if op != "!=" else "$(shell " + value + ")")
            variables[name] = (variables.get(name, "") + " " + value).strip() if op == "+=" else value
            continue
        rule = _RULE_RE.match(stripped)
        if rule:
            targets = rule.group(1).split()
            prereqs, _, inline = rule.group(2).partition(";")
            rules.append((targets, [p for p in prereqs.replace("|", " ").split()], []))
            if inline.strip():
                rules[-1][2].append(inline.strip().lstrip("@-+").strip())
    # targets and prerequisites by their expanded names (`$(OUT)/app` is `build/app`)
    rules = [([_expand(t, variables, {}) for t in targets], [_expand(p, variables, {}) for p in prereqs], recipe)
             for targets, prereqs, recipe in rules]
    by_target: dict[str, list[int]] = {}
    for k, (targets, _, _) in enumerate(rules):
        for t in targets:
            by_target.setdefault(t, []).append(k)
    if not goals:
        goals = next(([t] for targets, _, _ in rules for t in targets if not t.startswith(".") and "%" not in t), [])
    chosen: set[int] = set()
    every = bool(orphans) or any(g not in by_target for g in goals)
    todo = list(goals[:MAX_NAMES])
    while todo and not every:
        goal = todo.pop()
        for k in by_target.get(goal, []):
            if k not in chosen:
                chosen.add(k)
                todo.extend(p for p in rules[k][1] if p in by_target)
    out = [_expand(c, variables, {}) for c in shell_calls] + [_expand(c, variables, {}) for c in orphans]
    for k, (targets, prereqs, recipe) in enumerate(rules):
        if every or k in chosen:
            automatic = {"@": targets[0] if targets else "", "<": prereqs[0] if prereqs else "",
                         "^": " ".join(prereqs), "?": " ".join(prereqs), "+": " ".join(prereqs), "*": ""}
            out.extend(_expand(c, variables, automatic) for c in recipe)
    return "\n".join(out)


def _scripts_of(text: str) -> dict[str, str]:
    """A ``package.json``'s scripts: its ``scripts`` object when the text parses, else
    every ``"name": "command"`` pair it holds (a piece of an edit)."""
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        doc = None
    if isinstance(doc, dict):
        scripts = doc.get("scripts")
        return {k: v for k, v in scripts.items() if isinstance(v, str)} if isinstance(scripts, dict) else {}
    pairs: dict[str, str] = {}
    for m in _SCRIPT_PAIR_RE.finditer(text):
        try:
            pairs.setdefault(json.loads(f'"{m.group(1)}"'), json.loads(f'"{m.group(2)}"'))
        except ValueError:
            continue
    return pairs


def package_scripts(text: str, names: list[str]) -> str:
    """The commands running the scripts ``names`` of the ``package.json`` ``text`` runs, in
    order, with the scripts they run in turn (``npm run build`` inside ``test``), within
    :data:`MAX_NAMES`."""
    scripts = _scripts_of(text)
    out: list[str] = []
    todo, seen = list(names), set()
    while todo and len(seen) < MAX_NAMES:
        name = todo.pop(0)
        if name in seen or name not in scripts:
            continue
        seen.add(name)
        out.append(scripts[name])
        # the scripts it runs in turn run within it: next
        todo[0:0] = [n for nested in _NESTED_RUN_RE.findall(scripts[name])
                     for n in (f"pre{nested}", nested, f"post{nested}")]
    return "\n".join(out)
