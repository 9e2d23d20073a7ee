"""``litmus-gate policy suggest``: draft catalog entries for tools the policy lacks.

Every tool absent from the catalog is listed with its call counts and a draft entry
holding the roles role inference (``[inference]``, :mod:`pipeline.analysis.inference`) gives it
from its name and argument names: exactly what a run would use for it. The draft is
a starting point for a human, who must check each entry (it guesses, and says so);
saved and passed with ``--policy``, the entries turn the guesses into catalog roles.
"""

from __future__ import annotations

import re
from typing import Any

from pipeline.analysis.inference import infer_entry, lexicon

_ORDER = ("reads", "writes", "executes", "deletes", "sends", "control", "shell", "code", "source", "sink")


# what a TOML basic string cannot hold as it is: the quote, the backslash, control
# characters (U+0000-U+001F, U+007F); everything else (emoji included) is written as is
_TOML_ESCAPE = re.compile(r'["\\\x00-\x1f\x7f]')


def _toml_str(text: str) -> str:
    """``text`` as a TOML basic string. Names come from transcripts: a newline or a quote
    in one must never end the string (or a comment) and write TOML of its own."""
    return '"' + _TOML_ESCAPE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + '"'


def _toml_key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else _toml_str(name)


def _toml_value(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_key(str(k))} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return _toml_str(str(value))


def draft_entry(tool: str, args: list[str], n_calls: int, n_trajectories: int, inference: dict[str, Any]) -> str:
    """One TOML table for ``tool`` with the roles inference gives it."""
    entry = infer_entry(tool, args, lexicon(inference))
    lines = [f"# {n_calls} call(s) in {n_trajectories} trajectorie(s); arguments: {', '.join(map(_toml_key, args)) or '(none)'}"]
    if entry is None:
        lines.append("# inference places nothing: a neutral action (no source, no sink); add roles if it has any")
    else:
        lines.append("# roles inferred from the name and argument names: check every line before use")
    lines.append(f"[tools.{_toml_key(tool)}]")
    for key in _ORDER:
        value = (entry or {}).get(key)
        if value:  # empty lists and "" say nothing
            lines.append(f"{key} = {_toml_value(value)}")
    return "\n".join(lines)


def suggest_toml(unknown: list[tuple[str, int, int, list[str]]], inference: dict[str, Any] | None = None) -> str:
    """The whole draft policy file for the unknown tools (tool, calls, trajectories, args)."""
    if not unknown:
        return "# every tool in the input is in the policy catalog\n"
    head = "# litmus-gate policy suggest: draft entries for tools absent from the catalog.\n" \
           "# Save as a file and pass it with --policy after review.\n"
    return head + "\n\n".join(draft_entry(t, a, n, m, inference or {}) for t, n, m, a in unknown) + "\n"
