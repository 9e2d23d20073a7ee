"""The tree-sitter-bash call behind :mod:`pipeline.analysis.shell.syntax`, made safe for hostile text.

:func:`tree` parses an ASCII shadow of the command (tree-sitter-bash 0.25.1 crashes the
process on some astral-plane text) under a CPU-time deadline (it is quadratic on some
text), and :func:`error_reason` says which syntax errors make a command opaque.
"""

from __future__ import annotations

import re
import time

import tree_sitter
import tree_sitter_bash

__all__ = ["tree", "error_reason", "heredoc_reason", "parse_failed", "unglued", "PARSE_CPU_SECONDS", "TOO_COMPLEX"]

PARSE_CPU_SECONDS = 0.5
"""CPU time (this thread's) a parse may take unless the caller gives a deadline (the
analyser gives its own, :class:`pipeline.analysis.shell.budget.Budget`). tree-sitter-bash is
quadratic on some text (100,000 characters of ``<<E`` lines: 10 s; of ``[[ ( `` nesting:
2.4 s); corpus commands parse in under 5 ms. A parse past its deadline is halted and the
command is opaque."""
TOO_COMPLEX = "command too complex to parse"
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
_CHUNK = 1 << 16
_QUOTES = re.compile(r"\\(.)")


def error_reason(root: tree_sitter.Node, src: str) -> str | None:
    """Why a tree with errors cannot be analysed, or None.

    Opaque: text whose words cannot be known, i.e. an unclosed quote, backtick or
    substitution (worded as before the port). Other syntax errors (a stray ``&&`` at the
    start of a line, ``for x do``, code pasted into a shell step) are recovered by the
    parser: the commands it recognised around the error are analysed, as the hand-written
    tokenizer did before. A here-document whose line goes on with another command, in a
    tree with errors, is opaque (:func:`_lost_after_heredoc`)."""
    if not root.has_error:
        return None
    if _lost_after_heredoc(root, src):
        return "here-document the parser could not read"
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing:
            if node.type == "`":
                return "unbalanced backtick"
            if node.type in ("'", '"'):
                return "cannot tokenize: no closing quotation"
            if node.type in (")", "))") and node.parent is not None and node.parent.type in (
                    "command_substitution", "process_substitution", "arithmetic_expansion"):
                return "unbalanced substitution"
        elif node.type == "ERROR":
            reason = _error_text_reason(src[node.start_byte:node.end_byte].strip())
            if reason is not None:
                return reason
        if node.has_error:
            stack.extend(reversed(node.children))
    return None


_SEPARATOR = re.compile(r"[;&|]")
# a here-document delimiter glued to the next operator (`<<EOF|sh`, `<<EOF;rm x`, `<<EOF>f`):
# bash ends the word at the operator; the grammar takes `EOF|sh` for the delimiter, so the
# body ran to a line `EOF|sh` and the command after it was lost (without a syntax error)
_GLUED_HEREDOC = re.compile(r"""(<<-?[ \t]*)([A-Za-z0-9_][\w.-]*|'[^'\n]*'|"[^"\n]*")(?=[;&|<>()])""")


def unglued(text: str) -> str:
    """``text`` with a space after each here-document delimiter glued to an operator: the
    same command for bash (its delimiter word ends at the operator), the one the grammar
    reads right. Every parse of a command for the analyser and the classifier's masking
    goes through it, so offsets are into the same text."""
    return _GLUED_HEREDOC.sub(r"\1\2 ", text) if "<<" in text else text


def _lost_after_heredoc(root: tree_sitter.Node, src: str) -> bool:
    """Whether the parser lost a here-document start in an error node, with words of the
    line kept inside that error and an operator after the delimiter (bash runs them, the body
    starting on the next line; nothing reads what an error holds). When the error holds the
    start alone, the grammar read the rest of the line as commands: nothing is lost. A here-document it merely failed to read
    otherwise (``cat<<EOF>f``, one left unterminated) is recovered as before, and so are the
    lines the analyser's own recovery reads (a pipe after a here-document's redirection)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "heredoc_start" and node.parent is not None and node.parent.type == "ERROR" \
                and any(c.is_named and c.type != "heredoc_start" for c in node.parent.children):
            # from the delimiter on: the parser may read `EOF;` as the delimiter itself
            line_end = src.find("\n", node.start_byte)
            if _SEPARATOR.search(src, node.start_byte, len(src) if line_end < 0 else line_end):
                return True
        stack.extend(node.children)
    return False


def _error_text_reason(text: str) -> str | None:
    """The reason an ERROR node's text makes the command opaque (None: recoverable)."""
    if text.count("`") % 2:
        return "unbalanced backtick"
    if text[:1] in ("'", '"') and text.find(text[0], 1) < 0:
        return "cannot tokenize: no closing quotation"
    if any(o in text for o in ("$(", "<(", ">(")) and text.count("(") > text.count(")"):
        return "unbalanced substitution"
    return None


def tree(text: str, deadline: float | None = None) -> tree_sitter.Tree | None:
    """Parse ``text`` with every non-ASCII character shown to the parser as ``x``; None
    when the parse ran past ``deadline`` (``time.thread_time()``; default: now plus
    :data:`PARSE_CPU_SECONDS`).

    Bash's metacharacters are all ASCII, so a non-ASCII character is always part of a
    word and the tree is the same; node offsets are then character offsets into ``text``
    (no UTF-8 slicing, lone surrogates are fine), and tree-sitter-bash 0.25.1's scanner,
    which crashes the process on some astral-plane text (``'4\\U000ad654d{\\U000e5b06J'``),
    never sees any. The budget is checked by tree-sitter's progress callback (py-tree-sitter
    0.26 has no timeout; the callback is only called when the text comes from a read
    callback)."""
    shadow = memoryview(_NON_ASCII.sub("x", text).encode("ascii"))
    if deadline is None:
        deadline = time.thread_time() + PARSE_CPU_SECONDS
    end = deadline

    def read(offset: int, _point: object) -> memoryview:
        return shadow[offset:offset + _CHUNK]

    def halt(_offset: int, _has_error: bool) -> bool:
        return time.thread_time() > end

    try:
        return _PARSER.parse(read, progress_callback=halt)
    except ValueError:  # halted: the next parse must not resume this one
        _PARSER.reset()
        return None


def heredoc_reason(root: tree_sitter.Node, src: str) -> str | None:
    """Why the shadow's here-documents are not bash's, or None.

    The shadow maps every non-ASCII character to ``x``, so a body line can end a
    here-document early (delimiter ``É``, a body line ``x``; delimiter ``x``, a body line
    ``é``): the rest of the body would be read as commands and, worse, a here-document
    started there could swallow real commands. Bash ends a body only at the delimiter
    itself, so each end line is compared with its delimiter in the original text (only
    when one of them has non-ASCII text: otherwise the shadow is the text)."""
    if "<<" not in src or src.isascii():
        return None
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "heredoc_redirect":
            start = next((c for c in node.children if c.type == "heredoc_start"), None)
            end = next((c for c in node.children if c.type == "heredoc_end"), None)
            if start is not None and end is not None:
                delimiter = _QUOTES.sub(r"\1", src[start.start_byte:start.end_byte]).replace("'", "").replace('"', "")
                line = src[end.start_byte:end.end_byte]
                if not (delimiter + line).isascii() and line != delimiter:
                    return "here-document delimiter with non-ASCII text matches a body line"
        stack.extend(node.children)
    return None


def parse_failed(text: str) -> bool:
    """True when tree-sitter-bash finds a syntax error in ``text`` (bench figure)."""
    parsed = tree(text)
    return parsed is None or parsed.root_node.has_error
