"""``litmus-gate policy suggest``: draft catalog entries for tools the policy lacks.

A new suite should not be rejected wholesale as ``unknown_tool``: this lists every
tool absent from the catalog with its call counts and drafts an entry from the tool's
name and argument names. The draft is a starting point for a human, who must check
each entry (it guesses, and says so in a comment).
"""

from __future__ import annotations

import json
import re

_ROLE_HINTS: tuple[tuple[str, str], ...] = (
    (r"(^|_)(command|cmd|script|shell)$", "shell"),
    (r"(^|_)(code|source|program)$", "code"),
    (r"(^|_)(url|uri|endpoint|host|webhook|domain)s?$", "sends"),
    (r"(^|_)(to|recipient|recipients|cc|bcc|email|emails|iban|account|receiver|participants?)$", "sends"),
    (r"(^|_)(path|file|filename|file_path|filepath|dir|directory|folder|file_id)s?$", "file"),
)
_SINK_HINTS: tuple[tuple[str, str], ...] = (
    (r"(send|transfer|pay|wire|schedule_transaction)", "payment"),
    (r"(mail|message|reply|forward)", "send_mail"),
    (r"(share|invite|grant|publish)", "share"),
    (r"(post|upload|request|webhook)", "egress"),
    (r"(delete|remove|drop|wipe|destroy|cancel)", "destructive"),
    (r"(password|permission|role|admin|sudo|credential)", "privileged"),
)
_WRITE_HINT = re.compile(r"(write|create|save|update|edit|append|put|upload|modify|set)")
_SOURCE_HINT = re.compile(r"(get|read|list|search|fetch|find|view|show|query|browse|download|retrieve)")


def _toml_key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)


def draft_entry(tool: str, args: list[str], n_calls: int, n_trajectories: int) -> str:
    """One TOML table for ``tool``, guessed from its name and argument names."""
    lowered = tool.lower()
    roles: dict[str, list[str]] = {"reads": [], "writes": [], "sends": [], "control": []}
    shell = code = ""
    for arg in args:
        for pattern, role in _ROLE_HINTS:
            if re.search(pattern, arg.lower()):
                if role == "shell":
                    shell = shell or arg
                elif role == "code":
                    code = code or arg
                elif role == "sends":
                    roles["sends"].append(arg)
                    roles["control"].append(arg)
                else:
                    roles["writes" if _WRITE_HINT.search(lowered) else "reads"].append(arg)
                break
    sink = next((kind for pattern, kind in _SINK_HINTS if re.search(pattern, lowered)), "")
    lines = [f"# {n_calls} call(s) in {n_trajectories} trajectorie(s); arguments: {', '.join(args) or '(none)'}",
             "# drafted from names only: check every line before use",
             f"[tools.{_toml_key(tool)}]"]
    for key, values in roles.items():
        if values:
            lines.append(f"{key} = {json.dumps(values)}")
    if shell:
        lines.append(f'shell = "{shell}"')
    if code:
        lines.append(f'code = "{code}"')
    if _SOURCE_HINT.search(lowered) and not sink:
        lines.append('source = { confidentiality = "internal" }')
    if sink:
        lines.append(f'sink = "{sink}"')
    return "\n".join(lines)


def suggest_toml(unknown: list[tuple[str, int, int, list[str]]]) -> str:
    """The whole draft policy file for the unknown tools (tool, calls, trajectories, args)."""
    if not unknown:
        return "# every tool in the input is in the policy catalog\n"
    head = "# litmus-gate policy suggest: draft entries for tools absent from the catalog.\n" \
           "# Save as a file and pass it with --policy after review.\n"
    return head + "\n\n".join(draft_entry(t, a, n, m) for t, n, m, a in unknown) + "\n"
