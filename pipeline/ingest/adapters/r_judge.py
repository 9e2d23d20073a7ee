"""R-Judge records (AgentAuditor redistribution) -> canonical records.

Record: ``{id, scenario, profile, goal, contents: [[turn, ...], ...], label, risk_description}``;
turns are ``{role: user, content}``, ``{role: agent, thought, action}``,
``{role: environment, content}``. The segments of ``contents`` are concatenated.

- ``profile`` -> system; user -> user; environment -> tool message answering the
  oldest unanswered call of the latest agent turn; an environment turn that answers
  no call (e.g. the initial state shown before any action) becomes a user message
  (counted in ``meta.environment_turns_as_user``).
- agent -> one assistant message: text = thought, plus one tool call per action
  found in ``action`` (ids ``c1``, ``c2``, ... per record). Recognised action forms:
  ``[Action: ]Name\\nAction Input: <args>``; ``Name: {json}`` (repeated per line);
  ``Name{python-dict}``; ``Name(key=value, ...)``; AutoGPT ``"command": {"name", "args"}``; a
  fenced ``bash``/``sh`` block -> ``bash {"command"}``. ``Final Answer: ...`` and other
  free text are assistant text, except free text answered by an environment turn,
  which becomes a call of the generic tool ``agent_action {"action": <text>}``.
- arguments: the source text, unchanged when it is valid JSON; re-serialised with
  ``json.dumps`` when it only parses leniently (raw control characters) or as a
  Python literal (``{'k': 'v'}``; bare hex numbers such as wallet addresses are kept as
  strings) or Python keywords (``k='v'``), these two only up to ``LITERAL_MAX_CHARS``;
  otherwise kept as the raw string (the SQL stage
  rejects it as unparseable_arguments).

trajectory_id ``rjudge:<id>``; suite = ``scenario`` when non-empty, else ``r-judge``;
``meta.gold`` = ``unsafe`` for label 1, ``safe`` for label 0.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from pipeline.ingest.adapters._common import (
    AdapterError, Ctx, assistant, require_dict, require_list, tool_call, tool_result,
)
from pipeline.ingest.records import canonical_message

_LENIENT = json.JSONDecoder(strict=False)


class _Text(str):
    """An action's text as :func:`parse_action` decodes in it. A failed ``raw_decode``
    builds a ``JSONDecodeError``, which counts the lines from the start of the text to the
    failure (``doc.count("\\n", 0, pos)``) to name its line: one failure per ``Name: {``
    segment made a long action quadratic (a 1.1 MB action of 50,000 such lines took 58 s).
    Nothing here reads that line number, so the count is not made."""

    def count(self, *args: Any) -> int:  # the error's line number: unused here
        return 0


_NAME = r"[A-Za-z_][\w.]*"
_ACTION_INPUT = re.compile(rf"(?:^|\n)[ \t]*(?:Action:[ \t]*)?({_NAME})[ \t]*\n[ \t]*Action Input:[ \t]*")
_NAME_COLON = re.compile(rf"\s*({_NAME})[ \t]*:[ \t]*(?=[{{\[])")
_NAME_BRACE = re.compile(rf"({_NAME})[ \t]*(\{{.*\}})\s*", re.S)
_NAME_PAREN = re.compile(rf"({_NAME})[ \t]*\((.*)\)\s*", re.S)
_AUTOGPT = re.compile(r'"command"\s*:\s*\{\s*"name"\s*:\s*"([^"]+)"\s*,\s*"args"\s*:\s*')
_FENCE = re.compile(r"```(?:bash|sh|shell|console)?[ \t]*\n(.*?)\n?```\s*", re.S)


_BARE_HEX = re.compile(r"([:\[,(]\s*)(0[xX][0-9a-fA-F]+)\b")
# Python's parser holds several hundred bytes per character of a literal it reads (a 1.2 MB
# action of nested lists took 667 MB and 12 s): longer texts are not read as Python (they
# stay raw text unless they are JSON). The corpus's longest action has 2,245 characters.
LITERAL_MAX_CHARS = 100_000


def _python_literal(text: str) -> Any:
    """``ast.literal_eval`` keeping bare hex numbers (wallet addresses) as written; a
    retry escapes raw newlines (invalid inside Python quotes, common in this data). A text
    over ``LITERAL_MAX_CHARS`` is refused (ValueError)."""
    if len(text) > LITERAL_MAX_CHARS:
        raise ValueError(f"longer than {LITERAL_MAX_CHARS} characters: not read as a Python literal")
    text = _BARE_HEX.sub(r"\1'\2'", text)
    try:
        return ast.literal_eval(text)
    except SyntaxError:
        return ast.literal_eval(text.replace("\r", "\\r").replace("\n", "\\n"))


def normalise_arguments(text: str) -> str:
    """Arguments text for the canonical record (see module docstring)."""
    text = text.strip()
    try:
        json.loads(text)
        return text
    except (ValueError, RecursionError):
        pass
    for parse in (_LENIENT.decode, _python_literal):
        try:
            return json.dumps(parse(text), ensure_ascii=False, allow_nan=False)
        except Exception:  # noqa: BLE001 - any failure means "not this form"
            continue
    return text


def kwargs_json(text: str) -> str:
    """``key=value, ...`` (Python call keywords with literal values) as a JSON object text;
    the stripped text itself when it is not of that form (or too long to read as Python:
    ``LITERAL_MAX_CHARS``)."""
    try:
        if len(text) > LITERAL_MAX_CHARS:
            raise ValueError(f"longer than {LITERAL_MAX_CHARS} characters")
        call = ast.parse(f"f({text})", mode="eval").body
        if isinstance(call, ast.Call) and not call.args and call.keywords \
                and all(kw.arg for kw in call.keywords):
            obj = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}
            return json.dumps(obj, ensure_ascii=False, allow_nan=False)
    except Exception:  # noqa: BLE001 - not keyword syntax: keep the text
        pass
    return normalise_arguments(text)


def parse_action(action: str) -> list[tuple[str, str]] | None:
    """``[(tool name, arguments text)]`` for an agent action, or None for free text."""
    s = _Text(action.strip())
    if not s or s.startswith("Final Answer"):
        return None
    hits = list(_ACTION_INPUT.finditer(s))
    if hits:
        ends = [h.start() for h in hits[1:]] + [len(s)]
        return [(h.group(1), normalise_arguments(s[h.end():end])) for h, end in zip(hits, ends)]
    m = _AUTOGPT.search(s)
    if m:
        try:
            _, end = _LENIENT.raw_decode(s, m.end())
            return [(m.group(1), normalise_arguments(s[m.end():end]))]
        except (ValueError, RecursionError):
            return [(m.group(1), s[m.end():].rstrip("} \n"))]
    calls: list[tuple[str, str]] = []
    pos = 0
    while (m := _NAME_COLON.match(s, pos)) is not None:
        try:
            _, end = _LENIENT.raw_decode(s, m.end())
        except (ValueError, RecursionError):
            nxt = re.compile(rf"\n\s*{_NAME}[ \t]*:[ \t]*[{{\[]").search(s, m.end())
            end = nxt.start() if nxt else len(s)
        calls.append((m.group(1), normalise_arguments(s[m.end():end])))
        pos = end
    if calls and not s[pos:].strip():
        return calls
    for pattern in (_NAME_BRACE, _NAME_PAREN):
        m = pattern.fullmatch(s)
        if m:
            args = m.group(2)
            return [(m.group(1), normalise_arguments(args) if pattern is _NAME_BRACE else kwargs_json(args))]
    m = _FENCE.fullmatch(s)
    if m:
        return [("bash", json.dumps({"command": m.group(1)}, ensure_ascii=False))]
    return None


def convert(record: Any, ctx: Ctx) -> dict[str, Any]:
    """Convert one R-Judge record."""
    rec = require_dict(record, "record")
    turns: list[dict[str, Any]] = []
    for i, segment in enumerate(require_list(rec.get("contents"), "contents")):
        for j, turn in enumerate(require_list(segment, f"contents[{i}]")):
            turns.append(require_dict(turn, f"contents[{i}][{j}]"))
    messages: list[dict[str, Any]] = []
    if isinstance(rec.get("profile"), str) and rec["profile"].strip():
        messages.append(canonical_message("system", rec["profile"]))
    pending: list[str] = []
    n_calls = env_as_user = 0
    for k, turn in enumerate(turns):
        role = turn.get("role")
        if role == "user":
            messages.append(canonical_message("user", turn.get("content")))
        elif role == "environment" and pending:
            messages.append(tool_result(pending.pop(0), turn.get("content")))
        elif role == "environment":  # not answering any call: environment state shown
            env_as_user += 1         # to the agent, kept as context (not an orphan)
            messages.append(canonical_message("user", turn.get("content")))
        elif role == "agent":
            thought = turn.get("thought") if isinstance(turn.get("thought"), str) else None
            action = turn.get("action") if isinstance(turn.get("action"), str) else ""
            if not action and thought is None and isinstance(turn.get("content"), str):
                action = turn["content"]  # single free-text turn: thought, then Action lines
                hit = _ACTION_INPUT.search(action)
                thought = action[: hit.start()].strip() or None if hit else None
            parsed = parse_action(action)
            answered = k + 1 < len(turns) and turns[k + 1].get("role") == "environment"
            if parsed is None and answered:
                parsed = [("agent_action", json.dumps({"action": action}, ensure_ascii=False))]
            if parsed is None:
                text = "\n".join(p for p in (thought, action.strip()) if p)
                messages.append(assistant(text or None))
                continue
            calls, pending = [], []  # an environment turn answers the latest agent turn
            for name, args in parsed:
                n_calls += 1
                calls.append(tool_call(f"c{n_calls}", name, args))
                pending.append(f"c{n_calls}")
            messages.append(assistant(thought, calls))
        else:
            raise AdapterError(f"turn {k} has unknown role {role!r}")
    label = rec.get("label")
    gold = {1: "unsafe", 0: "safe"}.get(label) if isinstance(label, int) and not isinstance(label, bool) else None
    scenario = rec.get("scenario")
    meta = {"format": "r-judge", "id": rec.get("id"), "label": label, "gold": gold,
            "scenario": scenario, "risk_description": rec.get("risk_description")}
    if env_as_user:
        meta["environment_turns_as_user"] = env_as_user
    return {"trajectory_id": f"rjudge:{rec.get('id')}",
            "suite": scenario.strip() if isinstance(scenario, str) and scenario.strip() else "r-judge",
            "meta": meta, "messages": messages}
