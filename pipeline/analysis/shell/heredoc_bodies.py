"""The substitutions a here-document's body runs, for :mod:`pipeline.analysis.shell.heredocs`
and the classifier's masking: in a body whose delimiter is unquoted, bash expands every
``$(...)`` and backtick substitution before the command runs; tree-sitter-bash leaves
backticks (and a ``$(...)`` after a line's leading blanks) as text and reads ``$((...))``
arithmetic as a command substitution of a subshell.
"""

from __future__ import annotations

import bisect
import re

import tree_sitter

from pipeline.analysis.shell.tree import tree

__all__ = ["expanded", "found", "quoted", "spans_run"]

# in a body's text (its `$(...)` blanked): an escaped character, a backtick pair, a lone backtick
_BACKTICKS = re.compile(r"\\.|`(?:\\.|[^`\\])*`|`", re.S)
_CONTINUATION = re.compile(r"\\(.)", re.S)


def quoted(delimiter: str) -> bool:
    """Whether any part of the delimiter is quoted: then bash expands nothing in the body."""
    return any(q in delimiter for q in "'\"\\")


def expanded(body: str, delimiter: str, deadline: float | None = None) -> list[str] | None:
    """The texts of what :func:`found` finds (None: the body cannot be read)."""
    runs = found(body, delimiter, deadline)
    return None if runs is None else [runs[0][lo:hi] for lo, hi in runs[1]]


def spans_run(body: str, delimiter: str, deadline: float | None = None) -> list[tuple[int, int]] | None:
    """Where in ``body`` the substitutions bash runs are (:func:`found`); None when the body
    cannot be read or continued lines were joined (its offsets are not the body's)."""
    runs = found(body, delimiter, deadline)
    return None if runs is None or runs[0] != body else runs[1]


def found(body: str, delimiter: str, deadline: float | None = None) -> tuple[str, list[tuple[int, int]]] | None:
    """The body's text as bash expands it (continued lines joined) and where in it the
    command substitutions (``$(...)``, backticks) are that bash runs when it reads a
    here-document's ``body``: none when its delimiter is quoted; None when the body
    cannot be read (a syntax error in a substitution of it; its parse still running at
    ``deadline``, :func:`pipeline.analysis.shell.tree.tree`; a ``$(`` the parse did not read
    whole). Bash fails the command at a lone backtick or a ``${`` it cannot expand, after
    the substitutions before: those count, and so do the ``$(...)`` after (fail closed).

    The body is parsed as a here-document of its own, each line's leading blanks moved to
    its end (the grammar reads no ``$(...)`` after them), its continued lines joined (bash
    joins them before it expands), after a dummy first line (a first line opening with
    ``\\`` is read as words of the start line). ``$((...))`` is arithmetic when the ``(``
    after ``$(`` closes right before the last ``)``: decided on the text when nothing inside
    quotes, escapes or comments (:func:`_without_arithmetic`), else on the tree (one
    subshell). Backticks, which the grammar leaves as text, are found in the text with its
    ``$(...)`` blanked, backslash escapes as in double quotes."""
    if quoted(delimiter):
        return body, []
    text = _CONTINUATION.sub(lambda m: "" if m.group(1) == "\n" else m.group(0), body)
    if "$(" not in text and "`" not in text:
        return text, []
    lines = _without_arithmetic(text).replace("`", " ").split("\n")  # backticks: found on the text below
    shadow = "\n".join(ln.lstrip(" \t") + ln[:len(ln) - len(ln.lstrip(" \t"))] for ln in lines)
    indents = [len(ln) - len(ln.lstrip(" \t")) for ln in lines]
    starts = [0]
    for ln in lines[:-1]:
        starts.append(starts[-1] + len(ln) + 1)
    end_word = "LITMUS_END"
    while end_word in text:
        end_word += "_"
    head = f": <<{end_word}\nx\n"
    parsed = tree(f"{head}{shadow}\n{end_word}\n", deadline)
    if parsed is None or _unread_substitution(parsed.root_node):
        return None

    def original(offset: int) -> int:  # an offset of the shadow, as one of `text` (lines keep their length)
        k = bisect.bisect_right(starts, offset) - 1
        column, kept = offset - starts[k], len(lines[k]) - indents[k]
        return starts[k] + (column + indents[k] if column < kept else column - kept)

    chars, spans = list(text), []
    stack = [parsed.root_node]
    while stack:
        node = stack.pop()
        if node.type != "command_substitution":
            stack.extend(node.children)
            continue
        lo, hi = original(node.start_byte - len(head)), original(node.end_byte - 1 - len(head)) + 1
        if not _one_subshell(node):
            if not _whole(text[lo:hi], deadline):
                return None  # its backticks (blanked for that parse) end it elsewhere
            spans.append((lo, hi))
        chars[lo:hi] = " " * (hi - lo)
    plain = _without_arithmetic("".join(chars))
    if _OPEN.search(plain):
        return None  # a `$(` the parse did not read (`${x:-'$(cmd)'}`: quotes are text here)
    for m in _BACKTICKS.finditer(plain):
        if m.group() == "`":
            break  # a lone backtick: bash fails the command there (substitutions found before it are kept)
        if m.group().startswith("`"):
            spans.append((m.start(), m.end()))
    return text, sorted(spans)


_OPEN = re.compile(r"(?<!\\)(?:\\\\)*\$\(")  # an unescaped `$(`


def _whole(sub: str, deadline: float | None) -> bool:
    """Whether ``$(...)`` text, parsed with its backticks, is one substitution ending where
    it ends (a backtick pair inside it may hold the ``)`` the body's parse ended it at)."""
    probe = "$( " + sub[2:] if sub.startswith("$((") else sub  # a subshell, not arithmetic (decided above)
    parsed = tree(": " + probe, deadline)
    if parsed is None or parsed.root_node.has_error:
        return False
    node = parsed.root_node.descendant_for_byte_range(2, 3)
    while node is not None and node.type != "command_substitution":
        node = node.parent
    return node is not None and node.start_byte == 2 and node.end_byte == 2 + len(probe)


def _unread_substitution(root: tree_sitter.Node) -> bool:
    """Whether the body's parse failed inside a ``$(...)`` (one left open, or an error
    holding its ``$(``): a substitution that may run and cannot be read. An error elsewhere
    (``${user.name}``, a ``${`` bash cannot expand: it fails the command there) leaves the
    substitutions that parsed whole."""
    if not root.has_error:
        return False
    stack = [(root, False)]
    while stack:
        node, in_error = stack.pop()
        if node.type == "command_substitution" and not node.has_error:
            continue  # read whole
        if node.is_missing and node.type == ")":
            return True
        in_error = in_error or node.type == "ERROR"
        if in_error and node.type == "$(":
            return True
        stack.extend((c, in_error) for c in node.children)
    return False


def _one_subshell(node: tree_sitter.Node) -> bool:
    """``$((...))`` the grammar read as a command substitution of one subshell that closes
    right before the last ``)``: arithmetic to bash."""
    inner = [c for c in node.named_children if c.type != "comment"]
    return (len(inner) == 1 and inner[0].type == "subshell" and inner[0].start_byte == node.start_byte + 2
            and inner[0].end_byte == node.end_byte - 1)


_ARITHMETIC = re.compile(r"(?<!\\)(?:\\\\)*\$\(\(")
_UNSURE = re.compile(r"['\"\\#`]")  # inside: a quote, escape or comment the raw count would misread


def _without_arithmetic(text: str) -> str:
    """``text`` with the ``$((`` and ``))`` of each arithmetic expansion blanked (what is
    inside stays: a ``$(...)`` there runs). Bash reads ``$((`` as arithmetic when the ``)``
    closing its inner ``(`` comes right before another ``)``; otherwise (``$((a);(b))``) it
    is a command substitution of a subshell. The grammar reads both as the latter. One
    holding a quote, backslash, ``#`` or backtick is left to the tree."""
    closes: dict[int, int] = {}  # each `(` by offset: the `)` that closes it (raw characters)
    opened: list[int] = []
    for j, c in enumerate(text):
        if c == "(":
            opened.append(j)
        elif c == ")" and opened:
            closes[opened.pop()] = j
    chars = list(text)
    for m in _ARITHMETIC.finditer(text):
        j = closes.get(m.end() - 1)
        if j is not None and text[j + 1:j + 2] == ")" and not _UNSURE.search(text, m.end(), j):
            chars[m.end() - 3:m.end()] = "   "
            chars[j:j + 2] = "  "
    return "".join(chars)
