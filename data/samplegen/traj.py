"""The trajectory builder (messages with format variety) and the explode order of docs/design.md."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from .rand import ORG_DOMAINS, PARTNER_DOMAINS, SEED, Args, CallSpec, Message, iban, person, rand_str


@dataclass(frozen=True)
class Err:
    """A tool error. ``kind`` is the structured type (Inspect vocabulary + policy types);
    ``message`` is written so that the policy's text rules give the same status when
    the error is rendered as plain text."""

    kind: str
    message: str


FAILED_KINDS = {"validation", "parsing", "rate_limit", "permission", "file_not_found", "not_found", "auth"}


class Traj:
    """Builds one canonical trajectory. Format variety (content as text parts,
    arguments as object or JSON string, error as null/string/object) is drawn from
    the trajectory's own rng, so every case class gets all forms."""

    def __init__(self, suite: str, case: str, key: str) -> None:
        self.suite = suite
        self.case = case
        self.rng = random.Random(f"{SEED}|{suite}|{case}|{key}")
        self.messages: list[Message] = []
        self.gold = "safe"
        self.tags: list[str] = []
        self.label_mode = "auto"  # auto | full | dedupe | none
        self.hostile: str | None = None  # kind of hostile record, None for normal ones
        self.tid = ""
        self._n_calls = 0
        self.intended: dict[str, str] = {}  # call id -> error kind (for checks; never written out)
        self._id_style = self.rng.choice(["openai", "anthropic", "short"])
        self.org = self.rng.choice(ORG_DOMAINS)
        self.me = person(self.rng, self.org)
        self.colleague = person(self.rng, self.org, (self.me,))
        self.partner = person(self.rng, self.rng.choice(PARTNER_DOMAINS), (self.me, self.colleague))
        self.my_iban = iban(self.rng, self.rng.choice(["DE", "GB", "FR", "NL"]))
        self.app = self.rng.choice(
            [
                "billing-api",
                "orion",
                "atlas-web",
                "ledger",
                "pulse-worker",
                "harbor",
                "nimbus",
                "quartz-etl",
                "beacon",
                "tidepool",
            ]
        )

    # ------------------------------------------------------------------ labelling
    def tag(self, *tags: str) -> None:
        """Add slice tags (each once, in order)."""
        for t in tags:
            if t not in self.tags:
                self.tags.append(t)

    def unsafe(self, *tags: str) -> None:
        """Mark the gold unsafe and add slice tags."""
        self.gold = "unsafe"
        self.tag(*tags)

    # ------------------------------------------------------------------ formatting
    def _text(self, text: str) -> Any:
        """Usually a string; sometimes a list of text parts (split at a paragraph)."""
        r = self.rng.random()
        if r < 0.10:
            return [{"type": "text", "text": text}]
        if r < 0.16 and "\n\n" in text:
            head, tail = text.split("\n\n", 1)
            return [{"type": "text", "text": head + "\n\n"}, {"type": "text", "text": tail}]
        return text

    def _empty_assistant_content(self) -> Any:
        return self.rng.choice([None, None, None, "", "", "\n", [{"type": "text", "text": "  "}]])

    def _args(self, args: Args | str) -> Any:
        if isinstance(args, str):  # raw arguments text, possibly invalid JSON on purpose
            return args
        if self.rng.random() < 0.55:
            return json.dumps(args, ensure_ascii=False)
        return args

    def _call_id(self) -> str:
        self._n_calls += 1
        if self._id_style == "openai":
            return "call_" + rand_str(self.rng, 24)
        if self._id_style == "anthropic":
            return "toolu_01" + rand_str(self.rng, 22)
        return f"c{self._n_calls}"

    # ------------------------------------------------------------------ messages
    def system(self, text: str) -> None:
        # A few use OpenAI's `developer` role, which the explode order counts as system.
        """A system prompt (sometimes with OpenAI's ``developer`` role)."""
        role = "developer" if self.rng.random() < 0.05 else "system"
        self.messages.append({"role": role, "content": self._text(text)})

    def user(self, text: str) -> None:
        """A user message."""
        self.messages.append({"role": "user", "content": self._text(text)})

    def say(self, text: str) -> None:
        """An assistant text message without tool calls."""
        self.messages.append({"role": "assistant", "content": self._text(text)})

    def act(self, text: str | None, *calls: CallSpec) -> list[str]:
        """One assistant message: optional text, then the tool calls in order."""
        ids: list[str] = []
        tool_calls = []
        for name, args in calls:
            cid = self._call_id()
            ids.append(cid)
            tool_calls.append(
                {"id": cid, "type": "function", "function": {"name": name, "arguments": self._args(args)}}
            )
        content = self._text(text) if text else self._empty_assistant_content()
        self.messages.append({"role": "assistant", "content": content, "tool_calls": tool_calls})
        return ids

    def call(self, name: str, args: Args | str, text: str | None = None) -> str:
        """One assistant message with a single tool call; returns its id (no result yet)."""
        return self.act(text, (name, args))[0]

    def ok(self, cid: str, content: str) -> None:
        """The successful result of call ``cid``."""
        self.messages.append({"role": "tool", "tool_call_id": cid, "content": self._text(content), "error": None})

    def fail(self, cid: str, err: Err) -> None:
        """A failed / blocked / unknown result, rendered as object, string or 'Error:' text."""
        self.intended[cid] = err.kind
        r = self.rng.random()
        if r < 0.5:
            content: Any = self.rng.choice(["", err.message])
            error: Any = {"type": err.kind, "message": err.message}
        elif r < 0.8:
            content, error = self.rng.choice(["", err.message]), err.message
        else:
            content, error = f"Error: {err.message}", None
        self.messages.append({"role": "tool", "tool_call_id": cid, "content": content, "error": error})

    def step(self, name: str, args: Args | str, out: str, text: str | None = None) -> str:
        """A call that executes, with its result."""
        cid = self.call(name, args, text)
        self.ok(cid, out)
        return cid

    def record(self) -> dict[str, Any]:
        """The canonical record (trajectory_id, suite, messages)."""
        return {"trajectory_id": self.tid, "suite": self.suite, "messages": self.messages}


# ============================================================================ explode (docs/design.md)
@dataclass(frozen=True)
class ExplodedStep:
    """One step of the explode order (kind, text, tool name, call id)."""

    kind: str  # system | user | assistant_text | tool_call | tool_result
    text: str
    tool: str = ""
    call_id: str = ""


def text_of(content: Any) -> str:
    """The text of a message content (string, None or a list of text parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            p.get("text", "")
            for p in content
            if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
        )
    return json.dumps(content)


def explode(messages: list[Message]) -> list[ExplodedStep]:
    """Steps in the fixed explode order: system/user 1 step; assistant: its text (only
    when non-empty after strip) then one step per tool call; tool: 1 step."""
    steps: list[ExplodedStep] = []
    names: dict[str, str] = {}
    for m in messages:
        role = m.get("role")
        if role == "assistant":
            text = text_of(m.get("content"))
            if text.strip():
                steps.append(ExplodedStep("assistant_text", text))
            for c in m.get("tool_calls") or []:
                fn = c.get("function", {})
                args = fn.get("arguments")
                args_text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
                names[c.get("id", "")] = fn.get("name", "")
                steps.append(ExplodedStep("tool_call", args_text, fn.get("name", ""), c.get("id", "")))
        elif role == "tool":
            cid = m.get("tool_call_id", "")
            err = m.get("error")
            err_text = "" if err is None else (err if isinstance(err, str) else json.dumps(err))
            steps.append(ExplodedStep("tool_result", text_of(m.get("content")) + err_text, names.get(cid, ""), cid))
        elif role == "user":
            steps.append(ExplodedStep("user", text_of(m.get("content"))))
        else:
            steps.append(ExplodedStep("system", text_of(m.get("content"))))
    return steps
