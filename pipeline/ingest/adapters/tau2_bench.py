"""tau2-bench results -> canonical records, one per simulation.

tau2-bench (the successor of tau-bench) saves a run in one of two layouts:

- ``json``: one document ``{"timestamp", "info", "tasks", "simulations": [...]}``;
- ``dir``: ``results.json`` (the same without ``simulations``: ``simulation_index``
  instead, read as no records) and ``simulations/<id>.json``, one simulation each.

A simulation is ``{"id", "task_id", "trial", "termination_reason", "reward_info",
"messages": [...]}``. Messages: ``system`` / ``user`` / ``assistant`` with ``content``
and ``tool_calls`` (``{"id", "name", "arguments": {...}, "requestor"}``), and ``tool``
results ``{"id": <call id>, "content", "requestor", "error": bool}`` (or several of them
under ``tool_messages``). A result with ``error: true`` carries its text as the error
text (the policy's text rules decide ``exec_status``). Calls a simulated user makes on
its own device (``requestor: "user"``, the telecom domain) and their results are not the
agent's actions: they are dropped, the user's words kept. A full-duplex (voice)
simulation stores ``ticks`` instead of ``messages``: rejected ``malformed_record``.

trajectory_id: the simulation's ``id`` (unique per simulation), else
``<file stem>:<task_id>:<trial>``. suite: ``--suite``, else ``tau2-<domain>`` from
``info.environment_info.domain_name`` (for ``simulations/<id>.json``, of the
``results.json`` beside the folder), else ``tau2-bench``. source_line: the
simulation's 1-based position in ``simulations`` (1 for a single-simulation file).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from pipeline.ingest.adapters._common import AdapterError, Ctx, require_dict, require_list, tool_call, tool_result
from pipeline.ingest.adapters._io import Problem, read_head
from pipeline.ingest.adapters._session import DROPPED, SessionAbort, SizeGuard
from pipeline.ingest.records import canonical_message

FORMAT = "tau2-bench"


def _calls(msg: dict[str, Any], where: str) -> list[dict[str, Any]]:
    calls = []
    for j, call in enumerate(require_list(msg.get("tool_calls") or [], f"{where}.tool_calls")):
        call = require_dict(call, f"{where}.tool_calls[{j}]")
        if call.get("requestor", "assistant") == "assistant":
            calls.append(tool_call(call.get("id"), call.get("name"), call.get("arguments", {})))
    return calls


def _results(msg: dict[str, Any], where: str) -> Iterator[dict[str, Any]]:
    items = msg.get("tool_messages") if "tool_messages" in msg else [msg]
    for j, item in enumerate(require_list(items, f"{where}.tool_messages")):
        item = require_dict(item, f"{where}.tool_messages[{j}]")
        if item.get("requestor", "assistant") != "assistant":
            continue
        content = item.get("content") if isinstance(item.get("content"), str) else ""
        yield tool_result(item.get("id"), content, (content or "error") if item.get("error") is True else None)


def messages_of(simulation: dict[str, Any], guard: SizeGuard) -> list[dict[str, Any]]:
    """The canonical messages of one simulation."""
    raw = simulation.get("messages")
    if raw is None and simulation.get("ticks") is not None:
        raise AdapterError("a full-duplex simulation (ticks, no messages) is not read")
    out: list[dict[str, Any]] = []
    for i, msg in enumerate(require_list(raw, "messages")):
        msg = require_dict(msg, f"messages[{i}]")
        guard.add(msg.get("content"))
        role = msg.get("role")
        if role == "tool":
            out.extend(_results(msg, f"messages[{i}]"))
        elif role == "assistant":
            out.append(canonical_message("assistant", msg.get("content"),
                                         tool_calls=_calls(msg, f"messages[{i}]") or None))
        elif role in ("user", "system"):
            if isinstance(msg.get("content"), str) and msg["content"].strip():
                out.append(canonical_message(role, msg["content"]))
        else:
            raise AdapterError(f"messages[{i}] has role {role!r}")
    return out


_DOMAIN = re.compile(rb'"domain_name"\s*:\s*"([A-Za-z0-9_.-]{1,64})"')


def _sibling_domain(ctx: Ctx) -> str | None:
    """The domain a ``simulations/<id>.json`` file's run names in the ``results.json`` beside
    its folder (the first ``domain_name`` in that file's first 256 KB: ``info`` comes first)."""
    if ctx.path.parent.name != "simulations":
        return None
    try:
        found = _DOMAIN.search(read_head(ctx.path.parent.parent / "results.json", 256 * 1024))
    except OSError:
        return None
    return found.group(1).decode() if found else None


def _suite(document: dict[str, Any], ctx: Ctx) -> str:
    if ctx.state.get("suite"):
        return str(ctx.state["suite"])
    info = document.get("info") if isinstance(document.get("info"), dict) else {}
    env = info.get("environment_info") if isinstance(info.get("environment_info"), dict) else {}
    domain = env.get("domain_name") if not document.get("messages") else _sibling_domain(ctx)
    return f"tau2-{domain}" if isinstance(domain, str) and domain else FORMAT


def _record(simulation: dict[str, Any], suite: str, model: Any, ctx: Ctx, limit: int) -> dict[str, Any]:
    messages = messages_of(simulation, SizeGuard(limit))
    sid = simulation.get("id")
    tid = sid if isinstance(sid, str) and sid else f"{ctx.stem}:{simulation.get('task_id')}:{simulation.get('trial')}"
    reward = simulation.get("reward_info") if isinstance(simulation.get("reward_info"), dict) else {}
    meta: dict[str, Any] = {"format": FORMAT, "task_id": simulation.get("task_id"), "trial": simulation.get("trial"),
                            "termination_reason": simulation.get("termination_reason"), "reward": reward.get("reward")}
    if isinstance(model, str):
        meta["model"] = model
    return {"trajectory_id": tid, "suite": suite, "meta": meta, "messages": messages}


def convert_session(items: Iterable[tuple[int, Any]], ctx: Ctx) -> Iterator[tuple[int, dict[str, Any] | Problem]]:
    """Convert one tau2-bench file: each simulation of a results document, or the one
    simulation of a ``simulations/<id>.json`` file."""
    limit = 4 * int(ctx.state.get("max_record_bytes", 32 * 2**20))
    for line, document in items:
        if document is DROPPED:
            continue
        document = require_dict(document, f"line {line}")
        single = "messages" in document or "ticks" in document  # one simulation (dir layout)
        simulations = [document] if single else require_list(document.get("simulations") or [], "simulations")
        info = document.get("info") if isinstance(document.get("info"), dict) else {}
        agent = info.get("agent_info") if isinstance(info.get("agent_info"), dict) else {}
        suite = _suite(document, ctx)
        for n, simulation in enumerate(simulations, start=1):
            at = line if single else n
            try:
                yield at, _record(require_dict(simulation, f"simulations[{n - 1}]"), suite, agent.get("llm"), ctx, limit)
            except SessionAbort as exc:
                yield at, Problem(at, exc.reason, exc.detail)
            except AdapterError as exc:
                yield at, Problem(at, "malformed_record", f"simulation {n}: {exc}")
