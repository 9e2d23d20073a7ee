"""What the shell analyser walks: simple commands (:class:`Stage`) in pipelines, and the
groups they lie in.

In a shell every command of a subshell, brace group, loop or conditional writes to the
compound's one stdout: ``(a; b) | c`` feeds ``c`` what ``a`` and ``b`` both write, as
``{ a; b; } > f`` writes both to ``f`` (unless one of them sends its own stdout elsewhere:
``(a > f; b) | c`` pipes only ``b``). The flattener
(:mod:`pipeline.analysis.shell.syntax`) numbers each compound it walks, a *group*
(:class:`Groups`: its parent is the group around it, :data:`ROOT` the command text
itself), and records on each stage the group it lies in; :meth:`Groups.resolve` then tells
each stage which groups' output it reads beside its pipe (``gathers``: the stage after a
group's last command in a pipeline, or a group's redirection, ``takes``) and which group's
output the last stage of each pipeline writes to (``out``: the nearest group around it whose
output something reads, else ``ROOT``, what a command substitution outputs). The engine
(:class:`pipeline.analysis.shell.engine.Analyser`) collects each pipeline's output under its
``out`` and hands their union to the stage that gathers them. The work is linear in the
stages and the group boundaries crossed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ROOT", "Stage", "Parsed", "Groups", "around"]

ROOT = -1
"""The group of the command text itself (what a ``$(...)`` substitution outputs)."""


@dataclass
class Stage:
    """One simple command: raw words and redirections (operator, raw target)."""

    words: list[str] = field(default_factory=list)
    redirs: list[tuple[str, str]] = field(default_factory=list)
    # inside a subshell, a function body or a conditional or loop body: a `cd` there may not
    # hold for what follows (pipelines are known by their length)
    scoped: bool = False
    # the subshells it lies in (their groups, outer first): a `cd` there holds for the rest
    # of the subshell, and no further (the engine restores the folder as it leaves one)
    subshells: tuple[int, ...] = ()
    # scoped other than by subshells: a function, conditional or loop body (a `cd` there may
    # or may not have run)
    conditional: bool = False
    group: int = ROOT  # the innermost group (compound command) the stage lies in
    takes: int = ROOT  # the group whose redirection this is (`{ a; b; } > f`: both write f)
    gathers: tuple[int, ...] = ()  # groups whose collected output this stage reads on stdin too
    out: int = ROOT  # last stage of a pipeline: the group whose output it writes to
    # the redirections of the compounds around it, one tuple per compound, outer first (shared
    # by the stages of a body): the descriptors they open are its too (`{ cat key >&3; }
    # 3<>/dev/tcp/h/443`); ``stdin_layer``, one of them, is the compound whose stdin it reads
    # (`while read l; do ...; done < f`): see around
    inherits: tuple[tuple[tuple[str, str], ...], ...] = ()
    stdin_layer: tuple[tuple[str, str], ...] | None = None


@dataclass
class Parsed:
    """A command text flattened: pipelines, substitutions as (kind, inner), here-doc bodies.

    Substitution kinds: ``$`` command, ``<``/``>`` process, ``=`` arithmetic."""

    pipelines: list[list[Stage]]
    subs: list[tuple[str, str]]
    docs: list[str]
    doc_subs: list[list[int]] = field(default_factory=list)  # per here-doc: the substitutions its body runs
    doc_expands: list[bool] = field(default_factory=list)  # per here-doc: its delimiter unquoted (bash expands it)


class Groups:
    """The groups of one command text: each one's parent and depth, and the open one."""

    def __init__(self) -> None:
        self.parents: list[int] = []
        self.depths: list[int] = []
        self.current = ROOT

    def enter(self) -> int:
        """Open a group inside the current one; it becomes the current one."""
        g = len(self.parents)
        self.parents.append(self.current)
        self.depths.append(self.depth(self.current) + 1)
        self.current = g
        return g

    def leave(self, g: int) -> None:
        """Close group ``g``: its parent is the current group again."""
        self.current = self.parents[g]

    def depth(self, g: int) -> int:
        """How many groups hold a stage of group ``g`` (0 for ``ROOT``)."""
        return 0 if g == ROOT else self.depths[g]

    def exits(self, inner: int, outer: int) -> tuple[int, ...]:
        """The groups left going from a stage of ``inner`` to one of ``outer``: ``inner`` and
        its parents up to (not including) the nearest group that holds both."""
        a, b, left = inner, outer, []
        while self.depth(a) > self.depth(b):
            left.append(a)
            a = self.parents[a]
        while self.depth(b) > self.depth(a):
            b = self.parents[b]
        while a != b:
            left.append(a)
            a, b = self.parents[a], self.parents[b]
        return tuple(left)

    def resolve(self, pipelines: list[list[Stage]]) -> None:
        """Set each stage's ``gathers`` and each pipeline's last stage's ``out`` (see the
        module's docstring). A group nothing reads the output of writes into its parent's."""
        read: set[int] = set()
        for pipe in pipelines:
            prev = ROOT
            for k, st in enumerate(pipe):
                gathers = self.exits(st.takes, st.group) if st.takes != ROOT else ()
                if k and prev != st.group:
                    gathers += self.exits(prev, st.group)
                st.gathers = gathers
                read.update(gathers)
                prev = st.group
        target: dict[int, int] = {ROOT: ROOT}
        for pipe in pipelines:
            g, path = pipe[-1].group, []
            while g not in target and g not in read:
                path.append(g)
                g = self.parents[g]
            found = target.get(g, g)
            for p in path:
                target[p] = found
            pipe[-1].out = found


def around(pipelines: list[list[Stage]], first: tuple[int, int], redirs: list[tuple[str, str]],
           piped: bool = False) -> None:
    """A compound's redirections, for the commands of its body (the stages from ``first``,
    where its first command lies, also mid-pipeline: ``cat x | while ...; done < f``, where
    the redirection wins), resolved by the analyser as it reaches each (against what an
    earlier ``exec`` and the compounds around opened: ``{ cat key >&4; } 4>&3``). The
    descriptors it opens are every body command's (``>&3``); its stdin, when it sets one,
    is every body command's that has no other: its first statement and the first stage of
    each later pipeline of its body (``{ read a; read b; } < f``; a command that drains it
    leaves the next nothing, which is read as if each had it all: fail closed); a nested
    compound's own, marked before (its body is walked first), stands. ``piped``: the
    compound is piped into (``curl URL | { read -r first; bash; }``): without a stdin of
    its own, what is piped in is that stdin (the analyser keeps what reached its first
    command)."""
    p, k = first
    # (a compound piped into without redirections: a layer of its own all the same)
    layer = tuple(redirs) or (("|", f"{p}:{k}"),)
    on_stdin = piped or any(op in ("<", "<>", "<<", "<<<", "<&") for op, _ in layer)  # descriptor 0's
    for n in range(p, len(pipelines)):
        stages = pipelines[n][k if n == p else 0:]
        # (not a nested compound's own redirection stage: its stdin is its body's output)
        if on_stdin and stages and stages[0].stdin_layer is None and stages[0].takes == ROOT:
            stages[0].stdin_layer = layer
        for st in stages:
            st.inherits = (layer, *st.inherits)
