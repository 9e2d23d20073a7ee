"""OpenAI Responses API items as Codex writes them -> canonical messages with exit statuses.

What a Codex rollout's ``response_item`` lines hold (``message``, ``*_call``,
``*_call_output``, ``web_search_call``), converted by the rules of
:mod:`pipeline.ingest.adapters.codex` (its module docstring: messages, tool calls and
their argument shapes, and the order in which a call's exit status is taken).
:class:`ResponseItems` converts them one item at a time; the rollout reader
(``codex._Rollout``) adds the file's own lines (``session_meta``, ``event_msg``) around
it, and :func:`response_items` converts a bare list of items (the ``openai-responses``
format, :mod:`pipeline.ingest.adapters.responses`).

The Responses API's hosted tools write items that hold their call and its result at once,
with no ``call_id``: each is one call (id the item's ``id``) and its result.
``mcp_call`` (remote MCP: ``server_label``, ``name``, ``arguments`` a JSON string,
``output``, ``error``) -> ``mcp__<server_label>__<name>`` (the MCP names of Codex and
Claude Code) answered by its ``output``, a non-null ``error`` an error result (text
rules); ``code_interpreter_call`` (``code``, ``outputs`` of ``logs`` / ``image``) -> a
``python`` call ``{"code"}`` answered by its logs (``outputs`` is null unless the request
included them: the result then says so); ``file_search_call`` (``queries``, ``results`` of
``filename`` / ``text`` chunks, null unless the request included them) -> a
``file_search_call`` call ``{"queries"}`` answered by the chunks. An item still running (no
output, status not ``completed`` / ``failed``, nor ``incomplete`` for a file search) has no
result. ``mcp_list_tools``, ``mcp_approval_request`` /
``mcp_approval_response`` are no steps.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from pipeline.ingest.adapters._common import TextParts, text_of, tool_call, tool_result
from pipeline.ingest.adapters._session import SizeGuard
from pipeline.ingest.adapters.codex_patch import patch_paths, shell_patch
from pipeline.ingest.argv import argv_command
from pipeline.ingest.records import canonical_message

# header lines of exec_command / write_stdin outputs (a program printing the words
# further down is not its exit status)
_EXITED = re.compile(r"(?m)^Process exited with code (-?\d+)\s*$")
_RUNNING = re.compile(r"(?m)^Process running with session ID (\d+)\s*$")
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


# statuses of an inline call item that has run (its result, or its error, is in the item)
_RAN = ("completed", "failed")
InlineResult = tuple[str, Any] | None  # (result text, canonical error), None: not run yet


def _error_text(error: Any) -> str:
    """An item's ``error``: a string, or an object's ``message`` (else the object as JSON)."""
    if isinstance(error, str):
        return error
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"]
    return json.dumps(error, ensure_ascii=False, sort_keys=True)


def mcp_call(p: dict[str, Any]) -> tuple[str, Any, InlineResult]:
    """(name, arguments, result) of a remote MCP ``mcp_call`` item: ``mcp__<server_label>__<name>``
    (the MCP names of Codex and Claude Code), the ``arguments`` JSON string as given; its
    ``output`` is the result, a non-null ``error`` an error result (text rules)."""
    name = p.get("name") if isinstance(p.get("name"), str) else "mcp_call"
    if isinstance(p.get("server_label"), str):
        name = f"mcp__{p['server_label']}__{name}"
    args = p.get("arguments") if isinstance(p.get("arguments"), (str, dict)) else {}
    output, error = p.get("output"), p.get("error")
    if error is not None:
        text = _error_text(error)
        return name, args, (output if isinstance(output, str) and output else text, text or "mcp_call error")
    if output is not None or p.get("status") in _RAN:
        text = output if isinstance(output, str) else ""
        return name, args, (text, "mcp_call failed" if p.get("status") == "failed" else None)
    return name, args, None


def code_interpreter_call(p: dict[str, Any]) -> tuple[str, Any, InlineResult]:
    """(name, arguments, result) of a ``code_interpreter_call`` item: a ``python`` call of
    its ``code``, answered by its ``logs`` outputs (an ``image`` output is named by its
    ``url``); ``outputs`` is null unless the request included them (the code still ran)."""
    args = {"code": p.get("code") if isinstance(p.get("code"), str) else ""}
    outputs = p.get("outputs")
    if not isinstance(outputs, list) and p.get("status") not in _RAN:
        return "python", args, None
    texts = [o["logs"] if o.get("type") == "logs" and isinstance(o.get("logs"), str) else f"(image: {o.get('url')})"
             for o in outputs or [] if isinstance(o, dict) and o.get("type") in ("logs", "image")]
    text = "\n".join(texts) if isinstance(outputs, list) else "(code interpreter outputs are not recorded)"
    return "python", args, (text, "code_interpreter_call failed" if p.get("status") == "failed" else None)


def file_search_call(p: dict[str, Any]) -> tuple[str, Any, InlineResult]:
    """(name, arguments, result) of a ``file_search_call`` item (the hosted search over
    vector stores): a ``file_search_call`` call of its ``queries`` (the item type's name, as
    ``web_search_call``'s: Cursor and others have local ``file_search`` tools of their own), answered by the retrieved
    chunks (``filename`` and ``text`` of each of its ``results``), which the item holds only
    when the request included ``file_search_call.results`` (the search still ran: the
    result says so); ``status: failed`` is an error result."""
    queries = p.get("queries")
    args = {"queries": [q for q in queries if isinstance(q, str)] if isinstance(queries, list) else []}
    results = p.get("results")
    if not isinstance(results, list) and p.get("status") not in (*_RAN, "incomplete"):
        return "file_search_call", args, None
    chunks = [f"{r.get('filename') or r.get('file_id') or '(file)'}:\n{r['text']}" if isinstance(r.get("text"), str)
              else str(r.get("filename") or r.get("file_id") or "(file)")
              for r in results or [] if isinstance(r, dict)]
    text = "\n\n".join(chunks) if isinstance(results, list) else "(file search results are not recorded)"
    return "file_search_call", args, (text, "file_search_call failed" if p.get("status") == "failed" else None)


# the hosted tools' items that hold their call and its result at once (no call_id)
INLINE_CALLS = {"mcp_call": mcp_call, "code_interpreter_call": code_interpreter_call,
                "file_search_call": file_search_call}


class ResponseItems:
    """Builds the canonical messages of a sequence of Responses items, item by item, and
    gives each tool message its error from the exit statuses seen (:meth:`finish`)."""

    def __init__(self, guard: SizeGuard) -> None:
        self.guard = guard
        self.messages: list[dict[str, Any]] = []
        self.texts = TextParts()  # joined into the assistant messages by finish()
        self.open: dict[str, Any] | None = None  # the assistant message calls join
        self.calls: dict[str, str] = {}  # call_id -> tool name
        self.results: dict[str, dict[str, Any]] = {}  # call_id -> tool message
        self.exit_codes: dict[str, int] = {}  # call_id -> exit code from the output
        self.event_exit: dict[str, int] = {}  # call_id -> exit code from exec_command_end (a rollout's event_msg)
        self.running: dict[str, str] = {}  # exec session id -> call_id of the original call
        self.stdin_session: dict[str, str] = {}  # write_stdin call_id -> exec session id
        self.searches = 0
        self.inline_calls = 0  # INLINE_CALLS items (an id when one has none)

    def _assistant(self) -> dict[str, Any]:
        if self.open is None:
            self.open = canonical_message("assistant", None)
            self.messages.append(self.open)
        return self.open

    def item(self, p: dict[str, Any]) -> None:
        """Convert one Responses item (a rollout's ``response_item`` payload)."""
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
        elif kind in INLINE_CALLS:
            self._inline_call(p)
        elif isinstance(kind, str) and kind.endswith("_call_output"):
            self.open = None
            self._output(p)
        elif isinstance(kind, str) and kind.endswith("_call") and isinstance(p.get("call_id"), str):
            name = p.get("name") if isinstance(p.get("name"), str) else kind.removesuffix("_call")
            if isinstance(p.get("namespace"), str):
                name = p["namespace"] + name
            args = _arguments(name, p)
            if (patched := shell_patch(name, p, args)) is not None:  # Codex applies it itself
                name, args = "apply_patch", patched
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

    def _inline_call(self, p: dict[str, Any]) -> None:
        """An item that holds its call and its result (``INLINE_CALLS``):
        one call, id the item's ``id``, and its result unless it has not run yet."""
        self.inline_calls += 1
        call_id = p["id"] if isinstance(p.get("id"), str) else f"{p['type']}_{self.inline_calls}"
        name, args, result = INLINE_CALLS[p["type"]](p)
        self.guard.add(args)
        self._assistant().setdefault("tool_calls", []).append(tool_call(call_id, name, args))
        if result is None:
            return
        text, error = result
        self.guard.add(text)
        self.open = None
        self.messages.append(tool_result(call_id, text, error))

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
        (the order of :mod:`pipeline.ingest.adapters.codex`'s docstring)."""
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
    ``web_search_call``; also ``mcp_call`` / ``code_interpreter_call`` / ``file_search_call``), converted and
    given exit statuses as a rollout's are."""
    converted = ResponseItems(guard)
    for item in items:
        if isinstance(item, dict):
            converted.item(item)
    converted.finish()
    return converted.messages
