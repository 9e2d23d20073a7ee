"""Bounded, hostile-input-safe byte readers shared by the reader and the adapters.

Nothing here holds more than one record (NDJSON) or one size-limited document in
memory. Nothing here raises for bad content: problems come back as ``Problem``
values that the reader turns into rejected ``RawRecord``s.

JSON text is read by :mod:`pipeline.ingest.adapters._json_text`; a record's text is
checked and repaired before it passes through by
:mod:`pipeline.ingest.adapters._record_checks`.
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

from pipeline.storage import Location, Remote, open_at, open_gunzip

BOM = b"\xef\xbb\xbf"


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
