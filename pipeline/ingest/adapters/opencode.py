"""OpenCode (sst/opencode) sessions -> canonical trajectories, from three layouts (the
reader's ``session`` layout: the whole file is handed over as ``(line, value)`` pairs).

1. ``opencode export <session>`` (a JSON document, ``packages/opencode/src/cli/cmd/export.ts``):
   ``{"info": <session>, "messages": [{"info": <message>, "parts": [...]}], "todos"?}``
   -> one trajectory, id = ``info.id``.
2. ``opencode run --format json`` (``cli/cmd/run.ts``), one event a line:
   ``{"type", "timestamp", "sessionID", "part"}`` with type ``step_start``, ``step_finish``,
   ``text`` (a text part once finished), ``reasoning`` (``--thinking``) and ``tool_use`` (a
   tool part once ``completed`` or ``error``), ``{"type": "error", "error"}``, and (later
   releases) ``{"type": "done", "reason", "rejected"}`` -> one trajectory per
   ``sessionID`` (runs appended to one log are one each; ``--session`` continues one).
   The log holds the run's own session only (a subagent's parts are not printed) and no
   user prompt; parts are grouped into messages by ``part.messageID`` in the order the
   messages first appear, and a part printed twice (same ``part.id``) is read once, its
   last version kept.
3. The storage folder (``~/.local/share/opencode/storage``): a session is read through its
   file ``session/<project id>/<session id>.json``
   (:mod:`pipeline.ingest.adapters.opencode_storage`).

Parts -> messages: :mod:`pipeline.ingest.adapters.opencode_parts`. suite = ``--suite``,
else the last folder name of the session's ``directory`` (else an assistant message's
``path.cwd``), else ``default``. A session with a ``parentID`` (a subagent's, started by a
``task`` call) has ``parent_trajectory_id`` (read from the storage folder, also
``parent_call_id``: that ``task`` call). ``meta``: ``format`` (``opencode``),
``output_format`` (``export`` | ``run-json`` | ``storage`` | ``database``, the SQLite store:
:mod:`pipeline.ingest.adapters.opencode_db`), ``session_id``, ``title``,
``directory``, ``models``, ``dropped_parts``, ``message_errors``; a run log's ``errors``
(``error`` events) and ``rejected`` (permissions ``opencode run`` auto-rejected).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from pipeline.ingest.adapters._common import AdapterError, Ctx
from pipeline.ingest.adapters._session import SizeGuard, object_lines, told_by_head
from pipeline.ingest.adapters.opencode_parts import Builder
from pipeline.ingest.adapters.opencode_storage import parent_call, stored_messages

FORMAT = "opencode"
# event types of `opencode run --format json`
RUN_TYPES = {"step_start", "step_finish", "text", "reasoning", "tool_use", "error", "done"}
_SUITE = re.compile(r"[^A-Za-z0-9._-]+")


def is_run_event(obj: Any) -> bool | None:
    """True for an ``opencode run --format json`` event, False for another object (an
    export or a stored session's info), None for a value that does not say."""
    if not isinstance(obj, dict):
        return None
    return obj.get("type") in RUN_TYPES and isinstance(obj.get("sessionID"), str)


def suite_of(directory: Any) -> str | None:
    """The last folder name of a session's directory (a project name), or None."""
    if not isinstance(directory, str):
        return None
    name = _SUITE.sub("-", directory.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1]).strip("-.")
    return name[:100] or None


def record(session: dict[str, Any], messages: Iterable[tuple[Any, Any]], ctx: Ctx, layout: str,
           guard: SizeGuard, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The canonical record of one session: its ``info`` (``session``) and its messages as
    ``(info, parts)`` pairs, read as ``layout``."""
    builder = Builder(guard)
    models: set[str] = set()
    cwd: Any = None
    for info, parts in messages:
        builder.message(info, parts)
        if isinstance(info, dict):
            if isinstance(info.get("modelID"), str):
                models.add(info["modelID"])
            path = info.get("path")
            if cwd is None and isinstance(path, dict) and isinstance(path.get("cwd"), str):
                cwd = path["cwd"]
    sid = session.get("id") if isinstance(session.get("id"), str) and session.get("id") else ctx.stem
    meta: dict[str, Any] = {"format": FORMAT, "output_format": layout, "session_id": sid}
    for key in ("title", "directory"):
        if isinstance(session.get(key), str):
            meta[key] = session[key]
    if models:
        meta["models"] = sorted(models)
    meta.update(builder.finish())
    meta.update(extra or {})
    out: dict[str, Any] = {"trajectory_id": sid}
    if isinstance(session.get("parentID"), str) and session["parentID"]:
        out["parent_trajectory_id"] = session["parentID"]
    suite = ctx.state.get("suite") or suite_of(session.get("directory")) or suite_of(cwd) or "default"
    out.update({"suite": suite, "meta": meta, "messages": builder.messages})
    return out


def convert(items: Iterable[tuple[int, Any]], ctx: Ctx) -> Iterator[tuple[int, dict[str, Any]]]:
    """An ``opencode`` file: a run log (:func:`convert_run`), an export, or a stored
    session's info file (its messages read from the storage folder)."""
    run, lines = told_by_head(items, is_run_event)
    if run:
        yield from convert_run(lines, ctx)
        return
    guard = SizeGuard(int(ctx.state.get("max_record_bytes", 32 * 2**20)))
    dropped: list[int] = []
    found = False
    for number, doc in object_lines(lines, dropped):
        found = True
        if isinstance(doc.get("messages"), list):
            session = doc.get("info") if isinstance(doc.get("info"), dict) else {}
            pairs = ((m.get("info"), m.get("parts")) if isinstance(m, dict) else (None, None)
                     for m in doc["messages"])
            yield number, record(session, pairs, ctx, "export", guard)
        elif isinstance(doc.get("id"), str) and "messages" not in doc:
            out = record(doc, stored_messages(ctx, doc["id"], guard), ctx, "storage", guard)
            if "parent_trajectory_id" in out:
                out["parent_call_id"] = parent_call(ctx, out["parent_trajectory_id"], out["trajectory_id"])
            yield number, out
        else:
            raise AdapterError(f"line {number}: neither an OpenCode export ('info' + 'messages') nor a session")
    if not found:  # an empty file, or one cut inside its only line
        raise AdapterError("no complete JSON object: not an OpenCode export, run log or session file")


class _Run:
    """One session of a run log: its messages (id -> parts by part id), in order."""

    def __init__(self, first_line: int) -> None:
        self.first_line = first_line
        self.messages: dict[str, dict[str, dict[str, Any]]] = {}
        self.errors: list[str] = []
        self.rejected: list[str] = []
        self.steps = 0

    def event(self, obj: dict[str, Any]) -> None:
        """Take one event of this session."""
        kind = obj.get("type")
        if kind == "error":
            err = obj.get("error") if isinstance(obj.get("error"), dict) else {}
            data = err.get("data") if isinstance(err.get("data"), dict) else {}
            self.errors.append(str(data.get("message") or err.get("name") or "error"))
        elif kind == "done" and isinstance(obj.get("rejected"), list):
            self.rejected += [str(r) for r in obj["rejected"]]
        part = obj.get("part")
        if not isinstance(part, dict):
            return
        self.steps += kind == "step_start"
        mid = part.get("messageID") if isinstance(part.get("messageID"), str) else ""
        parts = self.messages.setdefault(mid, {})
        pid = part.get("id") if isinstance(part.get("id"), str) and part.get("id") else f"#{len(parts)}"
        parts[pid] = part  # a part printed again replaces its earlier version, in place


def convert_run(items: Iterable[tuple[int, Any]], ctx: Ctx) -> Iterator[tuple[int, dict[str, Any]]]:
    """Convert one ``opencode run --format json`` log (module docstring, layout 2)."""
    guard = SizeGuard(int(ctx.state.get("max_record_bytes", 32 * 2**20)))
    runs: dict[str, _Run] = {}
    dropped: list[int] = []
    current: str | None = None
    for number, obj in object_lines(items, dropped):
        sid = obj.get("sessionID")
        sid = sid if isinstance(sid, str) and sid else current or ctx.stem
        current = sid
        runs.setdefault(sid, _Run(number)).event(obj)
    if not runs:
        raise AdapterError("no event line: not an opencode run log")
    for sid, run in sorted(runs.items(), key=lambda kv: kv[1].first_line):
        extra: dict[str, Any] = {"steps": run.steps}
        if run.errors:
            extra["errors"] = run.errors
        if run.rejected:
            extra["rejected"] = run.rejected
        if dropped:
            extra["dropped_lines"] = dropped
        pairs = (({"id": mid, "role": "assistant"}, list(parts.values())) for mid, parts in run.messages.items())
        yield run.first_line, record({"id": sid}, pairs, ctx, "run-json", guard, extra)
