"""Who sent an MCP message (:mod:`pipeline.ingest.adapters.mcp`): the client (the agent)
or the server (the tool). Client and server number their requests apart, so the same id
can wait on both sides at once (a ``tools/call`` 2 and the server's ``sampling/createMessage``
2); a response, a ``notifications/cancelled`` or a ``ping`` must go to the right side.

1. The log record's direction, when it names the sender: ``direction`` / ``dir`` /
   ``flow`` values ``client->server``, ``client_to_server``, ``c2s``, ``to_server``,
   ``from_client`` (and the server's mirror), or ``from`` / ``sender`` / ``source``
   ``client`` | ``server`` (``to`` / ``target`` the receiver). Values relative to the
   logger (``in`` / ``out``, ``incoming`` / ``outgoing``, ``inbound`` / ``outbound``,
   ``send`` / ``recv``, ``request`` / ``response``, ``rx`` / ``tx``) are learned per file
   from the messages whose method only one side sends (``tools/call`` -> client,
   ``sampling/createMessage`` -> server); a value seen on both sides (a gateway logging
   both legs as ``in``) is never used.
2. A request's method: client methods (``CLIENT_METHODS``) and server methods
   (``SERVER_ONLY``) decide even against the record's direction; ``ping``, ``tasks/*``,
   ``notifications/cancelled`` / ``progress`` can be either's (then the direction, else
   the rules in ``mcp``).
3. A response's result shape (:func:`fits`): what the request it answers returns.
"""

from __future__ import annotations

import re
from typing import Any

CLIENT = "client"
SERVER = "server"
CLIENT_METHODS = {"initialize", "tools/call", "tools/list", "resources/read", "resources/list",
                  "resources/templates/list", "resources/subscribe", "resources/unsubscribe", "prompts/get",
                  "prompts/list", "completion/complete", "logging/setLevel", "notifications/initialized",
                  "notifications/roots/list_changed"}
SERVER_ONLY = {"sampling/createMessage", "elicitation/create", "roots/list", "notifications/message",
               "notifications/resources/updated", "notifications/resources/list_changed",
               "notifications/tools/list_changed", "notifications/prompts/list_changed",
               "notifications/elicitation/complete"}
DIRECTION_KEYS = ("direction", "dir", "flow")
SENDER_KEYS = ("from", "sender", "source")
RECEIVER_KEYS = ("to", "target", "destination")
_ABSOLUTE = {"clientserver": CLIENT, "clienttoserver": CLIENT, "c2s": CLIENT, "toserver": CLIENT,
             "fromclient": CLIENT, "serverclient": SERVER, "servertoclient": SERVER, "s2c": SERVER,
             "toclient": SERVER, "fromserver": SERVER}
_RELATIVE = {"in", "incoming", "inbound", "out", "outgoing", "outbound", "send", "sent", "recv", "received",
             "receive", "request", "response", "req", "res", "resp", "rx", "tx"}
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")
_TASK_STATUS = ("working", "input_required", "completed", "failed", "cancelled")


def method_sender(method: str) -> str | None:
    """The side that sends ``method`` (None: either may)."""
    if method in CLIENT_METHODS:
        return CLIENT
    if method in SERVER_ONLY:
        return SERVER
    return None


def _side_word(value: Any) -> str | None:
    if isinstance(value, str) and value.strip().lower() in (CLIENT, SERVER):
        return value.strip().lower()
    return None


class Directions:
    """A file's direction vocabulary: absolute values, and relative ones learned from it."""

    def __init__(self) -> None:
        self.learned: dict[str, str | None] = {}  # relative value -> side (None: seen on both)

    def raw(self, record: Any) -> tuple[str | None, str | None]:
        """(the side a record's direction names, its relative value to learn): one of them."""
        if not isinstance(record, dict):
            return None, None
        for key in SENDER_KEYS:
            if _side_word(record.get(key)):
                return _side_word(record.get(key)), None
        for key in RECEIVER_KEYS:
            side = _side_word(record.get(key))
            if side:
                return (SERVER if side == CLIENT else CLIENT), None
        for key in DIRECTION_KEYS:
            value = record.get(key)
            if not isinstance(value, str):
                continue
            word = _NOT_ALNUM.sub("", value.lower())[:40]
            if word in _ABSOLUTE:
                return _ABSOLUTE[word], None
            if word in _RELATIVE:
                return None, word
        return None, None

    def sender(self, record: Any, msg: dict[str, Any]) -> str | None:
        """Who sent ``msg`` (one message of ``record``): method first, then direction."""
        side, word = self.raw(record)
        method = msg.get("method")
        by_method = method_sender(method) if isinstance(method, str) else None
        if word is not None and by_method is not None:
            known = self.learned.setdefault(word, by_method)
            if known is not None and known != by_method:
                self.learned[word] = None  # seen on both sides: tells nothing
        if by_method is not None:
            return by_method
        return side if side is not None else self.learned.get(word) if word is not None else None


def _keys(result: dict[str, Any]) -> set[str]:
    return {k for k in result if k != "_meta"}


def task_of(result: Any) -> dict[str, Any] | None:
    """The task of a ``CreateTaskResult`` (``{"task": {taskId, status, ...}}``), else None."""
    task = result.get("task") if isinstance(result, dict) else None
    return task if isinstance(task, dict) and isinstance(task.get("taskId"), str) else None


def fits(method: str, msg: dict[str, Any]) -> bool | None:
    """Whether response ``msg`` has the shape of ``method``'s result (None: cannot tell: an
    error, or a method whose result has no shape of its own)."""
    result = msg.get("result")
    if not isinstance(result, dict):
        return None
    keys = _keys(result)
    if method in ("tools/call", "resources/read"):
        if "model" in keys:
            return False
        return isinstance(result.get("content"), list) or bool(keys & {"contents", "isError", "structuredContent"}) \
            or task_of(result) is not None
    shapes = {"sampling/createMessage": {"model"}, "elicitation/create": {"action"}, "roots/list": {"roots"},
              "initialize": {"protocolVersion"}, "tools/list": {"tools"}, "prompts/list": {"prompts"},
              "resources/list": {"resources"}, "resources/templates/list": {"resourceTemplates"},
              "prompts/get": {"messages"}, "completion/complete": {"completion"}, "tasks/list": {"tasks"}}
    if method in shapes:
        return bool(keys & shapes[method])
    if method in ("ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"):
        return not keys
    if method in ("tasks/get", "tasks/cancel"):
        return "taskId" in keys and result.get("status") in _TASK_STATUS
    return None
