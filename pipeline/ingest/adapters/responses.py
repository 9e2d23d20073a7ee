"""OpenAI Responses API records -> canonical records (one line = one trajectory).

Accepted record: ``{"trajectory_id"? | "id"?, "suite"?, "instructions"?, "input": str |
[items], "output"?: [items]}``: a logged ``responses.create`` call (its request's
``input``, the conversation so far, then the response's ``output``) or a stored
conversation. Items as the Responses API writes them: ``message`` (a role and
``input_text`` / ``output_text`` blocks, or the short form ``{"role", "content"}``
without a ``type``), ``function_call`` / ``custom_tool_call`` / ``local_shell_call`` /
... (``call_id``, ``name``, ``arguments``) and their ``*_call_output`` items (``call_id``,
``output``), ``web_search_call``, the hosted tools' items that hold their own result
(``mcp_call`` -> ``mcp__<server_label>__<name>``, ``code_interpreter_call`` -> ``python``
``{"code"}`` answered by its logs, ``file_search_call`` -> a call of that name ``{"queries"}``
answered by the chunks it retrieved); ``reasoning``, ``mcp_list_tools``,
``mcp_approval_request`` and other items are dropped. A string
``input`` is one user message; ``instructions`` a leading system message. A bare array of
items (the OpenAI Agents SDK's ``result.to_input_list()``) is one conversation's ``input``. The items are
converted as the Codex adapter converts a rollout's ``response_item`` lines (Codex
writes Responses items): :func:`pipeline.ingest.adapters.codex_items.response_items`.

trajectory_id: ``trajectory_id``, else ``id`` (a response's ``resp_...``), else
``<file stem>:<source_line>``. suite: ``suite``, else ``default``.
"""

from __future__ import annotations

from typing import Any

from pipeline.ingest.adapters._common import AdapterError, Ctx, RecordTooLarge, require_dict
from pipeline.ingest.adapters._session import SessionAbort, SizeGuard
from pipeline.ingest.adapters.codex_items import response_items
from pipeline.ingest.records import canonical_message

FORMAT = "openai-responses"


def _items(value: Any, what: str) -> list[Any]:
    """A list of items; a string is one user message; a message in the short form (a role,
    no ``type``) gets its type."""
    if value is None:
        return []
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    if not isinstance(value, list):
        raise AdapterError(f"{what} is {type(value).__name__}, expected a string or an array of items")
    return [{**item, "type": "message"} if isinstance(item, dict) and "type" not in item and "role" in item
            else item for item in value]


def convert(record: Any, ctx: Ctx) -> dict[str, Any]:
    """Convert one Responses API record (or a bare list of items:
    :mod:`pipeline.ingest.adapters.bare_lists`) to a canonical trajectory dict."""
    rec = require_dict({"input": record} if isinstance(record, list) else record, "record")
    items = _items(rec.get("input"), "input") + _items(rec.get("output"), "output")
    if not items:
        raise AdapterError("neither 'input' nor 'output' holds items")
    guard = SizeGuard(4 * int(ctx.state.get("max_record_bytes", 32 * 2**20)))
    try:
        messages = response_items(items, guard)
    except SessionAbort as exc:
        raise RecordTooLarge(exc.detail) from exc
    instructions = rec.get("instructions")
    if isinstance(instructions, str) and instructions.strip():
        messages.insert(0, canonical_message("system", instructions))
    tid = rec.get("trajectory_id", rec.get("id", f"{ctx.stem}:{ctx.line}"))
    out: dict[str, Any] = {"trajectory_id": tid, "messages": messages,
                           "meta": {"format": FORMAT, **({"model": rec["model"]} if isinstance(rec.get("model"), str) else {})}}
    if "suite" in rec:
        out["suite"] = rec["suite"]
    return out
