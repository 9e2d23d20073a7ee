"""Each distinct program text is analysed once per process: what ``resources`` records of
an analysis of the shell analyser (:class:`Found`, :func:`found_in`), kept across the shards a worker scores
(:data:`_MEMO`) or, when too heavy for that, for the caller's shard.
"""

from __future__ import annotations

import threading
from typing import NamedTuple

import pyarrow as pa
from cachetools import LRUCache

from pipeline.analysis.shell import ShellAnalysis, analyse_code, analyse_command

# a payload is read (its label joins the step's) and, as `payload`, what the step sends
# (sql/self_sends.sql: a secret a step sends itself, not one it merely reads); a
# `credential` (an environment variable in a request's URL or header) is neither read nor
# payload: sql/self_sends.sql reads it for the secrets the policy says are never sent
_ACCESS_FIELDS = (("read", "reads"), ("write", "writes"), ("execute", "executes"),
                  ("delete", "deletes"), ("send", "sends"), ("read", "payloads"), ("payload", "payloads"),
                  ("credential", "credentials"))


class Found(NamedTuple):
    """What ``resources`` records of one analysis."""

    reason: str | None  # opaque reason, or None
    rows: tuple[tuple[str, str], ...]  # (access, resource)
    # where a shell program leaves its shell ("." stays, None unknown: ShellAnalysis.folder)
    folder: str | None
    # (access, relative path) named where it started, which a carried folder applies to;
    # None: every relative path of ``rows`` (ShellAnalysis.here)
    here: tuple[tuple[str, str], ...] | None
    # (name, text, appended): known texts a shell program writes (ShellAnalysis.written_texts)
    texts: tuple[tuple[str, str, bool], ...] = ()
    # (name, runner): how it runs each file it executes (ShellAnalysis.runners)
    runners: tuple[tuple[str, str], ...] = ()
    # (copy, original): the files it makes a copy of another (ShellAnalysis.copies)
    copies: tuple[tuple[str, str], ...] = ()
    # (name, folder): the folder a file it executes under a `cd` of its own runs in
    # (ShellAnalysis.run_folders)
    run_folders: tuple[tuple[str, str], ...] = ()


def found_in(analysis: ShellAnalysis, shell: bool) -> Found:
    """What ``resources`` records of one analysis (``shell``: of a shell command, not code)."""
    rows = tuple((access, name) for access, field in _ACCESS_FIELDS for name in getattr(analysis, field)
                 # an inline literal sent out: its content links by data edges, not by name
                 if not (field == "payloads" and name.startswith("data:")))
    reason = (analysis.opaque_reason or "cannot be analysed") if analysis.opaque else None
    if not shell:  # a code step neither moves a shell nor runs in one
        return Found(reason, rows, ".", (), analysis.written_texts, analysis.runners, analysis.copies,
                     analysis.run_folders)
    here = None if analysis.here is None else tuple(
        (access, name) for field, name in analysis.here for access, f in _ACCESS_FIELDS if f == field)
    return Found(reason, rows, None if analysis.opaque else analysis.folder, here, analysis.written_texts,
                 analysis.runners, analysis.copies, analysis.run_folders)


# A worker scores shard after shard of one corpus, and a nightly corpus's shards run one
# another's commands (`ls`, `git status`, `pytest`, a suite's replayed task: 55-70% of a
# shard's distinct programs on the bench corpus were analysed in an earlier shard); the
# analysis is a function of the text alone, so each process keeps its answers across shards.
# Weighed, not counted: a short hostile text can name up to the analyser's work bound of
# resources, so an entry weighs its text and rows (their bytes at most, plus ~100 bytes of
# Python objects per row), one over MEMO_ENTRY_WEIGHT is never kept, and the least recently used
# leave the memo at MEMO_WEIGHT (a few tens of MB of objects at most).
MEMO_WEIGHT = 16 << 20
MEMO_ENTRY_WEIGHT = 256 << 10
_ROW_WEIGHT = 100


def _bytes(text: str) -> int:
    """Bytes a str takes at most (CPython stores 1, 2 or 4 bytes a character)."""
    return len(text) if text.isascii() else 4 * len(text)


def _weight(program: tuple[bool, str], found: Found) -> int:
    rows = [*found.rows, *(found.here or ()), *((name, text) for name, text, _ in found.texts), *found.runners,
            *found.copies, *found.run_folders]
    return _bytes(program[1]) + _bytes(found.folder or "") + sum(_bytes(a) + _bytes(r) + _ROW_WEIGHT for a, r in rows)


_MEMO: LRUCache[tuple[bool, str], tuple[Found, int]] = LRUCache(MEMO_WEIGHT, getsizeof=lambda entry: entry[1])
_MEMO_LOCK = threading.Lock()  # cachetools' caches are not thread-safe (canaries score in a thread)


def analysed(program: tuple[bool, str], seen: dict[tuple[bool, str], Found]) -> Found:
    """What ``resources`` records of ``program`` (True and a shell command, False and
    code): remembered by this process (``_MEMO``) or by the caller's ``seen`` (those
    too heavy for the memo, for the caller's shard), else analysed now."""
    with _MEMO_LOCK:
        kept = _MEMO.get(program)
    if kept is not None:
        return kept[0]
    found = seen.get(program)
    if found is None:
        shell, text = program
        found = found_in(analyse_command(text) if shell else analyse_code(text), shell)
        weight = _weight(program, found)
        if weight <= MEMO_ENTRY_WEIGHT:
            with _MEMO_LOCK:
                _MEMO[program] = (found, weight)
        else:
            seen[program] = found
    return found


def arrow_table(rows: list[tuple[object, ...]], schema: pa.Schema) -> pa.Table:
    """``rows`` (tuples in ``schema``'s column order) as an Arrow table of ``schema``."""
    cols = list(zip(*rows)) if rows else [[] for _ in schema]
    return pa.Table.from_arrays([pa.array(c, f.type) for c, f in zip(cols, schema)], schema=schema)
