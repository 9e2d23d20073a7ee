"""Format detection from the file name and the first bytes (never the whole file).

The first ``SNIFF_BYTES`` (decompressed) bytes are scanned by a small tolerant JSON
tokenizer that records object keys per nesting depth and the string values of
``type`` keys (:mod:`pipeline.ingest.adapters._shape`). Keys inside string values
(attacker text) are never mistaken for keys: strings are consumed as whole tokens. For
NDJSON only the first non-blank line is scanned; when that line (or a whole-file document) is longer than the head and what the
head shows has no marker (no rule but the last matches, no ``trajectory_id``), up to
``LONG_SNIFF_BYTES`` (2 MiB) of it are scanned (an AgentDojo trace writes ``metadata``
after ``messages``: a 474 KB first trace, in a file without its run header, read as
canonical lost every record; an Inspect log whose ``eval`` spec comes first and fills the
head was one canonical record). Rules, first match wins (K = keys of a record, C = keys one level below):

1. ``.eval`` -> inspect; ``.traj`` / ``.traj.json`` (mini-SWE-agent) -> swe-agent.
1c. ``agents/agent_<id>/messages/message_<n>.json`` (a Strands Agents session's messages):
   index 0 -> bedrock (the agent's conversation), others -> ``skip``; ``session.json`` in a
   ``session_<id>`` folder and ``agent.json`` in an ``agent_<id>`` folder -> ``skip``.
2. label files, not transcripts -> ``skip`` (no records): ``*_safety_eval_results.json``,
   and objects without transcript keys (messages, trajectory_id, eval, trajectory, traj,
   contents, intermediate_steps) that have ``final_score``/``checkpoints`` (OpenAgentSafety ``eval_*.json``),
   ``agent_profiles`` + ``scenarios`` (task NPC configs), or values with ``llm_label``.
3. object with ``eval`` and one of ``samples``/``version``/``status``/``plan`` -> inspect.
4. ``trajectory`` with ``history``/``info``/``environment``, or ``trajectory_format`` +
   ``messages`` (mini-SWE-agent) -> swe-agent.
4b. Goose (block/goose) messages: a line or bare array of objects keyed only by Goose's
   message fields (``role``, ``created``, ``content`` of typed items; ``id``, ``metadata``)
   with ``toolRequest``/``toolResponse``/... items or ``userVisible`` metadata in the head and
   no Anthropic block type (``tool_use``, ``tool_result``, ...: Anthropic messages an app
   stored with ``created``), a session file's metadata line (``description`` + ``message_count`` with ``working_dir``
   / ``schedule_id`` / token counts, no transcript key), or a session export
   (``conversation``, or ``messages`` holding ``toolRequest``/``toolResponse`` items or
   ``userVisible`` metadata, of such messages; no Anthropic block type) -> goose.
4c. ``steps`` of objects with ``step_id`` + ``source``, ``agent`` and ``schema_version`` or
   ``session_id`` (an ATIF trajectory: Harbor's ``trajectory.json``) -> atif.
4d. ``requests`` beside ``requesterUsername`` / ``responderUsername``, or ``requests`` of
   objects with ``requestId`` + ``message`` (a GitHub Copilot Chat document: VS Code's
   ``Chat: Export Chat...`` or a ``chatSessions/<uuid>.json``), or a
   ``kind`` + ``v`` line whose ``v`` holds ``requests`` (the initial line of a
   ``chatSessions/<uuid>.jsonl`` operation log, replayed by the reader) -> copilot.
1b. ``events/event-<5+ digits>-<id>.json`` (an OpenHands V1 conversation's events): index 0
   -> openhands (the conversation), others -> ``skip``; ``base_state.json`` with ``agent``
   -> ``skip`` (read with the events).
5. array of events with ``action``/``observation`` and ``source``/``cause``, or
   ``instance_id`` + ``history`` (an ``output.jsonl`` line, or a JSON array of them), or an
   array of ``kind``-tagged V1 events (``llm_message``/``tool_call_id``/``system_prompt``)
   -> openhands.
5c. an ``opencode export`` document (``info`` + ``messages`` of ``{info, parts}`` carrying
   ``sessionID``) or an ``opencode run --format json`` event line (``type`` ``step_start`` /
   ``text`` / ``tool_use`` / ... + ``sessionID`` + ``timestamp``) -> opencode; before rule 7b
   (an AI SDK message also has ``parts`` with ``step-start``). Rule 1d: OpenCode's storage
   folder by path: ``storage/session/<project>/<id>.json`` -> opencode, its ``message/``,
   ``part/``, ``session_diff/``, ``todo/``, ``project/`` files -> ``skip``.
5b. messages with ``kind`` + ``parts`` whose parts have ``part_kind`` (a Pydantic AI history,
   bare, an array of them or a record's ``messages``) -> pydantic-ai.
6. K == {metadata} (run header), ``metadata`` with C holding ``suite_name``, or
   ``suite_name`` + ``pipeline_name``/``user_task_id``/... (+ ``messages``, or both of
   the first two: they precede a large ``injections``) without ``trajectory_id``
   (AgentDojo's own result file) -> agentdojo.
7. ``traj`` with ``task_id``/``reward`` -> tau-bench; ``info`` holding ``agent_info`` +
   ``environment_info`` + ``user_info``, or ``task_id`` + ``messages`` +
   ``termination_reason`` (one simulation) -> tau2-bench.
7b. a bare array, or ``messages``, of Vercel AI SDK messages (``role`` + ``parts`` with a
   ``tool-<name>`` / ``dynamic-tool`` / ``step-start`` part, or ``content`` with
   ``tool-call`` / ``tool-result`` parts) -> ai-sdk.
7c. a bare array, or ``messages``, of AutoGen AgentChat messages (``source`` + a ``type``
   of AgentChat: ``TextMessage``, ``ToolCallRequestEvent``, ...) -> autogen.
8. ``contents`` / ``history`` (Gemini CLI) of Contents with ``parts`` (R-Judge's turn lists
   have none), a bare array of Contents (``role`` + ``parts``: an older CLI checkpoint), a
   record's ``messages`` of Contents (``role`` + ``parts`` without a ``type``), ``contents``
   beside a request/response key (``GEMINI_REQUEST_KEYS``),
   ``request.contents``, or ``events`` + ``appName`` (ADK) -> gemini; before rule 9, so a
   Gemini record with a ``label`` of its own stays Gemini.
9. ``contents`` with ``label``/``profile``/``risk_description`` -> r-judge.
10. Claude Code session line: ``sessionId`` with ``uuid``/``parentUuid``/``type``, or a
    ``summary`` + ``leafUuid`` / ``messageId`` + ``snapshot`` head line, or a stream-json
    line (``claude -p --output-format stream-json``: ``type`` + ``session_id`` with
    ``subtype`` or ``message``, and ``parent_tool_use_id``/``cwd``/``tools``/``result``
    beside them) -> claude-code.
11. ``type`` + ``payload`` with a Codex item type (``session_meta``, ``response_item``,
    ``event_msg``, ``turn_context``), or the 2025 bare header ``{id, timestamp,
    instructions|git}``, or a ``codex exec --json`` event line (``type`` ``thread.started``,
    ``turn.*``, ``item.*``) -> codex.
11b. an ``init`` line with ``session_id``, ``model`` and ``timestamp`` (``gemini -o
    stream-json``) -> gemini-stream.
11c. a JSON-RPC 2.0 message (``jsonrpc``), bare, a batch array of them, or under a log
    record's ``message`` / ``payload`` / ``data`` / ``request`` + ``response`` /
    ``mcpRequest`` + ``mcpResponse`` (a gateway's or proxy's traffic log), with a mark
    only MCP has (``_shape.mcp_shape``): a method of MCP's own (``tools/...``,
    ``notifications/...``), an ``initialize`` with a dated ``protocolVersion``,
    ``clientInfo`` and ``capabilities``, or a result with MCP's keys -> mcp. LSP, ACP and
    Ethereum JSON-RPC logs have none and stay canonical.
12. ``resourceSpans`` (an OTLP ExportTraceServiceRequest) -> otel.
12b. smolagents memory steps: ``step_number`` with ``tool_calls``/``observations``, ``task``
    + ``task_images``, or ``steps`` holding them -> smolagents.
13. a bare list, ``messages``, ``outputs.messages`` or ``values.messages`` of LangChain
    messages (``type`` + ``data``, ``lc`` + ``kwargs`` or ``type`` + ``additional_kwargs``, and
    a ``LANGCHAIN_TYPES`` type) -> langchain; before rule 14 (Anthropic-backed: ``tool_use``);
    also ``intermediate_steps`` beside ``input`` / ``output`` or in ``outputs`` (a LangChain
    AgentExecutor result; beside ``messages`` only when those are LangChain's) -> langchain.
13b. ``conversations`` / ``conversation`` / ``messages`` of turns with ``from`` + ``value``
    (ShareGPT, LLaMA-Factory's tool-call layout), or of ``role`` turns with a role no chat
    API writes (``tool_call``, ``tool_response``, ``function_call``, ``observation``:
    ms-swift's chatml agent data) -> sharegpt.
13c. ``messages`` + ``call_type`` + ``response`` / ``trace_id`` (a LiteLLM
    StandardLoggingPayload: one model call) -> litellm; before rule 14 (its ``messages``
    may hold Anthropic-style blocks) and rule 16. ``request`` (holding ``messages``) +
    ``response`` (a logged API call) -> anthropic when a ``tool_use``-style block shows,
    else litellm (an OpenAI-compatible chat call).
13d. ``schemaType`` + ``modelId`` + ``input`` (a Bedrock model invocation log line), or
    ``messages`` (or a bare array of ``role`` messages) whose content blocks are keyed
    ``toolUse`` / ``toolResult``, or a record whose top-level ``system`` list holds text
    blocks without a ``type`` (Converse API) -> bedrock; before rule 14, which a Converse request's
    ``system`` would match.
14. ``messages`` and (``system`` key or a ``tool_use``/``server_tool_use``/``mcp_tool_use``/
    ``tool_result`` block: ``ANTHROPIC_TYPES``), or a bare array of ``role`` messages (no
    record key: ``bare_lists.RECORD_KEYS``) with such a block -> anthropic.
14b. a bare array of ``role`` messages (no record key; no ``tool_calls``, ``function_call``,
    ``tool_call_id`` nor a ``tool`` / ``function`` role: OpenAI's; contents that are lists of
    ``{type: text}`` blocks, not strings) whose head holds a Cline / Roo Code mark (an ``<environment_details>`` block, or a ``[<tool> for '...']
    Result:`` header of a ``cline_xml.TOOL_NAMES`` tool): Cline's
    ``api_conversation_history.json`` with XML calls in text (no ``tool_use`` block) ->
    anthropic, which reads those calls (:mod:`.cline_xml`). Checked on the head's text in
    :func:`detect`, once rules 2-15 give canonical.
15. ``input`` or ``output`` (no ``messages``) holding a Responses API item type
    (``function_call``, ``function_call_output``, ``input_text``, ``output_text``, the
    hosted tools' ``mcp_call`` / ``code_interpreter_call`` / ``file_search_call`` / ``mcp_list_tools``, ...), or a
    bare array of items with such a type -> openai-responses. (A bare array of
    any other ``role`` messages falls to rule 16 and is one canonical conversation:
    ``pipeline/ingest/adapters/bare_lists.py``.)
16. anything else -> canonical (records that do not fit are rejected downstream).

The warning for a file whose records all lack an id is in :mod:`._warn`.
"""

from __future__ import annotations

from pipeline.ingest.adapters._detect_files import (
    SNIFF_BYTES, first_bytes, openhands_v1_file, pretty_printed, strands_file,
)
from pipeline.ingest.adapters._shape import (
    CODEX_EXEC_TYPES, RESPONSES_TYPES, Shape, ai_sdk_shape, autogen_shape, gemini_shape, langchain_shape, mcp_shape,
    scan, sharegpt_shape,
)
from pipeline.ingest.adapters.anthropic import CALL_BLOCKS as ANTHROPIC_CALLS
from pipeline.ingest.adapters.bare_lists import ITEM_RECORD_KEYS, RECORD_KEYS
from pipeline.ingest.adapters.bedrock import CALL_BLOCKS as CONVERSE_BLOCKS, OPENAI_KEYS
from pipeline.ingest.adapters.cline_xml import head_mark
from pipeline.ingest.adapters.goose import CALL_TYPES as GOOSE_TYPES
from pipeline.ingest.adapters.opencode import RUN_TYPES as OPENCODE_RUN_TYPES
from pipeline.ingest.adapters.sqlite_store import SQLITE_MAGIC, detect_store
from pipeline.ingest.adapters.opencode_storage import storage_file
from pipeline.storage import Location

LONG_SNIFF_BYTES = 2 * 2**20
NDJSON_SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz")
# block types that mark Anthropic messages (rule 14): its call blocks and the user's results
ANTHROPIC_TYPES = {*ANTHROPIC_CALLS, "tool_result"}
# a Goose message's keys (rule 4b): those it must have, all it may have
GOOSE_MESSAGE = {"role", "created", "content"}
GOOSE_MESSAGE_KEYS = {*GOOSE_MESSAGE, "id", "metadata"}


def classify(shape: Shape) -> tuple[str, str]:
    """(format, why) from a scanned head (rules 2-16 of the module docstring)."""
    base = 2 if shape.top == "[" else 1
    k, c = shape.at(base), shape.at(base + 1)
    transcript_keys = {"messages", "trajectory_id", "eval", "trajectory", "traj", "contents", "intermediate_steps"}
    if shape.top == "{" and not transcript_keys & k and (
            {"final_score", "checkpoints"} & k or {"agent_profiles", "scenarios"} <= k or "llm_label" in c):
        return "skip", "evaluation/label or task-config file (no transcript): skipped"
    if shape.top == "{" and "eval" in k and {"samples", "version", "status", "plan"} & k:
        return "inspect", "object with 'eval' and 'samples'/'version': Inspect EvalLog JSON"
    if "trajectory" in k and {"history", "info", "environment"} & k or {"trajectory_format", "messages"} <= k:
        return "swe-agent", "'trajectory' with 'history', or 'trajectory_format': (mini-)SWE-agent trajectory"
    goose = _goose(shape, k)
    if goose is not None:
        return "goose", goose
    if {"steps", "agent"} <= k and ({"schema_version", "session_id"} & k) and {"source", "step_id"} <= shape.at(base + 2):
        return "atif", "'steps' of {step_id, source}, 'agent', 'schema_version'/'session_id': an ATIF trajectory"
    if "requests" in k and ({"requesterUsername", "responderUsername"} & k
                            or {"requestId", "message"} <= shape.at(base + 2)) \
            or shape.top == "{" and k <= {"kind", "v"} and "v" in k and "requests" in c:
        return "copilot", ("'requests' with 'requesterUsername'/'responderUsername' (or a kind-0 line holding "
                           "them: a chatSessions .jsonl log): a GitHub Copilot Chat session (VS Code)")
    if shape.top == "[" and {"action", "observation"} & k and {"source", "cause"} & k:
        return "openhands", "array of events with 'action'/'observation': OpenHands event list"
    if {"instance_id", "history"} <= k and "trajectory_id" not in k:
        return "openhands", "records with 'instance_id' and 'history': OpenHands evaluation output"
    if shape.top == "[" and "kind" in k and {"llm_message", "tool_call_id", "system_prompt"} & k:
        return "openhands", "array of 'kind'-tagged events (llm_message/tool_call_id): OpenHands V1 events"
    if opencode_shape(shape, k):
        return "opencode", ("'info' + 'messages' of {info, parts} with sessionID (an `opencode export`), or an "
                            "`opencode run --format json` event (type step_start/text/tool_use/... + sessionID)")
    if any({"kind", "parts"} <= shape.at(d) and "part_kind" in shape.at(d + 2) for d in (2, 3)):
        return "pydantic-ai", "messages with 'kind' and 'parts' of a 'part_kind': a Pydantic AI message history"
    if k == {"metadata"} or ("metadata" in k and "suite_name" in c):
        return "agentdojo", "AgentDojo 'metadata' header / metadata.suite_name"
    if "suite_name" in k and ("messages" in k or {"pipeline_name", "user_task_id"} <= k) \
            and {"pipeline_name", "user_task_id", "injection_task_id"} & k and "trajectory_id" not in k:
        return "agentdojo", "object with 'messages', 'suite_name' and 'user_task_id': an AgentDojo trace"
    if "traj" in k and {"task_id", "reward"} & k:
        return "tau-bench", "records with 'traj' and 'task_id': tau-bench results"
    if shape.top == "{" and ("info" in k and {"agent_info", "environment_info", "user_info"} <= c
                             or {"task_id", "messages", "termination_reason"} <= k):
        return "tau2-bench", "'info' of agent/user/environment, or one simulation: tau2-bench results"
    if autogen_shape(shape, k):
        return "autogen", "AutoGen AgentChat messages (type TextMessage/ToolCallRequestEvent/... with source)"
    if ai_sdk_shape(shape, k):
        return "ai-sdk", "AI SDK messages (UIMessage typed parts, or tool-call/tool-result content parts): Vercel AI SDK"
    if gemini_shape(shape, k, c):
        return "gemini", "'contents'/'history'/'messages' of Content with 'parts' (or a request/ADK session): Gemini"
    if "contents" in k and {"label", "profile", "risk_description"} & k:
        return "r-judge", "records with 'contents' and 'label': R-Judge"
    if "sessionId" in k and {"uuid", "parentUuid", "type"} & k or {"summary", "leafUuid"} <= k \
            or {"messageId", "snapshot"} <= k:
        return "claude-code", "Claude Code session line (sessionId/uuid, summary or snapshot)"
    if {"type", "session_id"} <= k and {"subtype", "message"} & k \
            and {"parent_tool_use_id", "cwd", "tools", "result", "num_turns"} & k:
        return "claude-code", "Claude Code stream-json line (type + session_id: system init, message or result)"
    if {"type", "payload"} <= k and {"session_meta", "response_item", "event_msg", "turn_context"} & shape.types:
        return "codex", "Codex CLI rollout line (type + payload: session_meta/response_item/event_msg)"
    if {"id", "timestamp"} <= k and {"instructions", "git"} & k and not {"type", "messages", "trajectory_id"} & k:
        return "codex", "Codex CLI rollout header line (id, timestamp, instructions: 2025 layout)"
    if "type" in k and CODEX_EXEC_TYPES & shape.types and ({"thread_id", "item"} & k or len(k) == 1):
        return "codex", "codex exec --json event line (thread.started, turn.*, item.*)"
    if {"type", "timestamp", "session_id", "model"} <= k and "init" in shape.types:
        return "gemini-stream", "Gemini CLI stream-json init line (type init, session_id, model, timestamp)"
    if mcp_shape(shape, k, c):
        return "mcp", ("a JSON-RPC 2.0 message with an MCP method, MCP initialize params or an MCP result, bare "
                       "or in a log record: MCP traffic")
    if "resourceSpans" in k:
        return "otel", "OTLP trace export (resourceSpans)"
    if {"step_number", "tool_calls"} <= k or {"step_number", "observations"} <= k or {"task", "task_images"} <= k \
            or "steps" in k and {"step_number", "task_images"} & shape.at(base + 2):
        return "smolagents", "smolagents memory steps (step_number + tool_calls/observations, or task + task_images)"
    if langchain_shape(shape, k, c):
        return "langchain", ("LangChain messages (type + data, lc + kwargs or a model_dump), or an AgentExecutor "
                             "result (intermediate_steps): LangChain / LangGraph")
    if sharegpt_shape(shape, k):
        return "sharegpt", "'conversations' of turns with 'from' and 'value': ShareGPT-style conversations"
    if {"messages", "call_type"} <= k and {"response", "trace_id"} & k:
        return "litellm", "'messages' with 'call_type' and 'response'/'trace_id': a LiteLLM StandardLoggingPayload"
    if {"request", "response"} <= k and "messages" in c:
        if CONVERSE_BLOCKS & shape.at(5) or "system" in c and "text" in shape.at(4) and "type" not in shape.at(4):
            return "bedrock", "'request' with Converse 'messages', and 'response': a logged Converse call"
        if ANTHROPIC_TYPES & shape.types or {"stop_reason", "anthropic_version"} & c or "message" in shape.types:
            return "anthropic", "'request' with 'messages' holding tool_use blocks, and 'response': a logged Anthropic call"
        return "litellm", "'request' with 'messages', and 'response': a logged chat-completions call"
    if {"schemaType", "modelId", "input"} <= k:
        return "bedrock", "'schemaType', 'modelId' and 'input': an Amazon Bedrock model invocation log"
    if _converse(shape, k):
        return "bedrock", "messages with toolUse/toolResult blocks, or an untyped 'system' list: Amazon Bedrock Converse"
    if "messages" in k and ("system" in k or ANTHROPIC_TYPES & shape.types):
        return "anthropic", "'messages' with tool_use/tool_result (or server/MCP call) blocks or 'system': Anthropic"
    if shape.top == "[" and "role" in k and not RECORD_KEYS & k and ANTHROPIC_TYPES & shape.types:
        return "anthropic", ("a bare array of messages with tool_use/tool_result (or server/MCP call) blocks: "
                             "one Anthropic conversation")
    if {"input", "output"} & k and "messages" not in k and RESPONSES_TYPES & shape.types:
        return "openai-responses", "'input'/'output' with Responses API items (function_call, input_text, ...)"
    if shape.top == "[" and not ITEM_RECORD_KEYS & k and RESPONSES_TYPES & shape.types:
        return "openai-responses", "a bare array of Responses API items: one conversation"
    if "messages" in k or "trajectory_id" in k:
        return "canonical", "records with 'messages'/'trajectory_id': canonical"
    return "canonical", "no known format markers: treated as canonical"


def _goose(shape: Shape, k: set[str]) -> str | None:
    """Rule 4b's why when the head is Goose's (a message, a metadata line, an export), else None."""
    base = 2 if shape.top == "[" else 1
    # Anthropic messages an app stored with `created` (its block types) are no Goose
    # messages: Goose's items are toolRequest / toolResponse / ..., its metadata userVisible
    anthropic = bool(ANTHROPIC_TYPES & shape.types)
    if GOOSE_MESSAGE <= k <= GOOSE_MESSAGE_KEYS and "type" in shape.at(base + 2) and not anthropic \
            and (GOOSE_TYPES & shape.types or "userVisible" in shape.at(base + 1)):
        return "Goose messages (role, created, content of toolRequest/toolResponse items or userVisible): a Goose session"
    if shape.top == "{" and {"description", "message_count"} <= k \
            and {"working_dir", "schedule_id", "total_tokens", "accumulated_total_tokens"} & k \
            and not {"messages", "trajectory_id", "role", "content", "conversation"} & k:
        return "Goose session metadata line (description, message_count, working_dir): a Goose session file"
    if shape.top == "{" and GOOSE_MESSAGE <= shape.at(3) and not anthropic and (
            "conversation" in k or "messages" in k and (GOOSE_TYPES & shape.types or "userVisible" in shape.at(4))):
        return "a session object whose 'conversation' holds Goose messages: a Goose session export"
    return None


def opencode_shape(shape: Shape, k: set[str]) -> bool:
    """Rule 5c: an ``opencode export`` document (``info`` + ``messages`` whose elements are
    ``{info, parts}`` and whose message infos or parts carry ``sessionID``; or a head that
    holds only the export's session ``info``: ``id``, ``projectID``, ``directory``,
    ``version``), or an
    ``opencode run --format json`` event line (``type`` of its events + ``sessionID`` +
    ``timestamp``, and a ``part`` or ``error``)."""
    if shape.top != "{":
        return False
    if {"info", "messages"} <= k and {"info", "parts"} <= shape.at(3):
        return "sessionID" in shape.at(4) | shape.at(5)
    if k and k <= {"info", "messages", "todos"} and "info" in k and "messages" not in k:
        # the session's info fills the head (its summary's file diffs): an export's info
        return {"id", "projectID", "directory", "version"} <= shape.at(2)
    return {"type", "sessionID", "timestamp"} <= k and bool({"part", "error"} & k) \
        and bool(OPENCODE_RUN_TYPES & shape.types)


def _converse(shape: Shape, k: set[str]) -> bool:
    """Rule 13d's Converse messages: content blocks keyed ``toolUse`` / ``toolResult``, or a
    record's top-level ``system`` list of text blocks without a ``type`` (Anthropic types
    its system blocks)."""
    base = 2 if shape.top == "[" else 1
    if shape.top == "[" and "role" in k and not RECORD_KEYS & k:
        blocks, system = shape.at(base + 2), set()
    elif "messages" in k:
        blocks, system = shape.at(base + 4), shape.at(base + 2) if "system" in k else set()
    else:
        return False
    if CONVERSE_BLOCKS & blocks:
        return True
    # untyped text blocks alone are no mark in messages (Qwen-Agent, DashScope and Haystack
    # write them too, beside OpenAI `tool_calls`: canonical reads those); only a request's
    # top-level `system` list of them is Converse's (Anthropic's system blocks are typed)
    return "tool_calls" not in shape.at(base + 2) and "text" in system and "type" not in system


def _cline(shape: Shape, head: bytes) -> bool:
    """Rule 14b: a bare array of ``role`` messages (no record key, no OpenAI key or role:
    ``tool_calls``, ``function_call``, ``tool_call_id``, ``tool`` / ``function``) whose
    contents are lists of typed blocks (``{type: text}``: Cline's; an OpenAI-style proxy
    log's are strings) and whose head's text holds a Cline / Roo Code mark
    (``cline_xml.head_mark``)."""
    k = shape.at(2)
    return shape.top == "[" and "role" in k and not RECORD_KEYS & k and not OPENAI_KEYS & k \
        and not {"tool", "function"} & shape.roles.get(2, set()) and "text" in shape.types \
        and "type" in shape.at(4) and head_mark(head.decode("utf-8", "replace"))


def detect(path: Location) -> tuple[str, str]:
    """(format, human-readable why) for one file; format ``skip`` means no records."""
    name = path.name.lower()
    if name.endswith(".eval"):
        return "inspect", ".eval extension: Inspect AI log archive"
    if name.endswith((".traj", ".traj.json")):
        return "swe-agent", ".traj extension: SWE-agent (or mini-SWE-agent) trajectory"
    if name.endswith(("_safety_eval_results.json", "_safety_eval_results.json.gz")):
        return "skip", "OpenAgentSafety LLM-judge label file (no transcript): skipped"
    by_path = openhands_v1_file(path) or strands_file(path) or storage_file(path)  # rules 1b, 1c, 1d
    if by_path is not None:
        return by_path
    ndjson = (name.endswith(NDJSON_SUFFIXES) or not name.endswith((".json", ".json.gz"))) \
        and not pretty_printed(path)  # pretty-printed: its head is scanned as a document's
    head, cut = first_bytes(path, SNIFF_BYTES, ndjson)
    if head.startswith(SQLITE_MAGIC):  # rule 0: a database (adapters/sqlite_store.py)
        return detect_store(path)
    shape = scan(head.decode("utf-8", "replace"))
    fmt, why = classify(shape)
    if cut and fmt == "canonical" and "trajectory_id" not in shape.at(2 if shape.top == "[" else 1):
        shape = scan(first_bytes(path, LONG_SNIFF_BYTES, ndjson)[0].decode("utf-8", "replace"))
        fmt, why = classify(shape)
    if fmt == "canonical" and _cline(shape, head):
        fmt, why = "anthropic", ("a bare array of messages with Cline/Roo Code marks (<environment_details>, "
                                 "'[tool for ...] Result:'): a Cline api_conversation_history.json (XML calls in text)")
    per_line = fmt == "openhands" and {"instance_id", "history"} <= shape.at(1)  # output.jsonl lines
    if ndjson and fmt in ("openhands", "swe-agent", "inspect", "skip") and not per_line:
        return "canonical", f"NDJSON file whose first record looks like {fmt}: treated as canonical"
    return fmt, ("first record: " if ndjson else "document head: ") + why
