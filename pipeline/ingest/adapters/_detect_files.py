"""Detection by a file's path (rules 1b, 1c of :mod:`._detect`: the files of an OpenHands V1
conversation folder, a Strands Agents session's files) and the byte-level reads detection
and the reader share (a file's first bytes, its byte order mark, pretty-printed NDJSON)."""

from __future__ import annotations

from pipeline.ingest.adapters._io import BOM, read_head
from pipeline.ingest.adapters._shape import scan
from pipeline.ingest.adapters.bedrock import session_bookkeeping, session_message_index
from pipeline.ingest.adapters.openhands_v1 import event_index
from pipeline.storage import Location

SNIFF_BYTES = 256 * 1024


def openhands_v1_file(path: Location) -> tuple[str, str] | None:
    """Rule 1b: the files of an OpenHands V1 conversation folder, by name: its first event
    file ``events/event-00000-<id>.json`` is the conversation (``openhands``), its other
    event files and a ``base_state.json`` holding ``agent`` are read with it (``skip``)."""
    index = event_index(path.name)
    if index is not None and path.parent.name == "events":
        if index == 0:
            return "openhands", "events/event-00000-<id>.json: an OpenHands V1 conversation (its events/ folder)"
        return "skip", "OpenHands V1 event file: read with its conversation's events/event-00000-*.json"
    if path.name == "base_state.json" and "agent" in scan(read_head(path, SNIFF_BYTES).decode("utf-8", "replace")).at(1):
        return "skip", "OpenHands V1 conversation state: read with the conversation's events/"
    return None


def strands_file(path: Location) -> tuple[str, str] | None:
    """Rule 1c: a Strands Agents session's files, by name and head: a message file
    (``message`` + ``message_id``) is the conversation at index 0 (``bedrock``; a later one
    is read with it: ``skip``, unless its folder has no ``message_0.json``, which then
    rejects as a record of its own); ``session.json`` (``session_id`` + ``session_type``) and
    ``agent.json`` (``agent_id``) without ``messages`` are bookkeeping (``skip``)."""
    index = session_message_index(path)
    bookkeeping = index is None and session_bookkeeping(path)
    if index is None and not bookkeeping:
        return None
    keys = scan(read_head(path, 4096).decode("utf-8", "replace")).at(1)
    if bookkeeping:
        marks = {"session_id", "session_type"} if path.name == "session.json" else {"agent_id"}
        return ("skip", "Strands session.json / agent.json: no messages (read from the agent's messages/)") \
            if marks <= keys and "messages" not in keys else None
    if not {"message", "message_id"} <= keys:
        return None
    if index == 0:
        return "bedrock", "agents/agent_<id>/messages/message_0.json: a Strands Agents session (its messages/ folder)"
    if (path.parent / "message_0.json").exists():
        return "skip", "Strands session message file: read with its agent's messages/message_0.json"
    return None


def first_bytes(path: Location, size: int, ndjson: bool) -> tuple[bytes, bool]:
    """(the first ``size`` bytes of a file without a BOM, or of an NDJSON file its first
    non-blank line within them; whether the document or that line goes on past them)."""
    head = read_head(path, size)
    full = len(head) == size
    if head.startswith(BOM):
        head = head[len(BOM):]
    if not ndjson:
        return head, full
    lines = head.split(b"\n")
    first = next((i for i, ln in enumerate(lines) if ln.strip()), len(lines) - 1)
    return lines[first], full and first == len(lines) - 1


def utf16(path: Location) -> str | None:
    """``UTF-16LE`` / ``UTF-16BE`` when the file opens with that byte order mark, else None."""
    head = read_head(path, 2)
    return {b"\xff\xfe": "UTF-16LE", b"\xfe\xff": "UTF-16BE"}.get(head)


def pretty_printed(path: Location) -> bool:
    """True when a file named as NDJSON holds pretty-printed JSON: its first non-blank line
    is ``[`` or ``{`` alone (an indented array, or indented records one after another).
    Read one line at a time, each of its lines was a ``malformed_record`` of its own."""
    name = path.name.lower()
    if name.endswith((".json", ".json.gz", ".traj", ".eval")):
        return False
    head = read_head(path, 4096)
    if head.startswith(BOM):
        head = head[len(BOM):]
    first = next((ln.strip() for ln in head.split(b"\n") if ln.strip()), b"")
    return first in (b"[", b"{")

