"""OpenHands V1 (``openhands-sdk``, github.com/OpenHands/software-agent-sdk) events ->
canonical messages, and a persisted V1 conversation folder -> one canonical record.

An event is a JSON object with a ``kind`` discriminator (the pydantic class name; files are
written with ``model_dump_json(exclude_none=True)``, so absent fields were None):

- ``SystemPromptEvent`` (``system_prompt`` / ``dynamic_context``: ``{type: text, text}``) ->
  system; ``tools`` dropped.
- ``MessageEvent`` (``source``, ``llm_message {role, content}``) -> a message of that role
  (``content`` a string or text blocks; ``extended_content``, images, reasoning dropped).
- ``ActionEvent`` (``tool_name``, ``tool_call_id``, ``action {kind, ...}``, ``thought``
  text blocks, ``llm_response_id``) -> a tool call ``tool_call_id`` named ``tool_name``,
  its arguments the ``action`` fields but ``kind`` (an ``MCPToolAction``'s ``data``; an
  action that did not validate is absent: the raw ``tool_call.arguments`` are taken). Consecutive ActionEvents of one
  ``llm_response_id`` are ONE assistant message (parallel calls), the first one's thought
  its text. ``file_editor`` / ``str_replace_editor``: ``view`` -> ``read``, other commands
  -> ``edit`` (the catalog names of OpenHands' editor actions). ``finish`` and ``think``
  are assistant text (their observations are dropped).
- ``ObservationEvent`` (``tool_call_id``, ``observation {kind, content, is_error, ...}``) ->
  the tool result. Errors: ``timeout: true`` or ``exit_code`` -1 (soft timeout, still
  running) -> ``{type: timeout}``; other non-zero ``exit_code`` -> ``{type: exit_code}``;
  ``is_error: true`` (or an early SDK's ``error`` text) -> the content as error text.
- ``UserRejectObservation`` (``rejection_reason``, user or hook) -> ``{type: approval}``
  (blocked).
- ``AgentErrorEvent`` (``tool_call_id``, ``error``) -> the call's result: ``{type:
  parsing}`` when its ActionEvent has no ``action`` (the arguments did not validate: it
  never ran), else the error as text. One answering no call is counted in
  ``meta.agent_errors`` (a scaffold error, not a result).
- ``ACPToolCallEvent`` (a call an external ACP agent ran: free-text ``title``, no tool name)
  rejects the record ``malformed_record``: dropped, its executed action would be lost.
- everything else (``Condensation*``, ``ConversationStateUpdateEvent``, ``PauseEvent``,
  ``InterruptEvent``, ``TokenEvent``, ``ConversationErrorEvent``, ...) is bookkeeping,
  counted in ``meta.dropped_events``.

A conversation folder is ``<persistence dir>/<conversation id hex>/`` holding
``base_state.json`` (``id``, ``agent.llm.model``, ``execution_status``) and
``events/event-<index, 5+ digits>-<event id>.json``, one event per file. Its first event
file (index 0) stands for the whole conversation: the events are read in index order up
to the first gap (as the SDK's EventLog does), every branch included.
trajectory_id: ``base_state.json``'s ``id``, else the conversation folder's name.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from pipeline.ingest.adapters._common import AdapterError, Ctx, RecordTooLarge, assistant, tool_call, tool_result
from pipeline.ingest.adapters._folders import folder_names, read_json_file
from pipeline.ingest.records import canonical_message
from pipeline.storage import Location

FORMAT = "openhands"
EVENT_NAME = re.compile(r"^event-(?P<idx>\d{5,})-(?P<event_id>[0-9a-fA-F\-]{8,})\.json$")
TEXT_TOOLS = {"finish", "think"}
EDITOR_TOOLS = {"file_editor", "str_replace_editor"}
CALL_EVENTS = {"ObservationEvent", "UserRejectObservation", "AgentErrorEvent"}


def is_v1_event(value: Any) -> bool:
    """An OpenHands V1 event: an object with a string ``kind`` and no V0 ``action`` /
    ``observation`` string."""
    return isinstance(value, dict) and isinstance(value.get("kind"), str) \
        and not isinstance(value.get("action"), str) and not isinstance(value.get("observation"), str)


def event_index(name: str) -> int | None:
    """The index of an ``events/`` file name (``event-00003-<id>.json`` -> 3), else None."""
    m = EVENT_NAME.match(name)
    return int(m.group("idx")) if m else None


def _text(content: Any) -> str:
    """Text of a string or of ``{type: text, text}`` blocks (other blocks dropped)."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return content["text"] if isinstance(content.get("text"), str) else ""
    if isinstance(content, list):
        return "\n".join(t for t in (_text(b) for b in content if not isinstance(b, str)) if t)
    return ""


def _arguments(event: dict[str, Any]) -> tuple[str, Any]:
    """(tool name, arguments) of an ActionEvent."""
    name = event.get("tool_name")
    action = event.get("action")
    if isinstance(action, dict) and action.get("kind") == "MCPToolAction" and isinstance(action.get("data"), dict):
        args: Any = action["data"]  # an MCP tool's arguments, wrapped by the SDK
    elif isinstance(action, dict):
        args = {k: v for k, v in action.items() if k != "kind" and v is not None}
    else:  # not executable: the model's own arguments (they did not validate)
        call = event.get("tool_call") if isinstance(event.get("tool_call"), dict) else {}
        fn = call.get("function") if isinstance(call.get("function"), dict) else call
        args = fn.get("arguments", {})
        name = name if isinstance(name, str) else fn.get("name")
    if not isinstance(name, str) or not name:
        raise AdapterError(f"ActionEvent {event.get('id')!r} has no tool_name")
    if name in EDITOR_TOOLS and isinstance(args, dict):
        name = "read" if args.get("command") == "view" else "edit"
    return name, args


def _observation_error(obs: dict[str, Any], content: str) -> Any:
    code = obs.get("exit_code")
    code = code if isinstance(code, int) and not isinstance(code, bool) else None
    if obs.get("timeout") is True or code == -1:
        return {"type": "timeout", "message": f"timed out: {content[:200]}"}
    if code is not None and code != 0:
        return {"type": "exit_code", "message": f"exit code {code}: {content[:200]}"}
    if isinstance(obs.get("error"), str) and obs["error"]:  # early SDK: error text beside output
        return obs["error"]
    if obs.get("is_error") is True or obs.get("error") is True:
        return content or "error"
    return None


class _Converter:
    """One event list -> canonical messages (module docstring)."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.calls: dict[str, dict[str, Any]] = {}  # tool_call_id -> its ActionEvent
        self.text_calls: set[str] = set()
        self.dropped: Counter[str] = Counter()
        self.agent_errors = 0
        self.models: set[str] = set()
        self.open_response: Any = None  # llm_response_id of the last assistant message with calls

    def add(self, i: int, event: Any) -> None:
        """Convert one event."""
        if not is_v1_event(event):
            raise AdapterError(f"event[{i}] is not an OpenHands V1 event (no 'kind')")
        kind = event["kind"]
        handler = getattr(self, f"_{kind}", None)
        if kind != "ActionEvent":
            self.open_response = None
        if handler is None:
            self.dropped[kind] += 1
        else:
            handler(event)

    def _SystemPromptEvent(self, event: dict[str, Any]) -> None:  # noqa: N802 - named after the kind
        text = "\n".join(t for t in (_text(event.get("system_prompt")), _text(event.get("dynamic_context"))) if t)
        self.messages.append(canonical_message("system", text))

    def _MessageEvent(self, event: dict[str, Any]) -> None:  # noqa: N802
        llm = event.get("llm_message") if isinstance(event.get("llm_message"), dict) else {}
        role = llm.get("role")
        if role not in ("system", "user", "assistant"):
            role = "assistant" if event.get("source") == "agent" else "user"
        self.messages.append(canonical_message(role, _text(llm.get("content"))))

    def _ActionEvent(self, event: dict[str, Any]) -> None:  # noqa: N802
        call_id = event.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise AdapterError(f"ActionEvent {event.get('id')!r} has no tool_call_id")
        name, args = _arguments(event)
        thought = _text(event.get("thought"))
        if name in TEXT_TOOLS:
            self.text_calls.add(call_id)
            said = _text(args.get("message") or args.get("thought")) if isinstance(args, dict) else ""
            self.messages.append(assistant("\n".join(dict.fromkeys(t for t in (thought, said) if t)) or None))
            self.open_response = None
            return
        self.calls[call_id] = event
        call = tool_call(call_id, name, args)
        response = event.get("llm_response_id")
        last = self.messages[-1] if self.messages else None
        if response is not None and response == self.open_response and last and last.get("tool_calls"):
            last["tool_calls"].append(call)  # another call of the same model response
        else:
            self.messages.append(assistant(thought or None, [call]))
        self.open_response = response

    def _ObservationEvent(self, event: dict[str, Any]) -> None:  # noqa: N802
        call_id = event.get("tool_call_id")
        if call_id in self.text_calls:
            return
        obs = event.get("observation") if isinstance(event.get("observation"), dict) else {}
        content = _text(obs.get("content")) or _text(obs.get("output"))
        self.messages.append(tool_result(call_id, content, _observation_error(obs, content)))

    def _UserRejectObservation(self, event: dict[str, Any]) -> None:  # noqa: N802
        reason = event.get("rejection_reason") if isinstance(event.get("rejection_reason"), str) else ""
        source = event.get("rejection_source") if isinstance(event.get("rejection_source"), str) else "user"
        error = {"type": "approval", "message": f"rejected by {source}: {reason or 'rejected'}"}
        self.messages.append(tool_result(event.get("tool_call_id"), f"Action rejected: {reason}", error))

    def _ACPToolCallEvent(self, event: dict[str, Any]) -> None:  # noqa: N802
        raise AdapterError("ACPToolCallEvent: calls an ACP server ran (title/raw_input, no tool name) are not read; "
                           "dropping them would hide executed actions")

    def _AgentErrorEvent(self, event: dict[str, Any]) -> None:  # noqa: N802
        call_id = event.get("tool_call_id")
        action = self.calls.get(call_id) if isinstance(call_id, str) else None
        text = event.get("error") if isinstance(event.get("error"), str) else "agent error"
        if action is None:
            self.agent_errors += 1  # answers no call: a scaffold error, not a tool result
            return
        error: Any = {"type": "parsing", "message": text} if not isinstance(action.get("action"), dict) else text
        self.messages.append(tool_result(call_id, text, error))


def convert_events(events: list[Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(canonical messages, meta additions) of a V1 event list."""
    conv = _Converter()
    for i, event in enumerate(events):
        conv.add(i, event)
    meta: dict[str, Any] = {"events": len(events), "event_format": "v1"}
    if conv.dropped:
        meta["dropped_events"] = dict(sorted(conv.dropped.items()))
    if conv.agent_errors:
        meta["agent_errors"] = conv.agent_errors
    return conv.messages, meta


def _event_files(events_dir: Location) -> list[Location]:
    """The event files of a conversation in index order, up to the first gap."""
    by_index: dict[int, Location] = {}
    for name in sorted(folder_names(events_dir)):
        idx = event_index(name)
        if idx is not None:
            by_index.setdefault(idx, events_dir / name)
    files = []
    while len(files) in by_index:
        files.append(by_index[len(files)])
    return files


def convert_conversation(first: Any, ctx: Ctx) -> dict[str, Any]:
    """The canonical record of the conversation whose first event file ``ctx.path`` is
    (``first`` its parsed event): every event file of its folder, and ``base_state.json``."""
    limit = int(ctx.state.get("max_record_bytes", 32 * 2**20))
    events_dir = ctx.path.parent
    files = _event_files(events_dir)
    events, total = [first], 0
    for path in files[1:]:
        event, size = read_json_file(path, limit)
        events.append(event)
        total += size
        if total > 8 * limit:
            raise RecordTooLarge(f"conversation event files larger than {8 * limit} bytes")
    messages, extra = convert_events(events)
    conv_dir = events_dir.parent
    base_path = conv_dir / "base_state.json"
    base = read_json_file(base_path, limit)[0] if base_path.name in folder_names(conv_dir) else {}
    base = base if isinstance(base, dict) else {}
    conv_id = base.get("id")
    tid = conv_id if isinstance(conv_id, str) and conv_id else conv_dir.name
    meta: dict[str, Any] = {"format": FORMAT, "conversation": conv_dir.name, **extra}
    agent = base.get("agent") if isinstance(base.get("agent"), dict) else {}
    llm = agent.get("llm") if isinstance(agent.get("llm"), dict) else {}
    for key, value in (("model", llm.get("model")), ("execution_status", base.get("execution_status"))):
        if isinstance(value, str) and value:
            meta[key] = value
    return {"trajectory_id": tid, "suite": FORMAT, "meta": meta, "messages": messages}
