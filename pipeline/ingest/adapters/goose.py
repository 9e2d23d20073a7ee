"""Goose (block/goose) sessions -> one trajectory per session.

Goose writes its messages (``crates/goose/src/conversation/message.rs``) as
``{"id", "role": "user" | "assistant", "created": <unix>, "content": [...], "metadata":
{"userVisible", "agentVisible"}}``; content items are tagged by ``type`` (camelCase):
``text``, ``image``, ``toolRequest`` (``id``, ``toolCall``), ``toolResponse`` (``id``,
``toolResult``), ``toolConfirmationRequest``, ``actionRequired``, ``frontendToolRequest``,
``thinking``, ``redactedThinking``, ``systemNotification`` (older releases:
``contextLengthExceeded``, ``summarizationRequested``, ``conversationCompacted``). A
``toolCall`` / ``toolResult`` is ``{"status": "success", "value": ...}`` or ``{"status":
"error", "error": "<code>: <message>"}``; a success ``toolResult`` value is the MCP
``CallToolResult`` (``{content: [...], isError}``) or, before it, the bare content list.

Layouts read (the reader's ``session`` layout):
- a session file ``~/.local/share/goose/sessions/<id>.jsonl`` (releases before the SQLite
  store): a metadata line (``working_dir``, ``description``, ``schedule_id``,
  ``message_count``, token counts), then one message a line;
- ``goose session export`` / the desktop export: ONE JSON document, the session object
  (``id``, ``working_dir``, ``name``, ..., ``conversation``: the list of messages); also
  the older server's ``{"session_id", "metadata", "messages"}`` and a bare list of messages.

Rules:
- ``toolRequest`` -> a call (tool name kept: ``<extension>__<tool>``), ``arguments`` its
  arguments; a ``toolResponse`` answers the call of its ``id``. ``frontendToolRequest``
  repeats a request (Goose drops it before sending): a call only when no request had its id.
- A request whose ``toolCall`` has ``status: error`` (the model's call Goose could not
  parse) never ran: a call named by its error text (``function name 'X'``) else
  ``invalid_tool_call``, with ``{}`` arguments; its result (Goose's own error response,
  else one added after the call) is ``{"type": "parsing"}`` (failed).
- ``toolResult`` ``status: error`` -> its ``error`` text (the policy's text rules);
  ``isError: true`` -> the result text as error text; a result that is exactly Goose's
  denial (``DECLINED_RESPONSE``: the user refused the confirmation) -> ``{"type":
  "approval"}`` (blocked) only in Goose's shape (one text item without annotations) from a
  built-in tool whose output is local, or which Goose wraps in annotated items itself (the
  developer shell) (``LOCAL_OUTPUT``); from any other tool (web_scrape, scripts, MCP
  extensions: their output can be the sentence) or in another
  shape -> ``{"type": "unknown"}`` (fail closed: scored as executed, as Cline's
  ``UNTRUSTED_OUTPUT``). Confirmation requests are not
  persisted by Goose (counted in ``meta.confirmations`` when they are).
- A message holding an Anthropic block (``tool_use``, ``tool_result``, ...) is refused
  (``AdapterError``: ``--format anthropic``), not dropped with its calls.
- Result text: as the MCP reader reads a ``CallToolResult`` (``text`` items, a ``resource``'s
  text, a ``resource_link``'s uri, else ``structuredContent`` as JSON); images are dropped.
- trajectory_id = the export's ``trajectory_id`` / ``id`` / ``session_id``, else the file
  stem (the session name; a record on a later line: ``<stem>:<line>``); suite = ``--suite``,
  else a record's ``suite``, else the last folder of ``working_dir``, else ``goose``. A line
  holding a whole conversation (``conversation`` / ``messages``) is a trajectory of its own.
- ``meta``: ``format``, ``session_id``, ``working_dir``, ``description``,
  ``schedule_id``, and counts of dropped items (``thinking``, ``notices``, ...).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from pipeline.ingest.adapters._common import AdapterError, Ctx, TextParts, tool_call, tool_result
from pipeline.ingest.adapters._session import DROPPED, SizeGuard
from pipeline.ingest.adapters.claude_stream import folder_suite
from pipeline.ingest.adapters.mcp_messages import content_text
from pipeline.ingest.records import canonical_message

FORMAT = "goose"
# the content item types that mark a Goose message (detection, rule 4b)
CALL_TYPES = {"toolRequest", "toolResponse", "toolConfirmationRequest", "frontendToolRequest"}
# what Goose answers a call the user refused to confirm (DECLINED_RESPONSE, agents/tool_execution.rs)
DECLINED = ("The user has declined to run this tool. DO NOT attempt to call this tool again. "
            "If there are no alternative methods to proceed, clearly explain the situation and STOP.")
# Goose's built-in tools whose output is the local machine's own (no page, no program's or
# server's output): a denial there, in Goose's shape, is Goose's. Any other tool (the shell,
# web_scrape / web_search, scripts, every MCP extension's tool) can print the sentence.
LOCAL_OUTPUT = frozenset({
    "developer__text_editor", "developer__screen_capture", "developer__list_windows", "developer__image_processor",
    "developer__analyze", "computercontroller__pdf_tool", "computercontroller__docx_tool",
    "computercontroller__xlsx_tool", "computercontroller__cache", "platform__read_resource",
    "platform__list_resources", "platform__search_available_extensions", "platform__manage_extensions",
    "memory__remember_memory", "memory__retrieve_memories", "memory__remove_memory_category",
    "memory__remove_specific_memory",
    # the developer shell: Goose itself wraps its output in audience-annotated text items
    # (one for the user, one for the assistant), so a single bare text item, what the
    # denial is, cannot be a program's output
    "developer__shell"})
_NAMED = re.compile(r"function name '([A-Za-z0-9_.-]{1,128})'")
_META_KEYS = ("working_dir", "description", "name", "schedule_id", "session_type", "provider_name",
              "parent_session_id")
# Anthropic block types (its calls and results): a message holding one is no Goose message
ANTHROPIC_ITEMS = {"tool_use", "tool_result", "server_tool_use", "mcp_tool_use", "mcp_tool_result",
                   "web_search_tool_result"}
_NOTICES = {"contextLengthExceeded", "summarizationRequested", "conversationCompacted", "systemNotification"}


def is_message(obj: Any) -> bool:
    """True for a Goose message object (``role`` user/assistant and a ``content`` list)."""
    return isinstance(obj, dict) and obj.get("role") in ("user", "assistant") and isinstance(obj.get("content"), list)


def declined_shape(value: Any) -> bool:
    """True when a success ``toolResult`` value has the shape of Goose's denial: ONE text
    item, no annotations (``Content::text(DECLINED_RESPONSE)``), not ``isError``. Goose's
    developer tools annotate their output (``audience``), an MCP server's reply may not."""
    if isinstance(value, dict):
        if value.get("isError") is True or value.get("structuredContent") is not None:
            return False
        value = value.get("content")
    if not (isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict)):
        return False
    item = value[0]
    return item.get("type") == "text" and item.get("annotations") is None \
        and not set(item) - {"type", "text", "annotations"}


def _result_text(value: Any) -> tuple[str, bool]:
    """(text, isError) of a success ``toolResult`` value: an MCP ``CallToolResult`` or, in
    older releases, its bare content list (text as the MCP reader takes it:
    :func:`.mcp_messages.content_text`)."""
    if isinstance(value, list):
        value = {"content": value}
    if not isinstance(value, dict):
        return "", False
    return content_text(value), value.get("isError") is True


class _Session:
    """The canonical messages of one Goose conversation, built message by message."""

    def __init__(self, guard: SizeGuard) -> None:
        self.guard = guard
        self.messages: list[dict[str, Any]] = []
        self.texts = TextParts()
        self.calls: set[str] = set()
        self.malformed: list[tuple[Any, int]] = []  # (call id, index of its assistant message)
        self.malformed_ids: set[str] = set()
        self.answered: set[str] = set()
        self.names: dict[str, str] = {}  # call id -> tool name
        self.counts: dict[str, int] = {}

    def count(self, key: str) -> None:
        """Count one item of ``key`` that is no step (kept in ``meta``)."""
        self.counts[key] = self.counts.get(key, 0) + 1

    def message(self, msg: dict[str, Any]) -> None:
        """Take one Goose message (``is_message``)."""
        if isinstance(msg.get("metadata"), dict) and msg["metadata"].get("agentVisible") is False:
            self.count("agent_invisible_messages")
        role = msg["role"]
        current: dict[str, Any] | None = None
        for item in msg["content"]:
            kind = item.get("type") if isinstance(item, dict) else None
            if kind == "text" and isinstance(item.get("text"), str):
                if current is None:
                    current = canonical_message(role, None)
                    self.messages.append(current)
                self.guard.add(item["text"])
                self.texts.add(current, item["text"])
            elif kind in ("toolRequest", "frontendToolRequest") and role == "assistant":
                if kind == "frontendToolRequest" and item.get("id") in self.calls:
                    self.count("frontend_requests")
                    continue
                if current is None:
                    current = canonical_message("assistant", None)
                    self.messages.append(current)
                self._call(item, current)
            elif kind == "toolResponse":
                current = None  # text after a result is a message of its own
                self._result(item)
            elif kind in ("toolConfirmationRequest", "actionRequired"):
                self.count("confirmations")
            elif kind in ("thinking", "redactedThinking"):
                self.count("thinking")
            elif kind in _NOTICES:
                self.count("notices")
            elif kind in ANTHROPIC_ITEMS:  # its calls would be lost: refuse, naming the reader
                raise AdapterError(f"a message holds an Anthropic '{kind}' block, no Goose item: "
                                   "Anthropic messages, use --format anthropic")
            else:
                self.count("dropped_items")

    def _call(self, item: dict[str, Any], into: dict[str, Any]) -> None:
        cid = item.get("id")
        call = item.get("toolCall") if isinstance(item.get("toolCall"), dict) else {}
        value = call.get("value") if isinstance(call.get("value"), dict) else {}
        if call.get("status") == "success" and isinstance(value.get("name"), str):
            args = value.get("arguments")
            args = args if isinstance(args, dict) else {}
            self.guard.add(args)
            into.setdefault("tool_calls", []).append(tool_call(cid, value["name"], args))
            if isinstance(cid, str):
                self.names[cid] = value["name"]
        else:  # a call Goose could not parse: it never ran
            error = str(call.get("error") or "the tool call could not be read")[:2000]
            named = _NAMED.search(error)
            into.setdefault("tool_calls", []).append(
                tool_call(cid, named.group(1) if named else "invalid_tool_call", {}))
            self.malformed.append((cid, len(self.messages) - 1))
            if isinstance(cid, str):
                self.malformed_ids.add(cid)
        if isinstance(cid, str):
            self.calls.add(cid)

    def _result(self, item: dict[str, Any]) -> None:
        cid = item.get("id")
        result = item.get("toolResult") if isinstance(item.get("toolResult"), dict) else {}
        if result.get("status") == "success":
            text, is_error = _result_text(result.get("value"))
            error: Any = (text[:2000] or "tool error") if is_error else None
            if text.strip() == DECLINED:
                error = self._declined(cid, result.get("value"), text)
        else:
            text = ""
            error = str(result.get("error") or "tool error")[:2000]
        if isinstance(cid, str) and cid in self.malformed_ids:
            error = {"type": "parsing", "message": str(error or text)[:2000]}
        self.guard.add(text)
        if isinstance(cid, str):
            self.answered.add(cid)
        self.messages.append(tool_result(cid, text[:100_000], error))

    def _declined(self, cid: Any, value: Any, text: str) -> dict[str, Any]:
        """The error of a result whose whole text is Goose's denial: ``approval`` (blocked)
        only in Goose's shape (``declined_shape``) from a tool of ``LOCAL_OUTPUT``; else the
        tool's own output may say it (a page, a server the agent posted to, a program):
        ``unknown`` (fail closed: scored as executed)."""
        name = self.names.get(cid) if isinstance(cid, str) else None
        if declined_shape(value) and name in LOCAL_OUTPUT:
            return {"type": "approval", "message": text[:500]}
        return {"type": "unknown", "message": f"{name or 'the tool'}'s output reads as Goose's denial "
                                              "(not trusted: the tool can print it): " + text.strip()[:200]}

    def finish(self) -> list[dict[str, Any]]:
        """The messages, texts joined; each unanswered malformed call answered right after
        its assistant message (it never ran: ``parsing``)."""
        self.texts.join()
        added: dict[int, list[dict[str, Any]]] = {}
        for cid, at in self.malformed:
            if not (isinstance(cid, str) and cid in self.answered):
                added.setdefault(at, []).append(tool_result(
                    cid, "", {"type": "parsing", "message": "Goose could not read this tool call"}))
        if added:
            self.messages = [m for i, msg in enumerate(self.messages) for m in (msg, *added.get(i, ()))]
        return self.messages


def _listed(obj: Any) -> tuple[dict[str, Any], list[Any]] | None:
    """(session info, messages) of a whole-file export, or None for a line of a session file."""
    if isinstance(obj, list):
        return {}, obj
    for key in ("conversation", "messages"):
        if isinstance(obj.get(key), list):
            info = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
            return {**info, **{k: v for k, v in obj.items() if k not in (key, "metadata")}}, obj[key]
    return None


def _record(info: dict[str, Any], session: _Session, ctx: Ctx, default_id: str,
            dropped: list[int]) -> dict[str, Any]:
    """The canonical record of one conversation (module docstring: id, suite, meta)."""
    sid = next((info[k] for k in ("trajectory_id", "id", "session_id") if isinstance(info.get(k), str) and info[k]),
               default_id)
    meta: dict[str, Any] = {"format": FORMAT, "session_id": sid}
    meta.update({k: info[k] for k in _META_KEYS if isinstance(info.get(k), (str, int))})
    meta.update(session.counts)
    if dropped:
        meta["dropped_lines"] = dropped
    own = info.get("suite") if isinstance(info.get("suite"), str) and info["suite"] else None
    suite = ctx.state.get("suite") or own or folder_suite(info.get("working_dir")) or FORMAT
    return {"trajectory_id": sid, "suite": suite, "meta": meta, "messages": session.finish()}


def convert(items: Iterable[tuple[int, Any]], ctx: Ctx) -> Iterator[tuple[int, dict[str, Any]]]:
    """Convert one Goose session file or export (module docstring). A line (or document)
    holding a whole conversation (an export, a record of messages) is a trajectory of its
    own: id its ``trajectory_id`` / ``id`` / ``session_id``, else the file stem (line 1) or
    ``<stem>:<line>``; the metadata and message lines of a session file are one more."""
    guard = SizeGuard(int(ctx.state.get("max_record_bytes", 32 * 2**20)))
    session = _Session(guard)
    info: dict[str, Any] = {}
    dropped: list[int] = []
    first: int | None = None
    seen = 0
    for number, obj in items:
        seen += 1
        if obj is DROPPED:
            dropped.append(number)
            continue
        if not isinstance(obj, (dict, list)):
            raise AdapterError(f"line {number} is {type(obj).__name__}, expected an object")
        whole = None if is_message(obj) else _listed(obj)
        if whole is not None:
            one = _Session(guard)
            for msg in whole[1]:
                if is_message(msg):
                    one.message(msg)
                else:
                    one.count("skipped_messages")
            yield number, _record(whole[0], one, ctx, ctx.stem if number == 1 else f"{ctx.stem}:{number}", [])
        elif is_message(obj):
            first = number if first is None else first
            session.message(obj)  # type: ignore[arg-type]
        elif seen == 1 and isinstance(obj, dict):
            info, first = obj, number  # the metadata line
        else:
            raise AdapterError(f"line {number} is no Goose message (role user/assistant with a content list)")
    if first is not None or not seen:
        yield first or 1, _record(info, session, ctx, ctx.stem, dropped)
