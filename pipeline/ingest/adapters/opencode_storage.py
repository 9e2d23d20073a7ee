"""OpenCode's storage folder (``~/.local/share/opencode/storage``, the JSON file store of
releases before the SQLite database) -> the messages of one session.

Layout (``packages/opencode/src/storage``): ``session/<project id>/<session id>.json`` (the
session's info: ``id``, ``projectID``, ``directory``, ``parentID``, ``title``, ``time``),
``message/<session id>/<message id>.json`` (a message's info) and
``part/<message id>/<part id>.json`` (one part); beside them ``session_diff/``, ``todo/``
and ``project/`` (no transcript).

- A session is read through its info file (detected by path: :func:`storage_file`); its
  message files in id order (OpenCode's ids sort by creation), each with its part files in
  id order. The message and part files, and the bookkeeping folders, are read with it
  (``skip`` on their own): give the storage folder, or a session's info file.
- A subagent's session (``parentID``) gets ``parent_call_id``: the parent's ``task`` call
  whose ``state.metadata.sessionId`` names it (:func:`parent_call`).
- A message or part file that cannot be read rejects the session (``malformed_record``,
  the file named); the files of one session past ``8 x max_record_bytes`` are
  ``record_too_large``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pipeline.ingest.adapters._common import Ctx, RecordTooLarge
from pipeline.ingest.adapters._folders import folder_names, read_json_file
from pipeline.ingest.adapters._io import read_head
from pipeline.ingest.adapters._session import SessionAbort, SizeGuard
from pipeline.ingest.adapters._shape import scan
from pipeline.storage import Location

_BOOKKEEPING = {"session_diff", "todo", "project"}


def _json_names(folder: Location) -> list[str]:
    return sorted(n for n in folder_names(folder) if n.endswith(".json"))


def _read(path: Location, limit: int) -> tuple[Any, int]:
    """One stored file (parsed, its size); one over ``limit`` rejects the session ``record_too_large``."""
    try:
        return read_json_file(path, limit)
    except RecordTooLarge as exc:
        raise SessionAbort("record_too_large", str(exc)) from exc


def stored_messages(ctx: Ctx, session_id: str, guard: SizeGuard) -> Iterator[tuple[Any, Any]]:
    """``(message info, parts)`` of the session whose info file ``ctx.path`` is, in order."""
    limit = int(ctx.state.get("max_record_bytes", 32 * 2**20))
    storage = ctx.path.parent.parent.parent
    folder = storage / "message" / session_id
    total = 0
    for name in _json_names(folder):
        info, size = _read(folder / name, limit)
        total += size
        mid = info.get("id") if isinstance(info, dict) and isinstance(info.get("id"), str) else name[:-5]
        parts: list[Any] = []
        part_dir = storage / "part" / mid
        for part_name in _json_names(part_dir):
            part, size = _read(part_dir / part_name, limit)
            total += size
            parts.append(part)
        if total > 8 * limit:
            raise SessionAbort("record_too_large", f"session files larger than {8 * limit} bytes")
        yield info, parts


def parent_call(ctx: Ctx, parent_id: str, session_id: str) -> str | None:
    """The ``callID`` of the ``task`` call of session ``parent_id`` that started subagent
    session ``session_id`` (its ``state.metadata.sessionId``), read from the storage
    folder; None when the parent's files are not there or name no such call."""
    limit = int(ctx.state.get("max_record_bytes", 32 * 2**20))
    storage = ctx.path.parent.parent.parent
    folder = storage / "message" / parent_id
    for name in _json_names(folder):
        part_dir = storage / "part" / name[:-5]
        for part_name in _json_names(part_dir):
            part, _ = _read(part_dir / part_name, limit)
            state = part.get("state") if isinstance(part, dict) and part.get("tool") == "task" else None
            meta = state.get("metadata") if isinstance(state, dict) else None
            if isinstance(meta, dict) and meta.get("sessionId") == session_id and isinstance(part.get("callID"), str):
                return str(part["callID"])
    return None


def storage_file(path: Location) -> tuple[str, str] | None:
    """The detection rule of a file of OpenCode's storage folder, by path (and, for a
    session's info file, its head): ``opencode`` for ``storage/session/<project>/<id>.json``,
    ``skip`` for the message, part and bookkeeping files; None for any other file."""
    if not path.name.lower().endswith(".json"):
        return None
    folder, above = path.parent, path.parent.parent
    if above.name == "storage" and folder.name in _BOOKKEEPING:
        return "skip", f"OpenCode storage/{folder.name}/ file: no transcript"
    if above.parent.name != "storage" or above.name not in ("session", "message", "part"):
        return None
    if above.name != "session":
        return "skip", f"OpenCode storage/{above.name}/ file: read with its session's storage/session/ file"
    keys = scan(read_head(path, 4096).decode("utf-8", "replace")).at(1)
    if "id" in keys and {"projectID", "directory"} & keys and "messages" not in keys:
        return "opencode", "storage/session/<project>/<id>.json: an OpenCode session (its storage folder)"
    return None
