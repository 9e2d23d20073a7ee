"""A warning for an input file whose scored records hold no tool call at all although the
file names calls: what a format reader could not see is then missing from every verdict.

A layout no reader knows (a chat API's calls under keys the chosen format does not read,
a log wrapping each call in an envelope) is scored as text alone: every trajectory safe,
nothing rejected. So after a ``score`` run, each input file whose verdicts count no
logical action is looked at again: when the first ``SNIFF_BYTES`` of it hold a key that
names a tool call or its result in some agent format (``tool_calls``, ``tool_use``,
``toolUse``, ``functionCall``, ``mcp_call``, ``tool_name``, ...) with a value that is not
empty, one line on stderr names the file, the key and the format it was read as. Likewise
when a message text in that head holds a call written as text, ReAct style (a line
``Action: <tool>`` then a line ``Action Input: ...``, what LangChain's classic agents,
ToolEmu and many research suites log; LangChain's structured-chat blob, ``Action:`` then a
fenced ``{"action": ...}``; the ReAct paper's ``Action 1: Search[...]``): the ``auto`` reading takes no calls out of a chat's text (``--format
react`` does, chosen by the user; ``r-judge`` in R-Judge's own record layout). A corpus of plain chats (no
such key, or only empty ones) gets none.
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING

import duckdb

from pipeline.errors import terminal_safe
from pipeline.ingest.adapters._detect import SNIFF_BYTES, detect
from pipeline.ingest.adapters._io import read_head
from pipeline.outputs.summary import run_table
from pipeline.storage import location

if TYPE_CHECKING:
    from pipeline.run import RunResult

# a JSON key naming a tool call or result in some agent format, with a value that is not
# empty (`"tool_calls": []`, `null`, `{}`, `""`, `false` say there was none)
CALL_KEY = re.compile(rb'"(tool_calls|tool_call|tool_use|server_tool_use|mcp_tool_use|mcp_call|toolUse|toolResult|'
                      rb'functionCall|function_call|functionResponse|function_response|tool_name|toolName|'
                      rb'tool_input|toolInput|tool_result|tool_response|tool_outputs)"\s*:'
                      rb'(?!\s*(?:null\b|false\b|\[\s*\]|\{\s*\}|""|$))'
                      # or a block or item typed as one (Anthropic, Responses API, AI SDK)
                      rb'|"type"\s*:\s*"(tool_use|server_tool_use|mcp_tool_use|tool_result|function_call|'
                      rb'function_call_output|mcp_call|tool-call|tool-result)"')

# a ReAct call inside a JSON string (newlines are `\n` escapes, quotes `\"`): `Action: <tool>`
# then `Action Input:` (tool names may hold spaces or hyphens: `Current Search`); LangChain's
# structured-chat blob (`Action:` then a fenced `{"action": ...}`); the ReAct paper's
# `Action 1: Search[...]`
TEXT_CALL = re.compile(rb'Action:[ \t]*[A-Za-z_][\w. -]{0,63}(?:\\r)?\\n[ \t]*Action Input:'
                       rb'|Action:[ \t]*(?:(?:\\r)?\\n[ \t]*)+```[a-z]*[ \t]*(?:(?:\\r)?\\n[ \t]*)*'
                       rb'\{[ \t]*(?:(?:\\r)?\\n[ \t]*)*\\"action\\"'
                       rb'|Action [0-9]{1,3}:[ \t]*[A-Za-z_]\w{0,63}\[')


def files_without_actions(result: RunResult) -> list[tuple[str, int]]:
    """(source file, scored records) of each input file none of whose scored records
    holds a logical action and none of whose records was rejected (a reject names its own
    reason: a record whose calls were read and refused), in file order."""
    if not result.row_counts.get("verdicts"):
        return []
    rel = run_table(duckdb.connect(), result.out, "verdicts")
    found = [(str(f), int(n)) for f, n in rel.query(
        "v", "select source_file, count(*) from v group by 1 having sum(n_actions) = 0 order by 1").fetchall()]
    if found and result.row_counts.get("attrition"):  # a file with rejected records: its rejects say why
        rejected = {str(f) for (f,) in run_table(duckdb.connect(), result.out, "attrition").query(
            "a", "select distinct source_file from a").fetchall()}
        found = [(f, n) for f, n in found if f not in rejected]
    return found


def warn_without_calls(result: RunResult, fmt: str) -> list[str]:
    """Write (and return) the warning line of each input file whose scored records hold no
    action although its head names tool calls (module docstring)."""
    lines = []
    for path, n in files_without_actions(result):
        try:
            head = read_head(location(path), SNIFF_BYTES)
        except (OSError, ValueError):
            continue
        found = CALL_KEY.search(head)
        in_text = TEXT_CALL.search(head) if found is None else None
        if found is None and in_text is None:
            continue
        read_as = detect(location(path))[0] if fmt == "auto" else fmt
        start = f"litmus-gate: warning: {terminal_safe(path)}: none of its {n} scored record(s) holds a tool call, "
        if found is not None:
            key = (found.group(1) or found.group(2)).decode()
            lines.append(f"{start}yet the file names calls ('{key}'); read as {read_as}, calls in a layout that "
                         "format does not read are missing from every verdict: check --format (README: Input formats)\n")
        else:
            advice = ("the react reader understood none of them: a layout it does not read" if read_as == "react"
                      else "a chat of such calls is read with --format react")
            lines.append(f"{start}yet its texts hold calls written as text ('Action: ... Action Input:', ReAct style); "
                         f"read as {read_as}, they are missing from every verdict: {advice} (README: Input formats)\n")
    for line in lines:
        sys.stderr.write(line)
    return lines
