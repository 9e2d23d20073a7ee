"""--format otel on REAL traces: a Strands agent with OpenTelemetry's SDK and OTLP encoder
(tests/otel_agent.py, run in its own process against a scripted model: no network)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("strands")
pytest.importorskip("opentelemetry.exporter.otlp.proto.common")

from pipeline.ingest.adapters.otlp import any_value, hex_id  # noqa: E402
from pipeline.config import RunConfig  # noqa: E402
from pipeline.ingest.discovery import detect_format  # noqa: E402
from pipeline.ingest.reader import iter_records  # noqa: E402
from pipeline.run import score  # noqa: E402
from tests.conftest import REPO, rows, stage_connection  # noqa: E402


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("otel")
    env = {**os.environ, "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental"}
    subprocess.run([sys.executable, "-m", "tests.otel_agent", str(out)], cwd=REPO, env=env, check=True,
                   timeout=300)
    return out


def _records(path: Path) -> dict[str, dict[str, Any]]:
    recs = list(iter_records([path]))
    assert all(r.text is not None for r in recs), [r.reject_detail for r in recs]
    assert {r.fmt for r in recs} == {"otel"}
    return {json.loads(r.text)["trajectory_id"]: json.loads(r.text) for r in recs}


def test_both_encodings_detect_and_agree(traces: Path) -> None:
    doc, lines = traces / "trace.json", traces / "trace.jsonl"
    assert detect_format(doc)[0] == detect_format(lines)[0] == "otel"
    raw = json.loads(doc.read_text())
    span_id = raw["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
    assert len(span_id) != 32  # protobuf's JSON mapping: base64, not hex
    a, b = _records(doc), _records(lines)
    assert len(a) == 2 and set(a) == set(b)  # one trajectory per trace, ids normalised to hex
    for tid in a:
        assert a[tid]["messages"] == b[tid]["messages"]
        assert a[tid]["suite"] == "otel-agent-demo"  # resource service.name


def test_retry_collapses_into_one_logical_action(traces: Path) -> None:
    recs = _records(traces / "trace.jsonl")
    retry = next(t for t in recs.values() if "call_1" in json.dumps(t["messages"]))
    con = stage_connection([retry])
    steps = {r["call_id"]: r for r in rows(con, "select call_id, tool_name, exec_status, error_type from steps "
                                                "where kind = 'tool_call'")}
    assert steps["call_1"]["exec_status"] == "failed" and steps["call_1"]["error_type"] == "not_found"  # text rule on the message
    assert steps["call_2"]["exec_status"] == steps["call_3"]["exec_status"] == "executed"
    actions = rows(con, "select tool_name, attempts, collapsed_call_ids, executed from actions order by action_idx")
    assert actions == [
        {"tool_name": "read_file", "attempts": 2, "collapsed_call_ids": ["call_1", "call_2"], "executed": True},
        {"tool_name": "http_post", "attempts": 1, "collapsed_call_ids": ["call_3"], "executed": True},
    ]
    [verdict] = rows(con, "select route, verdict, n_retries_collapsed, reason from verdicts")
    assert verdict["n_retries_collapsed"] == 1
    assert verdict["route"] == "flow" and verdict["verdict"] == "unsafe"  # credentials -> egress
    assert "read_file#0 -> http_post#1" in verdict["reason"]


def test_calls_issued_together_are_not_retries(traces: Path) -> None:
    recs = _records(traces / "trace.json")
    parallel = next(t for t in recs.values() if "call_4" in json.dumps(t["messages"]))
    [msg] = [m for m in parallel["messages"] if m.get("tool_calls")]
    assert [c["id"] for c in msg["tool_calls"]] == ["call_4", "call_5"]
    con = stage_connection([parallel])
    assert rows(con, "select count(*) as n from actions")[0]["n"] == 2
    assert rows(con, "select n_retries_collapsed from verdicts") == [{"n_retries_collapsed": 0}]


def test_score_end_to_end(traces: Path, tmp_path: Path) -> None:
    result = score(RunConfig(inputs=(traces / "trace.jsonl",), out=tmp_path / "run", workers=1))
    assert result.records_read == 2
    import duckdb

    con = duckdb.connect()
    n = con.execute(f"select count(*) from read_parquet('{tmp_path}/run/verdicts/**/*.parquet')").fetchall()[0][0]
    assert n == 2


def test_id_and_value_decoding() -> None:
    assert hex_id("AAECAwQFBgcICQoLDA0ODw==", 16) == "000102030405060708090a0b0c0d0e0f"
    assert hex_id("000102030405060708090A0B0C0D0E0F", 16) == "000102030405060708090a0b0c0d0e0f"
    assert hex_id("not an id", 16) is None and hex_id("AAECAw==", 16) is None
    assert any_value({"intValue": "42"}) == 42
    assert any_value({"arrayValue": {"values": [{"stringValue": "a"}, {"boolValue": True}]}}) == ["a", True]
    assert any_value({"kvlistValue": {"values": [{"key": "k", "value": {"doubleValue": 1.5}}]}}) == {"k": 1.5}


def test_model_spans_only_use_message_parts(tmp_path: Path) -> None:
    """An instrumentation that records only model calls (no execute_tool spans): tool calls
    come from tool_call parts, results from tool_call_response parts of the next input."""
    def span(span_id: str, start: int, inputs: list[Any], outputs: list[Any]) -> dict[str, Any]:
        attrs = [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                 {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(inputs)}},
                 {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(outputs)}}]
        return {"traceId": "ab" * 16, "spanId": span_id, "name": "chat gpt-x", "startTimeUnixNano": str(start),
                "endTimeUnixNano": str(start + 5), "attributes": attrs, "status": {}}
    user = {"role": "user", "parts": [{"type": "text", "content": "weather?"}]}
    call = {"role": "assistant", "parts": [{"type": "tool_call", "id": "t1", "name": "get_weather",
                                            "arguments": {"city": "Paris"}}]}
    response = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "t1", "response": "sunny"}]}
    answer = {"role": "assistant", "parts": [{"type": "text", "content": "It is sunny."}]}
    doc = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {}, "spans": [
        span("01" * 8, 10, [user], [call]), span("02" * 8, 20, [user, call, response], [answer])]}]}]}
    path = tmp_path / "export.json"
    path.write_text(json.dumps(doc))
    [rec] = _records(path).values()
    assert [(m["role"], m.get("content")) for m in rec["messages"]] == [
        ("user", "weather?"), ("assistant", None), ("tool", "sunny"), ("assistant", "It is sunny.")]
    assert rec["messages"][1]["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": {"city": "Paris"}}


def _tool_span(trace: str, span: str, **fields: Any) -> dict[str, Any]:
    attrs = [{"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
             {"key": "gen_ai.tool.name", "value": {"stringValue": "read_file"}},
             {"key": "gen_ai.tool.call.id", "value": {"stringValue": f"call-{span}"}},
             {"key": "gen_ai.tool.call.arguments", "value": {"stringValue": '{"path": "a.txt"}'}},
             {"key": "gen_ai.tool.call.result", "value": {"stringValue": "hello"}}]
    return {"traceId": trace, "spanId": span, "name": "execute_tool read_file", "startTimeUnixNano": "1000",
            "endTimeUnixNano": "2000", "attributes": attrs, **fields}


def _export_lines(path: Path, spans: list[dict[str, Any]]) -> Path:
    """One OTLP/JSON export line per span (a file exporter's shape)."""
    path.write_text("".join(json.dumps({"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [
        {"scope": {}, "spans": [s]}]}]}) + "\n" for s in spans))
    return path


@pytest.mark.parametrize("odd", [
    {"startTimeUnixNano": 1e999},  # JSON's 1e999 is a float infinity: no integer
    {"events": 5},
    {"events": [{"name": "e", "attributes": [{"key": "k", "value": {"arrayValue": {"values": 7}}}]}]},
    {"attributes": [{"key": "k", "value": {"intValue": 1e999}}]},
])
def test_odd_span_fields_are_read_as_absent(tmp_path: Path, odd: dict[str, Any]) -> None:
    """A field of the wrong type in one span (a time that is no integer, events that are
    no list) reads as absent: both traces of the file are scored. Before, the exception
    rejected the whole file as one record without a trajectory_id."""
    good, odd_trace = "aa" * 16, "bb" * 16
    path = _export_lines(tmp_path / "spans.jsonl", [_tool_span(good, "11" * 8), _tool_span(odd_trace, "22" * 8, **odd)])
    recs = list(iter_records([path], "otel"))
    assert [r.reject_reason for r in recs] == [None, None]
    assert sorted(json.loads(r.text)["trajectory_id"] for r in recs) == [good, odd_trace]


def test_a_span_that_cannot_be_read_rejects_its_trace_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever else a span's fields make the reader raise rejects that span's trace, with
    its line and the error in the detail; the file's other traces are scored."""
    import pipeline.ingest.adapters.otlp as otlp

    real = otlp.Span

    def reading(raw: dict[str, Any], line: int, resource: dict[str, Any]) -> Any:
        if raw.get("spanId") == "33" * 8:
            raise RecursionError("maximum recursion depth exceeded")
        return real(raw, line, resource)

    monkeypatch.setattr(otlp, "Span", reading)
    good, bad = "aa" * 16, "bb" * 16
    path = _export_lines(tmp_path / "spans.jsonl", [_tool_span(bad, "22" * 8), _tool_span(good, "11" * 8),
                                                    _tool_span(bad, "33" * 8)])
    recs = list(iter_records([path], "otel"))
    assert [(r.source_line, r.reject_reason) for r in recs] == [(1, "malformed_record"), (2, None)]
    assert recs[0].reject_detail == (f"trace {bad}: span on line 3: RecursionError: "
                                     "maximum recursion depth exceeded")
    assert json.loads(recs[1].text)["trajectory_id"] == good


@pytest.fixture(scope="module")
def openai_agents_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("agents")
    pytest.importorskip("opentelemetry.instrumentation.openai_agents")
    out = tmp_path_factory.mktemp("openai_agents")
    subprocess.run([sys.executable, "-m", "tests.otel_openai_agents", str(out)], cwd=REPO, env=dict(os.environ),
                   check=True, timeout=300)
    return out / "openai_agents.json"


def test_openai_agents_sdk_trace(openai_agents_trace: Path) -> None:
    """The official instrumentation of the OpenAI Agents SDK: execute_tool spans without
    call ids (span ids stand in), no model spans (each call its own message), and a tool
    exception whose details the SDK redacts: that error does not show the call did not
    run, so it is `unknown` (fail closed) and is NOT collapsed as a failed retry."""
    [rec] = _records(openai_agents_trace).values()
    assert rec["suite"] == "openai-agents-demo"
    con = stage_connection([rec])
    steps = rows(con, "select tool_name, exec_status, error_text from steps where kind = 'tool_call' order by step_idx")
    assert [(s["tool_name"], s["exec_status"]) for s in steps] == [
        ("read_file", "unknown"), ("read_file", "executed"), ("http_post", "executed")]
    assert "Error running tool" in steps[0]["error_text"]
    [verdict] = rows(con, "select route, verdict, n_retries_collapsed, reason from verdicts")
    assert verdict["n_retries_collapsed"] == 0
    assert verdict["verdict"] == "unsafe" and "read_file#1 -> http_post#2" in verdict["reason"]
