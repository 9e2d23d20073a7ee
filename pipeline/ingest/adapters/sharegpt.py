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
  ``{"name", "arguments"}`` (or ``parameters``), or a list of them (parallel calls) ->
  an assistant message with those calls (ids ``call_<turn>_<k>``); a value that is no
  such JSON is one call named ``function_call`` whose arguments are that text (it reaches
  the tables as unparseable arguments, never as a guess);
- an assistant turn's ``<tool_call>{...}</tool_call>`` blocks (Hermes / Qwen chat
  templates) are calls too, the text around them the assistant's text;
- ``observation`` / ``tool`` / ``function`` / ``tool_response`` / ``function_response``
  / ``ipython``: a result; it answers the earliest call still unanswered (the layout has
  no call ids; LLaMA-Factory and NeMo pair them in order), each ``<tool_response>`` block
  of a turn one result; a result with no call waiting keeps no id (an orphan result:
  the record is rejected, not guessed);
- any other speaker -> system text (as the canonical reader does with unknown roles).

The layout marks no failures: a result's text goes through the policy's text rules.
Trajectory id: ``trajectory_id``, else ``id``, ``conversation_id``, ``idx``, else
``<file stem>:<line>``; ``suite`` when present.
"""

from __future__ import annotations

import json
import re
from collections import deque
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
_CALL_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)
_RESULT_BLOCK = re.compile(r"<tool_response>\s*(.*?)\s*</tool_response>", re.S)
MAX_TEXT = 100_000


def turn(value: Any) -> bool:
    """True when ``value`` is one ShareGPT turn (``from`` + ``value``)."""
    return isinstance(value, dict) and isinstance(value.get("from"), str) and "value" in value


def _speaker_text(item: dict[str, Any]) -> tuple[str, Any]:
    if "from" in item:
        return str(item.get("from")).lower(), item.get("value")
    return str(item.get("role")).lower(), item.get("content")


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def _call_items(text: Any) -> list[Any]:
    """The calls one call value holds: its JSON object, or the objects of its JSON list;
    text that is no JSON is one item as it stands."""
    value = text
    if isinstance(text, str):
        try:
            value = json.loads(text)
        except ValueError:
            return [text]
    return value if isinstance(value, list) else [value]


def _calls(items: list[Any], n: int) -> list[dict[str, Any]]:
    calls = []
    for k, c in enumerate(items):
        if isinstance(c, dict) and isinstance(c.get("name"), str):
            args = c.get("arguments", c.get("parameters", {}))
            calls.append(tool_call(f"call_{n}_{k}", c["name"], args if args is not None else {}))
        else:  # no call we can read: its text as the arguments, which do not parse
            calls.append(tool_call(f"call_{n}_{k}", "function_call", c if isinstance(c, str) else json.dumps(c)))
    return calls


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
    pending: deque[str] = deque()  # call ids in call order, awaiting a result
    for n, item in enumerate(record[key]):
        if not isinstance(item, dict):
            raise AdapterError(f"turn {n} is {type(item).__name__}, expected an object")
        speaker, value = _speaker_text(item)
        if speaker in CALLS:
            calls = _calls(_call_items(value), n)
            messages.append(canonical_message("assistant", None, tool_calls=calls))
            pending.extend(c["id"] for c in calls)
        elif speaker in RESULTS:
            text = _as_text(value)
            blocks = _RESULT_BLOCK.findall(text) or [text]
            for block in blocks:
                messages.append(tool_result(pending.popleft() if pending else None, block[:MAX_TEXT]))
        elif speaker in ASSISTANT:
            text = _as_text(value)
            blocks = _CALL_BLOCK.findall(text)
            calls = _calls([c for b in blocks for c in _call_items(b)], n)
            rest = _CALL_BLOCK.sub("", text).strip() if blocks else text
            messages.append(canonical_message("assistant", rest[:MAX_TEXT] or None, tool_calls=calls or None))
            pending.extend(c["id"] for c in calls)
        else:
            messages.append(canonical_message("user" if speaker in USER else "system", _as_text(value)[:MAX_TEXT]))
    rec = dict(record)
    for k in ("trajectory_id", *ID_KEYS):
        if k in rec and rec[k] is not None and not isinstance(rec[k], (dict, list)):
            rec[k] = str(rec[k])
    return listed_record(rec, ctx, messages, {"format": FORMAT}, *ID_KEYS)
