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
  model's call after it nor makes one); each observation answers the call before it, the
  next message (when a result) the last. An output after a step with no call, and a result
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
# in searches of their own (no adjacent quantifiers over the same characters: linear)
_ACTION = re.compile(r"Action\s*(?:\d+\s*)?:")
_INPUT = re.compile(r"Action\s*(?:\d+\s*)?Input\s*(?:\d+\s*)?:")
# LangChain's structured chat parser: a fenced blob anywhere
_BLOB = re.compile(r"```(?:json\s+)?(\W.*?)```", re.S)
_LENIENT = json.JSONDecoder(strict=False)
_PAPER = re.compile(r"([A-Za-z_][\w.-]*)\[(.*)\]", re.S)  # `Search[query]`
_FENCE = re.compile(r"```[\w-]*[ \t]*\n(.*?)\n?```", re.S)
# an observation line in an assistant's text; where the model's own text of a step starts
_OBSERVED = re.compile(r"^[ \t]*Observation[ \t]*(?:\d+[ \t]*)?:[ \t]?", re.M)
_OWN = re.compile(r"^[ \t]*(?:Thought|Final Answer)\b", re.M)
_LABEL = re.compile(r"\A\s*Observation[ \t]*(?:\d+[ \t]*)?:[ \t]?")
# what LangChain answers a text it could not parse (nothing ran)
_PARSE_ERROR = re.compile(r"Could not parse LLM output|Invalid Format|Parsing LLM output produced both|"
                          r"Invalid or incomplete response")
_FINAL = ("final answer", "finish")

Call = tuple[int, str, str, bool]
"""A call in a step's text: (where it starts, tool, input, whether ``Final Answer:`` follows it)."""


def text_call(text: str, last: bool = False) -> Call | None:
    """The call in a step's text as LangChain's parsers find it (module docstring): the
    first one; ``last``: the last one (a scratchpad's step, whose text may open with a tool's
    output: the model's own call is the one right before the next observation). None when
    it holds none or only a final answer."""
    found: list[Call] = []
    inputs = list(_INPUT.finditer(text)) if last else [m for m in [_INPUT.search(text)] if m]
    if inputs:
        given = inputs[-1] if last else inputs[0]
        actions = [a for a in _ACTION.finditer(text, 0, given.start())]
        if actions:
            action = actions[-1] if last else actions[0]
            if not last:  # LangChain: the first `Action:`, then the first `Action Input:` after it
                given = _INPUT.search(text, action.end()) or given
            found.append((action.start(), text[action.end():given.start()],
                          text[given.end():].strip().strip('"'), False))
    for action in _ACTION.finditer(text):
        line_end = text.find("\n", action.end())
        paper = _PAPER.fullmatch(text[action.end():len(text) if line_end < 0 else line_end].strip())
        if paper is not None:
            found.append((action.start(), paper.group(1), paper.group(2), False))
            if not last:
                break
    blobs = list(_BLOB.finditer(text)) if last else [m for m in [_BLOB.search(text)] if m]
    if blobs:
        blob = blobs[-1] if last else blobs[0]
        label = [a for a in _ACTION.finditer(text, 0, blob.start()) if not text[a.end():blob.start()].strip()]
        found.append(_blob_call(blob.group(1).strip(), label[-1].start() if label else blob.start()))
    elif text.strip()[:1] in ("{", "["):  # create_json_chat_agent: the blob bare
        found.append(_blob_call(text.strip(), len(text) - len(text.lstrip())))
    calls = [c for c in found if c[1] is not None]
    if not calls:
        return None
    start, tool, tool_input, _ = max(calls) if last else min(calls)
    tool = tool.strip().strip("`*'\" ")
    if not tool or tool.lower() in _FINAL:
        return None
    return start, tool, _unwrapped(tool_input.strip()), "Final Answer:" in text[start:]


def _blob_call(blob: str, at: int) -> Call:
    """A structured chat blob's call (its tool None when it holds none)."""
    try:
        value = _LENIENT.decode(blob)
    except (ValueError, RecursionError):
        return at, None, "", False  # type: ignore[return-value]
    value = value[0] if isinstance(value, list) and value else value
    if not isinstance(value, dict) or not isinstance(value.get("action"), str):
        return at, None, "", False  # type: ignore[return-value]
    given = value.get("action_input", {})
    return at, value["action"], given if isinstance(given, str) else json.dumps(given, ensure_ascii=False), False


Step = tuple[str, str, tuple[str, str, bool] | None, str | None]
"""One step of an assistant text: (the tool output opening it, the model's text, its call
(tool, input, refused) or None, the observation written after it or None)."""


def steps(text: str) -> list[Step]:
    """An assistant text's steps (module docstring): the text split at each observation
    line; each part after one opens with that tool's output, then the model's own text (from
    its last ``Thought`` / ``Final Answer`` line before its call, else from the call), whose
    call is the part's last; a text with no observation line is one step, its first call."""
    cuts = list(_OBSERVED.finditer(text))
    if not cuts:
        call = text_call(text)
        return [("", text if call is None else text[:call[0]], None if call is None else call[1:], None)]
    parts = [text[:cuts[0].start()]] + [text[a.end():b.start()] for a, b in zip(cuts, cuts[1:])] + [text[cuts[-1].end():]]
    out: list[Step] = []
    for i, part in enumerate(parts):
        call = text_call(part, last=True)
        end = call[0] if call is not None else len(part)
        own = [m.start() for m in _OWN.finditer(part, 0, end)]
        split = 0 if i == 0 else (own[-1] if own else end)
        out.append((part[:split].strip(), part[split:end], None if call is None else call[1:], None))
    # each step's observation is what opens the next one
    return [(seen, mine, call, out[i + 1][0] if i + 1 < len(out) else None)
            for i, (seen, mine, call, _) in enumerate(out)]


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
            waiting, after = None, said[k + 1] if k + 1 < len(said) else None
            answer_next = after is not None and _answers(*after)
            taken = False  # whether the step before took the output opening this one
            parts = steps(text)
            for j, (opening, own, call, observed) in enumerate(parts):
                if opening and not taken:  # the output of a step that made no call: text
                    loose += 1
                    messages.append(canonical_message("user", opening))
                answer = observed if observed is not None else after[1] if answer_next and after else None
                if call is not None and call[2] and (answer is None or _PARSE_ERROR.search(answer)):
                    call = None  # Final Answer and an action, nothing answered: LangChain ran nothing
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
