"""Planning a gzip NDJSON input by its uncompressed bytes (``pipeline.execution.plan``):
one pass reads the file, hashing its compressed bytes for the manifest while it
decompresses them, and marks a record boundary about every ``GZIP_MARK`` uncompressed
bytes; its shard cuts are taken from those marks, so each shard reads (decompressing) a
range of the uncompressed stream and its memory follows that range, not the file."""

from __future__ import annotations

import bisect
import hashlib
import io
from dataclasses import dataclass
from typing import IO, Any

from pipeline.storage import Location, Stamp, open_raw, stamp

_BLOCK = 1 << 20
# a gzip file's record boundaries are marked at least this far apart (uncompressed bytes):
# its cuts are the first mark at or past each target
GZIP_MARK = 1 << 20


@dataclass(frozen=True)
class GzipIndex:
    """A gzip file read once: the SHA-256 of its compressed bytes, its uncompressed size
    and a record boundary ``(offset, line)`` about every ``GZIP_MARK`` uncompressed bytes."""

    sha256: str
    size: int
    marks: tuple[tuple[int, int], ...]
    stamp: Stamp = (-1, None)
    hashed: int = 0  # the compressed bytes hashed

    def cuts(self, targets: list[int]) -> tuple[tuple[int, int], ...]:
        """The first mark at or past each target (uncompressed offsets), once each."""
        offsets = [m[0] for m in self.marks]
        found = {self.marks[i] for t in targets if (i := bisect.bisect_left(offsets, t)) < len(offsets)}
        return tuple(sorted(found))


class _Hashing(io.RawIOBase):
    """A raw reader that feeds every byte it reads to ``digest`` (gzip reads the file
    through it, so one read both hashes and decompresses)."""

    def __init__(self, raw: IO[bytes], digest: Any) -> None:
        super().__init__()
        self._raw, self._digest = raw, digest
        self.hashed = 0

    def readable(self) -> bool:  # noqa: D102 - io's protocol
        return True

    def readinto(self, buffer: Any) -> int:  # noqa: D102 - io's protocol
        data = self._raw.read(len(buffer))
        buffer[:len(data)] = data
        self._digest.update(data)
        self.hashed += len(data)
        return len(data)


def gzip_index(path: Location) -> GzipIndex:
    """Hash ``path`` and mark its record boundaries in the uncompressed stream, in one read
    of the file (a damaged stream ends the marks where it breaks; the reader reports it
    there; the rest of the file is still hashed)."""
    import gzip

    from pipeline.ingest.adapters._io import GZIP_ERRORS

    digest = hashlib.sha256()
    marks: list[tuple[int, int]] = []
    pos = lines = 0
    next_mark = GZIP_MARK
    before = stamp(path)
    with open_raw(path) as raw:
        hashing = _Hashing(raw, digest)
        try:
            with gzip.GzipFile(fileobj=hashing, mode="rb") as stream:
                while block := stream.read(_BLOCK):
                    while next_mark < pos + len(block):
                        at = block.find(b"\n", max(next_mark - pos, 0))
                        if at < 0:
                            break
                        cut = pos + at + 1
                        marks.append((cut, lines + block.count(b"\n", 0, at + 1) + 1))
                        next_mark = cut + GZIP_MARK
                    lines += block.count(b"\n")
                    pos += len(block)
        except GZIP_ERRORS:
            pass
        while block := raw.read(_BLOCK):  # what a damaged stream left unread
            digest.update(block)
            hashing.hashed += len(block)
    return GzipIndex(digest.hexdigest(), pos, tuple(m for m in marks if m[0] < pos), before, hashing.hashed)


def indexed_inputs(files: list[Location], fmt: str) -> list[Location]:
    """The inputs that are splittable gzip files: planning reads each of them whole."""
    from pipeline.ingest.reader import splittable

    return [p for p in files if p.name.lower().endswith(".gz") and splittable(p, fmt)]


def gzip_indexes(files: list[Location], fmt: str) -> dict[str, GzipIndex]:
    """The :class:`GzipIndex` of every input that is a splittable gzip file, by path."""
    return {str(p): gzip_index(p) for p in indexed_inputs(files, fmt)}
