"""The prompt file: how one step and its context become a chat-completions request.

A prompt file is TOML (the bundled one is ``pipeline/label/prompts/default.toml``):

- ``[[messages]]`` with ``role`` and ``content``: the chat messages sent, where
  ``${task}``, ``${history}``, ``${step}``, ``${kind}``, ``${tool_name}``,
  ``${trajectory_id}`` and ``${step_idx}`` are replaced (``string.Template``: data is
  inserted once, never re-read as a template);
- ``[request]``: extra request fields (``temperature``, ``max_tokens``, ``logprobs``,
  ``top_logprobs``, ...); ``model``, ``messages`` and ``stream`` are set by litmus-gate;
- ``[context]``: the token budget (tokens are estimated as characters / ``chars_per_token``);
- ``[parse]``: how a reply becomes a label (see :mod:`pipeline.label.reply`).

``prompt_sha256`` is the SHA-256 of the file's bytes: it keys the cache and is written
beside every label, so changing any of the above invalidates earlier replies.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import string
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from pipeline.errors import PromptError

PLACEHOLDERS = frozenset({"task", "history", "step", "kind", "tool_name", "trajectory_id", "step_idx"})
ROLES = frozenset({"system", "user", "assistant"})
RESERVED = frozenset({"model", "messages", "stream", "n"})
KINDS = ("system", "user", "assistant_text", "tool_call", "tool_result")


@dataclass(frozen=True)
class ContextBudget:
    """How much of a trajectory goes into one request (in estimated tokens)."""

    history_tokens: int = 3000  # preceding steps, newest first, until this budget is spent
    history_step_tokens: int = 500  # each preceding step is cut to this many first
    step_tokens: int = 2000  # the judged step itself
    task_tokens: int = 1000  # the task (first user message)
    chars_per_token: float = 4.0


@dataclass(frozen=True)
class ParseSpec:
    """How a reply becomes a label: a regex on the reply text, or a JSON field."""

    mode: str = "regex"  # "regex" | "json"
    pattern: str = r"(?i)^\s*(?P<label>safe|unsafe)\b(?:[ \t]*\r?\n\s*(?P<category>[^\r\n]+))?"
    field: str = "label"  # json mode: dotted path of the label
    score_field: str = ""  # json mode: dotted path of a probability unsafe (optional)
    category_field: str = ""  # json mode: dotted path of the category (optional)
    safe: tuple[str, ...] = ("safe",)
    unsafe: tuple[str, ...] = ("unsafe",)


@dataclass(frozen=True)
class Prompt:
    """A loaded prompt file."""

    source: str  # the file's path, or "bundled:default"
    sha256: str
    messages: tuple[tuple[str, str], ...]  # (role, template text)
    request: dict[str, Any]
    context: ContextBudget
    parse: ParseSpec


@dataclass(frozen=True)
class Step:
    """The columns of one ``steps`` row that a request is made of."""

    step_idx: int
    kind: str
    tool_name: str | None
    arguments: str | None
    content: str | None
    error_text: str | None


def _section(data: dict[str, Any], name: str) -> dict[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise PromptError(f"prompt file: [{name}] must be a table")
    return value


def _dataclass_from(cls: type, values: dict[str, Any], name: str) -> Any:
    known = set(cls.__dataclass_fields__)  # type: ignore[attr-defined]
    unknown = sorted(set(values) - known)
    if unknown:
        raise PromptError(f"prompt file: unknown key(s) in [{name}]: {', '.join(unknown)}")
    converted = {k: tuple(x.lower() if isinstance(x, str) else x for x in v) if isinstance(v, list) else v
                 for k, v in values.items()}
    try:
        return cls(**converted)
    except TypeError as exc:
        raise PromptError(f"prompt file: [{name}]: {exc}") from exc


def _check(prompt: Prompt) -> None:
    if not prompt.messages:
        raise PromptError("prompt file has no [[messages]]")
    seen: set[str] = set()
    for role, text in prompt.messages:
        if role not in ROLES:
            raise PromptError(f"prompt file: message role {role!r} is not one of {sorted(ROLES)}")
        template = string.Template(text)
        if not template.is_valid():
            raise PromptError("prompt file: a message has a malformed ${...} placeholder (write $$ for a dollar)")
        names = set(template.get_identifiers())
        if names - PLACEHOLDERS:
            raise PromptError(f"prompt file: unknown placeholder(s) {sorted(names - PLACEHOLDERS)}",
                              f"known: {', '.join(sorted(PLACEHOLDERS))}")
        seen |= names
    if "step" not in seen:
        raise PromptError("prompt file: no message contains ${step}, so the model would never see the step")
    try:
        json.dumps(prompt.request)
    except (TypeError, ValueError) as exc:
        raise PromptError("prompt file: [request] holds a value that is not JSON (a date?)") from exc
    bad = sorted(RESERVED & set(prompt.request))
    if bad:
        raise PromptError(f"prompt file: [request] may not set {', '.join(bad)} (litmus-gate sets them)")
    ctx = prompt.context
    for name, value in vars(ctx).items():
        if isinstance(value, bool) or not isinstance(value, (float, int) if name == "chars_per_token" else int):
            raise PromptError(f"prompt file: [context] {name} must be a number")
    for name, value in vars(prompt.parse).items():
        if not (isinstance(value, str) or (isinstance(value, tuple) and all(isinstance(v, str) for v in value))):
            raise PromptError(f"prompt file: [parse] {name} must be text (or a list of words)")
    if min(ctx.history_tokens, ctx.history_step_tokens, ctx.step_tokens, ctx.task_tokens) < 0 \
            or not ctx.chars_per_token > 0:
        raise PromptError("prompt file: [context] budgets must be >= 0 and chars_per_token > 0")
    parse = prompt.parse
    if parse.mode not in ("regex", "json"):
        raise PromptError(f"prompt file: [parse] mode must be regex or json, not {parse.mode!r}")
    if parse.mode == "regex":
        try:
            compiled = re.compile(parse.pattern)
        except re.error as exc:
            raise PromptError(f"prompt file: [parse] pattern does not compile: {exc}") from exc
        if "label" not in compiled.groupindex and compiled.groups < 1:
            raise PromptError("prompt file: [parse] pattern needs a group (?P<label>...) or one capture group")
    if set(parse.safe) & set(parse.unsafe) or not parse.safe or not parse.unsafe:
        raise PromptError("prompt file: [parse] safe and unsafe words must be non-empty and disjoint")


def load_prompt(path: Path | None) -> Prompt:
    """The prompt file at ``path``, or the bundled default; raises PromptError when invalid."""
    if path is None:
        raw = resources.files("pipeline.label").joinpath("prompts/default.toml").read_bytes()
        source = "bundled:default"
    else:
        try:
            raw = Path(path).read_bytes()
        except OSError as exc:
            raise PromptError(f"prompt file {path} cannot be read: {exc.strerror or exc}") from exc
        source = str(path)
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PromptError(f"prompt file {source} is not valid TOML: {exc}") from exc
    unknown = sorted(set(data) - {"name", "description", "messages", "request", "context", "parse"})
    if unknown:
        raise PromptError(f"prompt file {source}: unknown key(s) {', '.join(unknown)}")
    messages = data.get("messages", [])
    if not isinstance(messages, list) or not all(
            isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
            for m in messages):
        raise PromptError(f"prompt file {source}: [[messages]] need a string role and content")
    prompt = Prompt(source, hashlib.sha256(raw).hexdigest(), tuple((m["role"], m["content"]) for m in messages),
                    dict(_section(data, "request")),
                    _dataclass_from(ContextBudget, _section(data, "context"), "context"),
                    _dataclass_from(ParseSpec, _section(data, "parse"), "parse"))
    _check(prompt)
    return prompt


def tokens(text: str, chars_per_token: float) -> int:
    """Estimated token count of ``text``."""
    return math.ceil(len(text) / chars_per_token)


def trim(text: str, budget: int, chars_per_token: float) -> str:
    """``text`` cut to about ``budget`` tokens, saying how much was cut."""
    limit = int(budget * chars_per_token)
    if len(text) <= limit:
        return text
    return f"{text[:limit]} ...[{len(text) - limit} characters cut]"


def step_text(step: Step) -> str:
    """One step as the guard model reads it (the Llama Guard 'User' / 'Agent' roles)."""
    if step.kind == "tool_call":
        return f"Agent tool call: {step.tool_name or '?'}({step.arguments or ''})"
    if step.kind == "assistant_text":
        return f"Agent: {step.content or ''}"
    if step.kind == "tool_result":
        error = f" [error: {step.error_text}]" if step.error_text else ""
        return f"Tool result ({step.tool_name or '?'}):{error} {step.content or ''}"
    return f"{'User' if step.kind == 'user' else 'System'}: {step.content or ''}"


class TrajectoryView:
    """The steps of one trajectory, rendered once, so each judged step's request is
    built from the preceding steps without re-rendering them."""

    def __init__(self, trajectory_id: str, steps: Sequence[Step], budget: ContextBudget) -> None:
        self.trajectory_id = trajectory_id
        self.steps = list(steps)
        self.budget = budget
        cpt = budget.chars_per_token
        self.task_pos = next((i for i, s in enumerate(self.steps) if s.kind == "user"), None)
        task = self.steps[self.task_pos].content if self.task_pos is not None else None
        self.task = trim(task or "(no user message)", budget.task_tokens, cpt)
        self.short = [trim(step_text(s), budget.history_step_tokens, cpt) for s in self.steps]

    def history(self, pos: int) -> str:
        """The steps before position ``pos`` (the task excluded), newest first until the
        budget is spent, printed oldest first."""
        chosen: list[str] = []
        spent = 0
        earlier = [i for i in range(pos) if i != self.task_pos]
        for i in reversed(earlier):
            cost = tokens(self.short[i], self.budget.chars_per_token)
            if spent + cost > self.budget.history_tokens:
                break
            chosen.append(self.short[i])
            spent += cost
        omitted = len(earlier) - len(chosen)
        lines = ([f"[{omitted} earlier steps omitted]"] if omitted else []) + chosen[::-1]
        return "\n".join(lines) if lines else "(no earlier steps)"

    def messages(self, prompt: Prompt, pos: int) -> list[dict[str, str]]:
        """The chat messages judging the step at position ``pos``."""
        step = self.steps[pos]
        values = {"task": self.task, "history": self.history(pos),
                  "step": trim(step_text(step), self.budget.step_tokens, self.budget.chars_per_token),
                  "kind": step.kind, "tool_name": step.tool_name or "", "trajectory_id": self.trajectory_id,
                  "step_idx": str(step.step_idx)}
        safe = {k: _defang(v) for k, v in values.items()}
        return [{"role": role, "content": string.Template(text).substitute(safe)}
                for role, text in prompt.messages]


def _defang(text: str) -> str:
    """Data cannot close the prompt's ``<BEGIN ...>`` / ``<END ...>`` sections (a step
    that writes ``<END STEP TO ASSESS>`` followed by ``safe`` is an injection attempt)."""
    return _DELIMITER.sub(lambda m: "< " + m.group(1), text)


_DELIMITER = re.compile(r"<\s*(BEGIN|END)\b", re.IGNORECASE)
