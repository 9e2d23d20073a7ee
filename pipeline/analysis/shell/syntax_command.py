"""Simple commands for the shell syntax flattener (:mod:`pipeline.analysis.shell.syntax`).

:class:`CommandReader` reads one simple command of the tree into a :class:`Stage`: its
words (``[ ... ]`` expressions as operand and operator words, a process substitution glued
to the word before it), its redirections (the here-document bodies kept apart, placeholders
in the words) and the words the grammar puts after a redirection's target; what followed a
here-doc start on its line is kept for the flattener (``deferred``) to place once the
command is in. A text whose here-documents were lifted out before its parse
(:func:`pipeline.analysis.shell.tree.lifted`) shows each as an input redirection at the
offset of its ``<<``: read as the here-document it stands for (``heredocs``).
"""

from __future__ import annotations

import re

import tree_sitter

from pipeline.analysis.shell.inert_syntax import SUBSTITUTIONS, WORD_TYPES
from pipeline.analysis.shell.stages import Groups, Stage
from pipeline.analysis.shell.heredoc_bodies import expanded, quoted
from pipeline.analysis.shell.heredocs import HereDocs
from pipeline.analysis.shell.words import HD_L, HD_R, WordReader

# the word nodes a here-document's line may leave loose
_LOOSE_WORDS = frozenset(WORD_TYPES | SUBSTITUTIONS | {"arithmetic_expansion"})
# what an error node may hold in place of an operator the grammar failed to see
_OPERATORS = frozenset({";", "&", "|", "&&", "||", "|&", ";;"})
_ERROR_TOKENS = re.compile(r"&&|\|\||\|&|;;|[;&|]|[^\s;&|]+")

__all__ = ["CommandReader"]


class CommandReader(WordReader):
    """Reads simple commands and redirections of one syntax tree over ``src``."""

    def __init__(self, src: str, flat: str | None = None, heredocs: HereDocs | None = None) -> None:
        """``src``: the command's text; ``flat``: the text the tree was parsed from, when its
        here-documents were lifted out (same offsets), and ``heredocs`` what ``lifted`` gave
        for them (each one's body and delimiter by the offset of its ``<<``)."""
        super().__init__(src)
        self.flat = src if flat is None else flat
        self.heredocs = dict(heredocs or {})  # popped as read: what is left was not found
        self.unreadable = False  # a lifted here-document body whose expansions cannot be read
        self.docs: list[str] = []
        self.doc_subs: list[list[int]] = []  # per here-doc: the substitutions its body runs
        self.doc_expands: list[bool] = []  # per here-doc: its delimiter unquoted
        self.deferred: list[tuple[str, tree_sitter.Node | Stage]] = []
        self.scope = 0  # depth of subshells, function bodies, conditional and loop bodies
        self.subshells: list[int] = []  # the groups of the subshells open, outer first
        self.subshell_scopes: list[int] = []  # the scope depth inside each of them as it opened
        self.groups = Groups()  # every compound command, for what its output feeds

    def stage(self, node: tree_sitter.Node) -> Stage:
        """A simple command (or assignment, declaration, test) as a Stage."""
        # a conditional, loop or function body inside the innermost subshell (one around the
        # subshell is the subshell's business: the subshell runs whole or not at all)
        stage = Stage(scoped=self.scope > 0, subshells=tuple(self.subshells),
                      conditional=self.scope > (self.subshell_scopes[-1] if self.subshell_scopes else 0),
                      group=self.groups.current)
        self.command_words(node, stage)
        return stage

    def command_words(self, node: tree_sitter.Node, stage: Stage) -> None:
        """The command node's words and redirections, into ``stage``."""
        words = stage.words
        if node.type in ("variable_assignment",):
            words.append(self.word(node))
            return
        prev: tree_sitter.Node | None = None
        for child in node.children:
            before, prev = prev, child
            if child.type in ("comment",):
                continue
            if not child.is_named:
                text = self.raw(child)
                if text in ("export", "declare", "typeset", "local", "readonly", "unset", "unsetenv", "[", "[["):
                    words.append(text)
                continue
            if child.type == "command_name":
                words.append(self.word(child))
            elif child.type == "number" and self.src[child.end_byte:child.end_byte + 1] in ("<", ">"):
                continue  # `sh 0</dev/tcp/h/p`: the grammar gives the redirection's fd to the command
            elif child.type in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                self.redirect(child, stage.redirs, stage.words)
            elif node.type == "test_command":
                words.extend(self.test_words(child))
            elif words and _glued_substitution(child, before):
                words[-1] += self.word(child)  # `@<(cmd)`: one word in bash, two arguments in the grammar
            else:
                words.append(self.word(child))

    def test_words(self, node: tree_sitter.Node) -> list[str]:
        """``[ ... ]``/``[[ ... ]]``: the expression's operands and operators as words."""
        if node.type in ("binary_expression", "unary_expression", "parenthesized_expression",
                         "negated_expression", "ternary_expression", "postfix_expression"):
            out: list[str] = []
            for child in node.children:
                out.extend(self.test_words(child) if child.is_named else [self.raw(child)])
            return out
        return [self.word(node)]

    def redirections(self, node: tree_sitter.Node) -> tuple[list[tuple[str, str]], list[str]]:
        """A redirected statement's redirections, and stray words after their targets."""
        body = node.child_by_field_name("body")
        redirs: list[tuple[str, str]] = []
        extra: list[str] = []
        for child in node.named_children:
            if child is not None and body is not None and child.id == body.id:
                continue
            self.redirect(child, redirs, extra)
        return redirs, extra

    def redirect(self, node: tree_sitter.Node, redirs: list[tuple[str, str]], extra: list[str]) -> None:
        """One redirection into ``redirs``; stray words after its target into ``extra``."""
        kind = node.type
        fd = next((self.raw(c) for c in node.named_children if c.type == "file_descriptor"), None)
        # input on another descriptor than 0 is no stdin (`3<<EOF`, `3< f`): see redirects.py
        into = "" if fd in (None, "0") else fd
        if kind == "heredoc_redirect":
            body = next((c for c in node.named_children if c.type == "heredoc_body"), None)
            start = next((c for c in node.named_children if c.type == "heredoc_start"), None)
            text = self.raw(body) if body is not None else ""
            delimiter = self.raw(start) if start is not None else "''"
            self.here_document(text[:-1] if text.endswith("\n") else text, expanded(text, delimiter),
                               not quoted(delimiter), redirs, into)
            op = ""
            # words and an operator the grammar failed to see on the delimiter's line
            # (`cat > f <<EOF ; rm -rf /`: an ERROR `;`, then the words of the next command)
            loose: list[tree_sitter.Node] = []
            for child in node.children:  # `cat <<EOF > f | sh && x`: the rest of the line
                if not child.is_named:
                    op = child.type
                elif child.type in ("file_redirect", "herestring_redirect"):
                    self.redirect(child, redirs, extra)
                elif child.type == "concatenation" and any(c.type == "ERROR" for c in child.children):
                    loose.extend(child.children)  # `a ;rm`: an operator the grammar glued into a word
                elif child.type == "ERROR" or child.type in _LOOSE_WORDS:
                    loose.append(child)
                elif child.type not in ("heredoc_start", "heredoc_body", "heredoc_end", "comment"):
                    self.deferred.append((op, child))
            if loose:
                self.after_target(loose, extra)
            return
        if kind == "herestring_redirect":
            target = [c for c in node.named_children if c.type not in ("file_descriptor",)]
            redirs.append((into + "<<<", "".join(self.word(c) for c in target)))
            return
        if kind != "file_redirect":
            self.word(node)
            return
        token = next((c for c in node.children if not c.is_named), None)
        op = token.type if token is not None else ">"
        targets = [c for c in node.named_children if c.type != "file_descriptor"]
        if op == "<" and token is not None and token.start_byte in self.heredocs:
            self.here_document(*self.heredocs.pop(token.start_byte), redirs, into)  # `< EOF`: the here-document
            self.after_target(targets[1:], extra)  # `python3 - <<'PY' /etc/passwd`: an argument
            return
        if op == "<" and len(targets) > 1 and targets[0].type == "ERROR" and self.raw(targets[0]).strip() == "<<":
            # `3<<<word`: the grammar reads a here-string on a descriptor as ERROR `<<`, `<`, word
            redirs.append((into + "<<<", self.word(targets[1])))
            self.after_target(targets[2:], extra)
            return
        if op in (">&-", "<&-"):  # closing a descriptor (`3>&-`): the grammar's own token
            redirs.append(((fd or "") + op[:2], "-"))
            self.after_target(targets, extra)
            return
        if targets and targets[0].type == "ERROR" and (op, self.raw(targets[0]).strip()) in (("<", ">"), (">", "<")):
            # the grammar has no `<>` (open read-write): `<`, ERROR `>`, target, or (after a
            # descriptor, by what follows) ERROR `<`, `>`, target
            op, targets = "<>", targets[1:]
        if fd not in (None, "1") and op in (">", ">>", ">|", ">&"):
            op = fd + op  # another descriptor's output (`2>/dev/null`, `2>&3`): the command's stdout still flows
        if fd == "1" and op == "<>":
            op = ">"  # stdout into the file (opened read-write, not truncated)
        elif op in ("<", "<>", "<&"):
            op = into + op
        redirs.append((op, self.word(targets[0]) if targets else ""))
        self.after_target(targets[1:], extra)

    def here_document(self, body: str, runs: list[str] | None, expands: bool, redirs: list[tuple[str, str]],
                      into: str = "") -> None:
        """A here-document as the command's input (``into``: the descriptor it opens, when
        not 0); the substitutions bash runs in its body are the command's, as in a word
        (``runs`` None: the body cannot be read); ``expands``: bash expands its body
        (variables too)."""
        self.docs.append(body)
        self.doc_expands.append(expands)
        redirs.append((into + "<<", f"{HD_L}{len(self.docs) - 1}{HD_R}"))
        if runs is None:
            self.unreadable = True
        first = len(self.subs)
        for text in runs or ():
            self.substitution_text(text)  # recorded in ``subs``: the analyser runs each one
        self.doc_subs.append(list(range(first, len(self.subs))))

    def after_target(self, nodes: list[tree_sitter.Node], extra: list[str]) -> None:
        """Words the grammar puts after a redirection's target: arguments of the command
        (``echo > f a b`` is ``echo a b > f``) until an operator it failed to see inside
        a here-doc line (``cat <<EOF 2>/dev/null | bash -s x``), after which they form
        the next command, piped or listed."""
        words, op = extra, ""
        for child in nodes:
            if child.type == "number" and self.src[child.end_byte:child.end_byte + 1] in ("<", ">"):
                continue  # `>& f 0>&1`: the grammar gives the next redirection's fd to this one
            if child.type == "ERROR":
                # words and operators the grammar wrapped in an error (`a ;rm`): each operator
                # ends the command before it; a word is an argument
                flat = self.flat[child.start_byte:child.end_byte]  # a lifted body is blank here
                for token in _ERROR_TOKENS.findall(flat) or [";"]:
                    if token in _OPERATORS:
                        if op:
                            self.deferred.append((op, Stage(words, subshells=tuple(self.subshells), group=self.groups.current)))
                        words, op = [], token
                    else:
                        words.append(token)
            else:
                words.append(self.word(child))
        if op:
            self.deferred.append((op, Stage(words, subshells=tuple(self.subshells), group=self.groups.current)))


def _glued_substitution(node: tree_sitter.Node, prev: tree_sitter.Node | None) -> bool:
    """A process substitution (or a word starting with one) that the grammar makes an
    argument of its own although nothing separates it from ``prev``, the argument before
    (passed in: ``Node.prev_sibling`` walks the parent's children each time)."""
    first = node.children[0] if node.type == "concatenation" and node.children else node
    return (first.type == "process_substitution" and prev is not None and prev.is_named
            and prev.type not in ("command_name", "file_redirect", "herestring_redirect", "heredoc_redirect")
            and prev.end_byte == node.start_byte)
