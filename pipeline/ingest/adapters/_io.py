"""Bounded, hostile-input-safe byte readers shared by the reader and the adapters.

Nothing here holds more than one record (NDJSON) or one size-limited document in
memory. Nothing here raises for bad content: problems come back as ``Problem``
values that the reader turns into rejected ``RawRecord``s.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from pipeline.storage import Location, Remote, open_at, open_gunzip

BOM = b"\xef\xbb\xbf"
JSON_WS = " \t\n\r"
_DECODER = json.JSONDecoder()


@dataclass(frozen=True, slots=True)
class Problem:
    """A per-record problem: the reader yields it as a rejected record."""

    line: int
    reason: str
    detail: str


def is_gzip(path: Location) -> bool:
    """True when the file name ends in ``.gz``."""
    return path.name.lower().endswith(".gz")


def open_binary(path: Location) -> IO[bytes]:
    """Open a file (local or :class:`Remote`) for binary reading, transparently
    decompressing ``.gz`` with Python's ``gzip`` in both cases."""
    if isinstance(path, Remote):
        return open_gunzip(path) if is_gzip(path) else path.open_binary()
    if is_gzip(path):
        return gzip.open(path, "rb")
    return open(path, "rb")


# a damaged gzip stream; other OSErrors (a network read failing) are not the input's fault
GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)


# this process's decompressing reader of the gzip piece it read last, parked where that piece
# ended: (file key, reader, uncompressed position). The pieces of one gzip file are shards in
# input order, so a worker's next piece of it usually starts at or after that position and
# is reached by reading on, not by decompressing the file again from its start (each worker
# decompresses a file about once instead of once per shard)
_PARKED: list[tuple[tuple[str, int, int], IO[bytes], int]] = []


def _file_key(path: Location) -> tuple[str, int, int]:
    if isinstance(path, Remote):
        return (str(path), path.size(), 0)
    stat = os.stat(path)
    return (str(path), stat.st_size, stat.st_mtime_ns)


def _gzip_at(path: Location, start: int) -> tuple[IO[bytes], int]:
    """A decompressing reader of ``path`` at uncompressed offset ``start`` and that offset:
    the parked reader when it stands at or before ``start``, else a new one."""
    key = _file_key(path)
    fh, position = None, 0
    if _PARKED:
        parked_key, parked, parked_at = _PARKED.pop()
        if parked_key == key and parked_at <= start:
            fh, position = parked, parked_at
        else:
            parked.close()
    if fh is None:
        fh = open_binary(path)
    while position < start:  # read on to the piece (decompressing: no seek)
        skipped = len(fh.read(min(start - position, 1 << 20)))
        if not skipped:
            break
        position += skipped
    return fh, position


def iter_lines(path: Location, max_record_bytes: int, start: int = 0, end: int | None = None,
               first_line: int = 1) -> Iterator[tuple[int, bytes | Problem]]:
    """Yield ``(physical 1-based line number, line bytes | Problem)`` for non-blank lines.

    ``start``/``end``/``first_line`` read one record-aligned byte range of the file (a
    shard's piece: ``start`` is 0 or just after a newline, ``end`` just after one or the
    file's end; ``first_line`` is the line number at ``start``); of a gzip file, a range of
    its uncompressed bytes (reached by decompressing, see ``_gzip_at``).

    Lines are read with a bounded ``readline``: a line longer than ``max_record_bytes``
    is consumed in chunks and reported as ``record_too_large`` without being held in
    memory. A UTF-8 BOM on line 1 and the trailing ``\\r\\n`` / ``\\n`` are stripped.
    A truncated or corrupt gzip stream ends the iteration with one
    ``malformed_record`` problem at the next line number.
    """
    limit = max_record_bytes + 2  # room for "\r\n" on a line of exactly max bytes
    gzip_piece = is_gzip(path) and (start > 0 or end is not None)
    if gzip_piece:
        fh, position = _gzip_at(path, start)
    else:
        fh, position = (open_binary(path) if start == 0 else open_at(path, start)), start
    cursor = [position]  # where the reader stands: a gzip piece read to its end parks it there
    try:
        yield from _lines(fh, path, limit, max_record_bytes, first_line - 1, end, cursor)
    finally:
        if gzip_piece and cursor[0] == end:
            _PARKED.append((_file_key(path), fh, end))
        else:
            fh.close()


def _lines(fh: IO[bytes], path: Location, limit: int, max_record_bytes: int, line_no: int,
           end: int | None, cursor: list[int]) -> Iterator[tuple[int, bytes | Problem]]:
    """The loop of :func:`iter_lines` over an open reader standing at ``cursor[0]``."""
    while end is None or cursor[0] < end:
        try:
            chunk = fh.readline(limit if end is None else max(min(limit, end - cursor[0]), 1))
            if not chunk:
                return
            cursor[0] += len(chunk)
            line_no += 1
            too_large = len(chunk) >= limit and not chunk.endswith(b"\n")
            while too_large and chunk and not chunk.endswith(b"\n"):
                chunk = fh.readline(limit)  # skip the rest of the over-long line
                cursor[0] += len(chunk)
        except GZIP_ERRORS as exc:
            if not is_gzip(path):
                raise
            yield line_no + 1, Problem(
                line_no + 1, "malformed_record",
                f"truncated gzip stream after line {line_no} ({type(exc).__name__}: {exc})")
            return
        if too_large:
            yield line_no, Problem(line_no, "record_too_large",
                                   f"line longer than {max_record_bytes} bytes")
            continue
        if line_no == 1 and chunk.startswith(BOM):
            chunk = chunk[len(BOM):]
        chunk = chunk.rstrip(b"\n").rstrip(b"\r")
        if not chunk.strip():
            continue
        if len(chunk) > max_record_bytes:
            yield line_no, Problem(line_no, "record_too_large",
                                   f"line longer than {max_record_bytes} bytes")
            continue
        yield line_no, chunk


def decode_line(raw: bytes, line: int) -> str | Problem:
    """Strict UTF-8 decode of one record; NUL bytes and invalid UTF-8 are problems."""
    if b"\x00" in raw:
        return Problem(line, "malformed_record", f"NUL byte at offset {raw.index(0)}")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Problem(line, "malformed_record",
                       f"invalid UTF-8 at byte offset {exc.start}: {exc.reason}")


def read_head(path: Location, size: int) -> bytes:
    """The first ``size`` (decompressed) bytes of a file; fewer on a short/corrupt file."""
    out = bytearray()
    try:
        with open_binary(path) as fh:
            while len(out) < size:
                block = fh.read(size - len(out))
                if not block:
                    break
                out += block
    except GZIP_ERRORS:
        pass
    return bytes(out)


def read_document(path: Location, limit: int) -> str | Problem:
    """Read a whole-file document (at most ``limit`` bytes) as text, or a Problem."""
    try:
        if not is_gzip(path) and (path.size() if isinstance(path, Remote) else os.path.getsize(path)) > limit:
            return Problem(1, "record_too_large", f"file larger than {limit} bytes")
        with open_binary(path) as fh:
            data = fh.read(limit + 1)
    except GZIP_ERRORS as exc:
        return Problem(1, "malformed_record",
                       f"truncated gzip stream after line 0 ({type(exc).__name__}: {exc})")
    if len(data) > limit:
        return Problem(1, "record_too_large", f"file larger than {limit} bytes")
    if data.startswith(BOM):
        data = data[len(BOM):]
    text = decode_line(data, 1)
    return text


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


class _NonFiniteNumber(ValueError):
    """Raised by the ``parse_constant`` hook of :func:`non_finite_number`."""


def _refuse_constant(name: str) -> Any:
    raise _NonFiniteNumber(name)


def non_finite_number(text: str, line: int) -> Problem | None:
    """A Problem when ``text`` uses ``NaN`` / ``Infinity`` / ``-Infinity`` as a number.

    Those tokens are not JSON (RFC 8259), but Python's ``json`` and DuckDB's JSON reader
    both accept them, so a pass-through record carrying one would be scored and its
    ``arguments`` / ``content`` columns would hold text no strict JSON parser reads.
    Only texts containing the substrings are parsed (cheap for everything else); a text
    that is invalid for another reason, or nested too deeply for Python, is left to the
    SQL stage (which reports it as usual).
    """
    if "NaN" not in text and "Infinity" not in text:
        return None
    try:
        json.loads(text, parse_constant=_refuse_constant)
    except _NonFiniteNumber as exc:
        return Problem(line, "malformed_record", f"invalid JSON: {exc} is not a JSON number")
    except (ValueError, RecursionError):
        return None
    return None


# Anthropic content blocks that carry a tool call (server tools' too)
_CALL_BLOCKS = ("tool_use", "server_tool_use")


def _unmirrored_call(messages: list[Any]) -> tuple[int, str] | None:
    """(message index, block type) of the first Anthropic call block in a message's
    ``content`` that is not also one of that message's ``tool_calls`` (by id), or None."""
    for i, msg in enumerate(messages):
        content = msg.get("content") if isinstance(msg, dict) else None
        if not isinstance(content, list):
            continue
        calls = msg.get("tool_calls")
        ids = {c.get("id") for c in calls if isinstance(c, dict)} if isinstance(calls, list) else set()
        for block in content:
            if isinstance(block, dict) and block.get("type") in _CALL_BLOCKS and block.get("id") not in ids:
                return i, block["type"]
    return None


def marked_messages(text: str, mark: str) -> tuple[dict[str, Any], list[Any]] | None:
    """A canonical record's text parsed, with its ``messages`` list, when the text holds
    ``mark`` (a cheap substring test first: only such records pay for a parse); None when
    it does not, does not parse, or has no such list (left to the SQL stage)."""
    if mark not in text:
        return None
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return None
    messages = doc.get("messages") if isinstance(doc, dict) else None
    return (doc, messages) if isinstance(messages, list) else None


def anthropic_calls(text: str, line: int) -> Problem | None:
    """A Problem when a record read as canonical holds an Anthropic ``tool_use`` block
    (in a message's ``content`` list) that is not also one of the message's ``tool_calls``.

    The canonical reader takes only the text of content blocks: such a call would vanish
    and the record would be scored without it (an Anthropic file whose first record has no
    call nor ``system`` is detected as canonical). Only texts containing the substring are
    parsed; a text that does not parse is left to the SQL stage.
    """
    parsed = marked_messages(text, 'tool_use"')
    found = _unmirrored_call(parsed[1]) if parsed is not None else None
    if found is None:
        return None
    return Problem(line, "malformed_record",
                   f"messages[{found[0]}].content holds an Anthropic '{found[1]}' block that is not among its "
                   "tool_calls: read as canonical, the call would be lost (use --format anthropic)")


# a JSON escape of a UTF-16 surrogate (the backslash itself not escaped: preceded by an
# even number of backslashes): a high one with its low partner is one character; any
# other is lone
_SURROGATE_HINT = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)(\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
                               r"|\\u[dD][89a-fA-F][0-9a-fA-F]{2})")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT_ESCAPE = "\\ufffd"


def without_lone_surrogates(text: str) -> str:
    """``text`` (JSON) with each lone UTF-16 surrogate escape written as U+FFFD's.

    A lone surrogate (``"\\ud83d"`` without its partner) is what a log cut in the middle of
    an emoji holds (JavaScript's ``JSON.stringify`` writes it so). It is valid JSON syntax
    but no Unicode text: DuckDB's reader refuses the record. Replacing the half character,
    as a UTF-8 decoder does with a broken byte, keeps the record scorable. Only the escape
    changes (six characters for six); every other byte of the text stays. Texts without
    a surrogate escape are returned after one quick search.
    """
    if _SURROGATE_HINT.search(text) is None:
        return text

    def fix(m: re.Match[str]) -> str:
        return m.group(0) if len(m.group(2)) == 12 else m.group(1) + REPLACEMENT_ESCAPE

    return _SURROGATE_ESCAPE.sub(fix, text)


def replace_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate character (Python keeps them in a ``str`` it
    decoded from ``\\ud800``-style escapes) as U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", text)


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
