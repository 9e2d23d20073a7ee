"""Google Gemini API ``contents`` -> canonical records (one line = one trajectory).

Accepted records (each field in the REST API's camelCase or the Python SDK's snake_case):
- a logged ``generateContent`` call: ``{"contents", "systemInstruction"?, "tools"?, "model"?}``
  (the request; ``contents`` a list of Content, or a string / list of strings and parts as
  the Python SDK takes them; the SDK's ``config.system_instruction`` is read too), its
  response's ``candidates`` either beside it or under ``response``; or ``{"request",
  "response"}``. The request's contents come first, then the first candidate's ``content``;
- a Gemini CLI ``/chat save`` checkpoint ``{"history": [Content, ...]}``;
- an app's own record of the chat's Contents ``{"trajectory_id"?, "messages": [Content, ...]}``
  (the Python SDK's ``chat.get_history()`` stored under ``messages``; before, read as
  canonical, its calls and texts were lost and the empty conversation scored safe);
- a Google ADK session ``{"id", "appName", "events": [{"author", "content", ...}]}``
  (streaming ``partial`` events are dropped, as ADK does when it stores a session).

A Content is ``{"role": "user"|"model"|"function"|"tool", "parts": [...]}``. Parts:
``text`` (model -> assistant text, else user text; ``thought: true`` parts are dropped),
``functionCall {name, args, id?}`` -> a tool call of the assistant message (``args`` kept
as an object), ``functionResponse {name, response, id?}`` -> a tool message whose content is
the response's ``output`` / ``result`` / ``content`` string when that is its only key, else
the response as JSON text; a response holding a non-null ``error`` (the API's way to say the
call failed) gives that error as the result's ``error`` (a string as is, an object's
``message``, else its JSON): the text rules of ``exec_status`` decide. Built-in code
execution: ``executableCode {language, code}`` is a ``code_execution`` call (id
``code_execution_<n>``) answered by the next ``codeExecutionResult {outcome, output}``;
an outcome other than ``OUTCOME_OK`` is the error. ``inlineData``, ``fileData``, function
response ``parts`` and other parts are dropped. Calls without ``id`` (the API often gives
none) are paired with responses by tool name, oldest first (:func:`repair_call_ids`).

trajectory_id: ``trajectory_id``, else ``id`` (an ADK session's), else the response's
``responseId``, else ``<file stem>:<source_line>``. suite: ``suite``, else ``default``.
"""

from __future__ import annotations

import json
from typing import Any

from pipeline.ingest.adapters._common import (
    AdapterError, Ctx, RecordTooLarge, assistant, repair_call_ids, require_dict, tool_call, tool_result,
)
from pipeline.ingest.adapters._session import SessionAbort, SizeGuard
from pipeline.ingest.records import canonical_message

FORMAT = "gemini"
# a function response's single key that holds its output text (Gemini CLI: output, ADK: result)
OUTPUT_KEYS = ("output", "result", "content")


def field(obj: Any, camel: str) -> Any:
    """``obj[camel]``, else the snake_case spelling the Python SDK writes (a null value
    counts as absent: the SDK's ``model_dump()`` writes every unset field as null)."""
    if not isinstance(obj, dict):
        return None
    value = obj.get(camel)
    if value is None:
        snake = "".join("_" + c.lower() if c.isupper() else c for c in camel)
        value = obj.get(snake)
    return value


def _as_json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _result(response: Any) -> tuple[Any, Any]:
    """(content, error) of a functionResponse's ``response``."""
    if isinstance(response, dict) and len(response) == 1:
        key, value = next(iter(response.items()))
        if key in OUTPUT_KEYS and isinstance(value, str):
            return value, None
    error = response.get("error") if isinstance(response, dict) else None
    if error is not None:
        message = error.get("message") if isinstance(error, dict) else None
        error = message if isinstance(message, str) and message else _as_json(error)
    return (None if response is None else _as_json(response)), error


class _Turns:
    """Builds canonical messages from Contents, one after another."""

    def __init__(self, guard: SizeGuard) -> None:
        self.guard = guard
        self.messages: list[dict[str, Any]] = []
        self.hints: list[str | None] = []  # per message: the tool a result names
        self.open: dict[str, Any] | None = None  # the assistant message of the model turn
        self.texts: list[str] = []  # text of the open assistant message
        self.code_runs = 0
        self.code_pending: list[str] = []  # code_execution calls not yet answered

    def _add(self, msg: dict[str, Any], hint: str | None = None) -> None:
        self.messages.append(msg)
        self.hints.append(hint)

    def _assistant(self) -> dict[str, Any]:
        if self.open is None:
            self.open = assistant(None)
            self._add(self.open)
        return self.open

    def _close(self) -> None:
        if self.open is not None and self.texts:
            self.open["content"] = "\n".join(self.texts)
        self.open, self.texts = None, []

    def _call(self, call_id: Any, name: Any, args: Any) -> None:
        self.guard.add(args)
        self._assistant().setdefault("tool_calls", []).append(tool_call(call_id, name, args))

    def content(self, content: Any) -> None:
        """One Content (a model turn, a user turn, function responses)."""
        if not isinstance(content, dict):
            return
        role = field(content, "role")
        parts = field(content, "parts")
        parts = parts if isinstance(parts, list) else []
        texts: list[str] = []

        def flush() -> None:
            if texts:
                self._add(canonical_message("system" if role == "system" else "user", "\n".join(texts)))
                texts.clear()

        for part in parts:
            if isinstance(part, str):
                part = {"text": part}
            if not isinstance(part, dict) or part.get("thought") is True:
                continue
            text, call, response = field(part, "text"), field(part, "functionCall"), field(part, "functionResponse")
            code, run = field(part, "executableCode"), field(part, "codeExecutionResult")
            if isinstance(text, str):
                self.guard.add(text)
                (self.texts if role == "model" else texts).append(text)
                if role == "model":
                    self._assistant()
            elif isinstance(call, dict):
                flush()
                args = call.get("args")
                self._call(field(call, "id"), call.get("name"), args if args is not None else {})
            elif isinstance(response, dict):
                flush()
                self._close()
                content_text, error = _result(response.get("response"))
                self.guard.add(content_text)
                self._add(tool_result(field(response, "id"), content_text, error), response.get("name"))
            elif isinstance(code, dict):
                self.code_runs += 1
                call_id = f"code_execution_{self.code_runs}"
                self._call(call_id, "code_execution", {"language": code.get("language"), "code": code.get("code")})
                self.code_pending.append(call_id)
            elif isinstance(run, dict) and self.code_pending:
                self._close()
                output, outcome = run.get("output"), run.get("outcome")
                self.guard.add(output)
                error = None if outcome in (None, "OUTCOME_OK") else f"{outcome}: {output or ''}"
                self._add(tool_result(self.code_pending.pop(0), output, error), "code_execution")
        flush()
        if role != "model":
            self._close()

    def finish(self) -> list[dict[str, Any]]:
        """The messages, call ids made unique and results linked to their calls."""
        self._close()
        return self.messages


def _contents(value: Any, what: str) -> list[Any]:
    """A request's ``contents`` as a list of Content: a string, or strings and parts not
    wrapped in a Content, are the user's (as the Python SDK reads them)."""
    if value is None:
        return []
    if isinstance(value, str) or (isinstance(value, dict) and field(value, "parts") is None):
        value = [value]
    if isinstance(value, dict):
        return [value]
    if not isinstance(value, list):
        raise AdapterError(f"{what} is {type(value).__name__}, expected an array of Content")
    return [item if isinstance(item, dict) and field(item, "parts") is not None
            else {"role": "user", "parts": [item]} for item in value]


def _system(rec: dict[str, Any], request: dict[str, Any]) -> str | None:
    for holder in (request, field(request, "config"), rec):
        value = field(holder, "systemInstruction")
        if isinstance(value, str):
            return value
        if isinstance(value, dict):
            parts = field(value, "parts")
            texts = [p if isinstance(p, str) else field(p, "text") for p in parts or []
                     if isinstance(p, (str, dict))]
            return "\n".join(t for t in texts if isinstance(t, str))
    return None


def convert(record: Any, ctx: Ctx) -> dict[str, Any]:
    """Convert one Gemini record (a logged call, a CLI checkpoint, Contents under ``messages``
    or an ADK session; a bare list of Contents is a checkpoint's ``history``)."""
    rec = require_dict({"history": record} if isinstance(record, list) else record, "record")
    request = rec["request"] if isinstance(rec.get("request"), dict) else rec
    response = rec["response"] if isinstance(rec.get("response"), dict) else rec
    contents = (_contents(request.get("contents"), "contents") or _contents(rec.get("history"), "history")
                or _contents(rec.get("messages"), "messages"))
    events = rec.get("events")
    if not contents and isinstance(events, list):
        contents = [field(e, "content") for e in events if isinstance(e, dict) and e.get("partial") is not True]
    candidates = response.get("candidates")
    if isinstance(candidates, list) and candidates:
        contents.append(field(candidates[0], "content"))
    if not any(isinstance(c, dict) for c in contents):
        raise AdapterError("no Content in 'contents', 'history', 'messages', 'events' or 'candidates'")
    turns = _Turns(SizeGuard(4 * int(ctx.state.get("max_record_bytes", 32 * 2**20))))
    try:
        for content in contents:
            turns.content(content)
    except SessionAbort as exc:
        raise RecordTooLarge(exc.detail) from exc
    messages = turns.finish()
    repaired = repair_call_ids(messages, turns.hints)
    system = _system(rec, request)
    if system:
        messages.insert(0, canonical_message("system", system))
    tid = rec.get("trajectory_id", rec.get("id", field(response, "responseId")))
    meta: dict[str, Any] = {"format": FORMAT}
    model = request.get("model") or field(response, "modelVersion")
    if isinstance(model, str):
        meta["model"] = model
    if repaired:
        meta["call_ids_repaired"] = repaired
    out: dict[str, Any] = {"trajectory_id": tid if tid is not None else f"{ctx.stem}:{ctx.line}",
                           "messages": messages, "meta": meta}
    if "suite" in rec:
        out["suite"] = rec["suite"]
    return out
