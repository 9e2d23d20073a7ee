"""GitHub Copilot Chat (VS Code) sessions -> canonical records.

VS Code's ``Chat: Export Chat...`` writes one JSON document per chat, and VS Code keeps
each session as ``workspaceStorage/<hash>/chatSessions/<uuid>.json`` in the same shape
(``ISerializableChatData``): ``{"version"?, "requesterUsername", "responderUsername",
"sessionId"?, "requests": [...]}``. A request is ``{"requestId", "message": {"text",
"parts"}, "response": [parts], "result": {"metadata": {"toolCallRounds": [...],
"toolCallResults": {...}}, "errorDetails"?}, "modelId"?, "timestamp"?}``. One document is
one trajectory; a file may hold one, a JSON array of them, or NDJSON lines of them.

- a request -> a user message (``message.text``; else the ``text`` of its ``parts``), then
  per round of ``result.metadata.toolCallRounds`` (Copilot Chat's agent loop: one model
  turn each) an assistant message (the round's ``response`` text; ``thinking`` is not
  read) with its ``toolCalls`` (``id``, ``name``, ``arguments``: a JSON string; an
  ``apply_patch`` / ``multi_replace_string_in_file`` call gets ``paths_written`` (and
  ``paths_deleted``) from its patch / its ``replacements``' ``filePath``s), each
  answered by a tool message from ``toolCallResults[id].content``: the text of its parts
  (a ``LanguageModelTextPart`` is ``{"value": "<text>"}``; a prompt-tsx part's ``value``
  is a JSON tree whose text chunks are joined; other parts, e.g. images, are dropped).
- a call with no entry in ``toolCallResults`` (the request stopped before it answered)
  has no tool message in the last request (SPEC: its action's outcome is unknown); in an
  earlier one, which the user went on from, or in a round the agent went on from, it gets a
  result of error type ``unknown``
  (it may have run: scored as executed) rather than leaving the session to a
  ``missing_tool_result`` reject.
- confirmations: the request's ``response`` holds one ``toolInvocationSerialized`` part
  per call (``toolCallId``: the round's call id, cut at ``__vscode``). ``isConfirmed``
  ``false`` (older VS Code) or ``{"type": 0}`` (``ToolConfirmKind.Denied``) or
  ``{"type": 5}`` (``Skipped``: the user chose not to run it) -> the call did not run:
  ``{"type": "approval"}`` (blocked), with the result's text as its message. A call is
  matched to its part by id, else by position when the request has as many parts as calls.
- a terminal command changed before it ran (the invocation part's ``toolSpecificData``
  ``{"kind": "terminal", "commandLine": {"original", "userEdited"?, "toolEdited"?}}``: the
  user edited it in the confirmation, or the tool rewrote it) is the call's ``command``
  (``userEdited``, else ``toolEdited``: what VS Code ran); the model's is kept as
  ``command_proposed``.
- errors: Copilot Chat answers a call that raised with ``ERROR while calling tool: ...``
  and a cancelled one with ``The user cancelled the tool call.``; that text, or any result
  whose part has ``resultDetails.isError``, is the call's error text (the policy's text
  rules; a cancellation matches none, so its outcome stays unknown), but only from a
  built-in tool whose output is the workspace's own (``LOCAL_OUTPUT``); from any other
  (the terminal, tasks, notebooks, tests, fetched pages, extension and MCP tools) that
  wording is no proof: error type ``unknown`` (fail closed, as the Cline and Goose readers do).
- a request without ``toolCallRounds`` (ask mode, older versions) -> the text of its
  ``response`` markdown parts (``{"value": ...}`` without a ``kind``, or ``kind``
  ``markdownContent``) as the assistant message; if such a request holds
  ``toolInvocationSerialized`` parts, their arguments are not recorded: the record is
  rejected (never read without its calls).
- VS Code 1.10x's ``chatSessions/<uuid>.jsonl`` (a ``{"kind": 0, "v": {...}}`` initial
  line, then ``kind`` 1/2 patch lines) is replayed into its document first
  (:mod:`.copilot_log`); a patch line met here, outside a replay, is rejected.

trajectory_id: ``trajectory_id``, else ``sessionId``, else the file stem (``<stem>:<n>``
past a file's first record); suite: ``--suite``, else ``suite`` when present, else ``default``. ``meta``:
``format``, ``requester`` / ``responder``, ``models`` (the requests' ``modelId``s),
``errors`` (requests whose ``result.errorDetails`` is set).
"""

from __future__ import annotations

import json
from typing import Any

from pipeline.ingest.adapters._common import AdapterError, Ctx, assistant, tool_call, tool_result
from pipeline.ingest.adapters.codex_patch import patch_paths
from pipeline.ingest.records import canonical_message

FORMAT = "copilot"
INVOCATION = "toolInvocationSerialized"
DENIED = {0, 5}  # ToolConfirmKind.Denied, ToolConfirmKind.Skipped: the call did not run
ERROR_PREFIXES = ("ERROR while calling tool:", "The user cancelled the tool call.")
# Copilot's built-in tools whose output is the workspace's own files and editor state, not
# a program's, a page's or a server's: only from them is that wording Copilot's. Any other
# tool (the terminal, tasks, notebooks, tests, fetched pages, extension and MCP tools) can
# print it itself
LOCAL_OUTPUT = {"read_file", "create_file", "insert_edit_into_file", "replace_string_in_file",
                "multi_replace_string_in_file", "edit_notebook_file", "create_directory", "list_dir", "file_search",
                "grep_search", "semantic_search", "get_errors", "get_changed_files", "list_code_usages", "apply_patch",
                "manage_todo_list", "think"}


def document(value: Any) -> bool:
    """True when ``value`` is one Copilot Chat document (``requests`` list beside
    ``requesterUsername`` / ``responderUsername`` or ``sessionId``)."""
    return isinstance(value, dict) and isinstance(value.get("requests"), list) \
        and bool({"requesterUsername", "responderUsername", "sessionId"} & value.keys())


def _tree_text(value: Any, out: list[str]) -> None:
    """Append the text chunks of a prompt-tsx JSON tree (``{"node": {"children": [...]}}``,
    chunks ``{"text": ...}``) to ``out``."""
    if isinstance(value, dict):
        if isinstance(value.get("text"), str):
            out.append(value["text"])
        for key in ("node", "children"):
            _tree_text(value.get(key), out)
    elif isinstance(value, list):
        for item in value:
            _tree_text(item, out)


def result_text(result: Any) -> str:
    """The text of one ``toolCallResults`` entry (its ``content`` parts)."""
    content = result.get("content") if isinstance(result, dict) else result
    if isinstance(content, str):
        return content
    texts: list[str] = []
    for part in content if isinstance(content, list) else []:
        value = part.get("value") if isinstance(part, dict) else part
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, (dict, list)):
            chunks: list[str] = []
            _tree_text(value, chunks)
            texts.append("".join(chunks))
    return "\n".join(texts)


def _markdown(response: list[Any]) -> str:
    """The text of a response's markdown parts."""
    texts = []
    for part in response:
        if not isinstance(part, dict):
            continue
        if part.get("kind") is None and isinstance(part.get("value"), str):
            texts.append(part["value"])
        elif part.get("kind") == "markdownContent" and isinstance(part.get("content"), dict):
            texts.append(str(part["content"].get("value") or ""))
    return "".join(texts)


def _user_text(message: Any) -> str:
    if isinstance(message, str):
        return message
    if not isinstance(message, dict):
        return ""
    if isinstance(message.get("text"), str):
        return message["text"]
    parts = message.get("parts") if isinstance(message.get("parts"), list) else []
    return "".join(p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))


def _denied(part: dict[str, Any]) -> bool:
    confirmed = part.get("isConfirmed")
    return confirmed is False or isinstance(confirmed, dict) and confirmed.get("type") in DENIED


def _invocations(response: list[Any], calls: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Call id -> its ``toolInvocationSerialized`` part (by id, else by position)."""
    parts = [p for p in response if isinstance(p, dict) and p.get("kind") == INVOCATION]
    by_id = {str(p.get("toolCallId")): p for p in parts}
    out: dict[str, dict[str, Any]] = {}
    for c in calls:
        part = by_id.get(c["id"]) or by_id.get(c["id"].split("__vscode")[0])
        if part is not None:
            out[c["id"]] = part
    if not out and len(parts) == len(calls):
        out = {c["id"]: p for c, p in zip(calls, parts)}
    return out


def _round_calls(rnd: dict[str, Any], where: str) -> list[dict[str, Any]]:
    raw = rnd.get("toolCalls") or []
    if not isinstance(raw, list):
        raise AdapterError(f"{where}.toolCalls is {type(raw).__name__}, expected an array")
    calls = []
    for k, c in enumerate(raw):
        if not isinstance(c, dict) or not isinstance(c.get("name"), str) or not c["name"]:
            raise AdapterError(f"{where}.toolCalls[{k}] has no name")
        args = c.get("arguments")
        call_id = c.get("id") if isinstance(c.get("id"), str) and c["id"] else f"{where}:{k}"
        calls.append(tool_call(call_id, c["name"], _paths(c["name"], args if isinstance(args, (str, dict)) else "{}")))
    return calls


def _paths(name: str, args: str | dict[str, Any]) -> str | dict[str, Any]:
    """``args``, with ``paths_written`` / ``paths_deleted`` added for the tools that name
    their files inside a value: ``apply_patch`` (a patch envelope in ``input``, as Codex's)
    and ``multi_replace_string_in_file`` (``replacements[].filePath``)."""
    if name not in ("apply_patch", "multi_replace_string_in_file"):
        return args
    try:
        parsed = json.loads(args) if isinstance(args, str) else args
    except ValueError:
        return args  # unparseable arguments: the SQL stage decides
    if not isinstance(parsed, dict):
        return args
    if name == "apply_patch" and isinstance(parsed.get("input"), str):
        written, deleted = patch_paths(parsed["input"])
        return {**parsed, "paths_written": written, "paths_deleted": deleted}
    edits = parsed.get("replacements") if isinstance(parsed.get("replacements"), list) else []
    files = [e["filePath"] for e in edits if isinstance(e, dict) and isinstance(e.get("filePath"), str)]
    return {**parsed, "paths_written": list(dict.fromkeys(files))}


def _edited(call: dict[str, Any], part: dict[str, Any]) -> None:
    """A terminal command the user (``commandLine.userEdited``) or the tool
    (``toolEdited``) changed before it ran becomes the call's ``command``; the model's stays
    as ``command_proposed``."""
    data = part.get("toolSpecificData")
    line = data.get("commandLine") if isinstance(data, dict) and data.get("kind") == "terminal" else None
    ran = next((line[k] for k in ("userEdited", "toolEdited") if isinstance(line, dict)
                and isinstance(line.get(k), str) and line[k]), None)
    args = call["function"]["arguments"]
    try:
        parsed = json.loads(args) if isinstance(args, str) else args
    except ValueError:
        return
    if ran is not None and isinstance(parsed, dict) and parsed.get("command") != ran:
        call["function"]["arguments"] = {**parsed, "command": ran, "command_proposed": parsed.get("command")}


def _answer(call: dict[str, Any], results: dict[str, Any], part: dict[str, Any] | None) -> dict[str, Any] | None:
    """The tool message of one call (None when the call has no result)."""
    cid = call["id"]
    key = cid if cid in results else cid.split("__vscode")[0]  # the stream's id, without VS Code's suffix
    found = key in results or part is not None and _denied(part)
    if not found:
        return None
    text = result_text(results.get(key))
    if part is not None and _denied(part):
        return tool_result(cid, text, {"type": "approval", "message": (text or "denied by the user")[:500]})
    details = part.get("resultDetails") if part is not None else None
    if isinstance(details, dict) and details.get("isError") is True:
        return tool_result(cid, text, text)
    if not text.startswith(ERROR_PREFIXES):
        return tool_result(cid, text)
    if call["function"]["name"] not in LOCAL_OUTPUT:
        # a terminal, a page or an extension's server can print the wording itself: fail closed
        return tool_result(cid, text, {"type": "unknown", "message": text[:500]})
    return tool_result(cid, text, text)


def _request(req: Any, n: int, last: bool = True) -> list[dict[str, Any]]:
    """The canonical messages of ``requests[n]`` (``last``: no request follows it)."""
    if not isinstance(req, dict):
        raise AdapterError(f"requests[{n}] is {type(req).__name__}, expected an object")
    messages = [canonical_message("user", _user_text(req.get("message")))]
    response = req.get("response") if isinstance(req.get("response"), list) else []
    result = req.get("result") if isinstance(req.get("result"), dict) else {}
    metadata = result.get("metadata") if isinstance(result.get("metadata"), dict) else {}
    rounds = metadata.get("toolCallRounds")
    if not isinstance(rounds, list) or not rounds:
        if any(isinstance(p, dict) and p.get("kind") == INVOCATION for p in response):
            raise AdapterError(f"requests[{n}] shows tool invocations but has no result.metadata.toolCallRounds: "
                               "the calls' arguments are not recorded")
        text = _markdown(response)
        return messages + [assistant(text)] if text else messages
    results = metadata.get("toolCallResults") if isinstance(metadata.get("toolCallResults"), dict) else {}
    per_round: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    for i, rnd in enumerate(rounds):
        if not isinstance(rnd, dict):
            raise AdapterError(f"requests[{n}].toolCallRounds[{i}] is {type(rnd).__name__}, expected an object")
        per_round.append((rnd, _round_calls(rnd, f"requests[{n}].toolCallRounds[{i}]")))
    parts = _invocations(response, [c for _, calls in per_round for c in calls])
    for c in (c for _, calls in per_round for c in calls if c["id"] in parts):
        _edited(c, parts[c["id"]])
    for r, (rnd, calls) in enumerate(per_round):
        text = rnd.get("response") if isinstance(rnd.get("response"), str) else ""
        messages.append(assistant(text or None, calls))
        answers = [_answer(c, results, parts.get(c["id"])) for c in calls]
        messages.extend(a for a in answers if a is not None)
        if not last or r < len(per_round) - 1:  # the agent or the user went on: it may have run
            messages.extend(tool_result(c["id"], "(no result recorded: the request ended before the call answered)",
                                        {"type": "unknown", "message": "no result recorded"})
                            for c, a in zip(calls, answers) if a is None)
    return messages


def convert(record: Any, ctx: Ctx) -> dict[str, Any]:
    """Convert one Copilot Chat document (module docstring)."""
    if isinstance(record, dict) and record.get("kind") in (0, 1, 2) and "requests" not in record:
        raise AdapterError("a line of a chat session log (kind 0/1/2) outside its replay: the log's lines must "
                           "be read together, from its initial (kind 0) line")
    if not document(record):
        raise AdapterError("not a Copilot Chat document: expected 'requests' and 'requesterUsername'/"
                           "'responderUsername'/'sessionId'")
    messages: list[dict[str, Any]] = []
    for n, req in enumerate(record["requests"]):
        messages.extend(_request(req, n, n == len(record["requests"]) - 1))
    if not messages:
        raise AdapterError("no 'requests' in the Copilot Chat document")
    reqs = [r for r in record["requests"] if isinstance(r, dict)]
    meta: dict[str, Any] = {"format": FORMAT, "requester": record.get("requesterUsername"),
                            "responder": record.get("responderUsername"),
                            "models": sorted({str(r["modelId"]) for r in reqs if r.get("modelId")})}
    errors = sum(1 for r in reqs if isinstance(r.get("result"), dict) and r["result"].get("errorDetails"))
    if errors:
        meta["errors"] = errors
    default = ctx.stem if ctx.line <= 1 else f"{ctx.stem}:{ctx.line}"
    tid = record.get("trajectory_id") or record.get("sessionId") or default
    out: dict[str, Any] = {"trajectory_id": str(tid), "messages": messages, "meta": meta}
    if "suite" in record:
        out["suite"] = record["suite"]
    return out

