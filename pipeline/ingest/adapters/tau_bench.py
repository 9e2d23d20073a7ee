"""tau-bench result files -> canonical records.

A file is a JSON array; each element ``{"task_id", "trial"?, "reward", "info"?, "traj"}``
where ``traj`` is an OpenAI chat transcript (``arguments`` JSON strings; tool errors are
tool contents starting with ``"Error:"``, passed through unchanged for the policy's
content rules). Tool-call ids reused within a trajectory are repaired
(:func:`repair_call_ids`, ``meta.call_ids_repaired``).

trajectory_id: ``<file stem>:<task_id>:<0-based array index>`` (= source_line - 1);
suite: ``tau-bench-<domain>`` with the domain taken from the file name
(``airline``/``retail`` when present, else the last ``-`` part of the stem).
"""

from __future__ import annotations

from typing import Any

from pipeline.ingest.adapters._common import (
    AdapterError, Ctx, repair_call_ids, require_dict, require_list, tool_result,
)
from pipeline.ingest.records import canonical_message

DOMAINS = ("airline", "retail", "telecom")


def suite_for(stem: str) -> str:
    """``tau-bench-<domain>`` from a file stem such as ``gpt-4o-airline``."""
    low = stem.lower()
    for domain in DOMAINS:
        if domain in low:
            return f"tau-bench-{domain}"
    return f"tau-bench-{low.rsplit('-', 1)[-1] or 'unknown'}"


def _message(msg: Any, i: int) -> tuple[dict[str, Any], str | None]:
    msg = require_dict(msg, f"traj[{i}]")
    role = msg.get("role")
    if not isinstance(role, str):
        raise AdapterError(f"traj[{i}] has no role")
    if role == "tool":
        return tool_result(msg.get("tool_call_id"), msg.get("content"), msg.get("error")), msg.get("name")
    calls = msg.get("tool_calls")
    if calls is not None:
        calls = [dict(require_dict(c, f"traj[{i}].tool_calls[{j}]"))
                 for j, c in enumerate(require_list(calls, "tool_calls"))]
    return canonical_message(role, msg.get("content"), tool_calls=calls or None), None


def convert(record: Any, ctx: Ctx) -> dict[str, Any]:
    """Convert one tau-bench result element."""
    rec = require_dict(record, "record")
    messages: list[dict[str, Any]] = []
    hints: list[str | None] = []
    for i, msg in enumerate(require_list(rec.get("traj"), "traj")):
        converted, hint = _message(msg, i)
        messages.append(converted)
        hints.append(hint)
    repaired = repair_call_ids(messages, hints)
    info = rec.get("info") if isinstance(rec.get("info"), dict) else {}
    task = info.get("task") if isinstance(info.get("task"), dict) else {}
    meta: dict[str, Any] = {"format": "tau-bench", "task_id": rec.get("task_id"),
                            "trial": rec.get("trial"), "reward": rec.get("reward")}
    if "user_id" in task:
        meta["user_id"] = task["user_id"]
    if repaired:
        meta["call_ids_repaired"] = repaired
    return {"trajectory_id": f"{ctx.stem}:{rec.get('task_id')}:{ctx.line - 1}",
            "suite": suite_for(ctx.stem), "meta": meta, "messages": messages}
