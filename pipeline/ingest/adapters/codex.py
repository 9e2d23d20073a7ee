"""Codex CLI rollout files (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) -> one trajectory.

A rollout FILE is one trajectory (source_line 1), id = the first ``session_meta``'s
``id`` (a subagent's ``source.subagent.thread_spawn.parent_thread_id`` becomes its
``parent_trajectory_id``). Lines are ``{timestamp, type, payload}`` (2025 files: a bare
``{id, timestamp, instructions}`` line, then bare items and ``{"record_type": "state"}``
markers); only ``response_item`` (the model-visible history) makes steps, ``event_msg``
only supplies exit statuses:
- ``message``: user / assistant / developer (counted as system) text (``input_text`` /
  ``output_text`` blocks; also of list outputs); ``reasoning``,
  ``ghost_snapshot`` and other items are dropped. The ``event_msg`` copies of messages
  are ignored.
- every ``*_call`` item with a ``call_id`` (``function_call``, ``custom_tool_call``,
  ``local_shell_call``, ...) is a tool call; consecutive calls and assistant text with
  no output between them are ONE assistant message (issued together). ``arguments`` is
  a JSON string (kept as is); a custom tool's raw ``input`` becomes ``{"input": ...}``.
  MCP tools are named ``<namespace><name>`` (``mcp__node_repl__js``). Argument shapes
  the catalog reads: legacy ``shell`` ``command`` argv lists become a command string
  (``bash -lc SCRIPT`` -> SCRIPT, else the argv shell-quoted; the list stays in
  ``argv``); ``apply_patch`` gets ``paths_written`` / ``paths_deleted`` parsed from
  the patch's ``*** Add/Update/Delete File:`` and ``*** Move to:`` headers.
- ``web_search_call`` (no ``call_id``) is a ``web_search_call`` call with a synthetic id
  ``web_search_<n>`` and a tool result saying the results are not in the rollout.
- ``*_call_output`` items are tool messages paired by ``call_id``.
Exit status of a call, first that is present: ``event_msg`` ``exec_command_end``
``exit_code`` (same ``call_id``); ``metadata.exit_code`` of a JSON output; ``Process
exited with code N`` in the output text; for an ``exec_command`` whose output says
``Process running with session ID N``, the exit code a later ``write_stdin`` with
``session_id`` N reported. ``patch_apply_end`` ``success: false`` counts as exit 1.
A non-zero exit -> ``{"type": "exit_code", "message": "exit code N: ..."}`` (the
policy's text rules; a program that ran is ``unknown``). An output that opens with
Codex's own refusal text (``exec command rejected by user``, ``patch rejected by
user``) -> ``{"type": "approval"}`` (blocked). A structured output ``{content, success:
false}`` -> its text as the error (text rules).

The items are converted by :mod:`pipeline.ingest.adapters.codex_items` (shared with the
``openai-responses`` format); this module reads a rollout file's lines around them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from pipeline.ingest.adapters._common import AdapterError, Ctx
from pipeline.ingest.adapters._session import SizeGuard, feed_lines
# patch_paths, response_items and the two markers were defined here: still importable from here
from pipeline.ingest.adapters.codex_items import TEXT_BLOCKS, UNSUCCESSFUL, ResponseItems, response_items
from pipeline.ingest.adapters.codex_patch import patch_paths

FORMAT = "codex"
__all__ = ["FORMAT", "TEXT_BLOCKS", "UNSUCCESSFUL", "convert_session", "patch_paths", "response_items"]


class _Rollout(ResponseItems):
    """Builds the canonical messages of one rollout line by line: its ``response_item``
    payloads as :class:`ResponseItems` does, plus the session's meta and the exit
    statuses of ``event_msg`` lines."""

    def __init__(self, guard: SizeGuard) -> None:
        super().__init__(guard)
        self.meta: dict[str, Any] = {}
        self.session_id: str | None = None
        self.parent: str | None = None  # a subagent's parent thread (session_meta.source)

    def line(self, obj: dict[str, Any]) -> None:
        kind, payload = obj.get("type"), obj.get("payload")
        if "payload" not in obj:  # the 2025 bare layout: meta line, then bare items
            if isinstance(kind, str) and (kind == "message" or kind.endswith(("_call", "_call_output"))):
                self.item(obj)
            elif kind is None and "record_type" not in obj and self.session_id is None:
                self._meta(obj)
            return
        if not isinstance(payload, dict):
            return
        if kind == "session_meta" and self.session_id is None:
            self._meta(payload)
        elif kind == "turn_context" and isinstance(payload.get("model"), str):
            self.meta.setdefault("model", payload["model"])
        elif kind == "event_msg":
            self._event(payload)
        elif kind == "response_item":
            self.item(payload)

    def _meta(self, payload: dict[str, Any]) -> None:
        """The first session_meta: the rollout's own (a fork or subagent copies its
        parent's session_meta second)."""
        if isinstance(payload.get("id"), str) and payload["id"]:
            self.session_id = payload["id"]
        for key in ("cwd", "originator", "cli_version", "source", "model_provider"):
            if isinstance(payload.get(key), (str, int)):
                self.meta[key] = payload[key]
        source = payload.get("source")
        try:
            parent = source["subagent"]["thread_spawn"]["parent_thread_id"]  # type: ignore[index]
        except (KeyError, TypeError):
            parent = None
        if isinstance(parent, str) and parent:
            self.parent = parent

    def _event(self, payload: dict[str, Any]) -> None:
        call_id = payload.get("call_id")
        if not isinstance(call_id, str):
            return
        code = payload.get("exit_code")
        if payload.get("type") == "exec_command_end" and isinstance(code, int) and not isinstance(code, bool):
            self.event_exit.setdefault(call_id, code)
        elif payload.get("type") == "patch_apply_end" and payload.get("success") is False:
            self.event_exit.setdefault(call_id, 1)


def convert_session(items: Iterable[tuple[int, Any]], ctx: Ctx) -> Iterator[tuple[int, dict[str, Any]]]:
    """Convert one Codex rollout file (the reader's ``session`` layout)."""
    rollout = _Rollout(SizeGuard(int(ctx.state.get("max_record_bytes", 32 * 2**20))))
    dropped = feed_lines(items, rollout.line)
    if rollout.session_id is None:
        raise AdapterError("no session_meta line with an id: not a Codex rollout")
    rollout.finish()
    meta: dict[str, Any] = {"format": FORMAT, "session_id": rollout.session_id, **rollout.meta}
    if dropped:
        meta["dropped_lines"] = dropped
    suite = ctx.state.get("suite") or "codex"
    record: dict[str, Any] = {"trajectory_id": rollout.session_id, "suite": suite, "meta": meta,
                              "messages": rollout.messages}
    if rollout.parent is not None:
        record["parent_trajectory_id"] = rollout.parent
    yield 1, record
