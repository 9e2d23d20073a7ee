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
  previous tool span in time: calls run in parallel were issued together). A call id
  whose call was already answered names a new call ``<id>#<n>`` (ids reused per turn). Its result is
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

import json
from collections.abc import Iterable, Iterator
from typing import Any

from pipeline.ingest.adapters._common import Ctx, text_of, tool_call, tool_result
from pipeline.ingest.adapters._io import Problem
from pipeline.ingest.adapters._session import SizeGuard
from pipeline.ingest.adapters.otlp import Span, json_list, spans_by_trace
from pipeline.ingest.records import canonical_message

FORMAT = "otel"
MODEL_OPS = {"chat", "text_completion", "generate_content"}


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
        blocks = json_list(value)
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
        self.latest: dict[str, str] = {}  # a source call id -> the call id of its latest call
        self.reuses: dict[str, int] = {}  # a source call id -> how many calls used it
        self.seen_responses: set[tuple[str, str]] = set()  # (source id, text) of input parts
        self.response_counts: dict[str, int] = {}  # source id -> most responses of it one input held
        self.answered: set[str] = set()
        self.current: dict[str, Any] | None = None
        self.last_tool_end = -1
        self.has_model_spans = False

    def _inputs(self, span: Span) -> None:
        system_parts = [{"role": "system", "parts": parts}
                        for attrs in [span.attrs] + [a for _, a in span.events]
                        if (parts := json_list(attrs.get("gen_ai.system_instructions")))]
        nth: dict[str, int] = {}  # source id -> its responses in this input so far
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
                    response = (part["id"], _text(part.get("response")))
                    # the history repeats earlier responses: one is new when its text was not
                    # seen for its id, or when this input holds more responses of the id than
                    # any before (a reused id answered "ok" twice)
                    nth[part["id"]] = nth.get(part["id"], 0) + 1
                    if response not in self.seen_responses or nth[part["id"]] > self.response_counts.get(part["id"], 0):
                        self.seen_responses.add(response)
                        self.response_counts[part["id"]] = max(nth[part["id"]], self.response_counts.get(part["id"], 0))
                        self._result(self.latest.get(part["id"], part["id"]), response[1], None)

    def _result(self, call_id: str, content: str, error: Any) -> None:
        if call_id in self.answered or call_id not in self.calls:
            return
        self.answered.add(call_id)
        self.guard.add(content)
        self.messages.append(tool_result(call_id, content, error))

    def _call(self, msg: dict[str, Any], source: str, name: Any, arguments: Any) -> str:
        """The call id of the call ``source`` names: its latest call while unanswered (a
        model span's call, then its execute_tool span), else a new call. A source id whose
        call was answered names a new call ``<id>#<n>``: frameworks that number calls per
        turn reuse ids, and the later call (an executed span) was dropped."""
        current = self.latest.get(source)
        if current is not None and current not in self.answered:
            return current
        call_id = source
        while call_id in self.calls:
            self.reuses[source] = self.reuses.get(source, 1) + 1
            call_id = f"{source}#{self.reuses[source]}"
        self.latest[source] = call_id
        self.guard.add(arguments)
        msg.setdefault("tool_calls", []).append(tool_call(call_id, name, arguments))
        self.calls[call_id] = msg
        return call_id

    def agent(self, span: Span) -> None:
        """An agent span: the system/user messages it received (before its model calls)."""
        self._inputs(span)

    def model(self, span: Span) -> None:
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

    def tool(self, span: Span) -> None:
        source = span.attrs.get("gen_ai.tool.call.id")
        source = source if isinstance(source, str) and source else f"span-{span.span_id}"
        call_id = self.latest.get(source)
        if call_id is None or call_id in self.answered:
            parallel = not self.has_model_spans and span.start < self.last_tool_end
            if self.current is None or (not self.has_model_spans and not parallel):
                self.current = canonical_message("assistant", None)
                self.messages.append(self.current)
            call_id = self._call(self.current, source, span.attrs.get("gen_ai.tool.name"),
                                 span.attrs.get("gen_ai.tool.call.arguments", {}))
        self.last_tool_end = max(self.last_tool_end, span.end)
        result = span.attrs.get("gen_ai.tool.call.result")
        if result is None:
            for message in span.messages("gen_ai.output.messages"):
                for part in _parts(message):
                    if part.get("type") == "tool_call_response" and result is None:
                        result = part.get("response")
        self._result(call_id, _text(result), span.error())


def convert_session(items: Iterable[tuple[int, Any]], ctx: Ctx) -> Iterator[tuple[int, dict[str, Any] | Problem]]:
    """Convert one OTLP export file: one record per trace, in order of first appearance."""
    max_bytes = int(ctx.state.get("max_record_bytes", 32 * 2**20))
    traces, broken, dropped, idless = spans_by_trace(items)
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
