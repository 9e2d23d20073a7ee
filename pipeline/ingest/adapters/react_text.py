"""Chats whose tool calls are written as text, ReAct style (``--format react``) -> canonical
trajectories.

Many agents never use a chat API's tool calls: the model writes ``Thought: ...`` then
``Action: <tool>`` and ``Action Input: <input>``, the harness runs the tool and answers with
``Observation: <output>`` (LangChain's classic agents, ToolBench, AgentBench, ToolEmu and
many research suites log their chats so). Read as a plain chat, such a corpus has no call
at all: every verdict safe. This reader takes the calls out of the text; it is chosen with
``--format react`` only (never detected: a chat that merely quotes the words is no run).

A record is a chat as the ``openai`` and ``sharegpt`` readers take one: ``{"messages":
[...]}`` (also ``conversations`` / ``conversation``), or a bare list of messages, each
``{"role", "content"}`` (content a string or text parts) or ``{"from", "value"}``.

- An assistant message (``assistant`` / ``gpt`` / ``model`` / ``bot``) holding a call: the
  first ``Action:`` line names the tool and the text after the next ``Action Input:`` up
  to a line ``Observation`` (the harness stops the model there; text the model wrote past
  it was never fed back) is its input; or a structured chat agent's ``Action:`` then a
  fenced JSON blob ``{"action", "action_input"}``; or the ReAct paper's ``Action 1:
  Search[query]``. The text before the call is the assistant's text; one call per message
  (a harness runs the first and stops), id ``react_<message index>``. ``Final Answer`` (as
  an action too) and ``Finish[...]`` are the answer: text, no call.
- The input is the call's arguments when it is a strict JSON object (``{"query": ...}``);
  any other input, as written (a matching pair of quotes or a code fence around it
  dropped), is the tool's one argument ``{"input": ...}``, read as LangChain's readers read a
  string tool input (``input`` is a shell / code argument of the inference lexicon).
- The call's result: the next message when it is a tool result (``tool`` / ``function`` /
  ``observation`` / ``ipython`` roles) or a user message opening with ``Observation``; its
  text without that label. Any other message next leaves the call without a result
  (``missing_tool_result`` when later steps follow; the last step: unknown, fail closed).
  A result role with no call waiting keeps no id: the record is rejected as an orphan
  result, not guessed.
- An assistant message that already carries ``tool_calls`` is refused (``AdapterError``
  naming ``--format openai``): calls of two kinds in one chat would be read half.

The layout marks no failures: a result's text goes through the policy's text rules.
Trajectory id: ``trajectory_id``, else ``id``, ``conversation_id``, ``idx``, else
``<file stem>:<line>``; ``suite`` when present. ``meta``: ``format``, ``text_calls``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pipeline.ingest.adapters._common import AdapterError, Ctx, assistant, listed_record, text_of, tool_call, tool_result
from pipeline.ingest.adapters.bare_lists import chat_message
from pipeline.ingest.adapters.langchain_agent import string_arguments
from pipeline.ingest.adapters.sharegpt import turn
from pipeline.ingest.records import canonical_message

FORMAT = "react"
LIST_KEYS = ("messages", "conversations", "conversation")
ASSISTANT = frozenset({"assistant", "gpt", "model", "bot", "chatgpt", "ai"})
USER = frozenset({"user", "human"})
RESULTS = frozenset({"tool", "function", "observation", "ipython", "tool_response", "function_response"})
ID_KEYS = ("id", "conversation_id", "idx")

# `Action:` (or `Action 3:`) at a line start; what follows on that line is the tool
_ACTION = re.compile(r"^[ \t]*Action[ \t]*(?:\d+[ \t]*)?:[ \t]*([^\n]*)$", re.M)
_INPUT = re.compile(r"^[ \t]*Action[ \t]*(?:\d+[ \t]*)?Input[ \t]*(?:\d+[ \t]*)?:[ \t]?", re.M)
# where the harness stopped the model (its stop sequence): a line opening with Observation
_STOP = re.compile(r"^[ \t]*Observation\b", re.M)
_PAPER = re.compile(r"([A-Za-z_][\w.-]*)\[(.*)\]", re.S)  # `Search[query]`
_FENCE = re.compile(r"\A```[\w-]*[ \t]*\n(.*?)\n?```", re.S)
_LABEL = re.compile(r"\A\s*Observation[ \t]*(?:\d+[ \t]*)?:[ \t]?")
_FINAL = ("final answer", "finish")


def text_call(text: str) -> tuple[str, str, str] | None:
    """(the text before the call, tool, input) of the first ReAct call in an assistant
    message's text (module docstring), None when it holds none or only a final answer."""
    action = _ACTION.search(text)
    if action is None:
        return None
    before, named = text[:action.start()], action.group(1).strip()
    after = text[action.end():]
    stop = _STOP.search(after)
    after = after[:stop.start()] if stop is not None else after
    if not named:  # a structured chat agent's blob on the next lines
        blob = _FENCE.match(after.lstrip(" \t\n"))
        try:
            value = json.loads(blob.group(1)) if blob is not None else None
        except (ValueError, RecursionError):
            value = None
        if not isinstance(value, dict) or not isinstance(value.get("action"), str):
            return None
        tool, given = value["action"].strip(), value.get("action_input", "")
        tool_input = given if isinstance(given, str) else json.dumps(given, ensure_ascii=False)
    elif (given_input := _INPUT.search(after)) is not None:
        tool, tool_input = named, after[given_input.end():]
    elif (paper := _PAPER.fullmatch(named)) is not None:
        tool, tool_input = paper.group(1), paper.group(2)
    else:
        return None  # an `Action:` line with no input: a mention, not a call
    tool = tool.strip("`*'\" ")
    if not tool or tool.lower() in _FINAL:
        return None
    return before.strip(), tool, _unwrapped(tool_input.strip())


def _unwrapped(text: str) -> str:
    """An input without one matching pair of quotes or a code fence around it."""
    fence = _FENCE.fullmatch(text)
    if fence is not None:
        return fence.group(1)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`" and text[0] not in text[1:-1]:
        return text[1:-1]
    return text


def one_message(value: Any) -> bool:
    """True for the first element of a bare list of messages (one chat dumped as a JSON
    array: one record, not a list of records)."""
    return chat_message(value) or turn(value)


def _speaker(item: Any, k: int) -> tuple[str, str | None]:
    if not isinstance(item, dict):
        raise AdapterError(f"message {k} is {type(item).__name__}, expected an object")
    if "from" in item:
        role, content = str(item.get("from")).lower(), item.get("value")
    else:
        role, content = str(item.get("role")).lower(), item.get("content")
    if role in ASSISTANT and item.get("tool_calls"):
        raise AdapterError(f"message {k} carries tool_calls: a chat with API tool calls is read with --format openai")
    text = text_of(content) if not isinstance(content, (dict, int, float, bool)) else json.dumps(content)
    return role, text


def convert(record: Any, ctx: Ctx) -> dict[str, Any]:
    """One chat record -> canonical trajectory (module docstring)."""
    rec = {"messages": record} if isinstance(record, list) else record
    if not isinstance(rec, dict):
        raise AdapterError(f"record is {type(record).__name__}, expected an object or a list of messages")
    key = next((k for k in LIST_KEYS if isinstance(rec.get(k), list) and rec[k]), None)
    if key is None:
        raise AdapterError("no 'messages' (or 'conversations') list of chat messages")
    messages: list[dict[str, Any]] = []
    waiting: str | None = None
    calls = 0
    for k, item in enumerate(rec[key]):
        role, text = _speaker(item, k)
        if role in ASSISTANT:
            found = text_call(text or "")
            waiting = None
            if found is None:
                messages.append(assistant(text))
                continue
            before, tool, tool_input = found
            waiting, calls = f"react_{k}", calls + 1
            messages.append(assistant(before or None, [tool_call(waiting, tool, string_arguments(tool_input))]))
        elif role in RESULTS or (role in USER and waiting is not None and _LABEL.match(text or "")):
            seen = _LABEL.sub("", text or "", count=1)
            messages.append(tool_result(waiting, seen))  # no call waiting: an orphan, rejected downstream
            waiting = None
        else:
            messages.append(canonical_message("user" if role in USER else "system", text))  # as sharegpt: other speakers
            waiting = None
    return listed_record(rec, ctx, messages, {"format": FORMAT, "text_calls": calls}, *ID_KEYS)
