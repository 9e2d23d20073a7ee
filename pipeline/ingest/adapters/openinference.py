"""OpenInference spans (Arize Phoenix; the LlamaIndex, smolagents, CrewAI, DSPy, LangChain
instrumentations) read as the GenAI semantic conventions the otel adapter reads.

OpenInference marks a span with ``openinference.span.kind`` and flattens lists into
indexed keys (``llm.input_messages.0.message.role``). The mapping, per kind:

- ``TOOL`` -> an ``execute_tool`` span: ``tool.name`` (else the span name) is the tool,
  ``input.value`` its arguments, ``output.value`` its result, ``tool.id`` its call id;
  status ERROR / an ``exception`` event are its error, as for any tool span.
- ``LLM`` -> a model call: the ``system`` / ``user`` texts of ``llm.input_messages`` are
  its input, the text of ``llm.output_messages`` its reply. The reply's tool calls are not
  taken: the TOOL spans are the calls (a call no TOOL span ran would be left unanswered).
- ``AGENT`` -> ``invoke_agent``: its ``input.value`` is the user's request.
- any other kind (``CHAIN``, ``RETRIEVER``, ...) is not an operation the conversion reads.
GenAI attributes a span already has win over the mapped ones.
"""

from __future__ import annotations

import json
import re
from typing import Any

KIND = "openinference.span.kind"
OPERATIONS = {"TOOL": "execute_tool", "LLM": "chat", "AGENT": "invoke_agent"}
_KEY = re.compile(r"\A(llm\.(?:input|output)_messages)\.(\d+)\.message\.(role|content|contents\.(\d+)\.message_content\.text)\Z")


def _messages(attrs: dict[str, Any], prefix: str, roles: tuple[str, ...]) -> list[dict[str, Any]]:
    """GenAI ``{role, parts: [{type: text, content}]}`` messages from flattened keys."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        m = _KEY.match(key)
        if m is None or m.group(1) != prefix or not isinstance(value, str):
            continue
        msg = found.setdefault(int(m.group(2)), {"texts": {}})
        if m.group(3) == "role":
            msg["role"] = value
        else:  # content, or the n-th text of contents: kept in order
            msg["texts"][-1 if m.group(4) is None else int(m.group(4))] = value
    return [{"role": msg["role"], "parts": [{"type": "text", "content": t} for _, t in sorted(msg["texts"].items())]}
            for _, msg in sorted(found.items()) if msg.get("role") in roles and msg["texts"]]


def gen_ai(attrs: dict[str, Any], name: str) -> tuple[dict[str, Any], str | None]:
    """(attributes with the GenAI keys the span's OpenInference ones stand for, its
    operation), or the attributes unchanged and None for a span that is not OpenInference."""
    kind = attrs.get(KIND)
    if not isinstance(kind, str):
        return attrs, None
    kind = kind.upper()
    mapped: dict[str, Any] = {}
    if kind == "TOOL":
        mapped["gen_ai.tool.name"] = attrs.get("tool.name") if isinstance(attrs.get("tool.name"), str) else name
        for source, target in (("input.value", "gen_ai.tool.call.arguments"), ("output.value", "gen_ai.tool.call.result"),
                                ("tool.id", "gen_ai.tool.call.id")):
            if attrs.get(source) is not None:
                mapped[target] = attrs[source]
    elif kind == "LLM":
        mapped["gen_ai.input.messages"] = json.dumps(_messages(attrs, "llm.input_messages", ("system", "user")))
        mapped["gen_ai.output.messages"] = json.dumps(_messages(attrs, "llm.output_messages", ("assistant",)))
    elif kind == "AGENT" and isinstance(attrs.get("input.value"), str) and attrs["input.value"]:
        mapped["gen_ai.input.messages"] = json.dumps([{"role": "user", "parts": [
            {"type": "text", "content": attrs["input.value"]}]}])
    return {**mapped, **attrs}, OPERATIONS.get(kind, f"openinference.{kind.lower()}")
