"""ShareGPT-style conversations with tool calls (the layout tool-use fine-tuning and
evaluation datasets are published in) -> canonical trajectories.

A record holds ``conversations`` (or ``conversation`` / ``messages``): a list of turns,
each ``{"from": ..., "value": ...}`` (ShareGPT, LLaMA-Factory's ``sharegpt`` format) or
``{"role": ..., "content": ...}`` with tool roles (the chatml variant: ``tool_call`` /
``tool_response``); an optional ``system`` prompt beside it; ``tools`` (the schemas) is
not read. Speakers:

- ``human`` / ``user`` -> user; ``gpt`` / ``assistant`` / ``model`` / ``bot`` ->
  assistant text; ``system`` -> system;
- ``function_call`` / ``tool_call`` / ``tool_calls``: the value is the call as JSON,
  ``{"name", "arguments"}`` (or ``parameters``, or OpenAI's ``{"function": {...}}``),
  or a list of them (parallel calls) -> an assistant message with those calls (ids
  ``call_<turn>_<k>``); a value that is no JSON is one call named ``function_call`` whose
  arguments are that text (it reaches the tables as unparseable arguments, never as a
  guess); JSON naming no function rejects the record (``malformed_record``);
- an assistant turn's ``<tool_call>{...}</tool_call>`` blocks (Hermes / Qwen chat
  templates) are calls too, the text around them the assistant's text;
- ``observation`` / ``tool`` / ``function`` / ``tool_response`` / ``function_response``
  / ``ipython``: a result. It answers a call of the latest call turns still unanswered
  (consecutive call turns are one group): the one its ``<tool_response>`` block's JSON
  ``name`` names, else the earliest (the layout has no call ids; LLaMA-Factory and NeMo
  pair them in order); a call of an earlier group only when the latest is answered. A
  turn that is nothing but ``<tool_response>`` blocks, no more than calls wait, is one
  result per block; otherwise its whole text is one result. A result with no call
  waiting keeps no id (an orphan result: the record is rejected, not guessed);
- any other speaker -> system text (as the canonical reader does with unknown roles).

The layout marks no failures: a result's text goes through the policy's text rules.
Trajectory id: ``trajectory_id``, else ``id``, ``conversation_id``, ``idx``, else
``<file stem>:<line>``; ``suite`` when present.
"""

from __future__ import annotations

import json
from typing import Any

from pipeline.ingest.adapters._common import AdapterError, Ctx, listed_record, tool_call, tool_result
from pipeline.ingest.records import canonical_message

FORMAT = "sharegpt"
LIST_KEYS = ("conversations", "conversation", "messages")
USER = {"human", "user"}
ASSISTANT = {"gpt", "assistant", "model", "bot", "chatgpt"}
CALLS = {"function_call", "tool_call", "tool_calls"}
RESULTS = {"observation", "tool", "function", "tool_response", "function_response", "ipython"}
ID_KEYS = ("id", "conversation_id", "idx")
CALL_TAGS = ("<tool_call>", "</tool_call>")
RESULT_TAGS = ("<tool_response>", "</tool_response>")
MAX_TEXT = 100_000


def turn(value: Any) -> bool:
    """True when ``value`` is one ShareGPT turn (``from`` + ``value``)."""
    return isinstance(value, dict) and isinstance(value.get("from"), str) and "value" in value


def speaker_text(item: dict[str, Any]) -> tuple[str, Any]:
    """(speaker, content) of a turn: ShareGPT's ``from`` / ``value``, else ``role`` / ``content``."""
    if "from" in item:
        return str(item.get("from")).lower(), item.get("value")
    return str(item.get("role")).lower(), item.get("content")


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def _blocks(text: str, tags: tuple[str, str]) -> tuple[list[str], str]:
    """The ``<tag>...</tag>`` blocks of ``text`` (stripped) and the text outside them, in
    one left-to-right scan (linear: a regex with lazy groups and ``\\s*`` on both sides
    backtracks cubically on hostile text). An opening tag never closed is text."""
    opening, closing = tags
    blocks: list[str] = []
    rest: list[str] = []
    at = 0
    while (start := text.find(opening, at)) >= 0:
        end = text.find(closing, start + len(opening))
        if end < 0:
            break
        rest.append(text[at:start])
        blocks.append(text[start + len(opening):end].strip())
        at = end + len(closing)
    rest.append(text[at:])
    return blocks, "".join(rest).strip()


def _call_items(text: Any) -> list[Any]:
    """The calls one call value holds: its JSON object, or the objects of its JSON list;
    text that is no JSON (or nested too deep to read) is one item as it stands."""
    value = text
    if isinstance(text, str):
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            return [text]
    return value if isinstance(value, list) else [value]


def _calls(items: list[Any], n: int) -> list[dict[str, Any]]:
    """Canonical calls of ``items``: ``{"name", "arguments" | "parameters"}`` or OpenAI's
    ``{"function": {"name", "arguments"}}``; text that is no JSON becomes a call named
    ``function_call`` whose arguments are that text (unparseable arguments, never a guess).
    JSON of any other shape is a malformed record."""
    calls = []
    for k, c in enumerate(items):
        if isinstance(c, str):
            calls.append(tool_call(f"call_{n}_{k}", "function_call", c))
            continue
        fn = c.get("function") if isinstance(c, dict) and isinstance(c.get("function"), dict) else c
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
            raise AdapterError(f"turn {n}: call {k} is JSON without a function name")
        args = fn.get("arguments", fn.get("parameters", {}))
        calls.append(tool_call(f"call_{n}_{k}", fn["name"], args if args is not None else {}))
    return calls


class _Waiting:
    """Calls still unanswered, by call turn: consecutive call turns (parallel calls written
    one per turn) make one group, and a call turn after anything else starts the next. A
    result answers a call of the latest group still waiting: the one its ``<tool_response>``
    block names (Hermes results carry ``name``), else the earliest; when that group is
    answered, the earliest call still waiting of an earlier group (a layout that answers
    late). Text turns between a call and its result change nothing."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, str, str]] = []  # (group, id, name)
        self.group = 0
        self.after_call = False

    def add(self, calls: list[dict[str, Any]]) -> None:
        if not self.after_call:
            self.group += 1
        self.calls += [(self.group, c["id"], c["function"]["name"]) for c in calls]
        self.after_call = bool(calls)

    def other_turn(self) -> None:
        self.after_call = False

    def answer(self, text: str, by_name: bool) -> str | None:
        self.after_call = False
        if not self.calls:
            return None
        latest = max(g for g, _, _ in self.calls)
        name = _named(text) if by_name else None
        k = next((i for i, (g, _, n) in enumerate(self.calls) if g == latest and n == name),
                 next(i for i, (g, _, _) in enumerate(self.calls) if g == latest))
        return self.calls.pop(k)[1]


def _named(text: str) -> str | None:
    if not text.startswith("{") or len(text) > MAX_TEXT:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value.get("name") if isinstance(value, dict) and isinstance(value.get("name"), str) else None


def _results(text: str, waiting: int) -> tuple[list[str], bool]:
    """One result turn's results, and whether they are ``<tool_response>`` blocks: the
    blocks when the text is nothing but blocks and no more of them than calls are waiting;
    else the whole text is one result (a tool's output may itself hold the tags)."""
    blocks, rest = _blocks(text, RESULT_TAGS)
    if blocks and not rest and len(blocks) <= max(waiting, 1):
        return blocks, True
    return [text], False


def convert(record: Any, ctx: Ctx) -> dict[str, Any]:
    """Convert one ShareGPT-style record."""
    if not isinstance(record, dict):
        raise AdapterError(f"record is {type(record).__name__}, expected an object")
    key = next((k for k in LIST_KEYS if isinstance(record.get(k), list) and record[k]), None)
    if key is None:
        raise AdapterError("no 'conversations' list of turns")
    messages: list[dict[str, Any]] = []
    if isinstance(record.get("system"), str) and record["system"]:
        messages.append(canonical_message("system", record["system"]))
    waiting = _Waiting()
    for n, item in enumerate(record[key]):
        if not isinstance(item, dict):
            raise AdapterError(f"turn {n} is {type(item).__name__}, expected an object")
        speaker, value = speaker_text(item)
        if speaker in CALLS:
            calls = _calls(_call_items(value), n)
            messages.append(canonical_message("assistant", None, tool_calls=calls))
            waiting.add(calls)
        elif speaker in RESULTS:
            texts, blocks = _results(_as_text(value), len(waiting.calls))
            for text in texts:
                messages.append(tool_result(waiting.answer(text, blocks), text[:MAX_TEXT]))
        elif speaker in ASSISTANT:
            blocks, rest = _blocks(_as_text(value), CALL_TAGS)
            calls = _calls([c for b in blocks for c in _call_items(b)], n)
            messages.append(canonical_message("assistant", rest[:MAX_TEXT] or None, tool_calls=calls or None))
            if calls:
                waiting.add(calls)
            else:
                waiting.other_turn()
        else:
            messages.append(canonical_message("user" if speaker in USER else "system", _as_text(value)[:MAX_TEXT]))
            waiting.other_turn()
    # an id that is null falls through to the next key; the tables judge the rest (a
    # string or a whole number is an id; true, 1.5 or an object is none)
    rec = {k: v for k, v in record.items() if not (k in ("trajectory_id", *ID_KEYS) and v is None)}
    return listed_record(rec, ctx, messages, {"format": FORMAT}, *ID_KEYS)
