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

from pipeline.analysis.shell.tree import tree

__all__ = ["DELIMITER", "HereDocs", "bare", "expanded", "lifted", "UNREADABLE"]

HereDocs = dict[int, tuple[str, list[str] | None]]
"""Lifted here-documents by the offset of their ``<<``: each one's body (final newline
dropped) and the substitutions bash runs in it (None: the body cannot be read)."""

UNREADABLE = "here-document the parser could not read"
# a delimiter word read alike by bash and here: plain, or quoted whole (`'EOF'`, `"EOF"`,
# `\EOF`); `E"O"F`, `$'EOF'`, `$X` are left to the grammar's own reading
DELIMITER = re.compile(r"\\?[A-Za-z0-9_.-]+|'[^'\\$]*'|\"[^\"\\$`]*\"")
# nodes inside which a newline does not end the start line
_QUOTING = frozenset({"string", "raw_string", "ansi_c_string", "translated_string", "command_substitution",
                      "process_substitution", "arithmetic_expansion", "expansion"})
_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
# in a body's text (its `$(...)` blanked): an escaped character, a backtick pair, a lone backtick
_BACKTICKS = re.compile(r"\\.|`(?:\\.|[^`\\])*`|`", re.S)
_CONTINUATION = re.compile(r"\\(.)", re.S)


def bare(delimiter: str) -> str:
    """The word bash compares body lines with: the delimiter without its quoting."""
    return delimiter.lstrip("\\").strip("'\"") if DELIMITER.fullmatch(delimiter) else delimiter


def quoted(delimiter: str) -> bool:
    """Whether any part of the delimiter is quoted: then bash expands nothing in the body."""
    return any(q in delimiter for q in "'\"\\")


def lifted(root: tree_sitter.Node, src: str) -> tuple[str, HereDocs] | str | None:
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
    an error opening with ``<``) makes the command unreadable."""
    if "<<" not in src:
        return None
    operators: list[tuple[tree_sitter.Node, str, tree_sitter.Node]] = []
    quotes: list[tuple[int, int]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        kind = node.type
        if kind in _QUOTING:
            quotes.append((node.start_byte, node.end_byte))
            if kind in _SUBSTITUTIONS:
                continue  # read again from its own text, here-documents and all
        if kind == "heredoc_start":
            op, delimiter = node.prev_sibling, src[node.start_byte:node.end_byte]
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
            line_end = _line_end(src, op.end_byte, quotes)
            placed = line_end + 1
        if any(c.type == "ERROR" and c.start_byte < line_end and src[c.start_byte:c.end_byte].lstrip().startswith("<")
               for c in holder.children):  # a redirection operator the grammar could not place
            return UNREADABLE
        body_start = placed
        body, placed = _body(src, body_start, bare(delimiter), op.type == "<<-", not quoted(delimiter))
        docs[op.start_byte] = (body, expanded(body, delimiter))
        chars[op.start_byte + 1:op.end_byte] = " " * (op.end_byte - op.start_byte - 1)  # `<<` -> `< `
        chars[body_start:placed] = [c if c == "\n" else " " for c in src[body_start:placed]]
    return "".join(chars), docs


def _line_end(src: str, at: int, quotes: list[tuple[int, int]]) -> int:
    """The offset of the newline that ends the line going on at ``at``: the first one not
    inside a quote or substitution that opens from ``at`` on (``quotes``: spans sorted by
    start) nor escaped by a backslash; the end of the text when there is none."""
    i = bisect.bisect_left(quotes, (at, -1))
    reach, pos = -1, at  # the furthest end of a span opened so far
    while (nl := src.find("\n", pos)) >= 0:
        while i < len(quotes) and quotes[i][0] < nl:
            reach, i = max(reach, quotes[i][1]), i + 1
        back = 0
        while nl - back - 1 >= at and src[nl - back - 1] == "\\":
            back += 1
        if reach <= nl and back % 2 == 0:
            return nl
        pos = nl + 1
    return len(src)


def _body(src: str, start: int, word: str, tabs: bool, joins: bool) -> tuple[str, int]:
    """(the body from ``start``, without its final newline; where what follows its end line
    starts): bash's rule (module docstring). A body with no end line runs to the end of the
    text (bash warns and reads it so)."""
    pos, continued = start, False
    while pos < len(src):
        nl = src.find("\n", pos)
        end = len(src) if nl < 0 else nl
        line = src[pos:end]
        if not continued and (line.lstrip("\t") if tabs else line) == word:
            return src[start:max(start, pos - 1)], min(len(src), end + 1)
        continued = joins and (len(line) - len(line.rstrip("\\"))) % 2 == 1
        pos = end + 1
    return src[start:], len(src)


def expanded(body: str, delimiter: str) -> list[str] | None:
    """The command substitutions (``$(...)``, backticks, as written) bash runs when it
    reads a here-document's ``body``: none when its delimiter is quoted; None when the body
    cannot be read (a syntax error in it; a lone backtick, on which bash fails the command).

    The body is parsed as a here-document of its own, each line's leading blanks moved to
    its end (the grammar reads no ``$(...)`` after them), its continued lines joined (bash
    joins them before it expands), after a blank first line (a first line opening with
    ``\\`` is read as words of the start line); ``$((...))`` whose inner ``(`` closes right
    before the last ``)`` is arithmetic. Backticks, which the grammar leaves as text, are
    found in the text with its ``$(...)`` blanked, backslash escapes as in double quotes."""
    if quoted(delimiter) or ("$" not in body and "`" not in body):
        return []
    text = _CONTINUATION.sub(lambda m: "" if m.group(1) == "\n" else m.group(0), body)
    text_plain = _without_arithmetic(text)
    lines = text_plain.split("\n")
    shadow = "\n".join(ln.lstrip(" \t") + ln[:len(ln) - len(ln.lstrip(" \t"))] for ln in lines)
    indents = [len(ln) - len(ln.lstrip(" \t")) for ln in lines]
    starts = [0]
    for ln in lines[:-1]:
        starts.append(starts[-1] + len(ln) + 1)
    end_word = "LITMUS_END"
    while end_word in text:
        end_word += "_"
    head = f": <<{end_word}\nx\n"
    parsed = tree(f"{head}{shadow}\n{end_word}\n")
    if parsed is None or parsed.root_node.has_error:
        return None

    def original(offset: int) -> int:  # an offset of the shadow, as one of `text` (lines keep their length)
        k = bisect.bisect_right(starts, offset) - 1
        column, kept = offset - starts[k], len(lines[k]) - indents[k]
        return starts[k] + (column + indents[k] if column < kept else column - kept)

    chars, found = list(text), []
    stack = [parsed.root_node]
    while stack:
        node = stack.pop()
        if node.type != "command_substitution":
            stack.extend(node.children)
            continue
        lo, hi = original(node.start_byte - len(head)), original(node.end_byte - 1 - len(head)) + 1
        found.append(text[lo:hi])
        chars[lo:hi] = " " * (hi - lo)
    for m in _BACKTICKS.finditer("".join(chars)):
        if m.group() == "`":
            return None
        if m.group().startswith("`"):
            found.append(text[m.start():m.end()])
    return found


_ARITHMETIC = re.compile(r"(?<!\\)(?:\\\\)*\$\(\(")


def _without_arithmetic(text: str) -> str:
    """``text`` with the ``$((`` and ``))`` of each arithmetic expansion blanked (what is
    inside stays: a ``$(...)`` there runs). Bash reads ``$((`` as arithmetic when the ``)``
    closing its inner ``(`` comes right before another ``)``; otherwise (``$((a);(b))``) it
    is a command substitution of a subshell. The grammar reads both as the latter."""
    closes: dict[int, int] = {}  # each `(` by offset: the `)` that closes it
    opened: list[int] = []
    for j, c in enumerate(text):
        if c == "(":
            opened.append(j)
        elif c == ")" and opened:
            closes[opened.pop()] = j
    chars = list(text)
    for m in _ARITHMETIC.finditer(text):
        j = closes.get(m.end() - 1)
        if j is not None and text[j + 1:j + 2] == ")":
            chars[m.end() - 3:m.end()] = "   "
            chars[j:j + 2] = "  "
    return "".join(chars)
