"""OTLP JSON trace exports with GenAI semantic conventions -> one trajectory per trace.

Input: ``{"resourceSpans": [{"resource", "scopeSpans": [{"scope", "spans": [...]}]}]}``,
one document (``.json``, a collector/SDK export) or one such request per line (the
collector's file exporter, NDJSON). Ids may be hex (OTLP/JSON) or base64 (protobuf JSON
mapping); ``trajectory_id`` is the trace id in lower-case hex. Spans of one trace are
gathered across the lines of ONE file (a trace split over several files gives one
trajectory per file, with the same id: later copies are ``duplicate_trajectory_id``).
source_line = the line of the trace's first span. Spans without a valid trace id are one
``missing_trajectory_id`` reject per line; an export with no span at all (empty, or cut
before its first span) is one ``empty_trajectory`` reject.

Per trace, spans are ordered by start time (then span id) and read by their operation
(``gen_ai.operation.name``, else the span name's first word):
- ``chat`` / ``text_completion`` / ``generate_content`` (a model call) opens one
  assistant message: its ``gen_ai.output.messages`` text parts are the text,
  ``tool_call`` parts the tool calls. Its ``gen_ai.input.messages`` (and
  ``gen_ai.system_instructions``) give the system/user messages not seen before, and
  ``tool_call_response`` parts the results of calls no ``execute_tool`` span reports.
- ``invoke_agent`` / ``create_agent``: its input messages, like a model call's.
- ``execute_tool``: the tool call ``gen_ai.tool.call.id`` (else the span id) named
  ``gen_ai.tool.name`` with ``gen_ai.tool.call.arguments``; joins the current model
  call's message (or, with no model spans, a message of its own unless it overlaps the
  previous tool span in time: calls run in parallel were issued together). Its result is
  ``gen_ai.tool.call.result`` or the ``tool_call_response`` part of the span's output
  messages. Error: ``error.type`` (else an ``exception`` event's ``exception.type``) with
  the status message / ``exception.message`` -> ``{"type": ..., "message": ...}`` (a type
  outside the policy vocabulary falls through to its text rules); span status ERROR
  without a type -> the status message as error text; ``gen_ai.tool.status`` "error"
  likewise.
Message attributes are read from span attributes and from span events (instrumentations
put them in either). suite = ``--suite``, else the resource's ``service.name``, else otel.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from pipeline.ingest.adapters._common import AdapterError, Ctx, text_of, tool_call, tool_result
from pipeline.ingest.adapters._io import Problem
from pipeline.ingest.adapters._session import DROPPED, SizeGuard
from pipeline.ingest.records import canonical_message

FORMAT = "otel"
MODEL_OPS = {"chat", "text_completion", "generate_content"}
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


class _Span:
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
        op = self.attrs.get("gen_ai.operation.name")
        self.op = op if isinstance(op, str) else (name.split(" ", 1)[0] if name else "")

    def messages(self, key: str) -> list[dict[str, Any]]:
        """The parsed ``gen_ai.*.messages`` of the span, from attributes and events."""
        values = [self.attrs.get(key)] + [attrs.get(key) for _, attrs in self.events]
        return [m for value in values for m in _json_list(value) if isinstance(m, dict)]

    def error(self) -> Any:
        """The canonical error of an execute_tool span, or None (module docstring)."""
        exc = next((attrs for name, attrs in self.events if name == "exception"), {})
        etype = self.attrs.get("error.type") or exc.get("exception.type")
        failed = self.status_error or (self.attrs.get("gen_ai.tool.status") == "error" and "tool status error")
        if not etype and not failed:
            return None
        message = self.status_error or exc.get("exception.message") or failed or str(etype)
        return {"type": str(etype), "message": str(message)[:2000]} if etype else str(message)[:2000]


def _json_list(value: Any) -> list[Any]:
    """A JSON-encoded list attribute (or a list already), else []."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    return value if isinstance(value, list) else []


def _parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    parts = message.get("parts")
    if isinstance(parts, list):
        return [p for p in parts if isinstance(p, dict)]
    content = message.get("content")  # older event bodies: {role, content}
    return [{"type": "text", "content": content}] if isinstance(content, str) else []


def _text(value: Any) -> str:
    """Text of a message part / tool result: a string, or the ``text`` of content blocks
    (also when the string is a JSON-encoded block list, as instrumentations serialise
    results), else the value as JSON."""
    if isinstance(value, str):
        if not value.startswith("[{"):
            return value
        blocks = _json_list(value)
        return _text(blocks) if blocks and all(isinstance(b, dict) for b in blocks) else value
    if isinstance(value, list) and value and all(isinstance(b, dict) and isinstance(b.get("text"), str)
                                                 for b in value):
        return "\n".join(b["text"] for b in value)
    text = text_of(value) if isinstance(value, list) else None
    if text:
        return text
    return "" if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)


class _Trace:
    """Builds one trace's canonical messages from its ordered spans."""

    def __init__(self, guard: SizeGuard) -> None:
        self.guard = guard
        self.messages: list[dict[str, Any]] = []
        self.seen_inputs: set[tuple[str, str]] = set()
        self.calls: dict[str, dict[str, Any]] = {}  # call id -> its assistant message
        self.answered: set[str] = set()
        self.current: dict[str, Any] | None = None
        self.last_tool_end = -1
        self.has_model_spans = False

    def _inputs(self, span: _Span) -> None:
        system_parts = [{"role": "system", "parts": parts}
                        for attrs in [span.attrs] + [a for _, a in span.events]
                        if (parts := _json_list(attrs.get("gen_ai.system_instructions")))]
        for message in system_parts + span.messages("gen_ai.input.messages"):
            role = message.get("role") if message.get("role") in ("system", "user") else None
            texts = [_text(p.get("content")) for p in _parts(message) if p.get("type") == "text"]
            if role and texts and (role, "\n".join(texts)) not in self.seen_inputs:
                self.seen_inputs.add((role, "\n".join(texts)))
                self.guard.add(texts)
                self.messages.append(canonical_message(role, "\n".join(texts)))
                self.current = None
            for part in _parts(message):
                if part.get("type") == "tool_call_response" and isinstance(part.get("id"), str):
                    self._result(part["id"], _text(part.get("response")), None)

    def _result(self, call_id: str, content: str, error: Any) -> None:
        if call_id in self.answered or call_id not in self.calls:
            return
        self.answered.add(call_id)
        self.guard.add(content)
        self.messages.append(tool_result(call_id, content, error))

    def _call(self, msg: dict[str, Any], call_id: str, name: Any, arguments: Any) -> None:
        if call_id in self.calls:
            return
        self.guard.add(arguments)
        msg.setdefault("tool_calls", []).append(tool_call(call_id, name, arguments))
        self.calls[call_id] = msg

    def agent(self, span: _Span) -> None:
        """An agent span: the system/user messages it received (before its model calls)."""
        self._inputs(span)

    def model(self, span: _Span) -> None:
        self.has_model_spans = True
        self._inputs(span)
        msg = canonical_message("assistant", None)
        self.messages.append(msg)
        self.current = msg
        texts: list[str] = []
        for message in span.messages("gen_ai.output.messages"):
            for part in _parts(message):
                if part.get("type") == "text":
                    texts.append(_text(part.get("content")))
                elif part.get("type") == "tool_call" and isinstance(part.get("id"), str):
                    self._call(msg, part["id"], part.get("name"), part.get("arguments", {}))
        if texts:
            self.guard.add(texts)
            msg["content"] = "\n".join(texts)

    def tool(self, span: _Span) -> None:
        call_id = span.attrs.get("gen_ai.tool.call.id")
        call_id = call_id if isinstance(call_id, str) and call_id else f"span-{span.span_id}"
        if call_id not in self.calls:
            parallel = not self.has_model_spans and span.start < self.last_tool_end
            if self.current is None or (not self.has_model_spans and not parallel):
                self.current = canonical_message("assistant", None)
                self.messages.append(self.current)
            self._call(self.current, call_id, span.attrs.get("gen_ai.tool.name"),
                       span.attrs.get("gen_ai.tool.call.arguments", {}))
        self.last_tool_end = max(self.last_tool_end, span.end)
        result = span.attrs.get("gen_ai.tool.call.result")
        if result is None:
            for message in span.messages("gen_ai.output.messages"):
                for part in _parts(message):
                    if part.get("type") == "tool_call_response" and result is None:
                        result = part.get("response")
        self._result(call_id, _text(result), span.error())


def _spans(items: Iterable[tuple[int, Any]]) -> tuple[dict[str, list[_Span]], dict[str, tuple[int, str]],
                                                     list[int], dict[int, int]]:
    """(spans by trace id, trace id -> (line, why) of its first span that could not be
    read, dropped lines, line -> count of spans without a valid traceId). A span that
    cannot be read rejects its own trace, never the file's other traces."""
    traces: dict[str, list[_Span]] = {}
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
                        spans.append(_Span(raw, line, resource))
                    except Exception as exc:  # noqa: BLE001 - hostile input: its trace is rejected
                        broken.setdefault(trace_id, (line, f"span on line {line}: {type(exc).__name__}: {exc}"))
    return traces, broken, dropped, idless


def convert_session(items: Iterable[tuple[int, Any]], ctx: Ctx) -> Iterator[tuple[int, dict[str, Any] | Problem]]:
    """Convert one OTLP export file: one record per trace, in order of first appearance."""
    max_bytes = int(ctx.state.get("max_record_bytes", 32 * 2**20))
    traces, broken, dropped, idless = _spans(items)
    for trace_id, spans in traces.items():
        first_line = min([s.line for s in spans] + ([broken[trace_id][0]] if trace_id in broken else []))
        if trace_id in broken:
            yield first_line, Problem(first_line, "malformed_record", f"trace {trace_id}: {broken[trace_id][1]}")
            continue
        try:
            trace = _Trace(SizeGuard(max_bytes))
            for span in sorted(spans, key=lambda s: (s.start, s.span_id)):
                if span.op in MODEL_OPS:
                    trace.model(span)
                elif span.op == "execute_tool":
                    trace.tool(span)
                elif span.op in ("invoke_agent", "create_agent"):
                    trace.agent(span)
        except Exception as exc:  # noqa: BLE001 - one bad trace never loses the others
            reason = getattr(exc, "reason", "malformed_record")
            yield first_line, Problem(first_line, reason, f"trace {trace_id}: {type(exc).__name__}: {exc}")
            continue
        service = next((s.resource.get("service.name") for s in spans if s.resource.get("service.name")), None)
        agents = sorted({str(s.attrs["gen_ai.agent.name"]) for s in spans if s.attrs.get("gen_ai.agent.name")})
        models = sorted({str(s.attrs[k]) for s in spans for k in ("gen_ai.request.model", "gen_ai.response.model")
                         if s.attrs.get(k)})
        meta: dict[str, Any] = {"format": FORMAT, "trace_id": trace_id, "spans": len(spans),
                                "service": service, "agents": agents, "models": models}
        if dropped:
            meta["dropped_lines"] = dropped
        suite = ctx.state.get("suite") or (service if isinstance(service, str) and service else FORMAT)
        yield first_line, {"trajectory_id": trace_id, "suite": suite, "meta": meta, "messages": trace.messages}
    if not traces and not idless:  # an empty export, or one cut before its first span
        line = dropped[0] if dropped else 1
        yield line, Problem(line, "empty_trajectory", "no span in the OTLP export"
                            + (f" (line {line} is not JSON: truncated)" if dropped else ""))
    for line, n in idless.items():
        yield line, Problem(line, "missing_trajectory_id", f"{n} span(s) on line {line} without a valid traceId "
                                                           "(16 bytes, hex or base64)")
