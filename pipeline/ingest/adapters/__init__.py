"""Format adapters: the registry the reader dispatches on.

Each adapter converts one source record (a parsed JSON value) into one canonical
trajectory dict (docs/design.md "Canonical record"), or returns None for a line that
is not a record (AgentDojo's run header). ``canonical`` and ``openai`` are
pass-through: their records' source text is used unchanged as ``RawRecord.text``.

``layout`` says how a whole-file JSON document of the format is split into records:
``array`` (a top-level array is a list of records, an object is one record),
``whole`` (the document is one record, e.g. a SWE-agent ``.traj``) or ``inspect``
(Inspect logs: samples of a ``.eval`` archive or of an EvalLog's ``samples``) or
``session`` (the whole FILE, NDJSON lines or one document, is handed to the converter as
``(line, value)`` pairs and it yields ``(source_line, record)`` pairs: Claude Code
sessions, Codex rollouts, OTLP exports, MCP traffic logs, Goose sessions, Copilot Chat sessions;
see ``pipeline/ingest/adapters/_session.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pipeline.ingest.adapters import (
    agentdojo, ai_sdk, anthropic, atif, autogen, bedrock, claude_stream, codex_exec, copilot_log, gemini, gemini_stream,
    goose, inspect_log, langchain, litellm, mcp, opencode, openhands, otel, pydantic_ai, r_judge, react_text, responses, sharegpt,
    smolagents, swe_agent, tau2_bench, tau_bench,
)
from pipeline.ingest.adapters._common import AdapterError, Ctx
from pipeline.ingest.adapters.bare_lists import chat_message, gemini_content, responses_item

Converter = Callable[[Any, Ctx], Any]  # a record dict | None; session layout: an iterator


@dataclass(frozen=True, slots=True)
class AdapterSpec:
    """One input format: its converter (None = pass-through) and document layout;
    ``one_list``, of an ``array`` layout: a top-level array whose first element it accepts
    is ONE record (a bare list of messages, an OpenHands event list), not a list of records
    (OpenHands ``EvalOutput``s); see :mod:`pipeline.ingest.adapters.bare_lists`."""

    name: str
    convert: Converter | None
    layout: str
    one_list: Callable[[Any], bool] | None = None


ADAPTERS: dict[str, AdapterSpec] = {
    spec.name: spec
    for spec in (
        AdapterSpec("canonical", None, "array", chat_message),
        AdapterSpec("openai", None, "array", chat_message),
        AdapterSpec("anthropic", anthropic.convert, "array", chat_message),
        AdapterSpec("inspect", inspect_log.convert, "inspect"),
        AdapterSpec("agentdojo", agentdojo.convert, "array"),
        AdapterSpec("openhands", openhands.convert, "array", openhands.one_list),
        AdapterSpec("tau-bench", tau_bench.convert, "array"),
        AdapterSpec("tau2-bench", tau2_bench.convert_session, "session"),
        AdapterSpec("r-judge", r_judge.convert, "array"),
        AdapterSpec("swe-agent", swe_agent.convert, "whole"),
        AdapterSpec("claude-code", claude_stream.convert, "session"),
        AdapterSpec("codex", codex_exec.convert, "session"),
        AdapterSpec("otel", otel.convert_session, "session"),
        AdapterSpec("openai-responses", responses.convert, "array", responses_item),
        AdapterSpec("gemini", gemini.convert, "array", gemini_content),
        AdapterSpec("gemini-stream", gemini_stream.convert_session, "session"),
        AdapterSpec("langchain", langchain.convert, "array", langchain.is_message),
        AdapterSpec("smolagents", smolagents.convert, "array", smolagents.one_list),
        AdapterSpec("ai-sdk", ai_sdk.convert, "array", ai_sdk.one_list),
        AdapterSpec("autogen", autogen.convert, "array", autogen.message),
        AdapterSpec("pydantic-ai", pydantic_ai.convert, "array", pydantic_ai.one_list),
        AdapterSpec("sharegpt", sharegpt.convert, "array"),
        AdapterSpec("bedrock", bedrock.convert, "array", bedrock.converse_message),
        AdapterSpec("litellm", litellm.convert, "array"),
        AdapterSpec("mcp", mcp.convert_session, "session"),
        AdapterSpec("goose", goose.convert, "session"),
        AdapterSpec("atif", atif.convert, "array"),
        AdapterSpec("opencode", opencode.convert, "session"),
        AdapterSpec("copilot", copilot_log.convert_session, "session"),
        AdapterSpec("react", react_text.convert, "array", react_text.one_message),
    )
}

__all__ = ["ADAPTERS", "AdapterError", "AdapterSpec", "Ctx"]
