"""Shell syntax for the analyser: tree-sitter-bash parses, this module flattens.

The tree-sitter-bash grammar (a maintained, error-tolerant parser) builds the syntax tree;
:func:`parse` turns it into what the analyser walks: pipelines of simple commands
(:class:`Stage`: words and redirections), the ``$(...)``/backtick/process substitutions
(analysed on their own, each replaced in its word by a placeholder) and the here-document
bodies. Words are read by :class:`pipeline.analysis.shell.words.WordReader` (quotes removed,
quoted metacharacters private, substitutions as placeholders), simple commands and their
redirections by :class:`pipeline.analysis.shell.syntax_command.CommandReader`.

Compound commands are flattened in source order, the way the analyser reads them: the
words of ``for VAR in WORDS`` become one stage (the analyser binds VAR), conditions and
bodies of ``if``/``while``/``case``/functions become their own pipelines, and a group
piped into a command (``( a; b ) | c``) continues into ``c`` from its last pipeline; each
compound is a group (:mod:`pipeline.analysis.shell.stages`), so ``c`` also reads what the
group's other pipelines write.
"""

from __future__ import annotations

import tree_sitter

from pipeline.analysis.shell.stages import Parsed, Stage, around
from pipeline.analysis.shell.syntax_redirected import RedirectedWalk, piped_into, redirected_whole
from pipeline.analysis.shell.heredocs import UNREADABLE, HereDocs, lifted_all, read_as_bash_does, starts
from pipeline.analysis.shell.tree import TOO_COMPLEX, error_reason, heredoc_reason, tree, unglued

__all__ = ["Stage", "Parsed", "parse"]

_GROUPS = {"program", "compound_statement", "subshell", "do_group", "else_clause", "elif_clause",
           "case_item", "if_statement", "while_statement", "case_statement", "function_definition",
           "negated_command"}
_SIMPLE = {"command", "declaration_command", "unset_command", "test_command", "variable_assignment",
           "variable_assignments", "redirected_statement", "list", "pipeline", "subshell", "ERROR"}


def _is_statement(node: tree_sitter.Node) -> bool:
    """True for a node that holds commands (rather than words of a compound)."""
    return node.type in _SIMPLE or node.type in _GROUPS or node.type.endswith("_statement")


def parse(text: str, deadline: float | None = None) -> Parsed | str:
    """Flatten ``text`` for the analyser, or return why it cannot be parsed (a parse still
    running at ``deadline``, see :func:`pipeline.analysis.shell.tree.tree`, is ``TOO_COMPLEX``).
    Here-document delimiters glued to an operator are spaced first (:func:`unglued`); a text
    with here-documents is parsed again with them lifted out (:func:`lifted`: the rest of a
    here-document's line read as bash reads it), each one read back where its ``<<`` was."""
    text = unglued(text)
    parsed = tree(text, deadline)
    if parsed is None:
        return TOO_COMPLEX
    root = parsed.root_node
    lift = lifted_all(root, text, deadline)
    if isinstance(lift, str):
        return lift
    flat, docs, second = lift
    if docs:
        reason = error_reason(second, flat) or heredoc_reason(root, text)
        if reason is not None:
            return reason
        flattener = _Flattener(text, flat, docs)
        result = flattener.run(second)
        if flattener.unreadable:
            return UNREADABLE
        if not flattener.heredocs and not starts(second):
            return result
        # a here-document the second parse did not place (a function's redirect) or found
        # anew: the first tree is read, when bash reads its here-documents alike
    reason = error_reason(root, text) or heredoc_reason(root, text)
    if reason is None and "<<" in text and not read_as_bash_does(root, text):
        reason = UNREADABLE
    if reason is not None:
        return reason
    flattener = _Flattener(text)
    result = flattener.run(root)
    return UNREADABLE if flattener.unreadable else result


class _Flattener(RedirectedWalk):
    """Walks one syntax tree into pipelines, substitutions and here-doc bodies (simple
    commands and redirections are read by :class:`CommandReader`, redirected statements
    placed by :class:`RedirectedWalk`)."""

    def __init__(self, src: str, flat: str | None = None, heredocs: HereDocs | None = None) -> None:
        super().__init__(src, flat, heredocs)  # node byte offsets are character offsets: the parser saw ASCII
        self.pipelines: list[list[Stage]] = []
        self.starts: dict[int, tuple[int, int]] = {}  # each pipeline element's first stage: (pipeline, index)

    def run(self, root: tree_sitter.Node) -> Parsed:
        """Flatten the whole tree."""
        self.statements(root)
        pipelines = [[st for st in p if st.words or st.redirs] for p in self.pipelines]
        kept = [p for p in pipelines if p]
        self.groups.resolve(kept)
        return Parsed(kept, self.subs, self.docs, self.doc_subs, self.doc_expands)

    # -- statements
    def statements(self, node: tree_sitter.Node) -> None:
        """Each statement child of a group as its own pipeline(s); one run in the background
        (`cd ~/.ssh & cat id_rsa`) runs in a subshell of its own (its `cd` moves nothing
        that follows)."""
        for child in node.named_children:
            if child.next_sibling is None or child.next_sibling.type != "&":
                self.statement(child)
                continue
            # a subshell of its own (not a group: its output is still the text's): an id no group has
            self.scope += 1
            self.subshells.append(-1 - child.id)
            self.subshell_scopes.append(self.scope)
            self.statement(child)
            self.subshell_scopes.pop()
            self.subshells.pop()
            self.scope -= 1

    def statement(self, node: tree_sitter.Node) -> None:
        kind = node.type
        if kind == "comment":
            return
        if kind == "list":
            for child in _list_items(node):
                self.statement(child)
        elif kind == "pipeline":
            self.pipeline(node)
        else:
            self.pipelines.append([])
            self.piped_part(node, first=True)

    def pipeline(self, node: tree_sitter.Node) -> None:
        self.pipelines.append([])
        first = True
        for child in node.named_children:
            if child.type != "comment":
                self.piped_part(child, first)
                first = False

    def piped_part(self, node: tree_sitter.Node, first: bool) -> None:
        """One element of a pipeline: appended to the open pipeline (the last one)."""
        kind = node.type
        self.starts[node.id] = (len(self.pipelines) - 1, len(self.pipelines[-1]))  # where it begins
        if kind == "redirected_statement":
            self.redirected(node, first)
        elif kind in ("command", "declaration_command", "unset_command", "test_command"):
            self.pipelines[-1].append(self.stage(node))
            self.flush()
        elif kind == "for_statement":
            self.for_statement(node, first)
        elif kind == "c_style_for_statement":
            self.scope += 1
            g = self.groups.enter()
            self.group_body(node, first)
            self.groups.leave(g)
            self.scope -= 1
        elif kind == "subshell":  # its statements start pipelines; `( a; b ) | c`: b continues into c
            self.scope += 1
            g = self.groups.enter()
            self.subshells.append(g)
            self.subshell_scopes.append(self.scope)
            self.statements(node)
            self.subshell_scopes.pop()
            self.subshells.pop()
            self.groups.leave(g)
            self.scope -= 1
        elif kind in ("list", "pipeline"):
            self.inline(node, first)
        elif kind == "variable_assignment" or kind == "variable_assignments":
            self.pipelines[-1].append(self.stage(node))
        else:  # a group (_GROUPS), `{ }`, `(( ))` or anything else that holds commands: walk it
            scoped = kind != "compound_statement"  # `{ }` runs in this shell; if/while/case/functions may not
            self.scope += scoped
            g = self.groups.enter()
            self.group_body(node, first)
            self.groups.leave(g)
            self.scope -= scoped
        start = self.starts[node.id]
        if (kind not in ("redirected_statement", "command", "declaration_command", "unset_command", "test_command",
                         "subshell", "list", "pipeline", "variable_assignment", "variable_assignments")
                and start[1] > 0 and piped_into(node) and not redirected_whole(node)):
            # piped into (`curl URL | { read -r first; bash; }`): each of its commands reads the pipe
            around(self.pipelines, start, [], piped=True)

    def inline(self, node: tree_sitter.Node, first: bool) -> None:
        """A list/pipeline nested in a pipeline (grammar precedence): the open pipeline
        takes its first command and the last one continues into the next ``|``."""
        parts = [c for c in node.named_children if c.type != "comment"]
        joined = node.type == "pipeline"
        for k, child in enumerate(parts):
            if k and not joined:
                self.pipelines.append([])
            if child.type in ("list", "pipeline"):
                self.inline(child, first and k == 0)
            else:
                self.piped_part(child, first and k == 0)

    def group_body(self, node: tree_sitter.Node, first: bool) -> None:
        """A compound command: its statements in order, the first joining the open
        pipeline; its other parts (case subject and patterns, function name, loop
        condition words) count only for their substitutions."""
        k = 0
        for child in node.named_children:
            if child.type in ("comment", "heredoc_body"):
                continue
            if not _is_statement(child):
                self.words_only(child)
                continue
            if k:
                self.pipelines.append([])
            self.piped_part(child, first and k == 0)
            k += 1

    def words_only(self, node: tree_sitter.Node) -> None:
        """A non-command part of a compound (case subject, pattern, function name,
        arithmetic): only its substitutions count."""
        self.word(node)

    def for_statement(self, node: tree_sitter.Node, first: bool) -> None:
        words = ["for"]
        body: list[tree_sitter.Node] = []
        for child in node.children:
            if child.type == "do_group":
                body.append(child)
            elif child.type == "in":
                words.append("in")
            elif child.is_named and child.type != "comment":
                words.append(self.word(child))
        self.pipelines[-1].append(Stage(words, subshells=tuple(self.subshells), group=self.groups.current))
        for group in body:
            self.pipelines.append([])
            self.scope += 1
            g = self.groups.enter()
            self.statements(group)
            self.groups.leave(g)
            self.scope -= 1

    def flush(self) -> None:
        """What followed a here-doc start on its line, once its command is in place:
        ``| sh`` continues the open pipeline, ``&& x``/``; x`` start new ones."""
        deferred, self.deferred = self.deferred, []
        for op, node in deferred:
            if isinstance(node, Stage):
                if op in ("|", "|&"):
                    self.pipelines[-1].append(node)
                else:
                    self.pipelines.append([node])
            elif node.type == "pipeline" and node.children and node.children[0].type in ("|", "|&"):
                for child in node.named_children:
                    if child.type != "comment":
                        self.piped_part(child, False)
            elif op in ("|", "|&"):
                self.piped_part(node, False)
            else:
                self.statement(node)


def _list_items(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    """The commands of an ``a && b || c ; d`` list in order. The grammar nests lists to
    the left; they are unrolled without recursion, so a long chain costs no stack."""
    out: list[tree_sitter.Node] = []
    stack = [node]
    while stack:
        cur = stack.pop()
        if cur.type == "list":
            stack.extend(reversed([c for c in cur.named_children if c.type != "comment"]))
        else:
            out.append(cur)
    return out
