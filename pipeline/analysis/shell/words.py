"""Shell words for the analyser: quote removal, private metacharacters, placeholders.

A word comes back with quotes removed; a metacharacter that was quoted or escaped travels
as a private code point (``PRIV``), so a quoted ``'$x'`` is not a variable and a quoted
``';'`` is not an operator, and :func:`restore_private` maps it back. A ``$(...)``,
backtick or process substitution becomes a placeholder (``SUB_L`` index ``SUB_R``) and
is recorded as (kind, inner text); a here-document body is a placeholder ``HD_L`` index
``HD_R``. :class:`WordReader` reads the word nodes of a tree-sitter-bash tree this way.
"""

from __future__ import annotations

import re

import tree_sitter

__all__ = ["PRIV", "SUB_L", "SUB_R", "HD_L", "HD_R", "SUB_RE", "HD_RE", "restore_private", "WordReader"]

_PUNCT = "();<>|&\n"
# Quoted/escaped metacharacters travel as private-use code points.
PRIV = {c: chr(0xE000 + i) for i, c in enumerate(_PUNCT + "$`")}
_UNPRIV = str.maketrans({v: k for k, v in PRIV.items()})
SUB_L, SUB_R = "\ue020", "\ue021"  # substitution placeholder: SUB_L + index + SUB_R
HD_L, HD_R = "\ue022", "\ue023"  # here-document body placeholder
SUB_RE = re.compile(f"{SUB_L}(\\d+){SUB_R}")
HD_RE = re.compile(f"^{HD_L}(\\d+){HD_R}$")


def restore_private(text: str) -> str:
    """Private code points back to the metacharacters they stand for."""
    return text.translate(_UNPRIV)


class WordReader:
    """Reads word nodes of one tree over ``src`` (offsets are character offsets)."""

    def __init__(self, src: str) -> None:
        self.src = src
        self.subs: list[tuple[str, str]] = []

    def raw(self, node: tree_sitter.Node) -> str:
        """The node's source text."""
        return self.src[node.start_byte:node.end_byte]

    def word(self, node: tree_sitter.Node) -> str:
        """The word with quotes removed, quoted metacharacters private, substitutions
        replaced by placeholders."""
        kind = node.type
        if kind in ("word", "command_name", "number", "variable_name", "test_operator", "regex",
                    "extglob_pattern", "special_variable_name", "file_descriptor"):
            if kind == "command_name" and node.named_children:
                return "".join(self.word(c) for c in node.named_children)
            return _unquoted(self.raw(node))
        if kind == "raw_string":
            return _private(self.raw(node)[1:-1])
        if kind == "ansi_c_string":
            return "$" + _private(self.raw(node)[2:-1])
        if kind in ("string", "translated_string"):
            return self.string(node)
        if kind in ("simple_expansion", "expansion"):
            return self.raw(node)
        if kind == "command_substitution":
            return self.substitution(node)
        if kind == "process_substitution":
            inner = self.raw(node)
            return self.placeholder(inner[0], inner[2:-1])
        if kind == "arithmetic_expansion":
            return self.placeholder("=", "")
        return self.spans(node, self.word)

    def spans(self, node: tree_sitter.Node, each: object) -> str:
        """Source text of ``node`` with each named child replaced by ``each(child)``."""
        out, pos = [], node.start_byte
        for child in node.children:
            if child.start_byte > pos:
                out.append(_unquoted(self.src[pos:child.start_byte]))
            out.append(each(child) if child.is_named else _unquoted(self.raw(child)))  # type: ignore[operator]
            pos = child.end_byte
        if node.end_byte > pos:
            out.append(_unquoted(self.src[pos:node.end_byte]))
        return "".join(out)

    def string(self, node: tree_sitter.Node) -> str:
        """A double-quoted string: expansions stay, backslashes as bash reads them."""
        out, pos = [], node.start_byte + (2 if node.type == "translated_string" else 1)
        end = node.end_byte - 1
        for child in node.named_children:
            if child.start_byte > pos:
                out.append(_in_quotes(self.src[pos:child.start_byte]))
            if child.type == "string_content":
                out.append(_in_quotes(self.raw(child)))
            elif child.type in ("simple_expansion", "expansion"):
                out.append(self.raw(child))
            elif child.type == "command_substitution":
                out.append(self.substitution(child))
            elif child.type == "arithmetic_expansion":
                out.append(self.placeholder("=", ""))
            else:
                out.append(_in_quotes(self.raw(child)))
            pos = child.end_byte
        if end > pos:
            out.append(_in_quotes(self.src[pos:end]))
        return "".join(out)

    def substitution(self, node: tree_sitter.Node) -> str:
        return self.substitution_text(self.raw(node))

    def substitution_text(self, text: str) -> str:
        """A command substitution's text (``$(...)`` or backticks) as a placeholder."""
        if text.startswith("`"):
            return self.placeholder("$", re.sub(r"\\([`\\$])", r"\1", text[1:-1]))
        return self.placeholder("$", text[2:-1])

    def placeholder(self, kind: str, inner: str) -> str:
        self.subs.append((kind, inner))
        return f"{SUB_L}{len(self.subs) - 1}{SUB_R}"


def _private(text: str) -> str:
    """Quoted text: every metacharacter private."""
    return "".join(PRIV.get(c, c) for c in text)


def _in_quotes(text: str) -> str:
    """Double-quoted text: ``\\$ \\` \\" \\\\`` are escapes, other backslashes literal."""
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt in "$`":
                out.append(PRIV[nxt])
                i += 2
                continue
            if nxt in '"\\':
                out.append(nxt)
                i += 2
                continue
            if nxt == "\n":
                i += 2
                continue
        out.append(c if c == "$" else PRIV.get(c, c))
        i += 1
    return "".join(out)


def _unquoted(text: str) -> str:
    """Unquoted text: a backslash quotes the next character (and joins lines)."""
    if "\\" not in text:
        return text
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            nxt = text[i + 1: i + 2]
            if nxt and nxt != "\n":
                out.append(PRIV.get(nxt, nxt))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)
