"""OpenHands event lists -> canonical records, in the two layouts OpenHands writes them:

- an event list file (OpenAgentSafety ``traj_<task>.json``): the whole file is ONE
  trajectory (source_line 1);
- the evaluation harness's ``output.jsonl`` (``<eval_output_dir>/output.jsonl``, one
  ``EvalOutput`` per line: ``instance_id``, ``instruction``, ``metadata``, ``history``,
  ``metrics``, ``error``, ``test_result``): each line is one trajectory, its
  ``history`` the event list (or, in the harness's older format, a list of
  ``[action, observation]`` pairs, read as the events in that order).

Events are taken in order.
Actions (``"action"`` key) and observations (``"observation"``, paired by ``cause`` ==
action ``id``):

- user ``message`` -> user; agent ``message`` -> assistant text; ``system`` -> system;
  ``think`` -> assistant text (its thought); ``finish`` -> assistant text (thought and
  final message). Observations caused by these are dropped.
- ``recall`` actions and ``recall`` / ``agent_state_changed`` / ``null`` observations are
  OpenHands bookkeeping and are dropped.
- every other agent action is a tool call with id ``str(action id)``: ``run`` ->
  ``run {command}``, ``run_ipython`` -> ``run_ipython {code}``, ``read``/``edit``/``write``
  -> same name with their path/content args, ``browse`` -> ``browse {url}``,
  ``browse_interactive`` -> ``browse_interactive {browser_actions}``, ``chat`` (talking to
  a simulated colleague; its observation is the reply) -> ``chat {npc_name, content}``,
  anything else -> its action name with its args minus ``thought``. The action's thought
  is the assistant text of the same message.
- the observation of a tool call becomes a tool message where it stands. Errors:
  ``run`` exit code -1 -> ``{"type": "timeout"}``, other non-zero -> ``{"type":
  "exit_code", "message": "exit code N: <first 200 chars>"}``; ``observation: "error"``
  -> error string (its content); read/edit/write content starting with ``ERROR`` ->
  error string; ``user_rejected`` -> ``{"type": "approval"}`` (blocked).
- observations whose ``cause`` matches no event stay as tool messages with
  ``tool_call_id = str(cause)`` (the SQL stage rejects them as orphan_tool_result);
  actions without observation get no tool message.

trajectory_id: an event list file ``<parent folder>:<file stem>`` (e.g.
``deepseek_v3:traj_safety-sexism``; the stem alone is not unique: every model folder has
the same task files); an ``output.jsonl`` line ``<run>:<instance_id>``, the run being the
last three folders of ``metadata.eval_output_dir`` (``<dataset>/<agent_class>/<model>_maxiter_<n>``),
else the file's folder: every model, agent and dataset run has the same instance ids. suite: ``openagentsafety`` for an event list file; ``metadata.dataset``
for an ``output.jsonl`` line, else ``openhands``.
"""

from __future__ import annotations

from typing import Any

from pipeline.ingest.adapters import openhands_v1
from pipeline.ingest.adapters._common import (
    AdapterError, Ctx, assistant, require_dict, require_list, tool_call, tool_result,
)
from pipeline.ingest.records import canonical_message

SUITE = "openagentsafety"
TEXT_ACTIONS = {"message", "think", "finish", "system"}
DROP_ACTIONS = {"recall"}
DROP_OBSERVATIONS = {"recall", "agent_state_changed", "null"}
ARG_KEYS: dict[str, tuple[str, ...]] = {
    "run": ("command",),
    "run_ipython": ("code",),
    "read": ("path", "view_range"),
    "edit": ("path", "command", "file_text", "old_str", "new_str", "insert_line", "content"),
    "write": ("path", "content"),
    "browse": ("url",),
    "browse_interactive": ("browser_actions",),
    "chat": ("npc_name", "content"),
}
FILE_TOOLS = {"read", "edit", "write"}


def trajectory_id(ctx: Ctx) -> str:
    """``<parent folder>:<file stem>`` (also used by :mod:`pipeline.ingest.adapters.gold`)."""
    parent = ctx.path.absolute().parent.name
    return f"{parent}:{ctx.stem}" if parent else ctx.stem


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _thought(event: dict[str, Any], args: dict[str, Any]) -> str | None:
    thought = _text(args.get("thought"))
    if not thought:
        meta = event.get("tool_call_metadata")
        try:
            thought = _text(meta["model_response"]["choices"][0]["message"]["content"])
        except (KeyError, IndexError, TypeError):
            thought = ""
    return thought or None


def _text_action(event: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    kind, source = event.get("action"), event.get("source")
    if kind == "message":
        text = _text(args.get("content")) or _text(event.get("message"))
        return canonical_message("user" if source == "user" else "assistant", text)
    if kind == "system":
        return canonical_message("system", _text(args.get("content")) or _text(event.get("message")))
    if kind == "think":
        return assistant(_text(args.get("thought")) or _text(event.get("message")))
    parts = [_text(args.get("thought")), _text(args.get("final_thought")) or _text(event.get("message"))]
    return assistant("\n".join(dict.fromkeys(p for p in parts if p)))  # finish


def _arguments(kind: str, args: dict[str, Any]) -> dict[str, Any]:
    keys = ARG_KEYS.get(kind)
    if keys is None:
        return {k: v for k, v in args.items() if k != "thought" and v is not None}
    return {k: args[k] for k in keys if args.get(k) is not None and args.get(k) != ""}


def _error(obs: dict[str, Any], action_kind: str | None) -> Any:
    kind = obs.get("observation")
    content = _text(obs.get("content"))
    if kind == "error":
        return content or _text(obs.get("message")) or "error"
    if kind == "user_rejected":
        return {"type": "approval", "message": content or "rejected by user"}
    if kind in ("run", "run_ipython"):
        extras = obs.get("extras") if isinstance(obs.get("extras"), dict) else {}
        meta = extras.get("metadata") if isinstance(extras.get("metadata"), dict) else {}
        code = meta.get("exit_code", extras.get("exit_code"))  # 2024 harness: in extras itself
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            message = f"exit code {code}: {content[:200]}"
            return {"type": "timeout" if code == -1 else "exit_code", "message": message}
    if (_among(kind, FILE_TOOLS) or _among(action_kind, FILE_TOOLS)) and content.lstrip().startswith("ERROR"):
        return content
    return None


def _among(kind: Any, names: set[str]) -> bool:
    """``kind`` (an event's ``action`` / ``observation``: any JSON value in a hostile file,
    a list too, which no set can hold) is one of ``names``."""
    return isinstance(kind, str) and kind in names


def is_eval_output(record: Any) -> bool:
    """A line of the evaluation harness's ``output.jsonl`` (an ``EvalOutput``)."""
    return isinstance(record, dict) and "instance_id" in record and "history" in record


def one_list(first: Any) -> bool:
    """Of a top-level JSON array (``first`` its first element): True when the array is ONE
    event list (a trajectory), False when it holds ``EvalOutput`` records, one each."""
    return not is_eval_output(first)


def _pair(p: int, item: list[Any]) -> list[Any]:
    """The events of one ``[action, observation]`` pair of an older history. OpenDevin's first
    harness wrote them without ``id``, ``source`` or ``cause``: the pair is what ties them, so
    the action gets the id ``pair-<p>`` and the observation that ``cause``; an action without
    a source is the agent's, but the first pair's message, the task (an empty observation
    ``{}`` stands for none)."""
    events = [e for e in item if e != {}]
    action = next((e for e in events if isinstance(e, dict) and "action" in e), None)
    if action is None:
        return events
    fixed = {"id": f"pair-{p}", **action}
    fixed.setdefault("source", "user" if p == 0 and fixed.get("action") == "message" else "agent")
    return [fixed if e is action else {"cause": fixed["id"], **e} if isinstance(e, dict) and "observation" in e else e
            for e in events]


def _history(record: dict[str, Any]) -> list[Any]:
    """An ``EvalOutput``'s events: its history, older ``[action, observation]`` pairs flattened
    in order (:func:`_pair`)."""
    history = require_list(record.get("history") or [], "history")
    events: list[Any] = []
    for p, item in enumerate(history):
        if isinstance(item, list):
            events.extend(_pair(p, item))
        else:
            events.append(item)
    return events


def _eval_output(record: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    out_dir = metadata.get("eval_output_dir")
    # the harness names it <output>/<dataset>/<agent_class>/<model>_maxiter_<n>[_N_<note>]:
    # the last three folders tell apart every run of one instance
    run = "/".join([p for p in out_dir.replace("\\", "/").split("/") if p][-3:]) if isinstance(out_dir, str) else ""
    run = run or ctx.path.absolute().parent.name
    instance = record.get("instance_id")
    if not isinstance(instance, (str, int)) or isinstance(instance, bool) or instance == "":
        raise AdapterError(f"instance_id is {type(instance).__name__}, expected a string")
    history = _history(record)
    converted = _v1_list(history, ctx) if history and openhands_v1.is_v1_event(history[0]) else _events(history, ctx)
    llm = metadata.get("llm_config") if isinstance(metadata.get("llm_config"), dict) \
        else metadata.get("llm") if isinstance(metadata.get("llm"), dict) else {}  # V1 benchmarks: llm
    converted["meta"].update({"run": run, "instance_id": str(instance), "task": str(instance)})
    attempt = record.get("attempt")  # V1 iterative runs: output.critic_attempt_<n>.jsonl
    if isinstance(attempt, int) and not isinstance(attempt, bool) and attempt > 1:
        instance = f"{instance}:attempt{attempt}"
    for key, value in (("agent_class", metadata.get("agent_class")), ("model", llm.get("model")),
                       ("error", record.get("error"))):
        if isinstance(value, str) and value:
            converted["meta"][key] = value
    dataset = metadata.get("dataset")
    converted["trajectory_id"] = f"{run}:{instance}" if run else str(instance)
    converted["suite"] = dataset if isinstance(dataset, str) and dataset else "openhands"
    instruction = record.get("instruction")
    if isinstance(instruction, str) and instruction and not any(m["role"] == "user" for m in converted["messages"]):
        converted["messages"].insert(0, canonical_message("user", instruction))
    return converted


def convert(document: Any, ctx: Ctx) -> dict[str, Any]:
    """Convert one OpenHands event list (a whole file), one ``output.jsonl`` line (or
    element of a JSON array of them), or the first event file of a V1 conversation folder
    (``events/event-00000-<id>.json``: the whole conversation) to a canonical trajectory."""
    if is_eval_output(document):
        return _eval_output(document, ctx)
    if openhands_v1.is_v1_event(document) and openhands_v1.event_index(ctx.path.name) == 0:
        return openhands_v1.convert_conversation(document, ctx)
    events = require_list(document, "trajectory file")
    return _v1_list(events, ctx) if events and openhands_v1.is_v1_event(events[0]) else _events(events, ctx)


def _v1_list(events: list[Any], ctx: Ctx) -> dict[str, Any]:
    """A list of OpenHands V1 events (``kind``-tagged: a V1 EvalOutput history, or a dump
    of a conversation's events) as one trajectory, ids as for a V0 event list file."""
    messages, meta = openhands_v1.convert_events(events)
    return {"trajectory_id": trajectory_id(ctx), "suite": SUITE,
            "meta": {"format": "openhands", "model_dir": ctx.path.absolute().parent.name, **meta},
            "messages": messages}


def _events(events: list[Any], ctx: Ctx) -> dict[str, Any]:
    actions: dict[Any, dict[str, Any]] = {}
    for i, event in enumerate(events):
        event = require_dict(event, f"event[{i}]")
        if "action" in event and isinstance(event.get("id"), (int, str)):
            actions.setdefault(event["id"], event)
    messages: list[dict[str, Any]] = []
    models: set[str] = set()
    for event in events:
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        if "action" in event:
            kind = event.get("action")
            if _among(kind, DROP_ACTIONS):
                continue
            if event.get("source") != "agent" and kind not in ("message", "system"):
                continue  # user/environment bookkeeping other than messages
            if _among(kind, TEXT_ACTIONS) or event.get("source") != "agent":
                messages.append(_text_action(event, args))
                continue
            if not isinstance(kind, str):
                raise AdapterError(f"event {event.get('id')!r} has a non-string action")
            try:
                models.add(event["tool_call_metadata"]["model_response"]["model"])
            except (KeyError, TypeError):
                pass
            call = tool_call(str(event.get("id")), kind, _arguments(kind, args))
            messages.append(assistant(_thought(event, args), [call]))
        elif "observation" in event:
            kind = event.get("observation")
            cause = event.get("cause")
            action = actions.get(cause) if isinstance(cause, (int, str)) else None
            if _among(kind, DROP_OBSERVATIONS):
                continue
            if action is not None and (_among(action.get("action"), TEXT_ACTIONS | DROP_ACTIONS)
                                       or action.get("source") != "agent"):
                continue
            content = event.get("content")
            messages.append(tool_result(None if cause is None else str(cause),
                                        content if isinstance(content, str) else _text(content),
                                        _error(event, action.get("action") if action else None)))
    meta: dict[str, Any] = {"format": "openhands", "model_dir": ctx.path.absolute().parent.name,
                            "task": ctx.stem.removeprefix("traj_"), "events": len(events)}
    if models:
        meta["model"] = sorted(str(m) for m in models)[0] if len(models) == 1 else sorted(map(str, models))
    return {"trajectory_id": trajectory_id(ctx), "suite": SUITE, "meta": meta, "messages": messages}
