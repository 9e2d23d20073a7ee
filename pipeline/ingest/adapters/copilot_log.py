"""GitHub Copilot Chat files as sessions: the documents of a ``.json`` / NDJSON file, and
VS Code's ``chatSessions/<uuid>.jsonl`` operation log replayed into its document.

VS Code (1.10x, ``ChatSessionOperationLog``: ``Adapt.LogAdapter`` of
``src/vs/workbench/contrib/chat/common/model/objectMutationLog.ts``) writes a session as a
log of entries, one JSON line each, and reads it back by applying them in order:

- ``{"kind": 0, "v": <document>}`` (Initial): the state is ``v`` (the first line; VS Code
  rewrites the file from one when it compacts it);
- ``{"kind": 1, "k": [path...], "v": <value>}`` (Set): the property at ``k`` (keys and array
  indexes from the root) is replaced by ``v`` (an empty ``k`` changes nothing);
- ``{"kind": 2, "k": [path...], "v"?: [items], "i"?: <n>}`` (Push): the array at ``k`` (made
  when missing) is cut to length ``i`` when ``i`` is given, then ``v``'s items are appended.

The replayed document is converted like an exported one (:mod:`.copilot`); one log is one
trajectory. A path that does not lead to an object or array (a log not written from its
initial line, or damaged) rejects the file, never a partial read. A truncated last line is
dropped (``meta.dropped_lines``, the session rules of :mod:`._session`). A push whose ``i``
lies past the array's end (no log VS Code writes) rejects the file.

Other files: a ``.json`` document (an export, a ``chatSessions/<uuid>.json``) is one
trajectory, a JSON array of them one each, NDJSON lines of them one per line; a document
that does not convert is rejected alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from pipeline.ingest.adapters._common import AdapterError, Ctx
from pipeline.ingest.adapters._io import Problem
from pipeline.ingest.adapters._session import DROPPED
from pipeline.ingest.adapters.copilot import convert

INITIAL, SET, PUSH = 0, 1, 2


def _container(state: Any, path: list[Any], line: int) -> Any:
    """The object or array holding the last key of ``path``."""
    current = state
    for key in path[:-1]:
        current = _step(current, key, line, path)
    if not isinstance(current, (dict, list)):
        raise AdapterError(f"line {line}: path {path} does not lead to an object or array")
    return current


def _step(current: Any, key: Any, line: int, path: list[Any]) -> Any:
    if isinstance(current, dict) and isinstance(key, str) and key in current:
        return current[key]
    if isinstance(current, list) and isinstance(key, int) and not isinstance(key, bool) and 0 <= key < len(current):
        return current[key]
    raise AdapterError(f"line {line}: path {path} names no value of the session (a log not read from its "
                       "initial line?)")


def _put(container: Any, key: Any, value: Any, line: int, path: list[Any]) -> None:
    if isinstance(container, dict) and isinstance(key, str):
        container[key] = value
    elif isinstance(container, list) and isinstance(key, int) and not isinstance(key, bool) \
            and 0 <= key <= len(container):
        if key == len(container):
            container.append(value)
        else:
            container[key] = value
    else:
        raise AdapterError(f"line {line}: cannot set {path}")


def apply_entry(state: Any, entry: dict[str, Any], line: int) -> Any:
    """``state`` after one log entry (module docstring); the new state for an Initial one."""
    kind, path = entry.get("kind"), entry.get("k")
    if kind == INITIAL:
        return entry.get("v")
    if kind not in (SET, PUSH) or not isinstance(path, list):
        raise AdapterError(f"line {line}: not an entry of a chat session log (kind 0/1/2 with a path 'k')")
    if kind == SET:
        if path:
            _put(_container(state, path, line), path[-1], entry.get("v"), line, path)
        return state
    if not path:
        raise AdapterError(f"line {line}: a push with an empty path")
    holder = _container(state, path, line)
    key = path[-1]
    existing = holder.get(key) if isinstance(holder, dict) and isinstance(key, str) else \
        _step(holder, key, line, path) if isinstance(holder, list) else None
    array = existing if isinstance(existing, list) else []
    cut = entry.get("i")
    if cut is not None:
        if not isinstance(cut, int) or isinstance(cut, bool) or not 0 <= cut <= len(array):
            # VS Code cuts only what it wrote (i <= the array's length); a larger `i` would pad
            # the array with holes: no log VS Code writes, and a hostile one's memory
            raise AdapterError(f"line {line}: push at {path} cuts to {cut!r}, outside the array's {len(array)} items")
        del array[cut:]
    items = entry.get("v")
    if isinstance(items, list):
        array.extend(items)
    _put(holder, key, array, line, path)
    return state


def _log(first: int, state: Any, items: Iterator[tuple[int, Any]], dropped: list[int]) -> Any:
    """The document an operation log replays to (its Initial line already read)."""
    for number, obj in items:
        if obj is DROPPED:
            dropped.append(number)
        elif isinstance(obj, dict):
            state = apply_entry(state, obj, number)
        else:
            raise AdapterError(f"line {number} is {type(obj).__name__}, expected a chat session log entry")
    if not isinstance(state, dict):
        raise AdapterError(f"the chat session log from line {first} does not replay to an object")
    return state


def _one(doc: Any, number: int, ctx: Ctx) -> tuple[int, Any]:
    """(line, record or Problem) of one document."""
    try:
        record = convert(doc, Ctx(ctx.path, number, ctx.state))
    except AdapterError as exc:
        return number, Problem(number, "malformed_record", str(exc))
    if ctx.state.get("suite"):
        record["suite"] = ctx.state["suite"]
    return number, record


def convert_session(items: Iterable[tuple[int, Any]], ctx: Ctx) -> Iterator[tuple[int, Any]]:
    """Convert one Copilot Chat file (module docstring): yields ``(line, record | Problem)``."""
    it = iter(items)
    dropped: list[int] = []
    for number, obj in it:
        if obj is DROPPED:
            dropped.append(number)
        elif isinstance(obj, dict) and obj.get("kind") == INITIAL and "v" in obj and "requests" not in obj:
            line, record = _one(_log(number, obj["v"], it, dropped), 1, ctx)
            if isinstance(record, dict):
                record["meta"]["layout"] = "operation log"
                if dropped:
                    record["meta"]["dropped_lines"] = dropped
            yield line, record
            return
        elif isinstance(obj, dict) and obj.get("kind") in (SET, PUSH) and "k" in obj and "requests" not in obj:
            raise AdapterError(f"line {number} is a chat session log entry, but the log's initial (kind 0) line "
                               "is missing: it cannot be replayed (give the whole chatSessions .jsonl file)")
        elif isinstance(obj, list):
            for k, doc in enumerate(obj, 1):
                yield _one(doc, k, ctx)
        else:
            yield _one(obj, number, ctx)
