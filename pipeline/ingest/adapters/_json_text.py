"""JSON text (a record or document :mod:`pipeline.ingest.adapters._io` read) parsed
without trusting it: whitespace skipping, a ``json.loads`` that returns a ``Problem``
instead of raising, and a top-level array split into its elements one at a time, each
with its exact source text and size bound.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from pipeline.ingest.adapters._io import Problem

JSON_WS = " \t\n\r"
_DECODER = json.JSONDecoder()


def skip_ws(text: str, pos: int) -> int:
    """Index of the first non-JSON-whitespace character at or after ``pos``."""
    n = len(text)
    while pos < n and text[pos] in JSON_WS:
        pos += 1
    return pos


def parse_json(text: str, line: int) -> Any | Problem:
    """``json.loads`` that returns a Problem instead of raising (also on deep nesting)."""
    try:
        return json.loads(text)
    except RecursionError:
        return Problem(line, "malformed_record", "JSON nested too deeply")
    except ValueError as exc:
        return Problem(line, "malformed_record", f"invalid JSON: {exc}")


# a JSON string literal, escapes included (what a scan of JSON text must step over whole)
JSON_STRING = r'"(?:[^"\\]|\\.)*"'
# what a bracket scan reads: a whole JSON string (its brackets are text), or one bracket
_STRUCTURE = re.compile(JSON_STRING + r"|[\[\]{}]", re.S)


def _element_end(text: str, pos: int) -> int | None:
    """The end of the array or object starting at ``pos``, found by counting brackets
    outside strings (no recursion: for an element too deep for the decoder); None when
    its brackets never close."""
    depth = 0
    for m in _STRUCTURE.finditer(text, pos):
        token = m.group()
        if token in ("[", "{"):
            depth += 1
        elif token in ("]", "}"):
            depth -= 1
            if depth == 0:
                return m.end()
    return None


def iter_array(text: str, max_record_bytes: int) -> Iterator[tuple[int, str, Any] | Problem]:
    """Split a top-level JSON array into ``(1-based index, raw element text, value)``.

    Elements are decoded one at a time (``raw_decode``), so each keeps its exact source
    text and size. An element over ``max_record_bytes`` becomes a ``record_too_large``
    problem; an element nested too deeply for the decoder is one problem, and reading goes
    on after its closing bracket (found by :func:`_element_end`, which does not recurse);
    a syntax error ends the array with one problem (the element boundary is lost, so
    nothing after it can be read).
    """
    pos = skip_ws(text, 0) + 1  # caller guarantees text starts with "["
    index = 0
    while True:
        pos = skip_ws(text, pos)
        if pos < len(text) and text[pos] == "]":
            if skip_ws(text, pos + 1) != len(text):
                yield Problem(index + 1, "malformed_record", "trailing data after JSON array")
            return
        index += 1
        problem = None
        try:
            value, end = _DECODER.raw_decode(text, pos)
        except RecursionError:
            deep_end = _element_end(text, pos)
            if deep_end is None:
                yield Problem(index, "malformed_record", "JSON nested too deeply; rest of the array not read")
                return
            end, problem = deep_end, Problem(index, "malformed_record", "JSON nested too deeply")
        except ValueError as exc:
            yield Problem(index, "malformed_record", f"invalid JSON: {exc}; rest of the array not read")
            return
        raw = text[pos:end]
        if problem is None and (len(raw) > max_record_bytes or (
                len(raw) * 4 > max_record_bytes
                and len(raw.encode("utf-8", "surrogatepass")) > max_record_bytes)):
            problem = Problem(index, "record_too_large", f"array element larger than {max_record_bytes} bytes")
        yield problem if problem is not None else (index, raw, value)
        pos = skip_ws(text, end)
        if pos < len(text) and text[pos] == ",":
            pos += 1
        elif pos >= len(text) or text[pos] != "]":
            yield Problem(index + 1, "malformed_record", "expected ',' or ']' in JSON array")
            return
