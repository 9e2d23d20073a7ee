"""SWE-agent ``.traj`` files -> canonical records (one file = one trajectory, line 1).

A ``.traj`` is ``{"environment", "trajectory": [{action, observation, thought, ...}],
"history": [{role, content, ...}], "info"}``. The leading system/user messages of
``history`` (up to the first assistant turn; demonstration messages excluded) give the
context; each ``trajectory`` step becomes an assistant message (text = thought) with one
call ``bash {"command": action}`` (id ``c<n>``) followed by its tool message
(content = observation). SWE-agent has no structured errors: observations are text
(the policy's text rules apply). When ``trajectory`` is missing, assistant turns of
``history`` with an ``action`` are used instead, answered by the next non-assistant turn.

mini-SWE-agent (``.traj.json``, or ``.traj`` in SWE-bench's bash-only submissions:
``{"info", "messages", "trajectory_format": "mini-swe-agent-1[.x]", "instance_id"?}``)
talks in plain messages: an assistant message holding exactly one ```bash (or ```sh)
block is one call ``bash {"command": block}``, answered by the next user message (its
observation: ``<returncode>N</returncode>`` then the output; N != 0 -> ``exit_code``, the
program ran; a "timed out" notice -> ``timeout``); an assistant message with no block or
several is text (mini answers it with a format error, kept as the user's message).
Messages with OpenAI ``tool_calls`` and ``tool`` results (toolcall models, format 1.1) are
read as such.

trajectory_id: ``<experiment>:<instance_id>`` (:func:`trajectory_id`; a mini-SWE-agent
file's own ``instance_id`` when it has one); suite: ``swe-agent``.
"""

from __future__ import annotations

import re
from typing import Any

from pipeline.ingest.adapters._common import (
    AdapterError, Ctx, assistant, require_dict, require_list, text_of, tool_call, tool_result,
)
from pipeline.ingest.records import canonical_message

SUITE = "swe-agent"


_BLOCK = re.compile(r"```(?:bash|sh)[ \t]*\n(.*?)\n```", re.S)
_RETURNCODE = re.compile(r"\A\s*<returncode>\s*(-?\d+)\s*</returncode>")


def trajectory_id(ctx: Ctx, instance: Any = None) -> str:
    """``<experiment>:<instance_id>``. The file is named after its instance
    (``<instance_id>.traj``), and every experiment (a model, a configuration) of a
    benchmark runs the same instances: SWE-agent writes
    ``trajectories/<user>/<experiment>/<instance_id>.traj`` (1.0 on:
    ``<output_dir>/<instance_id>/<instance_id>.traj``), so the stem alone made the
    trajectories of a second experiment in one run ``duplicate_trajectory_id``. The
    experiment is the nearest folder above the file that is not named after the instance."""
    stem, folder = ctx.stem.removesuffix(".traj"), ctx.path.absolute().parent
    if isinstance(instance, str) and instance:
        stem = instance
    while folder.name == stem and folder.parent != folder:
        folder = folder.parent
    return f"{folder.name}:{stem}" if folder.name and folder.name != stem else stem


def _is_demo(msg: dict[str, Any]) -> bool:
    return bool(msg.get("is_demo")) or msg.get("message_type") == "demonstration"


def _context(history: list[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for msg in history:
        if not isinstance(msg, dict) or _is_demo(msg):
            continue
        if msg.get("role") == "assistant":
            break
        if msg.get("role") in ("system", "user"):
            out.append(canonical_message(msg["role"], text_of(msg.get("content"))))
    return out


def _steps(pairs: list[tuple[Any, Any, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n, (thought, action, observation) in enumerate(pairs, start=1):
        command = action.rstrip() if isinstance(action, str) else action
        out.append(assistant(thought if isinstance(thought, str) and thought else None,
                             [tool_call(f"c{n}", "bash", {"command": command})]))
        if observation is not None:
            out.append(tool_result(f"c{n}", text_of(observation)))
    return out


def _from_history(history: list[Any]) -> list[tuple[Any, Any, Any]]:
    pairs: list[tuple[Any, Any, Any]] = []
    for i, msg in enumerate(history):
        if isinstance(msg, dict) and msg.get("role") == "assistant" and msg.get("action") and not _is_demo(msg):
            nxt = history[i + 1] if i + 1 < len(history) else None
            answer = nxt.get("content") if isinstance(nxt, dict) and nxt.get("role") != "assistant" else None
            pairs.append((msg.get("thought"), msg["action"], answer))
    return pairs


def bash_block(text: str | None) -> str | None:
    """The command of a text-protocol action: the one ```bash (or ```sh) block of ``text``;
    None when it holds none or several (mini-SWE-agent answers those with a format error)."""
    blocks = _BLOCK.findall(text or "")
    return blocks[0] if len(blocks) == 1 else None


def observation_error(text: str) -> Any:
    """The error of a mini-SWE-agent observation (None: the command exited 0)."""
    code = _RETURNCODE.match(text)
    if code is not None:
        rc = int(code.group(1))
        return None if rc == 0 else {"type": "exit_code", "message": f"exit code {rc}: {text[code.end():][:200]}"}
    if "timed out" in text[:300]:
        return {"type": "timeout", "message": text[:200]}
    return None


def _mini(messages: list[Any]) -> list[dict[str, Any]]:
    """The canonical messages of a mini-SWE-agent conversation."""
    out: list[dict[str, Any]] = []
    pending: str | None = None  # the id of a text-protocol call awaiting its observation
    for i, msg in enumerate(messages):
        msg = require_dict(msg, f"messages[{i}]")
        role, text = msg.get("role"), text_of(msg.get("content"))
        text = text if isinstance(text, str) else None
        if role == "assistant":
            calls = [tool_call(c.get("id"), (c.get("function") or {}).get("name"), (c.get("function") or {}).get("arguments"))
                     for c in require_list(msg.get("tool_calls") or [], f"messages[{i}].tool_calls") if isinstance(c, dict)]
            command = bash_block(text) if not calls else None
            pending = f"m{i}" if command is not None else None
            if command is not None:
                calls = [tool_call(pending, "bash", {"command": command})]
            out.append(assistant(text, calls))
        elif role == "tool":
            out.append(tool_result(msg.get("tool_call_id"), text or ""))
        elif role == "user" and pending is not None:
            out.append(tool_result(pending, text or "", observation_error(text or "")))
            pending = None
        elif role in ("system", "user"):
            out.append(canonical_message(role, text))
    return out


def convert(document: Any, ctx: Ctx) -> dict[str, Any]:
    """Convert one SWE-agent (or mini-SWE-agent) trajectory file."""
    doc = require_dict(document, "trajectory file")
    if isinstance(doc.get("messages"), list) and not isinstance(doc.get("trajectory"), list):
        info = doc.get("info") if isinstance(doc.get("info"), dict) else {}
        meta = {"format": "swe-agent", "trajectory_format": doc.get("trajectory_format"),
                "exit_status": info.get("exit_status"), "mini_version": info.get("mini_version")}
        return {"trajectory_id": trajectory_id(ctx, doc.get("instance_id")), "suite": SUITE, "meta": meta,
                "messages": _mini(doc["messages"])}
    history = doc.get("history") if isinstance(doc.get("history"), list) else []
    if isinstance(doc.get("trajectory"), list):
        pairs = []
        for i, step in enumerate(require_list(doc["trajectory"], "trajectory")):
            step = require_dict(step, f"trajectory[{i}]")
            pairs.append((step.get("thought"), step.get("action"), step.get("observation")))
    elif history:
        pairs = _from_history(history)
    else:
        raise AdapterError("neither 'trajectory' nor 'history' holds steps")
    info = doc.get("info") if isinstance(doc.get("info"), dict) else {}
    meta = {"format": "swe-agent", "environment": doc.get("environment"),
            "exit_status": info.get("exit_status")}
    return {"trajectory_id": trajectory_id(ctx), "suite": SUITE, "meta": meta,
            "messages": _context(history) + _steps(pairs)}
