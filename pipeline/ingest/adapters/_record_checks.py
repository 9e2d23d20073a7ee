"""Checks and repairs of one record's JSON text before it passes through to the SQL stage
unparsed: non-finite numbers and Anthropic or Bedrock Converse call blocks, Gemini call
parts, Goose items, OpenCode tool parts or Cline / Roo Code XML calls the canonical reader
would lose are rejected (``Problem``), lone UTF-16 surrogates are
replaced by U+FFFD.

Each check is a cheap substring test first: only texts that may hold the problem are
parsed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from pipeline.ingest.adapters._io import Problem
from pipeline.ingest.adapters.anthropic import CALL_BLOCKS
from pipeline.ingest.adapters.cline_xml import answers_xml_call
from pipeline.ingest.adapters.langchain_agent import STEPS_KEY, is_agent_step, steps_holder


# keys of a Gemini part holding a call or its answer (REST camelCase, Python SDK snake_case)
GEMINI_CALL_PARTS = ("functionCall", "function_call", "functionResponse", "function_response")


class _NonFiniteNumber(ValueError):
    """Raised by the ``parse_constant`` hook of :func:`non_finite_number`."""


def _refuse_constant(name: str) -> Any:
    raise _NonFiniteNumber(name)


def non_finite_number(text: str, line: int) -> Problem | None:
    """A Problem when ``text`` uses ``NaN`` / ``Infinity`` / ``-Infinity`` as a number.

    Those tokens are not JSON (RFC 8259), but Python's ``json`` and DuckDB's JSON reader
    both accept them, so a pass-through record carrying one would be scored and its
    ``arguments`` / ``content`` columns would hold text no strict JSON parser reads.
    Only texts containing the substrings are parsed (cheap for everything else); a text
    that is invalid for another reason, or nested too deeply for Python, is left to the
    SQL stage (which reports it as usual).
    """
    if "NaN" not in text and "Infinity" not in text:
        return None
    try:
        json.loads(text, parse_constant=_refuse_constant)
    except _NonFiniteNumber as exc:
        return Problem(line, "malformed_record", f"invalid JSON: {exc} is not a JSON number")
    except (ValueError, RecursionError):
        return None
    return None


def _unmirrored_call(messages: list[Any]) -> tuple[int, str] | None:
    """(message index, block type) of the first Anthropic call block in a message's
    ``content`` that is not also one of that message's ``tool_calls`` (by id), or None."""
    for i, msg in enumerate(messages):
        content = msg.get("content") if isinstance(msg, dict) else None
        if not isinstance(content, list):
            continue
        calls = msg.get("tool_calls")
        ids = {c.get("id") for c in calls if isinstance(c, dict)} if isinstance(calls, list) else set()
        for block in content:
            if isinstance(block, dict) and block.get("type") in CALL_BLOCKS and block.get("id") not in ids:
                return i, block["type"]
    return None


def marked_messages(text: str, mark: str) -> tuple[dict[str, Any], list[Any]] | None:
    """A canonical record's text parsed, with its ``messages`` list, when the text holds
    ``mark`` (a cheap substring test first: only such records pay for a parse); None when
    it does not, does not parse, or has no such list (left to the SQL stage)."""
    if mark not in text:
        return None
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return None
    messages = doc.get("messages") if isinstance(doc, dict) else None
    return (doc, messages) if isinstance(messages, list) else None


def foreign_calls(text: str, line: int) -> Problem | None:
    """A Problem when a record read as canonical holds a tool call of another format in its
    messages, which the canonical reader would lose (it takes only the text of content
    blocks and has no ``parts``), so the record would be scored without the call:

    - an Anthropic call block (``tool_use``, ``server_tool_use`` or the MCP connector's
      ``mcp_tool_use``) in a message's ``content`` that is not also one of its
      ``tool_calls`` (an Anthropic file whose first record has no call nor ``system`` is
      detected as canonical): ``use --format anthropic``;
    - a Goose ``toolRequest`` / ``toolResponse`` item in a ``content`` list (before the
      Converse check: a Goose result item holds a ``toolResult`` key): ``use --format goose``;
    - an Amazon Bedrock Converse ``toolUse`` / ``toolResult`` block in a ``content`` list:
      ``use --format bedrock``;
    - a Gemini ``Content``: a message whose ``parts`` hold a function call or response
      (``functionCall`` / ``function_call``, ``functionResponse`` / ``function_response``; a
      null one is the SDK's unset field): ``use --format gemini``;
    - an OpenCode message: its ``parts`` hold a ``tool`` part (``type: "tool"`` with a
      ``callID``: an ``opencode export``'s message, or one an app copied under ``messages``):
      ``use --format opencode``;
    - a Cline / Roo Code conversation: no message has ``tool_calls`` and a user text answers
      an XML call of the assistant text before it with a ``[<tool> ...] Result:`` header
      (:func:`.cline_xml.answers_xml_call`; a bare list is detected and read by the anthropic
      reader, a ``messages`` record of such a history is not): ``use --format anthropic``;
    - first, a LangChain AgentExecutor result's ``intermediate_steps`` (or ``outputs.
      intermediate_steps``) whose first element is an ``[action, observation]`` pair, beside
      a chat of another format (detected as canonical: only LangChain messages make it
      ``langchain``): ``use --format langchain`` (which reads both).

    Cheap substring tests first: only a text holding one of the markers is parsed, once,
    whatever number of markers it holds; a text that does not parse is left to the SQL
    stage. The checks run in the order above, each over every message.
    """
    anthropic, goose = 'tool_use"' in text, '"toolRequest"' in text or '"toolResponse"' in text
    converse, parts = '"toolUse"' in text or '"toolResult"' in text, '"parts"' in text
    cline, steps = "] Result:" in text, '"intermediate_steps"' in text
    if not (anthropic or goose or converse or parts or cline or steps):
        return None
    parsed = marked_messages(text, "")
    if parsed is None:
        return None
    doc, messages = parsed
    holder = steps_holder(doc) if steps else None
    agent_steps = holder[STEPS_KEY] if holder is not None else []
    if agent_steps and is_agent_step(agent_steps[0]):
        return Problem(line, "malformed_record", f"the record holds {len(agent_steps)} LangChain intermediate_steps "
                                                 "beside its messages: read as canonical, their calls would be lost "
                                                 "(use --format langchain)")
    # (marker seen, check -> (message index, what) | None, detail naming where and the format)
    checks: list[tuple[bool, Callable[[list[Any]], tuple[int, str] | None], str]] = [
        (anthropic, _unmirrored_call, "messages[{0}].content holds an Anthropic '{1}' block that is not among its "
                                      "tool_calls: read as canonical, the call would be lost (use --format anthropic)"),
        # Goose before Converse: a Goose toolResponse item holds a `toolResult` key, as Converse blocks do
        (goose, _goose_item, "messages[{0}].content holds a Goose '{1}' item: read as canonical, the call would be "
                             "lost (use --format goose)"),
        (converse, _converse_block, "messages[{0}].content holds a Bedrock Converse '{1}' block: read as canonical, "
                                    "the call would be lost (use --format bedrock)"),
        (parts, _gemini_part, "messages[{0}].parts holds a Gemini '{1}' part: read as canonical, the call would be "
                              "lost (use --format gemini)"),
        (parts, _opencode_tool_part, "messages[{0}].parts holds an OpenCode '{1}' part: read as canonical, the call "
                                     "would be lost (use --format opencode)"),
        (cline, _cline_answer, "messages[{0}] answers a Cline / Roo Code XML tool call written in the {1}'s text: "
                               "read as canonical, the calls would be lost (use --format anthropic)"),
    ]
    for marked, check, detail in checks:
        found = check(messages) if marked else None
        if found is not None:
            return Problem(line, "malformed_record", detail.format(*found))
    return None


def _cline_answer(messages: list[Any]) -> tuple[int, str] | None:
    """(index, "assistant") of the user message answering a Cline XML call, in a record
    without any ``tool_calls`` (:func:`.cline_xml.answers_xml_call`), or None."""
    if any(isinstance(m, dict) and m.get("tool_calls") for m in messages):
        return None
    index = answers_xml_call(messages)
    return None if index is None else (index, "assistant")


def _converse_block(messages: list[Any]) -> tuple[int, str] | None:
    """(message index, key) of the first Converse ``toolUse`` / ``toolResult`` block in a
    message's ``content`` list, or None."""
    for i, msg in enumerate(messages):
        content = msg.get("content") if isinstance(msg, dict) else None
        for block in content if isinstance(content, list) else []:
            found = next((k for k in ("toolUse", "toolResult") if isinstance(block, dict) and k in block), None)
            if found is not None:
                return i, found
    return None


def _goose_item(messages: list[Any]) -> tuple[int, str] | None:
    """(message index, type) of the first Goose ``toolRequest`` / ``toolResponse`` item in a
    message's ``content`` list, or None."""
    for i, msg in enumerate(messages):
        content = msg.get("content") if isinstance(msg, dict) else None
        for item in content if isinstance(content, list) else []:
            kind = item.get("type") if isinstance(item, dict) else None
            if kind in ("toolRequest", "toolResponse"):
                return i, kind
    return None


def _gemini_part(messages: list[Any]) -> tuple[int, str] | None:
    """(message index, key) of the first Gemini part holding a function call or response
    (not null) in a message's ``parts``, or None."""
    for i, msg in enumerate(messages):
        parts = msg.get("parts") if isinstance(msg, dict) else None
        for part in parts if isinstance(parts, list) else []:
            found = next((k for k in GEMINI_CALL_PARTS if isinstance(part, dict) and part.get(k) is not None), None)
            if found is not None:
                return i, found
    return None


def _opencode_tool_part(messages: list[Any]) -> tuple[int, str] | None:
    """(index, "tool") of the first message whose ``parts`` hold an OpenCode tool part
    (``type: "tool"`` with a ``callID``), or None."""
    for i, msg in enumerate(messages):
        parts = msg.get("parts") if isinstance(msg, dict) else None
        if any(isinstance(p, dict) and p.get("type") == "tool" and "callID" in p
               for p in (parts if isinstance(parts, list) else [])):
            return i, "tool"
    return None


# a JSON escape of a UTF-16 surrogate (the backslash itself not escaped: preceded by an
# even number of backslashes): a high one with its low partner is one character; any
# other is lone
_SURROGATE_HINT = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)(\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
                               r"|\\u[dD][89a-fA-F][0-9a-fA-F]{2})")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT_ESCAPE = "\\ufffd"


def without_lone_surrogates(text: str) -> str:
    """``text`` (JSON) with each lone UTF-16 surrogate escape written as U+FFFD's.

    A lone surrogate (``"\\ud83d"`` without its partner) is what a log cut in the middle of
    an emoji holds (JavaScript's ``JSON.stringify`` writes it so). It is valid JSON syntax
    but no Unicode text: DuckDB's reader refuses the record. Replacing the half character,
    as a UTF-8 decoder does with a broken byte, keeps the record scorable. Only the escape
    changes (six characters for six); every other byte of the text stays. Texts without
    a surrogate escape are returned after one quick search.
    """
    if _SURROGATE_HINT.search(text) is None:
        return text

    def fix(m: re.Match[str]) -> str:
        return m.group(0) if len(m.group(2)) == 12 else m.group(1) + REPLACEMENT_ESCAPE

    return _SURROGATE_ESCAPE.sub(fix, text)


def replace_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate character (Python keeps them in a ``str`` it
    decoded from ``\\ud800``-style escapes) as U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", text)

