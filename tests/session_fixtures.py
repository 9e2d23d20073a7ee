"""Writers of Claude Code session lines and Codex rollout lines, shaped like the real files
(../shared/corpora/*/README.md "Format as observed"), for adapter tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SESSION = "11111111-2222-4333-8444-555555555555"


class Claude:
    """Lines of one Claude Code session file."""

    def __init__(self, session: str = SESSION, agent: str | None = None) -> None:
        self.session, self.agent = session, agent
        self.lines: list[dict[str, Any]] = []
        self.n = 0

    def _base(self, kind: str) -> dict[str, Any]:
        self.n += 1
        line: dict[str, Any] = {"parentUuid": None if self.n == 1 else f"u{self.n - 1}", "isSidechain": self.agent is not None,
                                "userType": "external", "cwd": "/home/dev/proj", "sessionId": self.session,
                                "version": "2.1.38", "gitBranch": "main", "type": kind, "uuid": f"u{self.n}",
                                "timestamp": f"2026-02-10T21:{self.n // 60:02d}:{self.n % 60:02d}.000Z"}
        if self.agent is not None:
            line["agentId"] = self.agent
        return line

    def raw(self, obj: dict[str, Any]) -> Claude:
        self.lines.append(obj)
        return self

    def user(self, text: str) -> Claude:
        return self.raw({**self._base("user"), "message": {"role": "user", "content": text}})

    def assistant(self, msg_id: str, *blocks: dict[str, Any]) -> Claude:
        return self.raw({**self._base("assistant"), "requestId": "req_1", "message": {
            "model": "claude-sonnet-4-5", "id": msg_id, "type": "message", "role": "assistant",
            "content": list(blocks), "usage": {"input_tokens": 1, "output_tokens": 1}}})

    def results(self, *results: tuple[str, str, bool], structured: Any = None) -> Claude:
        blocks = [{"tool_use_id": cid, "type": "tool_result", "content": content, "is_error": err}
                  for cid, content, err in results]
        line = {**self._base("user"), "message": {"role": "user", "content": blocks}}
        if structured is not None:
            line["toolUseResult"] = structured
        return self.raw(line)

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines), encoding="utf-8")
        return path


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def use(cid: str, name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": cid, "name": name, "input": args, "caller": {"type": "direct"}}


class Codex:
    """Lines of one Codex rollout file."""

    def __init__(self, session: str = "019e1695-0522-7c83-8b39-0dd379793f80") -> None:
        self.lines: list[dict[str, Any]] = []
        self.item("session_meta", id=session, cwd="/Users/dev/app", originator="codex_cli_rs",
                  cli_version="0.128.0", source="cli", model_provider="openai")

    def item(self, kind: str, **payload: Any) -> Codex:
        self.lines.append({"timestamp": "2026-05-11T10:29:40.150Z", "type": kind, "payload": payload})
        return self

    def message(self, role: str, value: str) -> Codex:
        kind = "output_text" if role == "assistant" else "input_text"
        return self.item("response_item", type="message", role=role, content=[{"type": kind, "text": value}])

    def call(self, cid: str, name: str, args: dict[str, Any]) -> Codex:
        return self.item("response_item", type="function_call", name=name, arguments=json.dumps(args), call_id=cid)

    def output(self, cid: str, output: str) -> Codex:
        return self.item("response_item", type="function_call_output", call_id=cid, output=output)

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines), encoding="utf-8")
        return path


def exec_output(code: int | None, body: str, session: int | None = None) -> str:
    """A 0.125+ exec_command / write_stdin output header."""
    status = f"Process exited with code {code}" if code is not None else f"Process running with session ID {session}"
    return f"Chunk ID: 1d7024\nWall time: 0.0100 seconds\n{status}\nOriginal token count: 9\nOutput:\n{body}"
