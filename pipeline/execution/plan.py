"""Planning: the inputs cut into shards of record-aligned byte ranges, in input order.

One streaming pass per input file hashes it for the manifest and, for a file that
:func:`pipeline.ingest.reader.splittable` allows, finds the cut points: the byte just after
the first newline at or past each target offset (``k * total / n`` in the inputs'
concatenated byte space) and the line number there, so a shard reads exactly its own
bytes with the reader's lineage. A gzip NDJSON file is planned by its uncompressed bytes:
one decompressing pass (:func:`pipeline.execution.gzip_plan.gzip_index`, before the shard count is chosen) hashes it and
marks a record boundary about every ``GZIP_MARK`` bytes, and its cuts are taken from those
marks, so a shard reads a range of the uncompressed stream (its memory follows the shard's
uncompressed bytes: a 10 MB file of 1 GB took one shard and 10.6 GB). A file that cannot
be split (whole-file JSON, converted formats) is one piece, in the shard where it starts. Shards are
contiguous in input order: shard ``k`` holds records before every record of shard
``k + 1`` (duplicate ids rely on it, see ``pipeline.execution.duplicates``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass

from pipeline.execution.gzip_plan import GzipIndex, gzip_indexes
from pipeline.storage import Location, Stamp, open_raw, size, stamp

_BLOCK = 1 << 20
@dataclass(frozen=True)
class Piece:
    """A byte range of one input file (``end`` None: to the end) and its first line.
    ``bound``: of a whole-file piece (``start`` 0, ``end`` None), the bytes planning hashed
    (None for a gzip file): a file read line by line is read no further, so lines appended
    meanwhile are not scored."""

    path: Location
    start: int = 0
    end: int | None = None
    first_line: int = 1
    bound: int | None = None


@dataclass(frozen=True)
class InputFile:
    """One input file as planned: its digest, size and cut points ``(offset, line)``."""

    path: Location
    sha256: str
    bytes: int
    cuts: tuple[tuple[int, int], ...]
    span: int = -1  # the bytes it is planned by: uncompressed for a split gzip file
    stamp: Stamp = (-1, None)  # (size, mtime) before it was hashed: changed_inputs compares

    @property
    def planned(self) -> int:
        """The bytes this file takes in the plan's byte space."""
        return self.span if self.span >= 0 else self.bytes

    @property
    def bound(self) -> int | None:
        """How far its readers read (:attr:`Piece.bound`): the hashed bytes; None for a gzip
        file, read to its end (a damaged stream is reported where it breaks, which its
        index, ending there, would not reach)."""
        return None if self.path.name.lower().endswith(".gz") else self.bytes


def planned_sizes(files: list[Location], indexes: Mapping[str, GzipIndex]) -> list[int]:
    """Each input's bytes in the plan: uncompressed for an indexed gzip file."""
    return [indexes[str(p)].size if str(p) in indexes else size(p) for p in files]


def _scan(path: Location, targets: list[int], split: bool) -> tuple[str, tuple[tuple[int, int], ...], int]:
    """SHA-256 of the file, when ``split`` a record boundary for each target offset, and
    the bytes hashed."""
    digest = hashlib.sha256()
    cuts: list[tuple[int, int]] = []
    pending = sorted(targets) if split else []
    pos = lines = 0
    with open_raw(path) as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
            while pending:
                at = block.find(b"\n", max(pending[0] - pos, 0))
                if at < 0:
                    break
                cut = pos + at + 1
                if not cuts or cuts[-1][0] != cut:
                    cuts.append((cut, lines + block.count(b"\n", 0, at + 1) + 1))
                pending = [t for t in pending if t >= cut]
            if pending:  # line numbers are needed only up to the last cut
                lines += block.count(b"\n")
            pos += len(block)
    return digest.hexdigest(), tuple((c, n) for c, n in cuts if c < pos), pos


@dataclass(frozen=True)
class ScanJob:
    """One input file to scan: its size, the target offsets inside it (relative to its
    start) and whether it may be split there."""

    path: Location
    bytes: int
    targets: list[int]
    split: bool
    index: GzipIndex | None = None

    def scan(self) -> InputFile:
        """Hash the file and find its cut points (:func:`_scan`; a gzip file's from its index)."""
        if self.index is not None:
            return InputFile(self.path, self.index.sha256, self.index.hashed, self.index.cuts(self.targets),
                             self.index.size, self.index.stamp)
        before = stamp(self.path)
        digest, cuts, n_bytes = _scan(self.path, self.targets, self.split)
        return InputFile(self.path, digest, n_bytes, cuts, stamp=before)


def scan_jobs(files: list[Location], n_shards: int, fmt: str,
              indexes: Mapping[str, GzipIndex] | None = None) -> list[ScanJob]:
    """Each input's scan for ``n_shards`` shards of equal bytes, in input order (``indexes``:
    :func:`gzip_indexes` of the inputs, computed when not given)."""
    from pipeline.ingest.reader import splittable

    indexes = gzip_indexes(files, fmt) if indexes is None else indexes
    sizes = planned_sizes(files, indexes)
    total = sum(sizes)
    targets = [k * total // n_shards for k in range(1, n_shards)]
    jobs: list[ScanJob] = []
    base = 0
    for path, n_bytes in zip(files, sizes):
        inside = [t - base for t in targets if base < t < base + n_bytes]
        index = indexes.get(str(path))
        jobs.append(ScanJob(path, n_bytes, inside, index is not None or (bool(inside) and splittable(path, fmt)),
                            index))
        base += n_bytes
    return jobs


def scan_inputs(files: list[Location], n_shards: int, fmt: str,
                indexes: Mapping[str, GzipIndex] | None = None) -> list[InputFile]:
    """Hash every input and find its cut points for ``n_shards`` shards of equal bytes."""
    return [job.scan() for job in scan_jobs(files, n_shards, fmt, indexes)]


def shard_pieces(inputs: list[InputFile], n_shards: int) -> list[list[Piece]]:
    """Each shard's pieces, in input order. A piece belongs to the shard of the targets
    before it: a file's start counts a target at exactly that offset, a cut (always
    past its target) only the targets below it. A shard may be empty (an unsplittable
    file spanning several targets)."""
    total = sum(f.planned for f in inputs)
    targets = [k * total // n_shards for k in range(1, n_shards)]
    shards: list[list[Piece]] = [[] for _ in range(n_shards)]
    base = 0
    for f in inputs:
        starts = [(0, 1), *f.cuts]
        for i, (start, line) in enumerate(starts):
            end = starts[i + 1][0] if i + 1 < len(starts) else None
            if start == 0:
                shard = sum(1 for t in targets if t <= base)
            else:
                shard = sum(1 for t in targets if t < base + start)
            piece = Piece(f.path, bound=f.bound) if start == 0 and end is None \
                else Piece(f.path, start, f.bound if end is None else end, line)
            shards[min(shard, n_shards - 1)].append(piece)
        base += f.planned
    return shards


def plan_digest(inputs: list[InputFile], policy_sha: str, labels_sha: str | None,
                n_shards: int, fmt: str, tables: tuple[str, ...]) -> str:
    """What a work folder was made for: resume only reuses a matching one."""
    plan = {"inputs": [[str(f.path), f.sha256] for f in inputs], "policy": policy_sha,
            "labels": labels_sha, "shards": n_shards, "format": fmt, "tables": list(tables)}
    return hashlib.sha256(json.dumps(plan, sort_keys=True).encode()).hexdigest()


def _prefix_sha256(path: Location, n_bytes: int) -> str | None:
    """SHA-256 of the first ``n_bytes`` of the file; None when it holds fewer now."""
    digest, left = hashlib.sha256(), n_bytes
    with open_raw(path) as handle:
        while left and (block := handle.read(min(_BLOCK, left))):
            digest.update(block)
            left -= len(block)
    return None if left else digest.hexdigest()


def _change(f: InputFile, now: Stamp | None, fmt: str) -> str | None:
    """How an input changed since planning hashed it, or None when what the run read
    of it is still what was hashed (its stamp is the same, or it only grew and its readers
    stopped at :attr:`InputFile.bound`)."""
    from pipeline.ingest.reader import read_in_lines

    if now is None:
        return "it was removed"
    if now == f.stamp:
        return None
    if now[0] < f.bytes:
        return f"it was cut from {f.bytes} to {now[0]} bytes"
    if _prefix_sha256(f.path, f.bytes) != f.sha256:
        return "it was rewritten: its first bytes no longer hash as planned"
    if now[0] > f.bytes and (f.bound is None or not read_in_lines(f.path, fmt)):
        return f"it grew from {f.bytes} to {now[0]} bytes, and it is read whole"
    return None


def changed_inputs(inputs: list[InputFile], fmt: str) -> list[str]:
    """The inputs whose scored bytes may differ from what planning hashed, each with how it
    changed. A file that only grew (a log appended meanwhile) is not one when it is read
    line by line: its shards read the planned bytes and no further (:attr:`Piece.bound`)."""
    found = []
    for f in inputs:
        try:
            now: Stamp | None = stamp(f.path)
        except FileNotFoundError:
            now = None
        why = _change(f, now, fmt)
        if why is not None:
            found.append(f"{f.path}: {why}")
    return found
