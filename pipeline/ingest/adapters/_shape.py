"""The head of a JSON text as keys per nesting depth and ``type`` values (:func:`scan`), and
the multi-key shapes of the formats whose markers are more than a key or two
(:mod:`pipeline.ingest.adapters._detect` applies them in its rule order).

Keys inside string values (attacker text) are never mistaken for keys: strings are
consumed as whole tokens.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from pipeline.ingest.adapters._json_text import JSON_STRING
from pipeline.ingest.adapters.autogen import EVENT_TYPES, TEXT_TYPES
from pipeline.ingest.adapters.bare_lists import RECORD_KEYS
from pipeline.ingest.adapters.mcp_messages import PAIRS, WRAPPERS, is_mcp_method

# item types only the OpenAI Responses API writes (its messages' text blocks, its calls; its
# hosted tools' items, which hold their results: remote MCP, code interpreter, file search)
RESPONSES_TYPES = {"function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output",
                   "local_shell_call", "local_shell_call_output", "input_text", "output_text", "web_search_call",
                   "mcp_call", "mcp_list_tools", "mcp_approval_request", "mcp_approval_response",
                   "code_interpreter_call", "file_search_call"}
# event types of `codex exec --json` (codex-rs/exec/src/exec_events.rs)
CODEX_EXEC_TYPES = {"thread.started", "turn.started", "turn.completed", "turn.failed", "item.started",
                    "item.updated", "item.completed"}
# keys beside a Gemini request's ``contents`` (request fields, or the logged response's)
GEMINI_REQUEST_KEYS = {"candidates", "systemInstruction", "system_instruction", "generationConfig",
                       "generation_config", "config", "response"}
# type values of LangChain messages (messages_to_dict, model_dump) and of dumpd's constructors
LANGCHAIN_TYPES = {"human", "ai", "tool", "function", "chat", "constructor", "AIMessageChunk",
                   "HumanMessageChunk", "ToolMessageChunk"}
# roles of chatml tool turns (ms-swift / NeMo agent SFT data) that no chat API writes
SHAREGPT_TOOL_ROLES = {"tool_call", "tool_response", "function_call", "observation"}
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")  # an MCP protocolVersion (LSP and ACP have none or a number)
_TOKEN = re.compile(r"[ \t\n\r]*(?:(" + JSON_STRING + r')|([{}\[\]:,])|([^"{}\[\]:,\s]+))', re.S)


@dataclass(slots=True)
class Shape:
    """What the head of a JSON text looks like."""

    top: str = ""
    keys: dict[int, list[str]] = field(default_factory=dict)
    types: set[str] = field(default_factory=set)
    roles: dict[int, set[str]] = field(default_factory=dict)  # values of ``role`` keys, by depth
    methods: set[str] = field(default_factory=set)  # values of ``method`` keys (JSON-RPC)
    versions: set[str] = field(default_factory=set)  # string values of ``protocolVersion`` keys (MCP)

    def at(self, depth: int) -> set[str]:
        """Keys seen at one nesting depth (1 = keys of the top-level object)."""
        return set(self.keys.get(depth, ()))


def _decode(token: str) -> str:
    try:
        value = json.loads(token)
    except ValueError:
        return token[1:-1]
    return value if isinstance(value, str) else token


def scan(text: str, max_depth: int = 6, max_keys: int = 512) -> Shape:
    """Tolerant scan of (possibly truncated) JSON text."""
    shape = Shape()
    stack: list[str] = []
    pos, prev, key = 0, "", ""
    prev_string = ""
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            break  # unterminated string or junk: stop at the last clean token
        pos = m.end()
        string, punct = m.group(1), m.group(2)
        if string is not None:
            if prev == ":" and key == "type":
                shape.types.add(_decode(string))
            elif prev == ":" and key == "role":
                shape.roles.setdefault(len(stack), set()).add(_decode(string))
            elif prev == ":" and key == "method" and len(shape.methods) < 64:
                shape.methods.add(_decode(string))
            elif prev == ":" and key == "protocolVersion" and len(shape.versions) < 8:
                shape.versions.add(_decode(string)[:40])
            prev, prev_string = "s", string
            continue
        if punct in ("{", "["):
            if not stack and not shape.top:
                shape.top = punct
            stack.append(punct)
        elif punct in ("}", "]"):
            if stack:
                stack.pop()
            if not stack:
                break  # first complete top-level value (first NDJSON record) done
        elif punct == ":" and prev == "s" and stack and stack[-1] == "{":
            key = _decode(prev_string)
            depth = len(stack)
            if depth <= max_depth:
                bucket = shape.keys.setdefault(depth, [])
                if len(bucket) < max_keys and key not in bucket:
                    bucket.append(key)
        prev = punct or "v"
    return shape


def autogen_shape(shape: Shape, k: set[str]) -> bool:
    """Rule 7c: a bare array (or ``messages``, a ``TaskResult``) of AutoGen AgentChat
    messages: ``source`` + ``type`` of one of AgentChat's message or event types."""
    if not (TEXT_TYPES | EVENT_TYPES) & shape.types:
        return False
    inner = shape.at((2 if shape.top == "[" else 1) + 2)
    return {"source", "type"} <= k or "messages" in k and {"source", "type"} <= inner


def ai_sdk_shape(shape: Shape, k: set[str]) -> bool:
    """Rule 7b: a bare array (or ``messages``) of Vercel AI SDK messages: ``role`` with
    ``parts`` holding a ``tool-<name>`` / ``dynamic-tool`` / ``step-start`` part
    (UIMessage), or ``content`` parts ``tool-call`` / ``tool-result`` (ModelMessage)."""
    ai_types = {"tool-call", "tool-result", "dynamic-tool", "tool-invocation", "step-start"}
    tool_parts = bool(ai_types & shape.types) or any(t.startswith("tool-") for t in shape.types)
    if shape.top == "[" and "role" in k and not RECORD_KEYS & k:
        return tool_parts and bool({"parts", "content"} & k)
    inner = shape.at((2 if shape.top == "[" else 1) + 2)  # keys of the messages (a list down)
    return "messages" in k and "role" in inner and tool_parts and bool({"parts", "content"} & inner)


# the `type` values of Vercel AI SDK UIMessage parts (with `tool-<name>` and `data-<name>`)
AI_SDK_PART_TYPES = {"text", "reasoning", "dynamic-tool", "source-url", "source-document", "file", "step-start"}


def ai_sdk_part_types(types: set[str]) -> bool:
    """True when ``types`` (a head's ``type`` values) hold a Vercel AI SDK part type."""
    return bool(AI_SDK_PART_TYPES & types) or any(t.startswith(("tool-", "data-")) for t in types)


def gemini_shape(shape: Shape, k: set[str], c: set[str]) -> bool:
    """Rule 8: a Gemini API record (``k`` the record's keys, ``c`` the keys one level below)."""
    base = 2 if shape.top == "[" else 1
    inner = shape.at(base + 2)  # keys of the Contents (a list down)
    return bool({"contents", "history"} & k and "parts" in inner
                # `messages` of Contents: `role` + untyped parts (Vercel AI SDK parts have a `type`
                # of its own part types; keys are bucketed by depth, so a `type` elsewhere at that
                # depth, as in a record's metadata, does not count)
                or "messages" in k and {"role", "parts"} <= inner
                and not ("type" in shape.at(base + 4) and ai_sdk_part_types(shape.types))
                # OpenCode parts (`callID`, `sessionID`) an app copied under `messages`: no
                # Contents (canonical; the record check names --format opencode)
                and not {"callID", "sessionID"} & shape.at(base + 4)
                # a bare [Content, ...]: Gemini parts have no `type` (the Vercel AI SDK's do)
                or shape.top == "[" and {"role", "parts"} <= k and not RECORD_KEYS & k and "type" not in shape.at(4)
                or "contents" in k and GEMINI_REQUEST_KEYS & k
                or "request" in k and "contents" in c
                or "events" in k and {"appName", "app_name"} & k)


def langchain_shape(shape: Shape, k: set[str], c: set[str]) -> bool:
    """Rule 13: LangChain serialized messages, bare or in a record's ``messages``; or a
    LangChain AgentExecutor result: ``intermediate_steps`` beside ``input`` / ``output``
    (or in a LangSmith run's ``outputs``)."""
    base = 2 if shape.top == "[" else 1

    def messages(keys: set[str]) -> bool:
        return bool({"type", "data"} <= keys or {"lc", "kwargs"} <= keys
                    or "type" in keys and {"additional_kwargs", "response_metadata"} & keys)

    # an AgentExecutor result; beside `messages` only when their elements are LangChain's
    # (a chat of another format may carry such steps too: its own reader reads it)
    if "messages" not in k or messages(shape.at(base + 2)):
        if "intermediate_steps" in k and {"input", "output"} & k or "outputs" in k and "intermediate_steps" in c:
            return True
    if not LANGCHAIN_TYPES & shape.types:
        return False

    return (shape.top == "[" and messages(k) or "messages" in k and messages(shape.at(base + 2))
            or bool({"outputs", "values"} & k) and "messages" in c and messages(shape.at(base + 3)))


def sharegpt_shape(shape: Shape, k: set[str]) -> bool:
    """Rule 13b: a record (or an array of records) whose ``conversations`` /
    ``conversation`` / ``messages`` are ShareGPT turns (``from`` + ``value``: no chat
    message of another format has both), or ``role`` turns with a ShareGPT tool role."""
    depth = (2 if shape.top == "[" else 1) + 2
    inner = shape.at(depth)
    lists = bool({"conversations", "conversation", "messages"} & k)
    # or chatml turns with tool roles no chat API writes (ms-swift's `tool_call`/`tool_response`),
    # as the turns' own roles (not a role value deeper inside, in a call's arguments)
    return lists and ({"from", "value"} <= inner
                      or "role" in inner and bool(SHAREGPT_TOOL_ROLES & shape.roles.get(depth, set())))


def mcp_shape(shape: Shape, k: set[str], c: set[str]) -> bool:
    """Rule 11c: an MCP JSON-RPC message, bare, in a batch array, or under a log record's
    ``message`` / ``payload`` / ``data`` / ``request`` / ``response`` / ``mcpRequest`` /
    ``mcpResponse`` (``mcp_messages.WRAPPERS``, ``PAIRS``), with a mark only MCP has
    (JSON-RPC alone is LSP's, ACP's, Ethereum's too): a method of MCP's own (``tools/...``,
    ``resources/...``, ``notifications/...``; not the generic ``initialize`` / ``ping``), an
    ``initialize`` whose params hold a dated ``protocolVersion``, ``clientInfo`` and
    ``capabilities``, or a result with MCP's keys (``content`` + ``isError``,
    ``structuredContent``, ``tools``, ``serverInfo`` + a dated ``protocolVersion``)."""
    base = 2 if shape.top == "[" else 1
    wrappers = set(WRAPPERS) | {key for pair in PAIRS for key in pair}
    if "jsonrpc" in k:
        depth = base
    elif wrappers & k and "jsonrpc" in c:
        depth = base + 1
    else:
        return False
    keys, inner = shape.at(depth), shape.at(depth + 1)
    dated = any(_DATE.fullmatch(v) for v in shape.versions)
    if "method" in keys:
        return any(is_mcp_method(m) and m not in ("initialize", "ping") for m in shape.methods) \
            or "initialize" in shape.methods and dated and {"clientInfo", "capabilities"} <= inner
    return "id" in keys and "result" in keys and (
        {"content", "isError"} <= inner or bool({"structuredContent", "tools"} & inner)
        or dated and {"serverInfo", "protocolVersion"} <= inner)
