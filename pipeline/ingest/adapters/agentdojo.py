"""AgentDojo traces -> canonical records, in both layouts AgentDojo traces come in:

- **Invariant-Explorer JSONL export**: line 1 is ``{"metadata": {...}}`` (run-level; not
  a record, skipped without a reject), then one trace per line ``{"index", "messages",
  "metadata", "annotations"}``.
- **AgentDojo's own results** (``benchmark`` writes one file per trace under
  ``<logdir>/<pipeline_name>/<suite>/<user_task_id>/<attack_type|none>/<injection_task_id|none>.json``):
  one object ``{"suite_name", "pipeline_name", "user_task_id", "injection_task_id",
  "attack_type", "injections", "messages", "error", "utility", "security", "duration",
  ...}``: the trace's fields at the top level instead of under ``metadata``.

Messages are OpenAI-style with ``arguments`` as objects, or AgentDojo's own function
calls ``{"function": name, "args": {...}, "id"}``, contents as text blocks; tool messages
carry ``error`` (null or ``"ValueError: ..."``) and ``tool_call`` ``{function, args}``.
Some models export ``id: ""`` / ``tool_call_id: null`` or reuse ids across turns: ids are
repaired with :func:`repair_call_ids` (the tool name in ``tool_call`` is the matching
hint) and the number of repaired ids is in ``meta.call_ids_repaired``.

trajectory_id: export ``<file stem>:<suite>:<user_task_id>:<injection_task_id|none>:<index>``
(``index`` falls back to ``L<source_line>``); AgentDojo's own results
``<pipeline_name>:<suite>:<user_task_id>:<attack_type|none>:<injection_task_id|none>``
(what its folders name: every model/defence writes the same file names, so a file stem
would give two pipelines' traces one id). suite: ``suite_name``.
"""

from __future__ import annotations

from typing import Any

from pipeline.ingest.adapters._common import (
    AdapterError, Ctx, repair_call_ids, require_dict, require_list, tool_call, tool_result,
)
from pipeline.ingest.records import canonical_message

META_KEYS = ("suite_name", "user_task_id", "injection_task_id", "attack_type", "success",
             "security", "model", "name", "pipeline_name", "utility", "benchmark_version", "error")


def is_trace_result(record: Any) -> bool:
    """A trace as AgentDojo's benchmark saves it: its fields at the top level."""
    return (isinstance(record, dict) and "messages" in record and "suite_name" in record
            and not isinstance(record.get("metadata"), dict))


def _fields(record: dict[str, Any]) -> dict[str, Any]:
    """The trace's fields: ``metadata`` of an export line, the record itself for a result."""
    if is_trace_result(record):
        return record
    return record["metadata"] if isinstance(record.get("metadata"), dict) else {}


def is_run_header(record: Any) -> bool:
    """The ``{"metadata": ...}`` header line of an AgentDojo export."""
    return isinstance(record, dict) and list(record) == ["metadata"]


def trajectory_id(stem: str, record: dict[str, Any], line: int) -> str:
    """The id used for a trace (also by :mod:`pipeline.ingest.adapters.gold`)."""
    meta = _fields(record)
    if is_trace_result(record):
        parts = [meta.get("pipeline_name"), meta.get("suite_name"), meta.get("user_task_id"),
                 meta.get("attack_type"), meta.get("injection_task_id")]
    else:
        index = record.get("index")
        parts = [stem, meta.get("suite_name"), meta.get("user_task_id"), meta.get("injection_task_id"),
                 index if index is not None else f"L{line}"]
    return ":".join("none" if p is None else str(p) for p in parts)


def _message(msg: dict[str, Any], i: int) -> tuple[dict[str, Any], str | None]:
    role = msg.get("role")
    if not isinstance(role, str):
        raise AdapterError(f"messages[{i}] has no role")
    if role == "tool":
        hint = msg.get("tool_call")
        name = hint.get("function") if isinstance(hint, dict) else None
        return tool_result(msg.get("tool_call_id"), msg.get("content"), msg.get("error")), name
    calls = []
    for j, call in enumerate(require_list(msg.get("tool_calls") or [], f"messages[{i}].tool_calls")):
        call = require_dict(call, f"messages[{i}].tool_calls[{j}]")
        fn = call.get("function")
        if isinstance(fn, dict):
            calls.append(tool_call(call.get("id"), fn.get("name"), fn.get("arguments")))
        else:  # flat variant {"id", "function": name, "args": {...}}
            calls.append(tool_call(call.get("id"), fn, call.get("args", call.get("arguments"))))
    return canonical_message(role, msg.get("content"), tool_calls=calls or None), None


def convert(record: Any, ctx: Ctx) -> dict[str, Any] | None:
    """Convert one trace; the run header line yields None (not a record)."""
    if is_run_header(record):
        if isinstance(record["metadata"], dict):
            ctx.state["run"] = {k: v for k, v in record["metadata"].items()
                                if isinstance(v, (str, int, float, bool)) or v is None}
        return None
    rec = require_dict(record, "record")
    raw_messages = require_list(rec.get("messages"), "messages")
    messages: list[dict[str, Any]] = []
    hints: list[str | None] = []
    for i, msg in enumerate(raw_messages):
        converted, hint = _message(require_dict(msg, f"messages[{i}]"), i)
        messages.append(converted)
        hints.append(hint)
    repaired = repair_call_ids(messages, hints)
    source_meta = _fields(rec)
    meta: dict[str, Any] = {"format": "agentdojo", "index": rec.get("index")}
    meta.update({k: source_meta.get(k) for k in META_KEYS if k in source_meta})
    if "run" in ctx.state:
        meta["run"] = ctx.state["run"]
    if repaired:
        meta["call_ids_repaired"] = repaired
    if rec.get("annotations"):
        meta["annotations"] = rec["annotations"]
    suite = source_meta.get("suite_name")
    return {"trajectory_id": trajectory_id(ctx.stem, rec, ctx.line),
            "suite": suite if isinstance(suite, str) and suite else "default",
            "meta": meta, "messages": messages}
