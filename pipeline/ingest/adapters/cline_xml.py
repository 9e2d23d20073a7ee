"""Cline / Roo Code / Kilo Code tool calls written as XML inside assistant text.

Cline (and its forks Roo Code and Kilo Code) asks models without native tool calling (and,
in older releases, every model) to write each call as XML in its reply text::

    <read_file>
    <path>.env</path>
    </read_file>

and answers it in the next user message with text blocks ``[read_file for '.env'] Result:``
followed by the tool's output (then, as a block of its own, ``<environment_details>``, which
is no tool output). :mod:`pipeline.ingest.adapters.anthropic` reads its
``api_conversation_history.json`` and, for a conversation that has no native ``tool_use``
block at all, hands assistant text and user text to :class:`XmlTools`.

The rule (README "Input formats"):

- a call is an element whose tag is in ``TOOL_NAMES`` (the tools these agents define),
  with its closing tag, outside fenced code (```` ``` ````); any other tag, or a tag without
  its closing tag, is text. Its child elements are its arguments, as strings (trimmed, as
  the agents' own parsers do); ``content`` / ``diff`` / ``result`` run to their last
  closing tag (file text may hold the tag itself). ``use_mcp_tool`` is the call
  ``mcp__<server_name>__<tool_name>`` with its ``arguments`` JSON object (text that is no
  object stays ``{"arguments": text}``). Roo's ``read_file`` ``<args><file><path>``
  form adds ``path`` (the first) and ``paths``.
- a user text block that starts with ``[<tool>( for '...')?] Result:`` answers the oldest
  unanswered call of the previous assistant message (of that tool when one is waiting);
  the text after the header and the next blocks up to the next header or an
  ``<environment_details>`` block are its output. ``Tool [x] was not executed ...`` /
  ``Skipping tool [x ...] ...`` answer one call as ``not_executed``. A ``[TASK RESUMPTION]``
  user text answers the calls the task was interrupted on as ``unknown`` (they may have
  run; without a result the record would be rejected as ``missing_tool_result``).
- errors, from a result's whole text: ``The user denied this operation.`` (with the user's
  ``<feedback>`` or not) -> ``approval`` (blocked); ``The tool execution failed with the
  following error: <error>X</error>`` -> error text ``X`` (a missing parameter ->
  ``validation``, a ``.clineignore`` / ``.rooignore`` refusal -> ``policy``). From a tool
  whose output is outside text (``UNTRUSTED_OUTPUT``: a page, an MCP server's reply) that
  wording is no proof: the error type is ``unknown`` (fail closed, scored as executed).
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections import deque
from collections.abc import Iterator
from typing import Any

from pipeline.ingest.adapters._common import tool_call, tool_result

# The tools of Cline (src/core/assistant-message: toolUseNames), Roo Code and Kilo Code
# (src/shared/tools.ts) that a model writes as XML. Each has an entry in
# pipeline/policy/cline.toml or a generic one (tests/test_adapters_cline.py checks).
TOOL_NAMES: frozenset[str] = frozenset({
    # Cline
    "execute_command", "read_file", "write_to_file", "replace_in_file", "search_files", "list_files",
    "list_code_definition_names", "browser_action", "use_mcp_tool", "access_mcp_resource",
    "ask_followup_question", "plan_mode_respond", "load_mcp_documentation", "attempt_completion", "new_task",
    "condense", "report_bug", "new_rule", "web_fetch",
    # Roo Code / Kilo Code
    "apply_diff", "insert_content", "search_and_replace", "codebase_search", "switch_mode", "fetch_instructions",
    "update_todo_list", "run_slash_command", "generate_image",
})
# arguments whose text may hold their own closing tag (file text, diffs, a final answer)
_LONG_ARGS = frozenset({"content", "diff", "result"})
_NAMES = "|".join(sorted(TOOL_NAMES, key=len, reverse=True))
_OPEN = re.compile(r"<(" + _NAMES + r")>")
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_CHILD = re.compile(r"<([A-Za-z_][\w-]*)>")
_CLOSE = re.compile(r"</([A-Za-z_][\w-]*)>")
_PATH = re.compile(r"<(path)>")
# `[tool]`, `[tool for 'what']`, or Roo's `[read_file for 'a, b'. Reading multiple files ...]`
_HEADER = re.compile(r"\s*\[(" + _NAMES + r")(?: for '.*?)?\] Result:", re.S)
_SKIPPED = re.compile(r"\s*(?:Tool \[(" + _NAMES + r")\] was not executed|Skipping tool \[(" + _NAMES + r")\b)")
# a denial, alone or with the user's feedback (Cline: a second sentence; Roo: "... and provided")
_DENIED = re.compile(r"The user denied this operation(?:\.|\s+and provided the following feedback:)\s*"
                     r"(?:(?:The user provided the following feedback:)?\s*<feedback>.*</feedback>)?", re.S)
_FAILED = re.compile(r"The tool execution failed with the following error:\s*<error>(.*)</error>", re.S)
# tools whose output is outside text (pages, MCP servers' replies): the agent's error
# wording there does not prove a denial or a failure
UNTRUSTED_OUTPUT = frozenset({"web_fetch", "browser_action", "use_mcp_tool", "access_mcp_resource"})
_ENV = "<environment_details>"
_RESUMED = "[TASK RESUMPTION]"
# the result of a call the task was interrupted on: it may have run (fail closed: unknown)
INTERRUPTED = {"type": "unknown", "message": "interrupted: the task was resumed before this call's result"}
_HEAD_TOOL = re.compile(r"\[(?:" + _NAMES + r")(?:\]| for ')")


def head_mark(text: str, window: int = 4096, tries: int = 32) -> bool:
    """True when a file's head (its JSON text, not parsed) holds a Cline / Roo Code mark:
    an ``<environment_details>`` block, or ``] Result:`` with ``[<tool>]`` / ``[<tool> for
    '`` within ``window`` characters before it (the first ``tries`` of them: bounded work
    on any head)."""
    if _ENV in text:
        return True
    pos = text.find("] Result:")
    for _ in range(tries):
        if pos < 0:
            return False
        if _HEAD_TOOL.search(text, max(0, pos - window), pos + 1):
            return True
        pos = text.find("] Result:", pos + 1)
    return False


def _elements(text: str, opener: re.Pattern[str], start: int, end: int,
              long: frozenset[str] = frozenset()) -> Iterator[tuple[str, int, int]]:
    """(tag, body start, body end) of each element of ``text[start:end]`` that ``opener``
    opens and its closing tag closes (the first one after it; the last for a ``long``
    tag), in order, elements inside another skipped. Every closing tag is found in one
    pass first: an opening tag no closing tag follows costs no scan of the rest."""
    closes: dict[str, list[int]] = {}
    for m in _CLOSE.finditer(text, start, end):
        closes.setdefault(m.group(1), []).append(m.start())
    pos = start
    while (m := opener.search(text, pos, end)) is not None:
        tag, body = m.group(1), m.end()
        found = closes.get(tag, [])
        i = bisect_left(found, body)
        if i == len(found):
            pos = body
            continue
        stop = found[-1] if tag in long else found[i]
        yield tag, body, stop
        pos = stop + len(tag) + 3


def _children(body: str) -> dict[str, str]:
    """The child elements of a call's body as ``{tag: text}`` (the first of each tag)."""
    args: dict[str, str] = {}
    for tag, start, stop in _elements(body, _CHILD, 0, len(body), _LONG_ARGS):
        value = body[start:stop]
        args.setdefault(tag, value.strip("\n") if tag in _LONG_ARGS else value.strip())
    return args


def _call(name: str, body: str) -> tuple[str, str, dict[str, Any]]:
    """(tag, canonical tool name, arguments) of one XML call."""
    args: dict[str, Any] = dict(_children(body))
    if name == "use_mcp_tool" and args.get("server_name") and args.get("tool_name"):
        try:
            parsed = json.loads(args.get("arguments") or "{}")
        except (ValueError, RecursionError):
            parsed = None
        parsed = parsed if isinstance(parsed, dict) else {"arguments": args.get("arguments")}
        return name, f"mcp__{args['server_name']}__{args['tool_name']}", parsed
    if name == "read_file" and "path" not in args and isinstance(args.get("args"), str):
        text = args["args"]
        paths = [text[a:b].strip() for _, a, b in _elements(text, _PATH, 0, len(text))]
        if paths:
            args["path"], args["paths"] = paths[0], paths
    return name, name, args


def calls_in(text: str) -> list[tuple[str, str, dict[str, Any]]]:
    """The XML calls of one assistant text, in order: (tag, canonical tool name, arguments)."""
    out: list[tuple[str, str, dict[str, Any]]] = []
    pos = 0
    for fence in [*_FENCE.finditer(text), None]:
        end = fence.start() if fence is not None else len(text)
        out.extend(_call(tag, text[start:stop]) for tag, start, stop in _elements(text, _OPEN, pos, end))
        pos = fence.end() if fence is not None else end
    return out


def _texts(content: Any) -> list[str]:
    """The texts of a message's content: a string, or its text blocks' text."""
    if isinstance(content, str):
        return [content]
    blocks = content if isinstance(content, list) else []
    return [b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)]


def answers_xml_call(messages: list[Any]) -> int | None:
    """The index of the first user message whose text answers an XML call of the assistant
    message before it (a ``[<tool> ...] Result:`` header of a tool it called), or None."""
    called: set[str] = set()
    for i, msg in enumerate(messages):
        role = msg.get("role") if isinstance(msg, dict) else None
        texts = _texts(msg.get("content")) if isinstance(msg, dict) else []
        if role == "assistant":
            called = {tag for text in texts for tag, _, _ in calls_in(text)}
        elif role == "user" and called:
            if any((m := _HEADER.match(t)) is not None and m.group(1) in called for t in texts):
                return i
            called = set()
    return None


def _error(text: str, tag: str) -> Any:
    """The canonical error of a result's text (None: the tool ran). Only a whole result of
    the agent's own wording counts; from a tool whose output is outside text
    (``UNTRUSTED_OUTPUT``) that wording is no proof (a page can say it), so the call is
    ``unknown`` (fail closed: scored as executed), never blocked or failed."""
    if _DENIED.fullmatch(text.strip()):
        error: Any = {"type": "approval", "message": text.strip()[:300]}
    elif (m := _FAILED.fullmatch(text.strip())) is not None:
        detail = m.group(1).strip() or "error"
        error = detail
        if detail.startswith("Missing value for required parameter"):
            error = {"type": "validation", "message": detail[:300]}
        elif re.match(r"Access to .* is blocked by the \.(cline|roo|kilocode)ignore file", detail, re.S):
            error = {"type": "policy", "message": detail[:300]}
    else:
        return None
    if tag in UNTRUSTED_OUTPUT:
        return {"type": "unknown", "message": f"{tag} output reads as the agent's error wording (not trusted): "
                                              + text.strip()[:200]}
    return error


class XmlTools:
    """The XML calls of one conversation and the results that answer them."""

    def __init__(self) -> None:
        self.ordinal = 0
        self.pending: deque[tuple[str, str]] = deque()  # (id, tool name) of unanswered calls
        self.open: dict[str, Any] | None = None  # the result whose output is still being read
        self.parts: list[str] = []
        self.tag = ""  # the tool of the open result
        self.last: dict[str, Any] | None = None  # the result closed last

    def turn(self) -> None:
        """A new assistant message: the calls of the one before it that no result answered
        stay unanswered (the agent answers each message in the next user message)."""
        self.close()
        self.pending.clear()

    def calls(self, texts: list[str]) -> list[dict[str, Any]]:
        """The canonical calls of assistant texts, each waiting for its result."""
        out: list[dict[str, Any]] = []
        for text in texts:
            for tag, name, args in calls_in(text):
                self.ordinal += 1
                call_id = f"xml_{self.ordinal}"
                self.pending.append((call_id, tag))
                out.append(tool_call(call_id, name, args))
        return out

    def _answer(self, tool: str) -> str | None:
        """The id of the call a result of ``tool`` answers (removed from the waiting ones)."""
        for i, (call_id, name) in enumerate(self.pending):
            if name == tool:
                del self.pending[i]
                return call_id
        return self.pending.popleft()[0] if self.pending else None

    def text(self, text: str) -> tuple[list[dict[str, Any]], bool]:
        """One user text block: (the tool messages it starts, whether it is tool output).
        A header or a not-executed notice starts a result (and is its output); a later
        block continues the open result up to ``<environment_details>``; a ``[TASK
        RESUMPTION]`` block (user text) answers the interrupted calls still waiting."""
        header = _HEADER.match(text)
        skipped = None if header else _SKIPPED.match(text)
        if header or skipped:
            tool = header.group(1) if header else (skipped.group(1) or skipped.group(2))  # type: ignore[union-attr]
            call_id = self._answer(tool) if self.pending else None
            if call_id is not None:
                self.close()
                self.open, self.tag = tool_result(call_id, ""), tool
                if header:
                    self.parts = [text[header.end():].lstrip("\n")]
                else:
                    self.parts = [text]
                    self.open["error"] = {"type": "not_executed", "message": text.strip()[:300]}
                return [self.open], True
        if self.open is not None and not text.lstrip().startswith(_ENV):
            self.parts.append(text)
            return [], True
        self.close()
        if text.lstrip().startswith(_RESUMED) and self.pending:
            interrupted = [tool_result(call_id, "", dict(INTERRUPTED)) for call_id, _ in self.pending]
            self.pending.clear()
            return interrupted, False
        return [], False

    def close(self) -> None:
        """End the open result: its text and error."""
        if self.open is None:
            return
        text = "\n".join(p for p in self.parts if p)
        self.open["content"] = text
        if self.open.get("error") is None:
            self.open["error"] = _error(text, self.tag)
        self.last, self.open, self.parts = self.open, None, []
