"""Code fences in Cline / Roo Code assistant text (:mod:`pipeline.ingest.adapters.cline_xml`).

The elements of known tools are found first and fences only among the text outside them:
a ```` ``` ```` mark inside a ``write_to_file`` / ``replace_in_file`` / ``apply_diff`` /
``insert_content`` element's file text (a README's ```bash block, a fenced docstring) or in
a command's heredoc is that argument's text, never a fence that hides or splits the call.
An element may hold marks only inside its arguments: one with a mark between them (an
unclosed example in a fence whose "closing tag" is a later call's) is no element, and the
search goes on from its next opening tag. Each check is a few binary searches over
positions found in one pass: the scan stays linear on any text.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

_MARK = re.compile("```")
_LONG_OPEN = re.compile(r"<(?:content|diff|result)>")
_LONG_CLOSE = re.compile(r"</(?:content|diff|result)>")
_TAG = re.compile(r"<(/?)[A-Za-z_][\w-]*>")


class Fences:
    """The ``` marks of one text, and the file-text argument tags around them."""

    def __init__(self, text: str) -> None:
        self.marks = [m.start() for m in _MARK.finditer(text)]
        self.opens = [m.end() for m in _LONG_OPEN.finditer(text)] if self.marks else []
        self.closes = [m.start() for m in _LONG_CLOSE.finditer(text)] if self.marks else []
        tags = list(_TAG.finditer(text)) if self.marks else []
        self.tags, self.closing = [m.start() for m in tags], [m.group(1) == "/" for m in tags]

    def element_ok(self, body: int, stop: int) -> bool:
        """True when the body ``[body, stop)`` of an element holds no ``` mark, or its first
        mark is inside an argument (after a file-text argument's opening tag, or right
        after an opening tag: ``<command>cat <<EOF`` ...) and its last one too (before a
        file-text argument's closing tag, or right before a closing tag)."""
        i = bisect_left(self.marks, body)
        if i == len(self.marks) or self.marks[i] + 3 > stop:
            return True
        first, last = self.marks[i], self.marks[bisect_right(self.marks, stop - 3) - 1] + 3
        a = bisect_left(self.opens, body)
        k = bisect_right(self.tags, first) - 1
        if not ((a < len(self.opens) and self.opens[a] <= first) or (k >= 0 and self.tags[k] >= body
                                                                        and not self.closing[k])):
            return False
        b = bisect_right(self.closes, stop) - 1
        k = bisect_left(self.tags, last)
        return (b >= 0 and self.closes[b] >= last) or (k < len(self.tags) and self.tags[k] < stop and self.closing[k])

    def blocks(self, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """The fenced blocks (start, end): the marks outside the sorted, disjoint ``spans``
        (the elements), paired in order (an unterminated last one hides nothing)."""
        outside: list[int] = []
        i = 0
        for mark in self.marks:
            while i < len(spans) and spans[i][1] <= mark:
                i += 1
            if i == len(spans) or mark < spans[i][0]:
                outside.append(mark)
        return [(outside[k], outside[k + 1] + 3) for k in range(0, len(outside) - 1, 2)]
