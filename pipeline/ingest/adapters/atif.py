"""ATIF (Agent Trajectory Interchange Format, Harbor's RFC 0001) trajectories -> canonical records.

ATIF is the interchange format Harbor (Terminal-Bench 2.0's framework) writes for every
agent it runs (``<trial>/agent/trajectory.json``; Claude Code, Codex, OpenHands,
mini-SWE-agent and Terminus converted to it) and other tools export. A record is one
trajectory: ``{"schema_version": "ATIF-v1.x", "session_id", "agent": {name, version,
model_name}, "steps": [...], "notes"?, "final_metrics"?, "extra"?}``; a ``.json`` file holds
one, an array of them or NDJSON lines of them. A step is ``{"step_id", "source": "system" |
"user" | "agent", "message", "reasoning_content"?, "tool_calls"?: [{"tool_call_id",
"function_name", "arguments"}], "observation"?: {"results": [{"source_call_id"?, "content"?,
"subagent_trajectory_ref"?}]}, "metrics"?, "extra"?}``.

- system / user steps -> system / user messages (their ``message``).
- an agent step -> an assistant message (``message``; ``reasoning_content`` is not read:
  it is the model's thinking, not what it said or did) with its ``tool_calls`` (id
  ``tool_call_id``, name ``function_name``, ``arguments`` an object, or a JSON string as
  some writers give it), then one tool message per call answered in its ``observation``
  (results in call order; several results of one call are joined). A result whose
  ``source_call_id`` names a call of an earlier step still unanswered answers that one.
- results without a ``source_call_id`` in a step with calls that no keyed result answers
  (Harbor's Terminus-2 and mini-SWE-agent writers: ONE observation, the terminal after all
  of the step's calls) answer the last such call; its other such calls answer
  ``(its output is in the result of <id>)`` (they ran before it). A call's ``keystrokes``
  (Terminus-2's ``bash_command``: the keys typed into the terminal) is also its ``command``.
  A result given as a bare string is its content.
- otherwise, results without a ``source_call_id`` come from an action outside tool calling (the RFC:
  an agent acting through its text, as mini-SWE-agent does): they are the result of one
  call standing for the step's action, so what it brought in flows on like any tool
  output (as user text it would count as given by the user): ``bash {"command"}`` when
  the message holds exactly one ```bash / ```sh block (mini-SWE-agent's protocol; its
  ``<returncode>`` header gives the exit status, as in the swe-agent reader), else
  ``agent_action {"action": <the step's message>}`` (R-Judge's reader does the same; the
  step classifier judges its text). On a system step they stay text of the system message.
- errors: the format has no error field. A result marked ``is_error: true`` (at its top
  or in its ``extra``, what several writers add) has its text as error text (the policy's
  text rules); any other result's text goes through the same rules as content.
- a result that only references a subagent trajectory (``subagent_trajectory_ref``)
  answers with ``(subagent <session_id>: <trajectory_path>)`` (that trajectory is a record
  of its own when given as input).
- ``content`` given as a list of content parts: their ``text`` joined (images dropped).

trajectory_id: ``trajectory_id``, else ``session_id``, else ``<file stem>:<line>``; suite:
``suite`` when present, else ``default``. ``meta``: ``format``, ``schema_version``,
``agent`` (name, version, model), ``notes``.
"""

from __future__ import annotations

from typing import Any

from pipeline.ingest.adapters._common import AdapterError, Ctx, assistant, listed_record, tool_call, tool_result
from pipeline.ingest.adapters.swe_agent import bash_block, observation_error
from pipeline.ingest.records import canonical_message

FORMAT = "atif"
ROLES = {"system": "system", "user": "user"}
ACTION = "agent_action"  # the call standing for an action taken outside tool calling


def trajectory(value: Any) -> bool:
    """True when ``value`` is one ATIF trajectory (``steps`` list, ``agent`` object, and a
    ``schema_version`` naming ATIF or a ``session_id``)."""
    return isinstance(value, dict) and isinstance(value.get("steps"), list) and isinstance(value.get("agent"), dict) \
        and (str(value.get("schema_version", "")).upper().startswith("ATIF") or "session_id" in value)


def _text(content: Any) -> str:
    """A result's or message's text: a string, or the ``text`` of a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p if isinstance(p, str) else p.get("text") for p in content if isinstance(p, (str, dict))]
        return "\n".join(t for t in texts if isinstance(t, str))
    return "" if content is None else str(content)


def _result_text(result: dict[str, Any]) -> str:
    text = _text(result.get("content"))
    refs = result.get("subagent_trajectory_ref")
    if not text and isinstance(refs, list):
        text = "\n".join(f"(subagent {r.get('session_id')}: {r.get('trajectory_path') or 'no path'})"
                         for r in refs if isinstance(r, dict))
    return text


def _is_error(result: dict[str, Any]) -> bool:
    extra = result.get("extra")
    return result.get("is_error") is True or isinstance(extra, dict) and extra.get("is_error") is True


def _calls(step: dict[str, Any], n: int) -> list[dict[str, Any]]:
    raw = step.get("tool_calls")
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise AdapterError(f"steps[{n}].tool_calls is {type(raw).__name__}, expected an array")
    calls = []
    for k, c in enumerate(raw):
        if not isinstance(c, dict) or not isinstance(c.get("function_name"), str) or not c["function_name"]:
            raise AdapterError(f"steps[{n}].tool_calls[{k}] has no function_name")
        args = c.get("arguments")
        if isinstance(args, dict) and isinstance(args.get("keystrokes"), str) and "command" not in args:
            args = {**args, "command": args["keystrokes"]}  # Terminus-2: the keys typed into the terminal
        call_id = c.get("tool_call_id") if isinstance(c.get("tool_call_id"), (str, int)) else f"call_{n}_{k}"
        calls.append(tool_call(str(call_id), c["function_name"], args if isinstance(args, (dict, str)) else {}))
    return calls


def _results(step: dict[str, Any], n: int) -> list[dict[str, Any]]:
    observation = step.get("observation")
    if observation is None:
        return []
    results = observation.get("results") if isinstance(observation, dict) else None
    if not isinstance(results, list):
        raise AdapterError(f"steps[{n}].observation has no results array")
    return [r if isinstance(r, dict) else {"content": r} for r in results if r is not None]


class _Answers:
    """The tool messages of the calls still unanswered, built as results come in."""

    def __init__(self) -> None:
        self.waiting: dict[str, dict[str, Any]] = {}  # call id -> its tool message (not yet in the messages)

    def add_calls(self, calls: list[dict[str, Any]]) -> None:
        for c in calls:
            self.waiting.setdefault(c["id"], {})

    def answer(self, call_id: str, text: str, error: bool, exited: Any = None) -> bool:
        """Record a result of ``call_id`` (``exited``: a structured error of its own, e.g. an
        exit status); False when no call of that id waits."""
        if call_id not in self.waiting:
            return False
        msg = self.waiting[call_id]
        if not msg:
            msg.update(tool_result(call_id, text, text if error else exited))
        else:  # a second result of the same call: joined, an error stays an error
            msg["content"] = f"{msg['content']}\n{text}"
            msg["error"] = msg["content"] if error or msg["error"] is not None else None
        return True

    def flush(self) -> list[dict[str, Any]]:
        """The tool messages of the calls answered so far, in call order."""
        done = [(k, m) for k, m in self.waiting.items() if m]
        for k, _ in done:
            del self.waiting[k]
        return [m for _, m in done]


def convert(record: Any, ctx: Ctx) -> dict[str, Any]:
    """Convert one ATIF trajectory (module docstring)."""
    if not trajectory(record):
        raise AdapterError("not an ATIF trajectory: expected 'steps', 'agent' and 'schema_version' or 'session_id'")
    messages: list[dict[str, Any]] = []
    answers = _Answers()
    orphans = 0
    for n, step in enumerate(record["steps"]):
        if not isinstance(step, dict):
            raise AdapterError(f"steps[{n}] is {type(step).__name__}, expected an object")
        source, text = step.get("source"), _text(step.get("message"))
        results = _results(step, n)
        if source in ROLES:
            extra = [_result_text(r) for r in results]
            messages.append(canonical_message(ROLES[source], "\n".join([text, *extra]) if extra else text))
            continue
        if source != "agent":
            raise AdapterError(f"steps[{n}].source is {source!r}, expected system, user or agent")
        calls = _calls(step, n)
        keyed = {str(r["source_call_id"]) for r in results if r.get("source_call_id") is not None}
        unkeyed = [r for r in results if r.get("source_call_id") is None]
        # unkeyed results of a step with calls (Harbor's Terminus-2 and mini-SWE-agent
        # writers: one observation, the terminal after all of the step's calls) answer its
        # last call no keyed result answers; its other such calls ran before it
        open_ids = [c["id"] for c in calls if c["id"] not in keyed]
        command = bash_block(text) if unkeyed and not open_ids else None
        if unkeyed and not open_ids:  # an action taken through the text: one call stands for it
            calls.append(tool_call(f"action_{n}", "bash", {"command": command}) if command is not None
                         else tool_call(f"action_{n}", ACTION, {"action": text}))
        messages.append(assistant(text or None, calls))
        answers.add_calls(calls)
        target = open_ids[-1] if open_ids else f"action_{n}"
        for r in results:
            call_id = target if r.get("source_call_id") is None else str(r["source_call_id"])
            exited = observation_error(_result_text(r)) if command is not None and call_id == f"action_{n}" else None
            if not answers.answer(call_id, _result_text(r), _is_error(r), exited):
                # a result of no call: kept as an orphan result (the record is rejected, never guessed)
                messages.append(tool_result(call_id, _result_text(r)))
                orphans += 1
        if unkeyed and len(open_ids) > 1:
            for call_id in open_ids[:-1]:
                answers.answer(call_id, f"(its output is in the result of {target})", False)
        messages.extend(answers.flush())
    agent = record["agent"]
    meta = {"format": FORMAT, "schema_version": record.get("schema_version"),
            "agent": {k: agent.get(k) for k in ("name", "version", "model_name") if k in agent}}
    if isinstance(record.get("notes"), str):
        meta["notes"] = record["notes"][:2000]
    if orphans:
        meta["orphan_results"] = orphans
    rec = {k: v for k, v in record.items() if not (k in ("trajectory_id", "session_id") and v is None)}
    return listed_record(rec, ctx, messages, meta, "session_id")
