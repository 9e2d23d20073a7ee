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
from collections.abc import Iterator
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
# the ReAct paper's `Action 1: Search[query]`, on a line of its own
_PAPER_LINE = re.compile(r"^[ \t]*Action[ \t]*(?:\d+[ \t]*)?:[ \t]*([A-Za-z_][\w.-]*)\[([^\n]*)\][ \t]*$", re.M)
_FENCE = re.compile(r"```[\w-]*[ \t]*\n(.*?)\n?```", re.S)
# an observation line in an assistant's text; where the model's own text of a step starts
_OBSERVED = re.compile(r"^[ \t]*Observation[ \t]*(?:\d+[ \t]*)?:[ \t]?", re.M)
_OWN = re.compile(r"^[ \t]*(?:Thought|Final Answer)\b", re.M)
_LABEL = re.compile(r"\A\s*Observation[ \t]*(?:\d+[ \t]*)?:[ \t]?")
# what LangChain answers a text it could not parse (nothing ran)
_PARSE_ERROR = re.compile(r"\s*(?:Observation[ \t]*:[ \t]*)?(?:Could not parse LLM output:|Invalid Format: Missing 'Action|"
                          r"Parsing LLM output produced both|Invalid or incomplete response)")
_FINAL = ("final answer", "finish")

Call = tuple[int, str, str, bool]
"""A call in a step's text: (where it starts, tool, input, whether ``Final Answer:`` follows it)."""


def text_call(text: str, last: bool = False) -> Call | None:
    """The call in a step's text as LangChain's parsers find it (module docstring): the
    first one; ``last``: the last one (a scratchpad's step, whose text may open with a tool's
    output: the model's own call is the one right before the next observation). None when
    it holds none or only a final answer."""
    found: list[Call] = []
    if last:
        given = _last(_INPUT, text, 0, len(text))
        action = _last(_ACTION, text, 0, given.start()) if given is not None else None
    else:  # LangChain: the first `Action:`, then the first `Action Input:` after it
        action = _ACTION.search(text)
        given = _INPUT.search(text, action.end()) if action is not None else None
    if action is not None and given is not None:
        found.append((action.start(), text[action.end():given.start()], text[given.end():].strip().strip('"'), False))
    papers = _PAPER_LINE.finditer(text)
    paper = _last_of(papers) if last else next(papers, None)
    if paper is not None:
        found.append((paper.start(), paper.group(1), paper.group(2), False))
    blob = _fenced(text, last)
    if blob is not None:
        label = _last(_ACTION, text, 0, blob[0])
        at = label.start() if label is not None and not text[label.end():blob[0]].strip() else blob[0]
        found.append(_blob_call(blob[1], at))
    bare = text.rfind("\n{") + 1 if last else len(text) - len(text.lstrip())
    if text[bare:bare + 1] in ("{", "[") and (blob is None or bare > blob[0]):  # a JSON chat agent's blob, bare
        found.append(_blob_call(text[bare:].strip(), bare))
    calls = [c for c in found if c[1] is not None]
    if not calls:
        return None
    start, tool, tool_input, _ = max(calls) if last else min(calls)
    tool = tool.strip().strip("`*'\" ")
    if not tool or tool.lower() in _FINAL:
        return None
    return start, tool, _unwrapped(tool_input.strip()), "Final Answer:" in (text[start:] if last else text)


def _last(pattern: re.Pattern[str], text: str, start: int, end: int) -> re.Match[str] | None:
    return _last_of(pattern.finditer(text, start, end))


def _last_of(matches: Iterator[re.Match[str]]) -> re.Match[str] | None:
    out = None
    for out in matches:
        pass
    return out


def _fenced(text: str, last: bool) -> tuple[int, str] | None:
    """(where, content) of the first fenced blob (LangChain's pattern), or of the last one
    found from the end (a stray fence earlier in a tool's output cannot pair with the model's)."""
    if not last:
        m = _BLOB.search(text)
        return (m.start(), m.group(1).strip()) if m is not None else None
    close = text.rfind("```")
    open_ = text.rfind("```", 0, close) if close > 0 else -1
    if open_ < 0:
        return None
    m = _BLOB.match(text, open_, close + 3)
    return (open_, m.group(1).strip()) if m is not None else None


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


Step = tuple[str, str, tuple[str, str, bool] | None, str | None, str]
"""One step of an assistant text: (the tool output opening it, the model's text before its
call, its call (tool, input, refused) or None, the observation written after it or None,
the model's text from the call on)."""


def steps(text: str, answered_after: bool = False) -> list[Step]:
    """An assistant text's steps (module docstring): the text split at each observation
    line; each part after one opens with that tool's output, then the model's own text (from
    its last ``Thought`` / ``Final Answer`` line before its call, a ``Thought`` line right
    before a last ``Final Answer`` included; else from the call), whose call is the part's last; the last part's call counts
    only after such a line or when a result message follows (``answered_after``): an
    accumulated scratchpad ends with a tool's output, which may spell a call. A text with no
    observation line is one step, its first call."""
    cuts = list(_OBSERVED.finditer(text))
    if not cuts:
        call = text_call(text)
        if call is None:
            return [("", text, None, None, "")]
        return [("", text[:call[0]], call[1:], None, text[call[0]:])]
    parts = [text[:cuts[0].start()]] + [text[a.end():b.start()] for a, b in zip(cuts, cuts[1:])] + [text[cuts[-1].end():]]
    out: list[Step] = []
    for i, part in enumerate(parts):
        call = text_call(part, last=True)
        end = call[0] if call is not None else len(part)
        own = [m.start() for m in _OWN.finditer(part, 0, end)]
        if len(own) > 1 and part.count("\n", own[-2], own[-1]) == 1 and part[own[-1]:].lstrip().startswith(
                "Final Answer") and part[own[-2]:].lstrip().startswith("Thought"):
            own.pop()  # `Thought: I now know` then `Final Answer:`: the model's, both
        split = 0 if i == 0 else (own[-1] if own else end)
        if call is not None and i > 0 and i == len(parts) - 1 and not own and not answered_after:
            call, end, split = None, len(part), len(part)  # the last output spelling a call: output
        out.append((part[:split].strip(), part[split:end], None if call is None else call[1:], None, part[end:]))
    # each step's observation is what opens the next one
    return [(seen, mine, call, out[i + 1][0] if i + 1 < len(out) else None, rest)
            for i, (seen, mine, call, _, rest) in enumerate(out)]


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
