"""Claude Code session lines -> canonical messages (the session reader's conversion rules).

:class:`Messages` takes a session file's lines one by one (the rules of
:mod:`pipeline.ingest.adapters.claude_code`'s docstring: which lines are messages, a
repeated entry read once, assistant lines sharing ``message.id`` joined, ``tool_result``
blocks as tool messages with their errors); the stream reader
(:mod:`pipeline.ingest.adapters.claude_stream`) feeds it the same messages under snake_case
keys. Reading the file, naming the trajectory and finding a subagent's parent call are
:mod:`pipeline.ingest.adapters.claude_code`'s.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pipeline.ingest.adapters._common import TextParts, text_of, tool_call, tool_result
from pipeline.ingest.adapters._session import SizeGuard
from pipeline.ingest.records import canonical_message

_EXIT = re.compile(r"\A\s*Exit code (-?\d+)")
_TOOL_USE_ERROR = re.compile(r"\A\s*<tool_use_error>(.*?)(?:</tool_use_error>|\Z)", re.S)
_REJECTED = ("the user doesn't want to proceed with this tool use", "user rejected tool use",
             "the user doesn't want to take this action", "claude requested permissions")
_SIBLING = "sibling tool call errored"
KNOWN_TYPES = {"user", "assistant", "system", "summary", "progress", "file-history-snapshot", "queue-operation"}


def _is_error(value: Any) -> bool:
    """``is_error`` as Claude Code writes it (a JSON boolean); a string is read as the
    word it holds (a log rewritten by another tool may write ``"false"``), anything else
    by its truth value."""
    if isinstance(value, str):
        return value.strip().lower() not in ("", "false", "0")
    return bool(value)


def _error(block: dict[str, Any], content: str, structured: Any) -> Any:
    """The canonical ``error`` of one tool_result block (the order of :mod:`pipeline.ingest.adapters.claude_code`'s
    docstring)."""
    if not _is_error(block.get("is_error")):
        if isinstance(structured, dict) and structured.get("interrupted") is True:
            return {"type": "unknown", "message": "command interrupted before it finished"}
        return None
    text = content.strip()
    plain = structured.strip() if isinstance(structured, str) else ""
    # Claude Code's own texts OPEN the result (or are the structured copy): a program's
    # output that merely contains them (after "Exit code N") is not a refusal
    heads = [h.lower().removeprefix("error: ") for h in (text, plain) if h]
    if any(h.startswith(_REJECTED) for h in heads):
        return {"type": "approval", "message": text[:500] or plain[:500]}
    if any(h.removeprefix("<tool_use_error>").startswith(_SIBLING) for h in heads):
        return {"type": "cancelled", "message": "Sibling tool call errored: the call never ran"}
    m = _TOOL_USE_ERROR.match(text)
    if m:  # the harness refused the call; the policy's rules read why (claude_code.toml)
        return f"tool_use_error: {m.group(1).strip()[:2000]}"
    m = _EXIT.match(text)
    if m:
        return {"type": "exit_code", "message": f"exit code {m.group(1)}: {text[:300]}"}
    return text[:2000] or plain[:2000] or "tool error (is_error: true, no text)"


def _result_text(content: Any) -> str:
    text = text_of(content)
    return text if isinstance(text, str) else ""


class Messages:
    """Accumulates canonical messages line by line (only the kept text is held)."""

    def __init__(self, guard: SizeGuard) -> None:
        self.messages: list[dict[str, Any]] = []
        self.texts = TextParts()  # joined into the assistant messages by convert_session
        self.by_message_id: dict[str, dict[str, Any]] = {}
        self.guard = guard
        self.session_ids: list[str] = []
        self.agent_ids: set[str] = set()
        self.sidechain_lines = 0
        self.message_lines = 0
        self.meta: dict[str, Any] = {}
        self.models: set[str] = set()
        self.known_lines = 0
        self.uuids: set[str] = set()
        self.repeated_lines = 0

    def line(self, obj: dict[str, Any]) -> None:
        kind = obj.get("type")
        if isinstance(kind, str) and kind in KNOWN_TYPES:  # hostile: any JSON value, a list too
            self.known_lines += 1
        if kind not in ("user", "assistant") or not isinstance(obj.get("message"), dict):
            return  # summary / system / progress / snapshots: not steps
        if self._repeated(obj.get("uuid")):
            return
        self.message_lines += 1
        sid = obj.get("sessionId")
        if isinstance(sid, str) and sid and (not self.session_ids or self.session_ids[-1] != sid):
            self.session_ids.append(sid)
        if obj.get("isSidechain") is True:
            self.sidechain_lines += 1
        if isinstance(obj.get("agentId"), str) and obj["agentId"]:
            self.agent_ids.add(obj["agentId"])
        for key in ("cwd", "version", "gitBranch"):
            if isinstance(obj.get(key), str):
                self.meta.setdefault(key, obj[key])
        if kind == "assistant":
            self._assistant(obj["message"])
        else:
            self._user(obj["message"], obj.get("toolUseResult"))

    def _repeated(self, uuid: Any) -> bool:
        """True when an earlier line of the file has this line's ``uuid`` (the same entry)."""
        if not isinstance(uuid, str) or not uuid:
            return False
        if uuid in self.uuids:
            self.repeated_lines += 1
            return True
        self.uuids.add(uuid)
        return False

    def _assistant(self, message: dict[str, Any]) -> None:
        if isinstance(message.get("model"), str):
            self.models.add(message["model"])
        mid = message.get("id")
        msg = self.by_message_id.get(mid) if isinstance(mid, str) else None
        if msg is None:
            msg = canonical_message("assistant", None)
            self.messages.append(msg)
            if isinstance(mid, str):
                self.by_message_id[mid] = msg
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks if isinstance(blocks, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"]:
                self.guard.add(block["text"])
                self.texts.add(msg, block["text"])
            elif str(block.get("type")).endswith("_tool_result") and block.get("tool_use_id"):
                # a server tool's result inside the response (web_search_tool_result, ...)
                body = block.get("content")
                failed = isinstance(body, dict) and str(body.get("type", "")).endswith("_error")
                result = json.dumps(body, ensure_ascii=False, sort_keys=True)[:100_000]
                self.guard.add(result)
                self.messages.append(tool_result(block["tool_use_id"], result,
                                                 (body.get("error_code") or "server tool error") if failed else None))
            elif block.get("type") in ("tool_use", "server_tool_use"):
                args = block.get("input") if block.get("input") is not None else {}
                self.guard.add(args)
                call = tool_call(block.get("id"), block.get("name"), args)
                msg.setdefault("tool_calls", []).append(call)

    def _user(self, message: dict[str, Any], structured: Any) -> None:
        content = message.get("content")
        if isinstance(content, str):
            self.guard.add(content)
            self.messages.append(canonical_message("user", content))
            return
        texts: list[str] = []
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                text = _result_text(block.get("content"))
                self.guard.add(text)
                self.messages.append(tool_result(block.get("tool_use_id"), text,
                                                 _error(block, text, structured)))
            elif block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
        if texts:
            self.guard.add(texts)
            self.messages.append(canonical_message("user", "\n".join(texts)))
