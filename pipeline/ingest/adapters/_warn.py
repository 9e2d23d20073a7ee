"""The one warning line for a file read one record per line, or a JSON document (an array
of records), whose records all lack a ``trajectory_id``: it names what the file looks like (the rules of :mod:`._detect`,
tried on its first lines) and the ``--format`` that fits."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

from pipeline.errors import terminal_safe
from pipeline.ingest.adapters._detect import SNIFF_BYTES, classify, scan
from pipeline.ingest.adapters._io import BOM, read_head
from pipeline.storage import Location

FORMAT_NAMES = {"claude-code": "a Claude Code session", "codex": "a Codex CLI rollout",
                "otel": "an OTLP trace export", "anthropic": "Anthropic Messages records",
                "agentdojo": "AgentDojo traces", "tau-bench": "tau-bench results",
                "tau2-bench": "tau2-bench results", "r-judge": "R-Judge records",
                "gemini": "Gemini API contents records",
                "gemini-stream": "a Gemini CLI stream-json log", "langchain": "LangChain / LangGraph messages",
                "smolagents": "smolagents memory steps", "ai-sdk": "Vercel AI SDK messages",
                "autogen": "AutoGen AgentChat messages",
                "pydantic-ai": "a Pydantic AI message history", "sharegpt": "ShareGPT-style conversations",
                "bedrock": "Amazon Bedrock Converse messages",
                "litellm": "LiteLLM StandardLoggingPayload records",
                "mcp": "an MCP JSON-RPC traffic log",
                "goose": "a Goose session", "atif": "an ATIF trajectory (Harbor)",
                "opencode": "an OpenCode session (export, run --format json log)",
                "copilot": "a GitHub Copilot Chat session (VS Code export)"}


def looks_like(path: Location, max_lines: int = 20) -> tuple[str, str] | None:
    """(format, why) of the first of a file's first lines that a rule other than
    ``canonical`` recognises, or None."""
    head = read_head(path, SNIFF_BYTES)
    if head.startswith(BOM):
        head = head[len(BOM):]
    for line in [ln for ln in head.split(b"\n") if ln.strip()][:max_lines]:
        fmt, why = classify(scan(line.decode("utf-8", "replace")))
        if fmt not in ("canonical", "skip"):
            return fmt, why
    return None


def warn_without_ids(path: Location, fmt: str, records: Iterator[Any]) -> Iterator[Any]:
    """Pass ``records`` (RawRecords of one file) through; when there was at least one and
    none has a ``trajectory_id``, write one warning line to stderr (module docstring)."""
    seen = with_id = 0
    for record in records:
        seen += 1
        text = getattr(record, "text", None)
        if text is None or '"trajectory_id"' in text:
            with_id += 1  # rejected lines say nothing either way
        yield record
    if seen and not with_id:
        try:
            hint = looks_like(path)
        except OSError:
            hint = None
        what = (f"it looks like {FORMAT_NAMES.get(hint[0], hint[0])} ({hint[1]}): "
                f"use --format {hint[0]}" if hint and hint[0] != fmt else
                "it matches no known format: canonical records need a trajectory_id (README: Input formats)")
        sys.stderr.write(f"litmus-gate: warning: {terminal_safe(path)}: none of its {seen} records has a trajectory_id "
                         f"(read as {fmt}); {what}\n")
