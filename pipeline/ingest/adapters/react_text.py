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
  it (blanks, then double quotes, stripped from both ends, as LangChain's regex and
  ``strip('"')`` leave it; a code fence around it dropped); or the ReAct paper's ``Action 1:
  Search[query]``; else, as its ``StructuredChatOutputParser`` / JSON chat agent find one, a
  fenced JSON blob anywhere or the text itself as JSON (``{"action", "action_input"}``, a
  list: its first; no ``action_input``: ``{}``). ``Final Answer`` as the blob's action,
  ``Finish[...]`` or no call at all: text. A text holding both ``Final Answer:`` and an
  action is refused by LangChain (nothing ran, its answer a parse error): no call, unless
  an output that is no parse error answers it (another harness ran it). The call's id is
  ``react_<message>_<k>``; the text before it is the assistant's text.
- An input that is a strict JSON object is the arguments; any other is the tool's one
  argument ``{"input": ...}``, as the ``langchain`` reader reads a string tool input (a shell
  / code argument of the inference lexicon).
- Its result: the next message when it has a tool role (``tool`` / ``function`` /
  ``observation`` / ``ipython``) or is a user message opening with ``Observation``, that
  label dropped. An assistant text holding ``Observation`` lines is a scratchpad (the
  ReAct paper's logs, single-string agent traces, an accumulated scratchpad): split at
  them, each part after one opens with that tool's output and then the model's own text
  (from its last ``Thought`` / ``Final Answer`` line before its call), and its call is the
  part's last one (a tool's output, which a page or file can write, never hides the
  model's call after it nor makes one: the last fenced blob is found from the end, a bare
  blob on the part's last lines); each observation answers the call before it, the next
  message (when a result) the last. The last part's call counts only after the model's own
  ``Thought`` line or when a result message follows (an accumulated scratchpad ends with a
  tool's output, which may spell a call). A refused call's text stays assistant text. An output after a step with no call, and a result
  message with no call waiting (a harness's answer to a parse error), are user text,
  counted in ``meta.results_without_call``. A call with no result has none
  (``missing_tool_result`` when steps follow; the last step: unknown, fail closed).
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
from pipeline.ingest.adapters.react_steps import steps
from pipeline.ingest.adapters.sharegpt import speaker_text, turn
from pipeline.ingest.records import canonical_message

FORMAT = "react"
LIST_KEYS = ("messages", "conversations", "conversation")
ASSISTANT = frozenset({"assistant", "gpt", "model", "bot", "chatgpt", "ai", "agent"})
USER = frozenset({"user", "human"})
RESULTS = frozenset({"tool", "function", "observation", "ipython", "tool_response", "function_response"})
ID_KEYS = ("id", "conversation_id", "idx")
TEXT_BLOCKS = frozenset({"text", "input_text", "output_text"})

_LABEL = re.compile(r"\A\s*Observation[ \t]*(?:\d+[ \t]*)?:[ \t]?")
# what LangChain answers a text it could not parse (nothing ran)
_PARSE_ERROR = re.compile(r"\s*(?:Observation[ \t]*:[ \t]*)?(?:Could not parse LLM output:|Invalid Format: Missing 'Action|"
                          r"Parsing LLM output produced both|Invalid or incomplete response)")


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
    role, content = speaker_text(item)
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
            waiting, after = None, said[k + 1] if k + 1 < len(said) else None
            answer_next = after is not None and _answers(*after)
            taken = False  # whether the step before took the output opening this one
            parts = steps(text, answer_next)
            for j, (opening, own, call, observed, rest) in enumerate(parts):
                if opening and not taken:  # the output of a step that made no call: text
                    loose += 1
                    messages.append(canonical_message("user", opening))
                answer = observed if observed is not None else after[1] if answer_next and after else None
                if call is not None and call[2] and (answer is None or _PARSE_ERROR.match(answer)):
                    call, own = None, own + rest  # Final Answer and an action, nothing answered: LangChain ran nothing
                taken = call is not None
                if call is None:
                    if own.strip():
                        messages.append(assistant(own.strip()))
                    continue
                call_id = f"react_{k}_{j}"
                calls.append((call_id, call[0]))
                messages.append(assistant(own.strip() or None, [tool_call(call_id, call[0], string_arguments(call[1]))]))
                if observed is not None:
                    seen[call_id] = len(messages)
                    messages.append(tool_result(call_id, observed))
                else:
                    waiting = call_id
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
