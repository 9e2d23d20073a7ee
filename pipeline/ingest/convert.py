"""One source record -> one ``RawRecord``: the canonical text the SQL stages read, or a
reject (the rules are in :mod:`pipeline.ingest.reader`'s docstring). A canonical record's
own text passes through unparsed (:func:`pass_through`); a converted one is serialised
from what its adapter returns (:func:`convert_record`)."""

from __future__ import annotations

import json
from typing import Any

from pipeline.ingest.adapters import AdapterSpec, Ctx
from pipeline.ingest.adapters._common import Growth, RecordTooLarge
from pipeline.ingest.adapters._io import Problem
from pipeline.ingest.adapters._record_checks import (
    foreign_calls, non_finite_number, replace_lone_surrogates, without_lone_surrogates,
)
from pipeline.ingest.adapters.bare_lists import bare_record
from pipeline.ingest.adapters.legacy_calls import legacy_calls
from pipeline.ingest.records import RawRecord, non_finite_path, rejected
from pipeline.storage import Location


def serialise(obj: Any) -> str:
    """``obj`` as one line of JSON text (UTF-8 safe): a non-finite number is a ValueError
    naming its field; lone surrogates become U+FFFD."""
    try:
        text = json.dumps(obj, ensure_ascii=False, allow_nan=False)
    except ValueError as exc:
        where = non_finite_path(obj)
        if where is not None:  # the field, not only json's "Out of range float values"
            raise ValueError(f"not serialisable as JSON: {where} is not a finite number "
                             "(NaN, Infinity or a number out of range such as 1e999)") from exc
        raise ValueError(f"not serialisable as JSON: {exc}") from exc
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from \\ud800-style escapes: no Unicode text
        text = replace_lone_surrogates(text)
    return text


def pass_through(text: str, line: int) -> str | Problem:
    """A canonical record's own text, as the SQL stage reads it (``pipeline.ingest.reader``'s
    docstring), or the Problem that rejects it."""
    problem = non_finite_number(text, line) or foreign_calls(text, line)
    if problem is not None:
        return problem
    rewritten = legacy_calls(text)  # OpenAI's pre-`tools` function calls (legacy_calls.py)
    if rewritten is not None:
        try:
            text = serialise(rewritten)
        except (ValueError, RecursionError):  # checked above: kept as it is, the SQL stage judges it
            pass
    return without_lone_surrogates(text)


def convert_record(spec: AdapterSpec, value: Any, raw: str | None, ctx: Ctx,
                   max_record_bytes: int, source_bytes: int) -> RawRecord | None:
    """One source record (``source_bytes`` of the file) -> RawRecord (None when the
    adapter says it is not a record); a converted file's records share one ``Growth``."""
    src = str(ctx.path)
    if spec.convert is None:
        wrapped = bare_record(value, ctx.stem, ctx.line)
        if wrapped is not value:  # a bare chat message list: one conversation (bare_lists)
            try:
                raw = serialise(wrapped)
            except (ValueError, RecursionError) as exc:
                return rejected(src, ctx.line, "malformed_record", str(exc), spec.name)
        passed = pass_through(raw, ctx.line) if raw is not None else None
        if isinstance(passed, Problem):
            return problem_record(ctx.path, passed, spec.name)
        try:
            text = passed if passed is not None else serialise(value)
        except (ValueError, RecursionError) as exc:
            return rejected(src, ctx.line, "malformed_record", str(exc), spec.name)
        return RawRecord(src, ctx.line, text, None, None, spec.name)
    growth: Growth = ctx.state.setdefault("growth", Growth(max_record_bytes))
    growth.read(source_bytes)
    if growth.spent:
        return rejected(src, ctx.line, "record_too_large", growth.refusal(), spec.name)
    try:
        obj = spec.convert(value, ctx)
        if obj is None:
            return None
        text = serialise(obj)
    except RecursionError:
        return rejected(src, ctx.line, "malformed_record", "record nested too deeply", spec.name)
    except RecordTooLarge as exc:
        return rejected(src, ctx.line, "record_too_large", f"{spec.name} adapter: {exc}", spec.name)
    except Exception as exc:  # noqa: BLE001 - one bad record never stops the run
        return rejected(src, ctx.line, "malformed_record",
                        f"{spec.name} adapter: {type(exc).__name__}: {exc}", spec.name)
    if len(text) > max_record_bytes:
        return rejected(src, ctx.line, "record_too_large",
                        f"converted record larger than {max_record_bytes} bytes", spec.name)
    if not growth.admit(len(text)):
        return rejected(src, ctx.line, "record_too_large", growth.refusal(), spec.name)
    return RawRecord(src, ctx.line, text, None, None, spec.name)


def problem_record(path: Location, problem: Problem, fmt: str) -> RawRecord:
    """The reject of a Problem found reading ``path``."""
    return rejected(str(path), problem.line, problem.reason, problem.detail, fmt)
