"""Planning: the inputs cut into shards of record-aligned byte ranges, in input order.

One streaming pass per input file hashes it for the manifest and, for a file that
:func:`pipeline.ingest.reader.splittable` allows, finds the cut points: the byte just after
the first newline at or past each target offset (``k * total / n`` in the inputs'
concatenated byte space) and the line number there, so a shard reads exactly its own
bytes with the reader's lineage. A file that cannot be split (compressed, whole-file
JSON, converted formats) is one piece, in the shard where it starts. Shards are
contiguous in input order: shard ``k`` holds records before every record of shard
``k + 1`` (duplicate ids rely on it, see ``pipeline.execution.duplicates``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from pipeline.storage import Location, open_raw, size

_BLOCK = 1 << 20


@dataclass(frozen=True)
class Piece:
    """A byte range of one input file (``end`` None: to the end) and its first line."""

    path: Location
    start: int = 0
    end: int | None = None
    first_line: int = 1


@dataclass(frozen=True)
class InputFile:
    """One input file as planned: its digest, size and cut points ``(offset, line)``."""

    path: Location
    sha256: str
    bytes: int
    cuts: tuple[tuple[int, int], ...]


def _scan(path: Location, targets: list[int], split: bool) -> tuple[str, tuple[tuple[int, int], ...]]:
    """SHA-256 of the file and, when ``split``, a record boundary for each target offset."""
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
    return digest.hexdigest(), tuple((c, n) for c, n in cuts if c < pos)


@dataclass(frozen=True)
class ScanJob:
    """One input file to scan: its size, the target offsets inside it (relative to its
    start) and whether it may be split there."""

    path: Location
    bytes: int
    targets: list[int]
    split: bool

    def scan(self) -> InputFile:
        """Hash the file and find its cut points (:func:`_scan`)."""
        digest, cuts = _scan(self.path, self.targets, self.split)
        return InputFile(self.path, digest, self.bytes, cuts)


def scan_jobs(files: list[Location], n_shards: int, fmt: str) -> list[ScanJob]:
    """Each input's scan for ``n_shards`` shards of equal bytes, in input order."""
    from pipeline.ingest.reader import splittable

    sizes = [size(p) for p in files]
    total = sum(sizes)
    targets = [k * total // n_shards for k in range(1, n_shards)]
    jobs: list[ScanJob] = []
    base = 0
    for path, n_bytes in zip(files, sizes):
        inside = [t - base for t in targets if base < t < base + n_bytes]
        jobs.append(ScanJob(path, n_bytes, inside, bool(inside) and splittable(path, fmt)))
        base += n_bytes
    return jobs


def scan_inputs(files: list[Location], n_shards: int, fmt: str) -> list[InputFile]:
    """Hash every input and find its cut points for ``n_shards`` shards of equal bytes."""
    return [job.scan() for job in scan_jobs(files, n_shards, fmt)]


def shard_pieces(inputs: list[InputFile], n_shards: int) -> list[list[Piece]]:
    """Each shard's pieces, in input order. A piece belongs to the shard of the targets
    before it: a file's start counts a target at exactly that offset, a cut (always
    past its target) only the targets below it. A shard may be empty (an unsplittable
    file spanning several targets)."""
    total = sum(f.bytes for f in inputs)
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
            piece = Piece(f.path) if start == 0 and end is None else Piece(f.path, start, end, line)
            shards[min(shard, n_shards - 1)].append(piece)
        base += f.bytes
    return shards


def plan_digest(inputs: list[InputFile], policy_sha: str, labels_sha: str | None,
                n_shards: int, fmt: str, tables: tuple[str, ...]) -> str:
    """What a work folder was made for: resume only reuses a matching one."""
    plan = {"inputs": [[str(f.path), f.sha256] for f in inputs], "policy": policy_sha,
            "labels": labels_sha, "shards": n_shards, "format": fmt, "tables": list(tables)}
    return hashlib.sha256(json.dumps(plan, sort_keys=True).encode()).hexdigest()
