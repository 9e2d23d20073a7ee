"""Here-documents read as bash reads them, for :mod:`pipeline.analysis.shell.syntax`.

tree-sitter-bash reads the rest of a here-document's start line inside the redirection and
loses operators there (``cat <<EOF >f;rm -rf ~/x`` was a file ``f;rm``), ends some bodies
elsewhere than bash (a body line ``EOF `` or `` EOF``), reads a first body line opening with
``\\`` as words of the start line, and leaves backticks (and ``$(...)`` on an indented line)
of a body as text although bash runs them. So the extents come from bash's own rules here
(:func:`lifted`): the body starts after the start line's end (its first newline outside
quotes and substitutions, not escaped) and ends at the first line equal to the bare
delimiter (leading tabs stripped for ``<<-``; a line continued with ``\\`` joins the next in
a body whose delimiter is unquoted); the grammar only tells where the ``<<`` operators and
the quotes of the start line are. :func:`expanded` finds the substitutions an unquoted body
runs.
"""

from __future__ import annotations

import bisect
import re

import tree_sitter

from pipeline.analysis.shell.heredoc_bodies import expanded, quoted
from pipeline.analysis.shell.tree import TOO_COMPLEX, tree

__all__ = ["DELIMITER", "HereDocs", "MAX_LIFTS", "UNREADABLE", "bare", "body_end", "ends_as_bash_does",
           "lifted", "lifted_all", "read_as_bash_does", "starts", "word_of"]

HereDocs = dict[int, tuple[str, list[str] | None, bool]]
"""Lifted here-documents by the offset of their ``<<``: each one's body (final newline
dropped), the substitutions bash runs in it (None: the body cannot be read) and whether
bash expands it (its delimiter unquoted)."""

UNREADABLE = "here-document the parser could not read"
MAX_LIFTS = 8  # parses with here-documents lifted out, at most, after the first
# a delimiter word read alike by bash and here: characters other than blanks,
# metacharacters and backticks (`$X` is that text: bash expands no delimiter), quoted in
# part or whole (`'EOF'`, `"EOF"`, `\EOF`, `E"OF"`), a CRLF text's `\r` after it; `$'EOF'`
# and `$"EOF"` are left to the grammar's reading
DELIMITER = re.compile(r"""(?:[^\s;&|<>()'"\\$`]|\$(?!['"])|\\[^\n]|'[^']*'|"(?:[^"\\$`]|\\[^\n])*")+\r*""")
_QUOTE_PART = re.compile(r"\\(.)|'([^']*)'|\"((?:[^\"\\]|\\.)*)\"", re.S)
_IN_DOUBLE = re.compile(r"""\\([$`"\\])""")
# nodes inside which a newline does not end the start line
_QUOTING = frozenset({"string", "raw_string", "ansi_c_string", "translated_string", "command_substitution",
                      "process_substitution", "arithmetic_expansion", "expansion"})
_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})


def bare(delimiter: str) -> str:
    """The word bash compares body lines with: the delimiter after quote removal (``E"OF"``
    and ``\\EOF`` are ``EOF``; ``'"EOF"'`` is ``"EOF"``); a ``\r`` after it (a CRLF text) is
    part of the word."""
    def unquoted(m: re.Match[str]) -> str:
        if m.group(1) is not None:
            return m.group(1)
        return m.group(2) if m.group(2) is not None else _IN_DOUBLE.sub(r"\1", m.group(3))
    return _QUOTE_PART.sub(unquoted, delimiter)


def word_of(start: tree_sitter.Node, src: str) -> str:
    """A here-document's delimiter as bash reads the word: the grammar's ``heredoc_start``,
    and the ``\r`` of a CRLF line after it (no metacharacter: bash keeps it)."""
    end = start.end_byte
    while end < len(src) and src[end] == "\r":
        end += 1
    return src[start.start_byte:end]


def body_end(src: str, start: int, word: str, tabs: bool, joins: bool) -> tuple[int, int]:
    """(where the end line starts, where what follows it starts) of a body from ``start``
    ending at the first line equal to ``word`` (bash's rule: each line's leading tabs
    stripped for ``<<-``; with ``joins``, an unquoted delimiter, a line ending in an odd
    run of ``\\`` joined with the next first); ``(len, len)`` when no line ends it (bash
    reads to the end of the text)."""
    pos, joined, first = start, "", start
    while pos < len(src):
        nl = src.find("\n", pos)
        end = len(src) if nl < 0 else nl
        line = src[pos:end].lstrip("\t") if tabs else src[pos:end]
        if not joined:
            first = pos
        if joins and (len(line) - len(line.rstrip("\\"))) % 2 == 1:
            joined += line[:-1]
        elif joined + line == word:
            return first, min(len(src), end + 1)
        else:
            joined = ""
        pos = end + 1
    return len(src), len(src)


def lifted(root: tree_sitter.Node, src: str, deadline: float | None = None) -> tuple[str, HereDocs] | str | None:
    """``src`` with its here-documents lifted out, for a second parse; None when it has none
    the grammar marks or one this cannot place (then the first tree is read as it is); a
    reason when the command cannot be read.

    The text returned has the same length and offsets: each body and end line blanked
    (newlines kept) and each ``<<``/``<<-`` shown as an input redirection ``<`` from the
    delimiter word, so the second parse reads the start line as bash does. The grammar
    gives the operators and delimiters (also of a start it left in an error) and the quotes
    of the start line; not lifted: a here-document inside a substitution (its text is parsed
    again on its own), a delimiter outside ``DELIMITER``. A ``<<`` inside a body already
    placed is body text. A redirection the grammar broke on the start line (``sh <<A <<B``:
    an error opening with ``<``) makes the command unreadable. ``deadline``: of the bodies'
    own parses (:func:`expanded`)."""
    if "<<" not in src:
        return None
    operators: list[tuple[tree_sitter.Node, str, tree_sitter.Node]] = []
    quotes: list[tuple[int, int]] = []
    comments: set[int] = set()  # where comments end: a backslash there continues no line
    stack = [root]
    while stack:
        node = stack.pop()
        kind = node.type
        if kind in _QUOTING:
            quotes.append((node.start_byte, node.end_byte))
            if kind in _SUBSTITUTIONS:
                continue  # read again from its own text, here-documents and all
        if kind == "comment":
            comments.add(node.end_byte)
        if kind == "heredoc_start":
            op, delimiter = node.prev_sibling, word_of(node, src)
            if op is None or op.type not in ("<<", "<<-") or not DELIMITER.fullmatch(delimiter) or node.parent is None:
                return None
            operators.append((op, delimiter, node.parent))
        stack.extend(node.children)
    if not operators:
        return None
    quotes.sort()
    docs: HereDocs = {}
    chars = list(src)
    placed, line_end = 0, -1  # end of the last body placed; end of the open start line
    for op, delimiter, holder in sorted(operators, key=lambda o: o[0].start_byte):
        if line_end < op.start_byte < placed:
            continue  # a `<<` written in a body: text
        if op.start_byte > line_end:  # the first here-document of its line: its body starts on the next
            line_end = _line_end(src, op.end_byte, quotes, comments)
            placed = line_end + 1
        if any(c.type == "ERROR" and c.start_byte < line_end and src[c.start_byte:c.end_byte].lstrip().startswith("<")
               for c in holder.children):  # a redirection operator the grammar could not place
            return UNREADABLE
        body_start = placed
        end_line, placed = body_end(src, body_start, bare(delimiter), op.type == "<<-", not quoted(delimiter))
        body = src[body_start:max(body_start, end_line - 1)] if end_line < len(src) else src[body_start:]
        runs = expanded(body, delimiter, deadline)
        if runs is None:
            return UNREADABLE  # a body bash fails on (or too long to read): fail closed
        docs[op.start_byte] = (body, runs, not quoted(delimiter))
        chars[op.start_byte + 1:op.end_byte] = " " * (op.end_byte - op.start_byte - 1)  # `<<` -> `< `
        chars[body_start:placed] = [c if c == "\n" else " " for c in src[body_start:placed]]
    return "".join(chars), docs


def ends_as_bash_does(doc: tree_sitter.Node, src: str) -> bool:
    """Whether the grammar ended the here-document ``doc`` (a ``heredoc_redirect``) on the
    line where bash ends it (:func:`body_end`, from the grammar's own body start): it also
    ended bodies at ``EOF `` or `` EOF`` or after a continued line, and what it then reads
    as commands (or as another here-document) is not what bash runs."""
    start = next((c for c in doc.children if c.type == "heredoc_start"), None)
    body = next((c for c in doc.children if c.type == "heredoc_body"), None)
    end = next((c for c in doc.children if c.type == "heredoc_end"), None)
    if start is None or end is None or not doc.children or not DELIMITER.fullmatch(delimiter := word_of(start, src)):
        return False
    begin = body.start_byte if body is not None else end.start_byte
    line, _ = body_end(src, begin, bare(delimiter), doc.children[0].type == "<<-", not quoted(delimiter))
    return line == src.rfind("\n", 0, end.start_byte) + 1


def read_as_bash_does(root: tree_sitter.Node, src: str) -> bool:
    """Whether the first tree's here-documents (outside substitutions) can be read as the
    grammar has them: each in a redirection (not lost in an error), ending where bash ends
    it, holding nothing after its delimiter on the start line (which the grammar reads
    inside the redirection)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in _SUBSTITUTIONS:
            continue
        if node.type == "heredoc_start" and (node.parent is None or node.parent.type != "heredoc_redirect"):
            return False  # a start the grammar lost in an error: what it holds is not read
        if node.type == "heredoc_redirect" and (not ends_as_bash_does(node, src) or any(
                c.is_named and c.type not in ("heredoc_start", "heredoc_body", "heredoc_end") for c in node.children)):
            return False
        stack.extend(node.children)
    return True


def _line_end(src: str, at: int, quotes: list[tuple[int, int]], comments: set[int]) -> int:
    """The offset of the newline that ends the line going on at ``at``: the first one not
    inside a quote or substitution that opens from ``at`` on (``quotes``: spans sorted by
    start) nor escaped by a backslash (one ending a comment escapes nothing: ``comments``,
    where comments end); the end of the text when there is none."""
    i = bisect.bisect_left(quotes, (at, -1))
    reach, pos = -1, at  # the furthest end of a span opened so far
    while (nl := src.find("\n", pos)) >= 0:
        while i < len(quotes) and quotes[i][0] < nl:
            reach, i = max(reach, quotes[i][1]), i + 1
        back = 0
        while nl - back - 1 >= at and src[nl - back - 1] == "\\":
            back += 1
        if reach <= nl and (back % 2 == 0 or nl in comments):
            return nl
        pos = nl + 1
    return len(src)


def lifted_all(root: tree_sitter.Node, src: str, deadline: float | None,
               most: int = MAX_LIFTS) -> tuple[str, HereDocs, tree_sitter.Node] | str:
    """:func:`lifted` again on each new parse while the grammar finds here-document starts
    it had lost in a body it misread (``most`` parses at most): the text, every here-document
    lifted and the last tree (``src``, none and ``root`` when there was nothing to lift); a
    reason when the command cannot be read."""
    flat, docs, last = src, {}, root
    for _ in range(most):
        lift = lifted(last, flat, deadline)
        if isinstance(lift, str):
            return lift
        if lift is None:
            break
        flat, more = lift
        docs.update(more)
        again = tree(flat, deadline)
        if again is None:
            return TOO_COMPLEX
        last = again.root_node
        if not starts(last):
            break
    return flat, docs, last


def starts(root: tree_sitter.Node) -> bool:
    """Whether the tree has a here-document start outside substitutions."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "heredoc_start":
            return True
        if node.type not in _SUBSTITUTIONS:
            stack.extend(node.children)
    return False
