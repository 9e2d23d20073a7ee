"""Chats whose tool calls are written as text, ReAct style (``--format react``) -> canonical
trajectories.

Many agents never use a chat API's tool calls: the model writes ``Thought: ...`` then
``Action: <tool>`` and ``Action Input: <input>``, the harness runs the tool and answers with
``Observation: <output>`` (LangChain's classic ReAct and structured-chat agents, ToolBench
and research harnesses built like them log their chats so). Read as a plain chat, such a
corpus has no call at all: every verdict safe. This reader takes the calls out of the text
as LangChain's parsers do; it is chosen with ``--format react`` only (never detected: a
chat that merely quotes the words is no run).

A record is a chat as the ``openai`` and ``sharegpt`` readers take one: ``{"messages":
[...]}`` (also ``conversations`` / ``conversation``), or a bare list of messages, each
``{"role", "content"}`` (content a string, an object with ``text``, or text parts) or
``{"from", "value"}``. Line ends ``\r\n`` are read as ``\n``.

- A call in an assistant message (``assistant`` / ``gpt`` / ``model`` / ``bot`` / ``agent``), as
  LangChain's ``ReActSingleInputOutputParser`` finds it: the first ``Action:`` (or ``Action
  2:``), the tool named by the text up to the next ``Action Input:``, the input all after
  it (spaces, then double quotes, stripped from both ends, as LangChain does; a code fence
  around it dropped); or the ReAct paper's ``Action 1: Search[query]``; else, as its
  ``StructuredChatOutputParser`` finds one, a fenced JSON blob anywhere
  (``{"action", "action_input"}``, a list: its first). ``Final Answer`` as the blob's action,
  ``Finish[...]``, a text holding both ``Final Answer:`` and an action (LangChain refuses to
  run it), or no call at all: text. The call's id is ``react_<message>_<k>``; the text
  before it is the assistant's text.
- An input that is a strict JSON object is the arguments; any other is the tool's one
  argument ``{"input": ...}``, as the ``langchain`` reader reads a string tool input (a shell
  / code argument of the inference lexicon).
- Its result: the next message when it has a tool role (``tool`` / ``function`` /
  ``observation`` / ``ipython``) or is a user message opening with ``Observation``, that
  label dropped. Inside one message, ``Observation`` lines end the call's input (the
  harness stops the model there); when no result message follows, the message is a whole
  scratchpad: each of its calls is answered by the ``Observation`` after it (the ReAct
  paper's logs, single-string agent traces), up to the next ``Thought`` / ``Action`` /
  ``Final Answer`` line. A call with no result has none (``missing_tool_result`` when steps
  follow; the last step: unknown, fail closed). A result with no call waiting (what a
  harness feeds back on a parse error) is user text, counted in ``meta.results_without_call``.
- LangChain's ``InvalidTool`` answer (``"<tool> is not a valid tool, try one of [...]."``)
  marks the call ``not_executed``, by the ``langchain`` reader's rule (``never_ran``).
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
from pipeline.ingest.adapters.langchain_agent import never_ran, string_arguments
from pipeline.ingest.adapters.sharegpt import turn
from pipeline.ingest.records import canonical_message

FORMAT = "react"
LIST_KEYS = ("messages", "conversations", "conversation")
ASSISTANT = frozenset({"assistant", "gpt", "model", "bot", "chatgpt", "ai", "agent"})
USER = frozenset({"user", "human"})
RESULTS = frozenset({"tool", "function", "observation", "ipython", "tool_response", "function_response"})
ID_KEYS = ("id", "conversation_id", "idx")
TEXT_BLOCKS = frozenset({"text", "input_text", "output_text"})

# LangChain's ReAct parser: `Action\s*\d*\s*:(.*?)Action\s*\d*\s*Input\s*\d*\s*:(.*)`, found here
# in two searches (linear on hostile text)
_ACTION = re.compile(r"Action\s*\d*\s*:")
_INPUT = re.compile(r"Action\s*\d*\s*Input\s*\d*\s*:")
# LangChain's structured chat parser: a fenced blob anywhere
_BLOB = re.compile(r"```(?:json\s+)?(\W.*?)```", re.S)
_LENIENT = json.JSONDecoder(strict=False)
_PAPER = re.compile(r"([A-Za-z_][\w.-]*)\[(.*)\]", re.S)  # `Search[query]`
_FENCE = re.compile(r"```[\w-]*[ \t]*\n(.*?)\n?```", re.S)
# an observation line in an assistant's text; what ends that observation
_OBSERVED = re.compile(r"^[ \t]*Observation[ \t]*(?:\d+[ \t]*)?:[ \t]?", re.M)
_NEXT = re.compile(r"^[ \t]*(?:Thought|Action|Final Answer)\b", re.M)
_LABEL = re.compile(r"\A\s*Observation[ \t]*(?:\d+[ \t]*)?:[ \t]?")
_FINAL = ("final answer", "finish")


def text_call(text: str) -> tuple[str, str, str] | None:
    """(the text before the call, tool, input) of the call in one step's text (module
    docstring), None when it holds none or only a final answer."""
    action = _ACTION.search(text)
    given = _INPUT.search(text, action.end()) if action is not None else None
    if action is not None and given is not None:
        if "Final Answer:" in text:
            return None  # LangChain refuses a text with both: nothing ran
        tool, tool_input = text[action.end():given.start()], _unwrapped(text[given.end():].strip(" ").strip('"'))
        before = text[:action.start()]
    elif action is not None and (paper := _PAPER.fullmatch(text[action.end():].split("\n", 1)[0].strip())):
        tool, tool_input, before = paper.group(1), paper.group(2), text[:action.start()]
    elif (blob := _BLOB.search(text)) is not None:
        try:
            value = _LENIENT.decode(blob.group(1).strip())
        except (ValueError, RecursionError):
            return None
        value = value[0] if isinstance(value, list) and value else value
        if not isinstance(value, dict) or not isinstance(value.get("action"), str):
            return None
        given_input = value.get("action_input", "")
        tool = value["action"]
        tool_input = given_input if isinstance(given_input, str) else json.dumps(given_input, ensure_ascii=False)
        before = text[:action.start() if action is not None and action.start() < blob.start() else blob.start()]
    else:
        return None
    tool = tool.strip().strip("`*'\" ")
    if not tool or tool.lower() in _FINAL:
        return None
    return before.strip(), tool, tool_input.strip()


def scratchpad(text: str) -> list[tuple[str, str | None]]:
    """The steps of one assistant text: (a step's text, the ``Observation`` written after it
    or None), split at each observation line, which runs to the next ``Thought`` /
    ``Action`` / ``Final Answer`` line."""
    steps: list[tuple[str, str | None]] = []
    pos = 0
    for seen in _OBSERVED.finditer(text):
        if seen.start() < pos:
            continue
        nxt = _NEXT.search(text, seen.end())
        end = nxt.start() if nxt is not None else len(text)
        steps.append((text[pos:seen.start()], text[seen.end():end].strip()))
        pos = end
    steps.append((text[pos:], None))
    return steps


def _unwrapped(text: str) -> str:
    """An input without a code fence around it."""
    fence = _FENCE.fullmatch(text.strip())
    return fence.group(1) if fence is not None else text


def one_message(value: Any) -> bool:
    """True for the first element of a bare list of messages (one chat dumped as a JSON
    array: one record, not a list of records)."""
    return chat_message(value) or turn(value)


def _text(content: Any) -> str | None:
    """A message content's text: a string, an object's ``text``, the text parts of a list."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b if isinstance(b, str) else str(b.get("text")) for b in content
                         if isinstance(b, str) or (isinstance(b, dict) and b.get("type") in TEXT_BLOCKS
                                                   and isinstance(b.get("text"), str)))
    if isinstance(content, dict):
        return text_of(content)
    return json.dumps(content)


def _speaker(item: Any, k: int) -> tuple[str, str]:
    if not isinstance(item, dict):
        raise AdapterError(f"message {k} is {type(item).__name__}, expected an object")
    if "from" in item:
        role, content = str(item.get("from")).lower(), item.get("value")
    else:
        role, content = str(item.get("role")).lower(), item.get("content")
    if role in ASSISTANT and item.get("tool_calls"):
        raise AdapterError(f"message {k} carries tool_calls: a chat with API tool calls is read with --format openai")
    return role, (_text(content) or "").replace("\r\n", "\n")


def _answers(role: str, text: str) -> bool:
    return role in RESULTS or (role in USER and _LABEL.match(text) is not None)


def convert(record: Any, ctx: Ctx) -> dict[str, Any]:
    """One chat record -> canonical trajectory (module docstring)."""
    rec = {"messages": record} if isinstance(record, list) else record
    if not isinstance(rec, dict):
        raise AdapterError(f"record is {type(record).__name__}, expected an object or a list of messages")
    key = next((k for k in LIST_KEYS if isinstance(rec.get(k), list) and rec[k]), None)
    if key is None:
        raise AdapterError("no 'messages' (or 'conversations') list of chat messages")
    said = [_speaker(item, k) for k, item in enumerate(rec[key])]
    messages: list[dict[str, Any]] = []
    calls: list[tuple[str, str]] = []  # (call id, tool), in order
    seen: dict[str, int] = {}  # call id -> index of its result message
    waiting: str | None = None
    loose = 0
    for k, (role, text) in enumerate(said):
        if role in ASSISTANT:
            waiting = None
            answered_next = k + 1 < len(said) and _answers(*said[k + 1])
            steps = scratchpad(text)
            if answered_next or len(steps) == 1:
                steps = [(text if not answered_next else steps[0][0], None)]
            said_before: list[str] = []
            for j, (step, observed) in enumerate(steps):
                found = text_call(step)
                if found is None:
                    said_before.append(step.strip())
                    continue
                before, tool, tool_input = found
                call_id = f"react_{k}_{j}"
                calls.append((call_id, tool))
                messages.append(assistant("\n".join(t for t in (*said_before, before) if t) or None,
                                          [tool_call(call_id, tool, string_arguments(tool_input))]))
                said_before = []
                if observed is not None:
                    seen[call_id] = len(messages)
                    messages.append(tool_result(call_id, observed))
                else:
                    waiting = call_id
            if said_before and any(said_before):
                messages.append(assistant("\n".join(t for t in said_before if t) or None))
        elif _answers(role, text) and waiting is not None:
            seen[waiting] = len(messages)
            messages.append(tool_result(waiting, _LABEL.sub("", text, count=1)))
            waiting = None
        elif _answers(role, text):
            loose += 1  # a harness's answer to a parse error: no call waits for it
            messages.append(canonical_message("user", text))
        else:
            messages.append(canonical_message("user" if role in USER else "system", text))  # as sharegpt
            waiting = None
    answers = [messages[seen[c]]["content"] if c in seen else None for c, _ in calls]
    for (call_id, _), ran_not in zip(calls, never_ran([(t, a) for (_, t), a in zip(calls, answers)])):
        if ran_not:
            messages[seen[call_id]]["error"] = {"type": "not_executed", "message": messages[seen[call_id]]["content"]}
    meta: dict[str, Any] = {"format": FORMAT, "text_calls": len(calls)}
    if loose:
        meta["results_without_call"] = loose
    return listed_record(rec, ctx, messages, meta, *ID_KEYS)
