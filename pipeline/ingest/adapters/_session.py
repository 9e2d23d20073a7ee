"""Whole-file sessions: formats whose FILE is the unit (Claude Code, Codex, OTLP exports).

A session file is NDJSON (or, for OTLP, possibly one JSON document) whose lines together
make one trajectory (or, for OTLP, one trajectory per trace). The reader hands the
adapter an iterator over ``(line, value)`` pairs produced by :func:`session_items`; the
adapter yields ``(source_line, canonical dict | Problem)`` pairs.

Rules for lines that cannot be read (the file is one record, so one bad line decides
the whole record):
- the LAST non-blank line not being JSON (a file copied while it was being written, a
  crash mid-write) is dropped: the adapter gets ``(line, DROPPED)`` and records the line
  number in ``meta.dropped_lines``; nothing after it can depend on it;
- any other unreadable line (not JSON, invalid UTF-8, a NUL byte, a line over
  ``max_record_bytes``, a truncated gzip stream) rejects the whole file: the dependency
  graph cannot be built without it. :class:`SessionAbort` carries the reason and a
  detail naming the line;
- a file whose lines add up to more than ``8 * max_record_bytes`` is rejected
  ``record_too_large`` (the converted record is also checked against
  ``max_record_bytes`` by the reader).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, TypeVar

from pipeline.ingest.adapters._common import AdapterError, Ctx, Growth, TextParts
from pipeline.ingest.adapters._io import Problem, decode_line, iter_lines, read_document
from pipeline.ingest.adapters._json_text import parse_json
from pipeline.ingest.records import RawRecord, rejected
from pipeline.storage import Location

DROPPED = object()  # sentinel value: a truncated last line the adapter should note


class SessionAbort(Exception):
    """The whole session file is rejected with ``reason`` (an attrition reason) and ``detail``."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def _abort(problem: Problem, what: str) -> SessionAbort:
    return SessionAbort(problem.reason, f"{what} line {problem.line}: {problem.detail}; "
                                        "the session cannot be scored without it")


def session_items(path: Location, max_record_bytes: int, document: bool = False,
                  growth: Growth | None = None, bound: int | None = None) -> Iterator[tuple[int, Any]]:
    """``(physical line, parsed JSON value)`` of a session file (module docstring rules).

    ``document``: the file is one JSON document (``.json``), yielded as line 1.
    ``growth`` counts the bytes read. ``bound``: of an NDJSON file, the bytes read at most.
    """
    limit = 8 * max_record_bytes
    growth = growth if growth is not None else Growth(max_record_bytes)
    if document:
        text = read_document(path, limit)
        growth.read(0 if isinstance(text, Problem) else len(text))
        value = text if isinstance(text, Problem) else parse_json(text, 1)
        if isinstance(value, Problem):
            raise SessionAbort(value.reason, value.detail)
        yield 1, value
        return
    total = 0
    pending: Problem | None = None  # an unparseable line: fatal unless it is the last one
    for line, raw in iter_lines(path, max_record_bytes, 0, bound):
        if pending is not None:
            raise _abort(pending, "session")
        if isinstance(raw, Problem):
            raise _abort(raw, "session")
        total += len(raw)
        growth.read(len(raw))
        if total > limit:
            raise SessionAbort("record_too_large", f"session file larger than {limit} bytes")
        text = decode_line(raw, line)
        if isinstance(text, Problem):
            raise _abort(text, "session")
        value = parse_json(text, line)
        if isinstance(value, Problem):
            if "nested too deeply" in value.detail:
                raise _abort(value, "session")
            pending = value
            continue
        yield line, value
    if pending is not None:
        yield pending.line, DROPPED


def told_by_head(items: Iterable[tuple[int, Any]],
                 tell: Callable[[Any], bool | None]) -> tuple[bool, Iterator[tuple[int, Any]]]:
    """Which of two layouts a session file has (one format name, two writers: a Claude
    Code session or its stream-json, a Codex rollout or its exec log): ``tell`` answers for
    the first line that says (None: this line does not), False when none does. Returns the
    answer and every line again (those read to find it are held, then replayed)."""
    it = iter(items)
    head: list[tuple[int, Any]] = []
    answer: bool | None = None
    for item in it:
        head.append(item)
        answer = tell(item[1])
        if answer is not None:
            break
    return bool(answer), itertools.chain(head, it)


class Run(Protocol):
    """One trajectory of a log that holds several runs (:func:`split_runs`): its first
    line, its canonical messages (texts joined at the end) and its ``meta``."""

    first_line: int
    messages: list[dict[str, Any]]
    texts: TextParts

    def line(self, obj: dict[str, Any]) -> None:
        """Take one object line of this run."""

    def run_meta(self) -> dict[str, Any]:
        """What this run's record says in ``meta`` beside ``format`` and ``dropped_lines``."""


R = TypeVar("R", bound=Run)


def split_runs(items: Iterable[tuple[int, Any]], start: tuple[str, str],
               new_run: Callable[[int], R], stem: str) -> tuple[list[tuple[str, R]], list[int]]:
    """The runs of a log that appends runs (``codex exec --json``, Gemini CLI stream-json):
    a line whose ``type`` is ``start[0]`` and whose ``start[1]`` is a non-empty string
    starts the run of that id (or resumes it, for an id seen before); the others go to the
    run last started (before any: one named ``stem``). Returns the runs in order of their
    first line, and the dropped (truncated) line numbers."""
    kind, key = start
    runs: dict[str, R] = {}
    current: R | None = None
    dropped: list[int] = []
    for number, obj in object_lines(items, dropped):
        rid = obj.get(key) if obj.get("type") == kind else None
        if isinstance(rid, str) and rid:
            current = runs[rid] if rid in runs else runs.setdefault(rid, new_run(number))
        elif current is None:
            current = runs.setdefault(stem, new_run(number))
        current.line(obj)
    return sorted(runs.items(), key=lambda kv: kv[1].first_line), dropped


def run_records(items: Iterable[tuple[int, Any]], ctx: Ctx, start: tuple[str, str],
                new_run: Callable[[int, SizeGuard], R], fmt: str,
                suite: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """The records of a log of appended runs (:func:`split_runs`), one per run: id the run's,
    suite ``--suite`` else ``suite``, ``meta`` the run's own beside ``format``, the id (under
    its key, ``start[1]``) and the file's dropped lines. The runs share one :class:`SizeGuard` (the file's kept text)."""
    guard = SizeGuard(int(ctx.state.get("max_record_bytes", 32 * 2**20)))
    runs, dropped = split_runs(items, start, lambda n: new_run(n, guard), ctx.stem)
    if not runs:
        raise AdapterError(f"no event line: not a {fmt} log")
    for rid, run in runs:
        run.texts.join()
        meta: dict[str, Any] = {"format": fmt, start[1]: rid, **run.run_meta()}
        if dropped:
            meta["dropped_lines"] = dropped
        yield run.first_line, {"trajectory_id": rid, "suite": ctx.state.get("suite") or suite,
                               "meta": meta, "messages": run.messages}


def object_lines(items: Iterable[tuple[int, Any]], dropped: list[int]) -> Iterator[tuple[int, dict[str, Any]]]:
    """The ``(line, object)`` pairs of a session file, the numbers of dropped (truncated)
    lines appended to ``dropped``. A line that is JSON but not an object rejects the file."""
    for number, obj in items:
        if obj is DROPPED:
            dropped.append(number)
        elif isinstance(obj, dict):
            yield number, obj
        else:
            raise AdapterError(f"line {number} is {type(obj).__name__}, expected an object")


def feed_lines(items: Iterable[tuple[int, Any]], line: Callable[[dict[str, Any]], None]) -> list[int]:
    """Pass each object line of a session file to ``line``; returns the line numbers of
    dropped (truncated) lines (:func:`object_lines`)."""
    dropped: list[int] = []
    for _, obj in object_lines(items, dropped):
        line(obj)
    return dropped


def text_size(value: Any) -> int:
    """A cheap upper-bound estimate of the JSON size of a str/list/dict value."""
    if isinstance(value, str):
        return len(value) + 2
    if isinstance(value, dict):
        return sum(len(str(k)) + 4 + text_size(v) for k, v in value.items()) + 2
    if isinstance(value, list):
        return sum(text_size(v) + 1 for v in value) + 2
    return 8


class SizeGuard:
    """Counts the text an adapter keeps; raises ``record_too_large`` past the limit, so a
    huge session is rejected while it is read, not after it was held in memory."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0

    def add(self, value: Any) -> None:
        """Account for one kept value."""
        self.used += text_size(value)
        if self.used > self.limit:
            raise SessionAbort("record_too_large",
                               f"converted session larger than {self.limit} bytes")


def session_records(path: Location, spec: Any, max_record_bytes: int, suite: str | None,
                    serialise: Callable[[Any], str], bound: int | None = None) -> Iterator[RawRecord]:
    """The RawRecords of one session-format file (``spec`` an ``AdapterSpec`` of layout
    ``session``): the adapter sees every line and yields the file's trajectories; a
    :class:`SessionAbort` or an adapter error rejects the rest of the file as ONE record
    (records already yielded stay); an OSError (the file cannot be read) propagates.
    The records share one ``Growth`` (an OTLP resource is copied into each trace's record)."""
    ctx = Ctx(path, 1, {"max_record_bytes": max_record_bytes, "suite": suite})
    document = path.name.lower().endswith((".json", ".json.gz"))
    growth = Growth(max_record_bytes)
    converted = spec.convert(session_items(path, max_record_bytes, document, growth, bound), ctx)
    yield from emit_records(str(path), spec.name, converted, serialise, max_record_bytes, 1, growth)


def emit_records(src: str, name: str, converted: Iterable[tuple[int, Any]], serialise: Callable[[Any], str],
                 max_record_bytes: int, line: int, growth: Growth | None = None,
                 escape: tuple[type[Exception], ...] = ()) -> Iterator[RawRecord]:
    """The RawRecords of an adapter's ``(source_line, record | Problem)`` pairs, each checked
    against the limits; a :class:`SessionAbort` or an adapter error rejects the rest as ONE
    record at ``line``; an OSError propagates. ``growth``: what the records may add up to
    (None: a fresh one, for a source without a file of its own to measure); ``escape``: the
    errors that propagate, as an OSError does (the source's, not the record's)."""
    growth = growth if growth is not None else Growth(max_record_bytes)
    try:
        for at, obj in converted:
            if isinstance(obj, Problem):
                yield rejected(src, obj.line, obj.reason, obj.detail, name)
                continue
            if growth.spent:
                yield rejected(src, at, "record_too_large", growth.refusal(), name)
                continue
            try:
                text = serialise(obj)
            except (ValueError, RecursionError) as exc:
                yield rejected(src, at, "malformed_record", str(exc), name)
                continue
            if len(text) > max_record_bytes:
                yield rejected(src, at, "record_too_large",
                               f"converted record larger than {max_record_bytes} bytes", name)
                continue
            if not growth.admit(len(text)):
                yield rejected(src, at, "record_too_large", growth.refusal(), name)
                continue
            yield RawRecord(src, at, text, None, None, name)
    except SessionAbort as exc:
        yield rejected(src, line, exc.reason, exc.detail, name)
    except RecursionError:
        yield rejected(src, line, "malformed_record", "record nested too deeply", name)
    except OSError:
        raise  # the reader reports a file it cannot read
    except escape:
        raise
    except Exception as exc:  # noqa: BLE001 - one bad file never stops the run
        yield rejected(src, line, "malformed_record", f"{name} adapter: {type(exc).__name__}: {exc}", name)
