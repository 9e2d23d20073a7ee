"""The calls in one assistant text written ReAct style, for :mod:`pipeline.ingest.adapters.react_text`
(whose docstring states the rules): :func:`text_call` finds a call as LangChain's parsers
do, :func:`steps` splits a scratchpad at its observation lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

__all__ = ["Call", "Step", "steps", "text_call"]

# LangChain's ReAct parser: `Action\s*\d*\s*:(.*?)Action\s*\d*\s*Input\s*\d*\s*:(.*)`, found here
# in searches of their own (no adjacent quantifiers over the same characters: linear)
_ACTION = re.compile(r"Action\s*(?:\d+\s*)?:")
_INPUT = re.compile(r"Action\s*(?:\d+\s*)?Input\s*(?:\d+\s*)?:")
# LangChain's structured chat parser: a fenced blob anywhere
_BLOB = re.compile(r"```(?:json\s+)?(\W.*?)```", re.S)
_LENIENT = json.JSONDecoder(strict=False)
# the ReAct paper's `Action 1: Search[query]`, on a line of its own
_PAPER_LINE = re.compile(r"^[ \t]*Action[ \t]*(?:\d+[ \t]*)?:[ \t]*([A-Za-z_][\w.-]*)\[([^\n]*)\][ \t]*$", re.M)
_FENCE = re.compile(r"```[\w-]*[ \t]*\n(.*?)\n?```", re.S)
# an observation line in an assistant's text; where the model's own text of a step starts
_OBSERVED = re.compile(r"^[ \t]*Observation[ \t]*(?:\d+[ \t]*)?:[ \t]?", re.M)
_OWN = re.compile(r"^[ \t]*(?:Thought|Final Answer)\b", re.M)
_FINAL = ("final answer", "finish")

Call = tuple[int, str, str, bool]
"""A call in a step's text: (where it starts, tool, input, whether ``Final Answer:`` follows it)."""


def text_call(text: str, last: bool = False) -> Call | None:
    """The call in a step's text as LangChain's parsers find it (module docstring): the
    first one; ``last``: the last one (a scratchpad's step, whose text may open with a tool's
    output: the model's own call is the one right before the next observation). None when
    it holds none or only a final answer."""
    found: list[Call] = []
    if last:
        given = _last(_INPUT, text, 0, len(text))
        action = _last(_ACTION, text, 0, given.start()) if given is not None else None
    else:  # LangChain: the first `Action:`, then the first `Action Input:` after it
        action = _ACTION.search(text)
        given = _INPUT.search(text, action.end()) if action is not None else None
    if action is not None and given is not None:
        found.append((action.start(), text[action.end():given.start()], text[given.end():].strip().strip('"'), False))
    papers = _PAPER_LINE.finditer(text)
    paper = _last_of(papers) if last else next(papers, None)
    if paper is not None:
        found.append((paper.start(), paper.group(1), paper.group(2), False))
    blob = _fenced(text, last)
    if blob is not None:
        label = _last(_ACTION, text, 0, blob[0])
        at = label.start() if label is not None and not text[label.end():blob[0]].strip() else blob[0]
        found.append(_blob_call(blob[1], at))
    bare = text.rfind("\n{") + 1 if last else len(text) - len(text.lstrip())
    if text[bare:bare + 1] in ("{", "[") and (blob is None or bare > blob[0]):  # a JSON chat agent's blob, bare
        found.append(_blob_call(text[bare:].strip(), bare))
    calls = [c for c in found if c[1] is not None]
    if not calls:
        return None
    start, tool, tool_input, _ = max(calls) if last else min(calls)
    tool = tool.strip().strip("`*'\" ")
    if not tool or tool.lower() in _FINAL:
        return None
    return start, tool, _unwrapped(tool_input.strip()), "Final Answer:" in (text[start:] if last else text)


def _last(pattern: re.Pattern[str], text: str, start: int, end: int) -> re.Match[str] | None:
    return _last_of(pattern.finditer(text, start, end))


def _last_of(matches: Iterator[re.Match[str]]) -> re.Match[str] | None:
    out = None
    for out in matches:
        pass
    return out


def _fenced(text: str, last: bool) -> tuple[int, str] | None:
    """(where, content) of the first fenced blob (LangChain's pattern), or of the last one
    found from the end (a stray fence earlier in a tool's output cannot pair with the model's)."""
    if not last:
        m = _BLOB.search(text)
        return (m.start(), m.group(1).strip()) if m is not None else None
    close = text.rfind("```")
    open_ = text.rfind("```", 0, close) if close > 0 else -1
    if open_ < 0:
        return None
    m = _BLOB.match(text, open_, close + 3)
    return (open_, m.group(1).strip()) if m is not None else None


def _blob_call(blob: str, at: int) -> Call:
    """A structured chat blob's call (its tool None when it holds none)."""
    try:
        value = _LENIENT.decode(blob)
    except (ValueError, RecursionError):
        return at, None, "", False  # type: ignore[return-value]
    value = value[0] if isinstance(value, list) and value else value
    if not isinstance(value, dict) or not isinstance(value.get("action"), str):
        return at, None, "", False  # type: ignore[return-value]
    given = value.get("action_input", {})
    return at, value["action"], given if isinstance(given, str) else json.dumps(given, ensure_ascii=False), False


Step = tuple[str, str, tuple[str, str, bool] | None, str | None, str]
"""One step of an assistant text: (the tool output opening it, the model's text before its
call, its call (tool, input, refused) or None, the observation written after it or None,
the model's text from the call on)."""


def steps(text: str, answered_after: bool = False) -> list[Step]:
    """An assistant text's steps (module docstring): the text split at each observation
    line; each part after one opens with that tool's output, then the model's own text (from
    its last ``Thought`` / ``Final Answer`` line before its call, a ``Thought`` line right
    before a last ``Final Answer`` included; else from the call), whose call is the part's last; the last part's call counts
    only after such a line or when a result message follows (``answered_after``): an
    accumulated scratchpad ends with a tool's output, which may spell a call. A text with no
    observation line is one step, its first call."""
    cuts = list(_OBSERVED.finditer(text))
    if not cuts:
        call = text_call(text)
        if call is None:
            return [("", text, None, None, "")]
        return [("", text[:call[0]], call[1:], None, text[call[0]:])]
    parts = [text[:cuts[0].start()]] + [text[a.end():b.start()] for a, b in zip(cuts, cuts[1:])] + [text[cuts[-1].end():]]
    out: list[Step] = []
    for i, part in enumerate(parts):
        call = text_call(part, last=True)
        end = call[0] if call is not None else len(part)
        own = [m.start() for m in _OWN.finditer(part, 0, end)]
        if len(own) > 1 and part.count("\n", own[-2], own[-1]) == 1 and part[own[-1]:].lstrip().startswith(
                "Final Answer") and part[own[-2]:].lstrip().startswith("Thought"):
            own.pop()  # `Thought: I now know` then `Final Answer:`: the model's, both
        split = 0 if i == 0 else (own[-1] if own else end)
        if call is not None and i > 0 and i == len(parts) - 1 and not own and not answered_after:
            call, end, split = None, len(part), len(part)  # the last output spelling a call: output
        out.append((part[:split].strip(), part[split:end], None if call is None else call[1:], None, part[end:]))
    # each step's observation is what opens the next one
    return [(seen, mine, call, out[i + 1][0] if i + 1 < len(out) else None, rest)
            for i, (seen, mine, call, _, rest) in enumerate(out)]


def _unwrapped(text: str) -> str:
    """An input without a code fence around it."""
    fence = _FENCE.fullmatch(text.strip())
    return fence.group(1) if fence is not None else text
