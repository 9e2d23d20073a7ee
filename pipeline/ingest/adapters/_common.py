"""Helpers shared by the format adapters: context, errors, message builders, id repair."""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from pipeline.ingest.records import canonical_message
from pipeline.storage import Location


class AdapterError(ValueError):
    """One source record cannot be converted; the reader rejects it as malformed_record."""


class RecordTooLarge(AdapterError):
    """One source record would convert to more than ``max_record_bytes``; the reader
    rejects it as record_too_large (raised while converting, before the text is built)."""


# one file's converted records may add up to GROWTH x the source bytes read from it, plus
# one record's limit: a value a format copies into every record (an AgentDojo run header,
# an Inspect eval spec, an OTLP resource) would otherwise multiply a small file in a shard
GROWTH = 4


@dataclass(slots=True)
class Growth:
    """What one file's converted records may add up to (see ``GROWTH``). Once a record
    does not fit, no later record of the file is converted: its time stays bounded."""

    slack: int
    source: int = 0
    written: int = 0
    spent: bool = False

    def read(self, size: int) -> None:
        """Count ``size`` bytes of source read from the file."""
        self.source += size

    def admit(self, size: int) -> bool:
        """True when a converted record of ``size`` bytes still fits (and count it)."""
        if not self.spent and self.written + size <= GROWTH * self.source + self.slack:
            self.written += size
            return True
        self.spent = True
        return False

    def refusal(self) -> str:
        """The reject detail of a record that did not fit, and of every later one."""
        return (f"the converted records of this file would exceed {GROWTH} x the {self.source} bytes "
                f"read from it + {self.slack}: a value the format copies into every record (a run "
                "header, an eval spec) multiplies the file; this record and the rest are not converted")


@dataclass(slots=True)
class Ctx:
    """Where a source record comes from.

    ``line`` is the record's ``source_line`` (physical line for NDJSON, 1-based element
    index for JSON arrays / samples). ``state`` is shared by all records of one file.
    """

    path: Location  # a local Path or a storage.Remote (both have name/stem/parent)
    line: int
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def stem(self) -> str:
        """File name without its transcript extension(s) (``a.jsonl.gz`` -> ``a``)."""
        name = self.path.name
        for ext in (".jsonl.gz", ".json.gz", ".jsonl", ".json", ".eval", ".traj", ".gz"):
            if name.lower().endswith(ext):
                return name[: -len(ext)]
        return self.path.stem


def require_dict(value: Any, what: str) -> dict[str, Any]:
    """``value`` if it is a JSON object, else AdapterError."""
    if not isinstance(value, dict):
        raise AdapterError(f"{what} is {type(value).__name__}, expected an object")
    return value


def listed(record: Any, key: str, what: str) -> tuple[dict[str, Any], list[Any]]:
    """(record, its non-empty list under ``key``) of a reader whose record is a list of
    messages or steps: a bare list (one conversation dumped as a JSON array,
    :mod:`pipeline.ingest.adapters.bare_lists`) is that list, else a JSON object holding
    it; AdapterError otherwise (``what`` names the list's items)."""
    rec = require_dict({key: record} if isinstance(record, list) else record, "record")
    items = rec.get(key)
    if not isinstance(items, list) or not items:
        raise AdapterError(f"no '{key}' list of {what}")
    return rec, items


def listed_record(rec: dict[str, Any], ctx: Ctx, messages: list[dict[str, Any]], meta: dict[str, Any],
                  *id_keys: str) -> dict[str, Any]:
    """The canonical record of a :func:`listed` conversation: its id from the first of
    ``trajectory_id`` and ``id_keys`` it has, else ``<file stem>:<line>``; its ``suite``
    when it names one."""
    tid = next((rec[k] for k in ("trajectory_id", *id_keys) if k in rec), f"{ctx.stem}:{ctx.line}")
    out: dict[str, Any] = {"trajectory_id": tid, "messages": messages, "meta": meta}
    if "suite" in rec:
        out["suite"] = rec["suite"]
    return out


def require_list(value: Any, what: str) -> list[Any]:
    """``value`` if it is a JSON array, else AdapterError."""
    if not isinstance(value, list):
        raise AdapterError(f"{what} is {type(value).__name__}, expected an array")
    return value


def text_of(content: Any) -> str | None:
    """Plain text of a message content: a string, or the text blocks of a block list.

    Blocks of other kinds (images, reasoning, ...) are dropped. None stays None.
    """
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") == "text":
                text = block.get("text")
                if isinstance(text, str):
                    parts.append(text)
        return "\n".join(parts)
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return content["text"]
    return str(content)


def tool_call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    """One canonical tool call (``arguments`` a JSON string or an object)."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def assistant(text: str | None, calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A canonical assistant message; ``tool_calls`` only when there are calls."""
    return canonical_message("assistant", text, tool_calls=calls or None)


def tool_result(call_id: Any, content: Any, error: Any = None) -> dict[str, Any]:
    """A canonical tool message (``tool_call_id`` kept even when None)."""
    return {"role": "tool", "tool_call_id": call_id, "content": content, "error": error}


class TextParts:
    """Texts of messages built line by line, joined into their ``content`` once at the end:
    ``content + "\\n" + text`` per line copied a message's text again for every part
    (quadratic: 20,000 lines of one Claude Code response took 10 s). A text that comes while
    the content is still empty replaces it, as that concatenation did. ``sep`` joins the
    parts (a line each by default; ``""`` for the pieces of one streamed text)."""

    def __init__(self, sep: str = "\n") -> None:
        self.parts: dict[int, tuple[dict[str, Any], list[str]]] = {}
        self.sep = sep

    def add(self, msg: dict[str, Any], text: str) -> None:
        """One more text of ``msg``."""
        parts = self.parts.setdefault(id(msg), (msg, []))[1]
        if parts and parts[0]:
            parts.append(text)
        else:
            parts[:] = [text]

    def join(self) -> None:
        """Write every message's joined text into its ``content``."""
        for msg, parts in self.parts.values():
            msg["content"] = self.sep.join(parts)


class _Pending:
    """The unanswered calls of one trajectory, oldest first: all of them, by source id and by
    tool name (a call answered is marked, and dropped from the front of a queue when met),
    so each result finds its call in constant time, not by a scan of every unanswered call
    (a record of 20,000 calls before their results took 38 s)."""

    def __init__(self) -> None:
        self.oldest: deque[list[Any]] = deque()
        self.by_source: dict[Any, deque[list[Any]]] = {}
        self.by_name: dict[Any, deque[list[Any]]] = {}

    def add(self, source: Any, new: str, name: Any) -> None:
        """One call: its source id, its canonical id and its tool name."""
        entry = [source, new, name, False]
        self.oldest.append(entry)
        if isinstance(source, str) and source:
            self.by_source.setdefault(source, deque()).append(entry)
        self.by_name.setdefault(_key(name), deque()).append(entry)

    def answer(self, source: Any, hint: Any) -> str | None:
        """The canonical id of the call a result answers (see :func:`repair_call_ids`),
        marked answered; None when no unanswered call fits."""
        if isinstance(source, str) and source:
            match = _first(self.by_source.get(source))
        else:
            match = _first(self.by_name.get(_key(hint))) if hint is not None else None
            match = match or _first(self.oldest)
        if match is None:
            return None
        match[3] = True
        return match[1]


def _key(value: Any) -> Any:
    """``value`` as a dict key that is equal where the values are (a JSON list or object,
    unhashable, by its sorted JSON text)."""
    try:
        hash(value)
    except TypeError:
        return ("json", json.dumps(value, sort_keys=True, default=str))
    return value


def _first(queue: deque[list[Any]] | None) -> list[Any] | None:
    """The oldest unanswered call of a queue (answered ones are dropped from its front)."""
    while queue and queue[0][3]:
        queue.popleft()
    return queue[0] if queue else None


def repair_call_ids(messages: list[dict[str, Any]], hints: list[str | None] | None = None) -> int:
    """Make tool-call ids unique in one trajectory and link results to their calls.

    Sources such as AgentDojo (command-r-plus: ``id: ""``, ``tool_call_id: null``) and
    tau-bench / AgentDojo GPT-4 (one id reused by later calls) need this. Calls keep
    their id when it is a non-empty string not used before; otherwise they get
    ``c<n>`` (no id) or ``<id>#<n>`` (reused id), ``n`` the 1-based call ordinal.
    Each tool message is matched to the oldest still-unanswered call with the same
    source id; with no source id, to the oldest unanswered call of the tool named by
    ``hints[i]`` (the i-th message's tool name), else the oldest unanswered call.
    Unmatched results keep their id (the SQL stage rejects them as orphans).
    Returns how many ids were changed or filled in (kept in ``meta``).
    """
    used: set[str] = set()
    pending = _Pending()
    changed = 0
    ordinal = 0
    for i, msg in enumerate(messages):
        if msg.get("role") == "assistant":
            for call in msg.get("tool_calls") or []:
                if not isinstance(call, dict):
                    continue
                ordinal += 1
                src = call.get("id")
                new = src if isinstance(src, str) and src and src not in used else None
                if new is None:
                    base = f"{src}#" if isinstance(src, str) and src else "c"
                    new = f"{base}{ordinal}"
                    while new in used:
                        new += "'"
                    call["id"] = new
                    changed += 1
                used.add(new)
                fn = call.get("function")
                pending.add(src, new, fn.get("name") if isinstance(fn, dict) else None)
        elif msg.get("role") == "tool":
            hint = hints[i] if hints is not None and i < len(hints) else None
            match = pending.answer(msg.get("tool_call_id"), hint)
            if match is not None and msg.get("tool_call_id") != match:
                msg["tool_call_id"] = match
                changed += 1
    return changed
