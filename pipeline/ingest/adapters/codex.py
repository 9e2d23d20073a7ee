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
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from pipeline.ingest.adapters._common import AdapterError, Ctx, TextParts, text_of, tool_call, tool_result
from pipeline.ingest.adapters._session import SizeGuard, feed_lines
from pipeline.ingest.argv import argv_command
from pipeline.ingest.records import canonical_message

FORMAT = "codex"
# header lines of exec_command / write_stdin outputs (a program printing the words
# further down is not its exit status)
_EXITED = re.compile(r"(?m)^Process exited with code (-?\d+)\s*$")
_RUNNING = re.compile(r"(?m)^Process running with session ID (\d+)\s*$")
# the name is the rest of its line, its trailing blanks stripped in Python: a lazy `(.+?)\s*$`
# tried every split of a long line (quadratic: 100,000 blanks took over a minute)
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.*)$|^\*\*\* Move to: (.*)$", re.M)
_REFUSED = re.compile(r"\A\s*(exec command|patch|command) (was )?rejected by (the )?user", re.I)
UNSUCCESSFUL = -(2**31)  # marker: a structured output with success: false (no exit code)
# the text blocks of a message's content or a tool output list: Codex writes the Responses
# API's input_text / output_text (text_of reads only "text" blocks)
TEXT_BLOCKS = ("text", "input_text", "output_text")


def _text(content: Any) -> str:
    """The text of a message ``content`` or an output list: a string, or its text blocks."""
    if not isinstance(content, list):
        return text_of(content) or ""
    return "\n".join(b if isinstance(b, str) else b["text"] for b in content
                     if isinstance(b, str) or (isinstance(b, dict) and b.get("type") in TEXT_BLOCKS
                                               and isinstance(b.get("text"), str)))


def patch_paths(patch: str) -> tuple[list[str], list[str]]:
    """(written, deleted) file paths named by an apply_patch envelope."""
    written: list[str] = []
    deleted: list[str] = []
    for m in _PATCH_FILE.finditer(patch):
        name = (m.group(2) if m.group(1) else m.group(3)).rstrip()
        if not name:
            continue
        (deleted if m.group(1) == "Delete" else written).append(name)
    return list(dict.fromkeys(written)), list(dict.fromkeys(deleted))


def _arguments(name: str, payload: dict[str, Any]) -> Any:
    if "arguments" in payload:
        raw = payload["arguments"]
        if name in ("shell", "container.exec", "local_shell") and isinstance(raw, str):
            try:
                args = json.loads(raw)
            except ValueError:
                return raw  # unparseable arguments: the SQL stage decides
            if isinstance(args, dict) and isinstance(args.get("command"), list):
                return {**args, "command": argv_command(args["command"]), "argv": args["command"]}
        return raw
    if "input" in payload:
        raw = payload["input"]
        args: dict[str, Any] = {"input": raw}
        if name == "apply_patch" and isinstance(raw, str):
            args["paths_written"], args["paths_deleted"] = patch_paths(raw)
        return args
    action = payload.get("action")
    if isinstance(action, dict):  # local_shell_call {action: {type: exec, command: [...]}}
        command = action.get("command")
        return {**action, "command": argv_command(command)} if isinstance(command, list) else action
    return {}


def _output_text(output: Any) -> tuple[str, int | None]:
    """(text, metadata.exit_code) of a ``*_call_output`` payload's ``output``."""
    if isinstance(output, dict):  # {content, success} in some versions
        text = output.get("content")
        text = text if isinstance(text, str) else _text(text)
        return text, (UNSUCCESSFUL if output.get("success") is False else None)
    if isinstance(output, list):
        return _text(output), None
    text = output if isinstance(output, str) else ""
    if text.startswith("{") and '"exit_code"' in text[-400:]:
        try:
            doc = json.loads(text)
        except ValueError:
            return text, None
        meta = doc.get("metadata") if isinstance(doc, dict) else None
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        if isinstance(code, int) and not isinstance(code, bool):
            return (doc["output"] if isinstance(doc.get("output"), str) else text), code
    return text, None


class _Rollout:
    """Builds the canonical messages of one rollout line by line."""

    def __init__(self, guard: SizeGuard) -> None:
        self.guard = guard
        self.messages: list[dict[str, Any]] = []
        self.texts = TextParts()  # joined into the assistant messages by finish()
        self.open: dict[str, Any] | None = None  # the assistant message calls join
        self.meta: dict[str, Any] = {}
        self.session_id: str | None = None
        self.calls: dict[str, str] = {}  # call_id -> tool name
        self.results: dict[str, dict[str, Any]] = {}  # call_id -> tool message
        self.exit_codes: dict[str, int] = {}  # call_id -> exit code from the output
        self.event_exit: dict[str, int] = {}  # call_id -> exit code from exec_command_end
        self.running: dict[str, str] = {}  # exec session id -> call_id of the original call
        self.stdin_session: dict[str, str] = {}  # write_stdin call_id -> exec session id
        self.searches = 0
        self.parent: str | None = None  # a subagent's parent thread (session_meta.source)

    def line(self, obj: dict[str, Any]) -> None:
        kind, payload = obj.get("type"), obj.get("payload")
        if "payload" not in obj:  # the 2025 bare layout: meta line, then bare items
            if isinstance(kind, str) and (kind == "message" or kind.endswith(("_call", "_call_output"))):
                self._item(obj)
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
            self._item(payload)

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

    def _assistant(self) -> dict[str, Any]:
        if self.open is None:
            self.open = canonical_message("assistant", None)
            self.messages.append(self.open)
        return self.open

    def _item(self, p: dict[str, Any]) -> None:
        kind = p.get("type")
        if kind == "message":
            text = _text(p.get("content"))
            self.guard.add(text)
            if p.get("role") == "assistant":
                self.texts.add(self._assistant(), text)
                return
            self.open = None
            role = p.get("role") if p.get("role") in ("user", "system") else "developer"
            self.messages.append(canonical_message(role, text))
        elif kind == "web_search_call":
            self.searches += 1
            call_id = f"web_search_{self.searches}"
            action = p.get("action") if isinstance(p.get("action"), dict) else {}
            self._assistant().setdefault("tool_calls", []).append(tool_call(call_id, "web_search_call", action))
            self.open = None
            self.messages.append(tool_result(call_id, "(web search results are not recorded in the rollout)"))
        elif isinstance(kind, str) and kind.endswith("_call_output"):
            self.open = None
            self._output(p)
        elif isinstance(kind, str) and kind.endswith("_call") and isinstance(p.get("call_id"), str):
            name = p.get("name") if isinstance(p.get("name"), str) else kind.removesuffix("_call")
            if isinstance(p.get("namespace"), str):
                name = p["namespace"] + name
            args = _arguments(name, p)
            self.guard.add(args)
            self.calls[p["call_id"]] = name
            self._assistant().setdefault("tool_calls", []).append(tool_call(p["call_id"], name, args))
            if name == "write_stdin" and isinstance(args, str):
                try:
                    session = json.loads(args).get("session_id")
                except (ValueError, AttributeError):
                    session = None
                if session is not None:
                    self.stdin_session[p["call_id"]] = str(session)

    def _output(self, p: dict[str, Any]) -> None:
        call_id = p.get("call_id")
        text, code = _output_text(p.get("output"))
        self.guard.add(text)
        msg = tool_result(call_id, text)
        self.messages.append(msg)
        if not isinstance(call_id, str):
            return
        self.results.setdefault(call_id, msg)
        header = text[:2000].split("\nOutput:\n", 1)[0]
        if code is None and (m := _EXITED.search(header)):
            code = int(m.group(1))
        if code is not None:
            self.exit_codes.setdefault(call_id, code)
        if (m := _RUNNING.search(header)) and self.calls.get(call_id) != "write_stdin":
            self.running.setdefault(m.group(1), call_id)
        session = self.stdin_session.get(call_id)
        original = self.running.get(session) if session is not None else None
        if original is not None and code is not None:
            self.exit_codes.setdefault(original, code)  # the long-running call's own exit

    def finish(self) -> None:
        """Join the assistant texts; set every tool message's error from the exit statuses
        (module docstring order)."""
        self.texts.join()
        for call_id, msg in self.results.items():
            content = msg.get("content") or ""
            if _REFUSED.match(content):
                msg["error"] = {"type": "approval", "message": content[:500]}
                continue
            code = self.event_exit.get(call_id, self.exit_codes.get(call_id))
            if code == UNSUCCESSFUL:  # the tool said it failed: its text goes to the text rules
                msg["error"] = content[:2000] or "tool output says success: false"
            elif code is not None and code != 0:
                msg["error"] = {"type": "exit_code", "message": f"exit code {code}: {content[:300]}"}


def response_items(items: Iterable[Any], guard: SizeGuard) -> list[dict[str, Any]]:
    """Canonical messages of a list of OpenAI Responses API items (what a rollout's
    ``response_item`` lines hold: ``message``, ``*_call``, ``*_call_output``,
    ``web_search_call``), converted and given exit statuses as a rollout's are."""
    rollout = _Rollout(guard)
    for item in items:
        if isinstance(item, dict):
            rollout._item(item)
    rollout.finish()
    return rollout.messages


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
