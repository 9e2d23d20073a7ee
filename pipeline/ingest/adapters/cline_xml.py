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
  with its closing tag, outside fenced code (```` ``` ```` up to the next ```` ``` ````
  outside the elements of known tools, whose file text may hold fences:
  :mod:`._cline_fences`; an unterminated one hides nothing); any other tag, or a tag without its closing tag, is
  text, except that a call the next user message answers is recovered (:class:`XmlTools`:
  a fenced element of a tool when the fenced ones are as many as its headers left
  unanswered, an unclosed last element read to the end, as Cline's streaming parser
  does); a header that still answers no call is an orphan result (``orphan_tool_result``). Its child elements are its arguments, as strings (trimmed, as
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
  whose output is outside text (``UNTRUSTED_OUTPUT``: a page, an MCP server's reply, the
  file text or names ``read_file`` / ``search_files`` / ``list_files`` /
  ``list_code_definition_names`` return) that wording is no proof: the error type is
  ``unknown`` (fail closed, scored as executed).
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from pipeline.ingest.adapters._cline_fences import Fences
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
# tools whose output is outside text an attacker can write (pages, MCP servers' replies,
# and the file text, names and matches read_file / search_files / list_files /
# list_code_definition_names return whole): the agent's error wording there does not prove
# a denial or a failure (a file holding only "The user denied this operation ...
# <feedback>...</feedback>" is no denial)
UNTRUSTED_OUTPUT = frozenset({"web_fetch", "browser_action", "use_mcp_tool", "access_mcp_resource", "read_file",
                              "search_files", "list_files", "list_code_definition_names"})
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


def _elements(text: str, opener: re.Pattern[str], start: int, end: int, long: frozenset[str] = frozenset(),
              ok: Callable[[int, int], bool] | None = None) -> Iterator[tuple[str, int, int]]:
    """(tag, body start, body end) of each element of ``text[start:end]`` that ``opener``
    opens and its closing tag closes (the first one after it; the last for a ``long``
    tag), in order, elements inside another skipped; one ``ok`` refuses is text. Every
    closing tag is found in one pass first: an opening tag no closing tag follows costs
    no scan of the rest."""
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
        if ok is not None and not ok(body, stop):
            pos = body
            continue
        yield tag, body, stop
        pos = stop + len(tag) + 3


def _children(body: str, open_tail: bool = False) -> dict[str, str]:
    """The child elements of a call's body as ``{tag: text}`` (the first of each tag); with
    ``open_tail``, an opening tag after the last element without its closing tag runs to
    the end of the body."""
    args: dict[str, str] = {}
    after = 0
    for tag, start, stop in _elements(body, _CHILD, 0, len(body), _LONG_ARGS):
        value = body[start:stop]
        args.setdefault(tag, value.strip("\n") if tag in _LONG_ARGS else value.strip())
        after = stop + len(tag) + 3
    if open_tail and (m := _CHILD.search(body, after)) is not None and f"</{m.group(1)}>" not in body[m.end():]:
        args.setdefault(m.group(1), body[m.end():].strip())
    return args


def _call(name: str, body: str, open_tail: bool = False) -> tuple[str, str, dict[str, Any]]:
    """(tag, canonical tool name, arguments) of one XML call; with ``open_tail`` (a call
    the text ends in), a last argument without its closing tag runs to the end."""
    args: dict[str, Any] = dict(_children(body, open_tail))
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


def _scan(text: str) -> tuple[list[tuple[int, tuple[str, str, dict[str, Any]]]],
                              list[tuple[int, str, tuple[str, str, dict[str, Any]]]]]:
    """(calls, hidden) of one assistant text: the calls outside fences, and the elements no
    call was read from: each closed one inside a fence (``"fenced"``) and an unclosed last
    one (``"unclosed"``: its body runs to the end of the text, as Cline's streaming parser
    reads a reply that stopped before the closing tag), each with its offset. Elements are
    found first: a fence hides one only when it opens before it and closes after it."""
    calls: list[tuple[int, tuple[str, str, dict[str, Any]]]] = []
    hidden: list[tuple[int, str, tuple[str, str, dict[str, Any]]]] = []
    marks = Fences(text)  # a fence inside an element's file text is its text
    elements = list(_elements(text, _OPEN, 0, len(text), ok=marks.element_ok))
    fences = marks.blocks([(start - len(tag) - 2, stop + len(tag) + 3) for tag, start, stop in elements])
    starts, after = [a for a, _ in fences], 0
    for tag, start, stop in elements:
        i = bisect_right(starts, start) - 1  # the fence that may hold it (one lookup)
        if i >= 0 and start < fences[i][1]:
            hidden.append((start, "fenced", _call(tag, text[start:stop])))
        else:
            calls.append((start, _call(tag, text[start:stop])))
            after = stop + len(tag) + 3
    pos = after
    while (m := _OPEN.search(text, pos)) is not None:
        i = bisect_right(starts, m.start()) - 1
        if i >= 0 and m.start() < fences[i][1]:
            pos = fences[i][1]
            continue
        if f"</{m.group(1)}>" not in text[m.end():]:
            hidden.append((m.start(), "unclosed", _call(m.group(1), text[m.end():], open_tail=True)))
        break
    return calls, hidden


def calls_in(text: str) -> list[tuple[str, str, dict[str, Any]]]:
    """The XML calls of one assistant text, in order: (tag, canonical tool name, arguments)."""
    return [call for _, call in _scan(text)[0]]


def _texts(content: Any) -> list[str]:
    """The texts of a message's content: a string, or its text blocks' text."""
    if isinstance(content, str):
        return [content]
    blocks = content if isinstance(content, list) else []
    return [b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)]


def cline_marked(messages: list[Any]) -> bool:
    """True when a conversation shows a Cline / Roo Code mark in a user message: a text
    block that opens with ``<environment_details>`` (or a text that ends with that block),
    or one that opens with a ``[<tool> ...] Result:`` header or a not-executed notice. XML
    tags in the text of any other conversation (a chat explaining Cline's syntax) are prose,
    never calls that ran."""
    for msg in messages:
        if not isinstance(msg, dict) or msg.get("role") != "user":
            continue
        for text in _texts(msg.get("content")):
            body = text.strip()
            if body.startswith(_ENV) or body.endswith("</environment_details>") or _HEADER.match(text) \
                    or _SKIPPED.match(text):
                return True
    return False


def answers_xml_call(messages: list[Any]) -> int | None:
    """The index of the first user message whose text answers an XML call of the assistant
    message before it (a ``[<tool> ...] Result:`` header of a tool it called, in a fence or
    unclosed too: :class:`XmlTools` would read it), or None."""
    called: set[str] = set()
    for i, msg in enumerate(messages):
        role = msg.get("role") if isinstance(msg, dict) else None
        texts = _texts(msg.get("content")) if isinstance(msg, dict) else []
        if role == "assistant":
            scans = [_scan(text) for text in texts]  # a fenced or unclosed element a header answers counts
            called = {call[0] for found, hidden in scans for *_, call in [*found, *hidden]}
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


def _answering(messages: list[Any]) -> list[list[str]]:
    """Per assistant message (in order), the tools the result headers and not-executed
    notices of the user message right after it name."""
    out: list[list[str]] = []
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or msg.get("role") != "assistant":
            continue
        nxt = messages[i + 1] if i + 1 < len(messages) else None
        texts = _texts(nxt.get("content")) if isinstance(nxt, dict) and nxt.get("role") == "user" else []
        tools = []
        for text in texts:
            if (m := _HEADER.match(text) or _SKIPPED.match(text)) is not None:
                tools.append(next(g for g in m.groups() if g))
        out.append(tools)
    return out


class XmlTools:
    """The XML calls of one conversation and the results that answer them. With the
    conversation's ``messages``, a call no call was read from is recovered when the next
    user message answers it: an element of a tool inside a fence when the fenced elements
    of that tool are as many as its headers left unanswered, an unclosed last element of a
    tool a header answers. A header or notice that answers no call is an orphan result
    (the record is rejected ``orphan_tool_result``: never read as user text)."""

    def __init__(self, messages: list[Any] | None = None) -> None:
        self.ordinal = 0
        self.pending: deque[tuple[str, str]] = deque()  # (id, tool name) of unanswered calls
        self.open: dict[str, Any] | None = None  # the result whose output is still being read
        self.parts: list[str] = []
        self.tag = ""  # the tool of the open result
        self.last: dict[str, Any] | None = None  # the result closed last
        self.answers = deque(_answering(messages or []))  # per assistant message: its answering tools
        self.expect: list[str] = []  # the tools answering the current assistant message
        self.read: list[str] = []  # the tools of the current assistant message's calls
        self.orphans = 0

    def turn(self) -> None:
        """A new assistant message: the calls of the one before it that no result answered
        stay unanswered (the agent answers each message in the next user message)."""
        self.close()
        self.pending.clear()
        self.expect = self.answers.popleft() if self.answers else []
        self.read = []

    def calls(self, texts: list[str]) -> list[dict[str, Any]]:
        """The canonical calls of assistant texts, each waiting for its result."""
        out: list[dict[str, Any]] = []
        for text in texts:
            found, hidden = _scan(text)
            read = self.read + [tag for _, (tag, _, _) in found]
            for kind in ("fenced", "unclosed"):
                for tag in {t for _, k, (t, _, _) in hidden if k == kind}:
                    mine = [(at, call) for at, k, call in hidden if k == kind and call[0] == tag]
                    if self.expect.count(tag) - read.count(tag) == len(mine):
                        found.extend(mine)
                        read.extend(tag for _ in mine)
            self.read = read
            for _, (tag, name, args) in sorted(found, key=lambda f: f[0]):
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
            if call_id is None:  # answers no call read: an orphan result, never user text
                self.orphans += 1
                call_id = f"xml_orphan_{self.orphans}"
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
