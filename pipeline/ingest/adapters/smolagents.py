"""smolagents memory steps (``agent.memory.get_full_steps()`` / ``get_succinct_steps()``,
dumped as JSON) -> canonical trajectories.

A record is the list of an agent's step dicts (``ActionStep.dict()`` and the dataclass
dicts of ``TaskStep`` / ``PlanningStep``, ``src/smolagents/memory.py``): a whole ``.json``
array or one NDJSON line is ONE trajectory ``<file stem>:<line>``
(:func:`one_list`), or a record ``{"steps": [...], "trajectory_id"?, "suite"?,
"system_prompt"?}``.

- ``{"task"}`` (TaskStep) -> a user message; ``{"plan"}`` (PlanningStep) -> assistant text;
  ``{"system_prompt"}`` -> a system message.
- An ActionStep (``step_number``) -> an assistant message: its ``model_output`` as text
  (a CodeAgent's holds the code it runs, which is also the call), its ``tool_calls``
  (``{id, type, function: {name, arguments}}``) as calls. A call's ``arguments`` that are
  not an object (a CodeAgent's ``python_interpreter`` takes its code as a string) become
  ``{"code": ...}`` for ``python_interpreter``, else ``{"input": ...}``.
- The step's ``observations`` (one text for the step) answer its calls; a step of several
  calls gives the text to each of them (smolagents keeps one observation per step, so
  which call printed which line is not recorded: every call is a possible source).
- The step's ``error`` (``AgentError.dict()``: ``{type, message}``) is the error of its
  calls: ``AgentParsingError`` / ``AgentToolCallError`` -> ``parsing`` (the call never
  ran: failed); ``AgentExecutionError`` (a CodeAgent's code raised part way) ->
  ``unknown`` (what ran before the error did run); other types -> their message (the
  policy's text rules). A step with an error and no call is no step (``meta.errors``).
- trajectory_id: ``trajectory_id``, else ``<stem>:<line>``; suite: ``suite``, else
  ``default``.
"""

from __future__ import annotations

import json
from typing import Any

from pipeline.ingest.adapters._common import AdapterError, Ctx, listed, listed_record, tool_call, tool_result
from pipeline.ingest.records import canonical_message

FORMAT = "smolagents"
# errors of a call that never ran (smolagents.utils: the model's output or the call's
# arguments could not be parsed) and of code that ran until it raised
_NOT_RUN = {"AgentParsingError", "AgentToolCallError"}
_PARTLY_RUN = {"AgentExecutionError"}


def step(value: Any) -> bool:
    """True when ``value`` is one smolagents memory step dict (an ActionStep, TaskStep,
    PlanningStep or the system prompt)."""
    if not isinstance(value, dict):
        return False
    keys = value.keys()
    return ({"step_number", "tool_calls"} <= keys or {"step_number", "observations"} <= keys
            or {"task", "task_images"} <= keys or {"plan", "model_output_message"} <= keys)


def one_list(value: Any) -> bool:
    """A top-level array that is ONE agent's steps (its first element a step)."""
    return step(value)


def _arguments(name: Any, args: Any) -> Any:
    if isinstance(args, dict):
        return args
    if isinstance(args, str):
        try:
            parsed = json.loads(args)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            return parsed
    return {"code": args} if name == "python_interpreter" else {"input": args}


def _error(err: Any) -> Any:
    if not isinstance(err, dict):
        return None
    kind, message = str(err.get("type") or ""), str(err.get("message") or "")[:2000]
    if kind in _NOT_RUN:
        return {"type": "parsing", "message": f"{kind}: {message}"}
    if kind in _PARTLY_RUN:
        return {"type": "unknown", "message": f"{kind}: {message}"}
    return f"{kind}: {message}" if kind else message or "agent error"


def _action(item: dict[str, Any], messages: list[dict[str, Any]], errors: list[str]) -> None:
    calls = [c for c in item.get("tool_calls") or [] if isinstance(c, dict)]
    text = item.get("model_output") if isinstance(item.get("model_output"), str) else None
    error = _error(item.get("error"))
    if not calls:
        if text:
            messages.append(canonical_message("assistant", text))
        if error is not None:
            errors.append(str(error.get("message") if isinstance(error, dict) else error)[:500])
        return
    canon = []
    for i, call in enumerate(calls):
        fn = call.get("function") if isinstance(call.get("function"), dict) else {}
        cid = call.get("id") if isinstance(call.get("id"), str) and call["id"] else f"step{item.get('step_number')}-{i}"
        canon.append(tool_call(cid, fn.get("name"), _arguments(fn.get("name"), fn.get("arguments"))))
    messages.append(canonical_message("assistant", text, tool_calls=canon))
    observations = item.get("observations") if isinstance(item.get("observations"), str) else ""
    for call in canon:
        messages.append(tool_result(call["id"], observations, error))


def convert(record: Any, ctx: Ctx) -> dict[str, Any]:
    """Convert one list of smolagents steps (or a ``{"steps": [...]}`` record)."""
    rec, steps = listed(record, "steps", "smolagents memory steps")
    messages: list[dict[str, Any]] = []
    errors: list[str] = []
    if isinstance(rec.get("system_prompt"), str):
        messages.append(canonical_message("system", rec["system_prompt"]))
    for item in steps:
        if not isinstance(item, dict):
            raise AdapterError(f"a step is {type(item).__name__}, expected an object")
        if isinstance(item.get("system_prompt"), str):
            messages.append(canonical_message("system", item["system_prompt"]))
        elif isinstance(item.get("task"), str):
            messages.append(canonical_message("user", item["task"]))
        elif "step_number" in item:
            _action(item, messages, errors)
        elif isinstance(item.get("plan"), str):
            messages.append(canonical_message("assistant", item["plan"]))
    meta: dict[str, Any] = {"format": FORMAT, "steps": len(steps)}
    if errors:
        meta["errors"] = errors[:20]
    return listed_record(rec, ctx, messages, meta)
