"""LangChain AgentExecutor results (``return_intermediate_steps=True``) -> canonical messages.

What a classic LangChain agent (ReAct, structured chat, OpenAI functions / tools agents)
returns and what research suites built on it save per case: ``{"input", "output",
"intermediate_steps": [[action, observation], ...]}``, also under a LangSmith run's
``outputs`` (``inputs.input`` then the question). An action is a LangChain ``AgentAction``
(``tool``, ``tool_input``, ``log``; ``AgentActionMessageLog`` / ``ToolAgentAction`` add
``message_log`` / ``tool_call_id``) in any of three serializations: its ``model_dump()``
(``{"tool", "tool_input", "log", "type"?}``), LangChain's ``dumpd``
(``{"lc": 1, "type": "constructor", "id": [..., "AgentAction"], "kwargs": {...}}``), or a
list ``[tool, tool_input, log]``. The observation is what the executor fed back: a string,
an object of a simulated observation's fields only (``observation``, ``thought_summary``,
``log``: the agent saw ``observation``; the others are the simulator's), or any other JSON
value (its JSON text, whole). An ``AgentFinish`` (``return_values`` + ``log``, in the same
serializations, or ``[return_values, log]``) as a step's action is the final answer.

- ``input`` -> user message; each step -> an assistant message (the model's text from
  ``log``, without the call part LangChain parsed: ``Action: ...`` / ``Action Input: ...``,
  a structured chat agent's ``Action:`` + fenced JSON blob, or the ``Invoking: `tool` with
  `...``` line a tools agent's log opens with) carrying one
  call ``step_<k>`` (k: the step's index), then its result; ``output`` -> the final
  assistant message.
- ``tool_input``: an object is the arguments; a string that is a JSON object (strict JSON:
  what a requests tool parses itself) too; any other string, as written, is the tool's one
  argument ``{"input": ...}`` (LangChain hands a string to a single-input tool whole; ``input``
  is a shell / code argument of the policy's inference lexicon, also for a catalogued shell
  tool called without its own argument name: a terminal tool's command is read as one).
- ``_Exception`` (LangChain's ``ExceptionTool``: the model's output did not parse, under
  ``handle_parsing_errors``) is no call: its ``log`` (the model's text) is assistant text,
  the observation (the executor's feedback) a user message; counted in
  ``meta.parse_errors``.
- A tool the agent named that the executor does not have is answered by LangChain's
  ``InvalidTool``: the observation is exactly ``"<tool> is not a valid tool, try one of
  [<names>]."``. Such a call never ran: error ``not_executed`` (failed), but only when
  the list does not name the tool, no other step of the record calls the tool and gets
  another answer, and the list names every tool that did answer (the executor lists all
  it has); otherwise the tool's output only says so: scored as it ran. Left open: a
  tool's only call whose whole output is that sentence (a command printing it, in a
  record where every other tool answered is listed) is scored never-ran.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pipeline.ingest.adapters._common import AdapterError, assistant, tool_call, tool_result
from pipeline.ingest.adapters._session import SizeGuard
from pipeline.ingest.records import canonical_message

STEPS_KEY = "intermediate_steps"
# LangChain's ExceptionTool: a parse failure fed back to the model, never a call
EXCEPTION_TOOL = "_Exception"
# the call part of a ReAct log (the last `Action:` ... `Action Input:` on, or a structured
# chat agent's `Action:` then a fenced JSON blob), and a tools
# agent's `Invoking: `name` with `args`` line, optionally followed by `responded: <text>`
# (no two adjacent quantifiers over the same characters: linear on hostile logs)
_REACT_CALL = re.compile(r"(?:^|\n)[ \t]*Action[ \t]*(?:\d+[ \t]*)?:(?:[^\n]*\n\s*Action[ \t]*(?:\d+[ \t]*)?"
                         r"Input[ \t]*(?:\d+[ \t]*)?:|[ \t]*\n[ \t]*```)")
_INVOKING = re.compile(r"^\s*Invoking: `[^`\n]*` with `")
_RESPONDED = re.compile(r"\nresponded: ")
# what LangChain's InvalidTool answers (langchain/agents/tools.py), the tool's name first
_INVALID_TAIL = re.compile(r" is not a valid tool, try one of \[([^\n]*)\]\.")
# a simulated observation's fields (the agent saw `observation`)
_SIMULATED = frozenset({"observation", "thought_summary", "log"})


def steps_holder(record: Any) -> dict[str, Any] | None:
    """The object holding ``intermediate_steps`` (the record, or a LangSmith run's
    ``outputs``; the first holding any step), else None."""
    if not isinstance(record, dict):
        return None
    holders = [h for h in (record, record.get("outputs")) if isinstance(h, dict) and isinstance(h.get(STEPS_KEY), list)]
    return next((h for h in holders if h[STEPS_KEY]), holders[0] if holders else None)


def is_agent_step(step: Any) -> bool:
    """Whether ``step`` is an ``[action, observation]`` pair of an AgentExecutor result
    (its action an AgentAction or AgentFinish in one of the serializations read here)."""
    if not isinstance(step, (list, tuple)) or len(step) != 2:
        return False
    if _finish(step[0]) is not None:
        return True
    try:
        _action(step[0], 0)
        return True
    except AdapterError:
        return False


def _finish(value: Any) -> str | None:
    """The final answer of an ``AgentFinish`` action (module docstring), else None."""
    if isinstance(value, dict) and value.get("lc") == 1 and isinstance(value.get("kwargs"), dict):
        value = value["kwargs"]
    if isinstance(value, dict) and isinstance(value.get("return_values"), dict) and "tool" not in value:
        returned = value["return_values"]
    elif isinstance(value, list) and len(value) == 2 and isinstance(value[0], dict) and isinstance(value[1], str):
        returned = value[0]
    else:
        return None
    answer = returned.get("output", returned)
    return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)


def _action(value: Any, k: int) -> tuple[str, Any, str]:
    """(tool, tool_input, log) of step ``k``'s action in any of the three serializations."""
    if isinstance(value, dict) and value.get("lc") == 1 and isinstance(value.get("kwargs"), dict):
        value = value["kwargs"]
    if isinstance(value, dict) and isinstance(value.get("tool"), str) and value["tool"] and "tool_input" in value:
        log = value.get("log")
        return value["tool"], value["tool_input"], log if isinstance(log, str) else ""
    if isinstance(value, list) and len(value) == 3 and isinstance(value[0], str) and value[0] \
            and isinstance(value[2], str):
        return value[0], value[1], value[2]
    raise AdapterError(f"intermediate_steps[{k}]: the action is no LangChain AgentAction "
                       "({tool, tool_input, log}, its dumpd form, or [tool, tool_input, log])")


def _observation(value: Any) -> str:
    """The text the agent saw (module docstring)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("observation"), str) and value.keys() <= _SIMULATED:
        return value["observation"]
    return json.dumps(value, ensure_ascii=False)


def string_arguments(tool_input: Any) -> Any:
    """The call's arguments (module docstring): an object, else ``{"input": text}``."""
    if isinstance(tool_input, dict):
        return tool_input
    if isinstance(tool_input, str):
        if tool_input.lstrip().startswith("{"):
            try:
                if isinstance(json.loads(tool_input), dict):
                    return tool_input
            except (ValueError, RecursionError):
                pass
        return {"input": tool_input}
    return {"input": json.dumps(tool_input, ensure_ascii=False)}


def _thought(log: str) -> str | None:
    """The model's own text in an action's ``log`` (module docstring), None when none."""
    if _INVOKING.match(log):
        said = _RESPONDED.search(log)
        text = log[said.end():] if said else ""
    else:
        calls = list(_REACT_CALL.finditer(log))
        text = log[:calls[-1].start()] if calls else log
    return text.strip() or None


def _invalid_tool(tool: str, seen: str) -> list[str] | None:
    """The tools InvalidTool's answer to a call of ``tool`` lists (``seen`` being that
    answer: module docstring), else None."""
    if not seen.startswith(tool):
        return None
    m = _INVALID_TAIL.fullmatch(seen, len(tool))
    names = m.group(1).split(", ") if m is not None else []
    return names if m is not None and tool not in names else None


def never_ran(calls: list[tuple[str, str | None]]) -> list[bool]:
    """For each (tool, what answered it) of a record's calls, in order: whether LangChain's
    ``InvalidTool`` answered it, so it never ran (module docstring): the answer is exactly
    its sentence for that tool, whose list does not name it but names every tool that
    answered otherwise in the record, and no call of the tool was answered otherwise."""
    answered = {tool for tool, seen in calls if seen is not None and _invalid_tool(tool, seen) is None}
    out = []
    for tool, seen in calls:
        listed = _invalid_tool(tool, seen) if seen is not None else None
        out.append(tool not in answered and listed is not None and answered <= set(listed))
    return out


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def agent_messages(record: dict[str, Any], holder: dict[str, Any],
                   guard: SizeGuard) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The canonical messages of one AgentExecutor result, and what goes to ``meta``."""
    inputs = record.get("inputs")
    question = holder.get("input", inputs.get("input") if isinstance(inputs, dict) else None)
    messages: list[dict[str, Any]] = []
    if question is not None:
        guard.add(_text(question))
        messages.append(canonical_message("user", _text(question)))
    parse_errors = 0
    steps: list[tuple[str, Any, str, str]] = []
    answer = holder.get("output")
    for k, step in enumerate(holder[STEPS_KEY]):
        if not isinstance(step, (list, tuple)) or len(step) != 2:
            raise AdapterError(f"intermediate_steps[{k}] is no [action, observation] pair")
        final = _finish(step[0])
        if final is not None:  # an AgentFinish logged as the last step: the answer
            answer = final if answer is None else answer
            continue
        tool, tool_input, log = _action(step[0], k)
        seen = _observation(step[1])
        guard.add(log)
        guard.add(seen)
        steps.append((tool, tool_input, log, seen))
    # a tool that answered a call otherwise exists: its output may say anything; and the
    # executor's answer lists every tool it has, so it names each of those
    ran_not = never_ran([(tool, seen) for tool, _, _, seen in steps if tool != EXCEPTION_TOOL])
    for k, (tool, tool_input, log, seen) in enumerate(steps):
        if tool == EXCEPTION_TOOL:
            parse_errors += 1
            messages.append(assistant(log.strip() or None))
            messages.append(canonical_message("user", seen))
            continue
        arguments = string_arguments(tool_input)
        guard.add(arguments)
        call_id = f"step_{k}"  # not an API's call id: a chat read before the steps has those
        messages.append(assistant(_thought(log), [tool_call(call_id, tool, arguments)]))
        messages.append(tool_result(call_id, seen, {"type": "not_executed", "message": seen} if ran_not.pop(0) else None))
    if answer is not None:
        guard.add(_text(answer))
        messages.append(assistant(_text(answer)))
    meta: dict[str, Any] = {"agent_steps": len(holder[STEPS_KEY])}
    if parse_errors:
        meta["parse_errors"] = parse_errors
    return messages, meta
