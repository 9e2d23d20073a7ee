"""Bare message lists: one conversation dumped as a JSON array of its messages.

The commonest transcript on disk is no record at all but the list a client sent its
model: ``json.dump(messages, f)`` of an OpenAI chat (``[{"role": "system", ...},
{"role": "assistant", "tool_calls": [...]}, {"role": "tool", ...}]``), of an Anthropic
Messages conversation (``tool_use`` / ``tool_result`` blocks: Cline's
``api_conversation_history.json`` is one), of Responses API items (the OpenAI Agents
SDK's ``result.to_input_list()``), or of Gemini ``Content``s (an older Gemini CLI
checkpoint). Read as an array of records, each message became a
record of its own: rejected ``missing_trajectory_id`` (a chat), or, for Responses items,
a ``function_call_output`` read as a one-message "trajectory" scored safe while the
conversation's exfiltration went unseen.

So a top-level array (a whole ``.json`` document, or one NDJSON line) whose FIRST element
is a message of the format is one trajectory (``one_list`` of the adapter spec), its id
``<file stem>:<source_line>`` as for other records without one (``conv.json`` ->
``conv:1``). An array whose first element is a record (it has ``messages``,
``trajectory_id``, ``input`` ...) is still a list of records; an empty canonical array
holds no record. A message list's format is chosen by :mod:`._detect` (rules 14-15:
``tool_use``/``tool_result`` blocks, or rule 14b's Cline / Roo Code marks (its XML calls in
text) -> anthropic, Responses item types ->
openai-responses; rule 8: ``role`` + ``parts`` -> gemini; any other list of ``role``
messages with ``content`` / ``tool_calls`` stays canonical).
"""

from __future__ import annotations

from typing import Any

# keys of a record (of any reader) that a single message never has
RECORD_KEYS = frozenset({"messages", "trajectory_id", "input", "output", "contents", "history", "traj", "trajectory"})
# the record keys a Responses item may not have (``output`` is a ``*_call_output`` item's own)
ITEM_RECORD_KEYS = RECORD_KEYS - {"output"}
# what a chat message holds besides its role
MESSAGE_KEYS = frozenset({"content", "tool_calls", "function_call"})
# item types of the OpenAI Responses API (a conversation's items as `input` takes them)
RESPONSES_ITEM_TYPES = frozenset({
    "message", "reasoning", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output",
    "local_shell_call", "local_shell_call_output", "web_search_call", "file_search_call", "computer_call",
    "computer_call_output", "code_interpreter_call", "image_generation_call", "mcp_call", "mcp_list_tools",
    "mcp_approval_request", "mcp_approval_response", "item_reference",
})


def chat_message(value: Any) -> bool:
    """True when ``value`` is one chat message (a string ``role`` with ``content``,
    ``tool_calls`` or ``function_call``), not a record holding messages: the first element
    of a bare OpenAI or Anthropic list. A Gemini ``Content`` (``role`` + ``parts``) is not
    one (:func:`gemini_content`): read as a chat, its calls and texts were lost and the
    empty conversation scored safe."""
    return (isinstance(value, dict) and isinstance(value.get("role"), str) and not RECORD_KEYS & value.keys()
            and "parts" not in value and bool(MESSAGE_KEYS & value.keys()))


def gemini_content(value: Any) -> bool:
    """True when ``value`` is one Gemini ``Content`` (role ``user`` / ``model`` and a list of
    untyped ``parts``): the first element of a Gemini CLI checkpoint saved as a bare
    ``[Content, ...]``. Not a Vercel AI SDK ``UIMessage`` (role ``assistant``, parts with a
    ``type``), whose tool parts Gemini's reader would drop."""
    parts = value.get("parts") if isinstance(value, dict) else None
    return (isinstance(parts, list) and value.get("role") in ("user", "model") and not RECORD_KEYS & value.keys()
            and not any(isinstance(p, dict) and "type" in p for p in parts))


def responses_item(value: Any) -> bool:
    """True when ``value`` is one Responses API item (a known ``type``, or the short
    message form: a ``role`` without a ``type``), not a record with ``input``/``output``.
    ``output`` is a key of a ``*_call_output`` item, so it does not make a record here."""
    if not isinstance(value, dict) or ITEM_RECORD_KEYS & value.keys():
        return False
    kind = value.get("type")
    return kind in RESPONSES_ITEM_TYPES if kind is not None else isinstance(value.get("role"), str)


def bare_record(value: Any, stem: str, line: int) -> Any:
    """A canonical record for a bare chat message list (``value`` unchanged otherwise):
    ``{"trajectory_id": "<stem>:<line>", "messages": value}``."""
    if isinstance(value, list) and value and chat_message(value[0]):
        return {"trajectory_id": f"{stem}:{line}", "messages": value}
    return value
