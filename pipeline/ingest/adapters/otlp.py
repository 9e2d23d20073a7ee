"""OTLP JSON values, the otel adapter's first step: trace and span ids (hex or base64),
``AnyValue`` and attribute lists as plain JSON values, and each span's fields, gathered
by trace across the lines of one export (``spans_by_trace``). Fields of the wrong type read as
absent; a span that still cannot be read rejects its own trace only."""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable
from typing import Any

from pipeline.ingest.adapters import openinference
from pipeline.ingest.adapters._common import AdapterError
from pipeline.ingest.adapters._session import DROPPED

_HEX = re.compile(r"\A[0-9a-fA-F]+\Z")


def hex_id(value: Any, size: int) -> str | None:
    """An OTLP trace/span id (hex, or base64 of ``size`` bytes) as lower-case hex."""
    if not isinstance(value, str) or not value:
        return None
    if len(value) == 2 * size and _HEX.match(value):
        return value.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw.hex() if len(raw) == size else None


def _list(value: Any) -> list[Any]:
    """``value`` when it is a JSON array, else no items (OTLP's repeated fields)."""
    return value if isinstance(value, list) else []


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` object as a plain JSON value."""
    if not isinstance(value, dict):
        return None
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError, OverflowError):
            return None
    for key in ("boolValue", "doubleValue", "bytesValue"):
        if key in value:
            return value[key]
    if isinstance(value.get("arrayValue"), dict):
        return [any_value(v) for v in _list(value["arrayValue"].get("values"))]
    if isinstance(value.get("kvlistValue"), dict):
        return attributes(value["kvlistValue"].get("values"))
    return None


def attributes(items: Any) -> dict[str, Any]:
    """An OTLP ``[{key, value}]`` list as a dict (first value of a repeated key)."""
    out: dict[str, Any] = {}
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            out.setdefault(item["key"], any_value(item.get("value")))
    return out


def _nanos(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):  # 1e999 parses as infinity
        return 0


def _status_error(status: Any) -> str | None:
    if not isinstance(status, dict):
        return None
    code = status.get("code")
    if code in (2, "2", "STATUS_CODE_ERROR", "ERROR"):
        return status.get("message") if isinstance(status.get("message"), str) and status["message"] else "span status ERROR"
    return None


class Span:
    """The fields of one span the conversion needs."""

    def __init__(self, raw: dict[str, Any], line: int, resource: dict[str, Any]) -> None:
        self.line = line
        self.span_id = hex_id(raw.get("spanId"), 8) or ""
        self.start = _nanos(raw.get("startTimeUnixNano"))
        self.end = _nanos(raw.get("endTimeUnixNano"))
        self.attrs = attributes(raw.get("attributes"))
        self.events = [(e.get("name"), attributes(e.get("attributes")))
                       for e in _list(raw.get("events")) if isinstance(e, dict)]
        self.status_error = _status_error(raw.get("status"))
        self.resource = resource
        name = raw.get("name") if isinstance(raw.get("name"), str) else ""
        self.attrs, mapped_op = openinference.gen_ai(self.attrs, name)
        op = self.attrs.get("gen_ai.operation.name", mapped_op)
        self.op = op if isinstance(op, str) else (name.split(" ", 1)[0] if name else "")

    def messages(self, key: str) -> list[dict[str, Any]]:
        """The parsed ``gen_ai.*.messages`` of the span, from attributes and events."""
        values = [self.attrs.get(key)] + [attrs.get(key) for _, attrs in self.events]
        return [m for value in values for m in json_list(value) if isinstance(m, dict)]

    def error(self) -> Any:
        """The canonical error of an execute_tool span, or None (module docstring)."""
        exc = next((attrs for name, attrs in self.events if name == "exception"), {})
        etype = self.attrs.get("error.type") or exc.get("exception.type")
        failed = self.status_error or (self.attrs.get("gen_ai.tool.status") == "error" and "tool status error")
        if not etype and not failed:
            return None
        message = self.status_error or exc.get("exception.message") or failed or str(etype)
        return {"type": str(etype), "message": str(message)[:2000]} if etype else str(message)[:2000]


def json_list(value: Any) -> list[Any]:
    """A JSON-encoded list attribute (or a list already), else []."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    return value if isinstance(value, list) else []


def spans_by_trace(items: Iterable[tuple[int, Any]]) -> tuple[dict[str, list[Span]], dict[str, tuple[int, str]],
                                                     list[int], dict[int, int]]:
    """(spans by trace id, trace id -> (line, why) of its first span that could not be
    read, dropped lines, line -> count of spans without a valid traceId). A span that
    cannot be read rejects its own trace, never the file's other traces."""
    traces: dict[str, list[Span]] = {}
    broken: dict[str, tuple[int, str]] = {}
    dropped: list[int] = []
    idless: dict[int, int] = {}
    for line, doc in items:
        if doc is DROPPED:
            dropped.append(line)
            continue
        if not isinstance(doc, dict) or not isinstance(doc.get("resourceSpans"), list):
            raise AdapterError(f"line {line} is not an OTLP export (no resourceSpans array)")
        for rs in doc["resourceSpans"]:
            if not isinstance(rs, dict):
                continue
            resource = attributes((rs.get("resource") or {}).get("attributes")) if isinstance(rs.get("resource"), dict) else {}
            for ss in _list(rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans")):
                for raw in _list(ss.get("spans")) if isinstance(ss, dict) else []:
                    if not isinstance(raw, dict):
                        continue
                    trace_id = hex_id(raw.get("traceId"), 16)
                    if trace_id is None:  # no trajectory to put it in: counted, never silently dropped
                        idless[line] = idless.get(line, 0) + 1
                        continue
                    spans = traces.setdefault(trace_id, [])
                    try:
                        spans.append(Span(raw, line, resource))
                    except Exception as exc:  # noqa: BLE001 - hostile input: its trace is rejected
                        broken.setdefault(trace_id, (line, f"span on line {line}: {type(exc).__name__}: {exc}"))
    return traces, broken, dropped, idless
