"""Codex's ``apply_patch`` run through its shell tools.

Codex's models often call ``apply_patch`` as a command (``shell`` with ``["apply_patch",
PATCH]``, or a heredoc ``bash -lc "apply_patch <<'EOF' ... EOF"``). Codex intercepts
these forms and applies the patch itself, as its ``apply_patch`` tool does
(``codex-rs/apply-patch/src/invocation.rs``, ``maybe_parse_apply_patch``): so the call
is an ``apply_patch`` call, the files it writes are known from the patch, and what it
wrote into them is followed as any file tool's (``pipeline/analysis/written.py``).
Recognised as Codex does, and nothing looser:

- ``[cmd, PATCH]``, ``cmd`` ``apply_patch`` or ``applypatch``;
- ``[shell, flag, SCRIPT]`` (``bash`` / ``zsh`` / ``sh`` with ``-lc`` / ``-c``;
  ``pwsh`` / ``powershell`` with ``-Command``, optionally after ``-NoProfile``; ``cmd``
  with ``/c``), or an ``exec_command``'s ``cmd`` SCRIPT, where SCRIPT is one heredoc
  statement ``apply_patch <<'EOF'`` ... ``EOF``, optionally after ``cd PATH &&`` (the
  patch's relative paths are then under PATH).
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Sequence
from typing import Any

# the name is the rest of its line, its trailing blanks stripped in Python: a lazy `(.+?)\s*$`
# tried every split of a long line (quadratic: 100,000 blanks took over a minute)
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.*)$|^\*\*\* Move to: (.*)$", re.M)
APPLY_PATCH_COMMANDS = ("apply_patch", "applypatch")
_UNIX_SHELLS = ("bash", "zsh", "sh")
# the heredoc's first line: `[cd PATH &&] apply_patch <<['"]TAG['"]`, PATH a word (not a
# comment `#...`, nor `~` or a glob bash would expand), a double-quoted string without
# expansions, or a single-quoted one
_HEREDOC_START = re.compile(
    r"""\A\s*(?:cd\s+(?P<cd>[^\s'"&|;<>()$`\\#~*?\[\]{}][^\s'"&|;<>()$`\\*?\[\]{}]*|'[^'\n]*'|"[^"$`\\\n]*")\s*&&\s*)?"""
    r"""(?:apply_patch|applypatch)\s*<<(?P<dash>-?)\s*(?P<q>['"]?)(?P<tag>[A-Za-z_][A-Za-z0-9_]*)(?P=q)[ \t]*\Z""")


def _shell_name(shell: str) -> str:
    """A shell's name as Codex compares it: its file stem, lower-cased."""
    return posixpath.basename(shell.replace("\\", "/")).rsplit(".", 1)[0].lower()


def shell_script(argv: Sequence[Any]) -> str | None:
    """The script of a shell invocation Codex reads for a heredoc, else None."""
    if not all(isinstance(a, str) for a in argv):
        return None
    if len(argv) == 4 and _shell_name(argv[0]) in ("pwsh", "powershell") and argv[1].lower() == "-noprofile":
        argv = [argv[0], *argv[2:]]
    if len(argv) != 3:
        return None
    name, flag = _shell_name(argv[0]), argv[1]
    if (name in _UNIX_SHELLS and flag in ("-lc", "-c")) or (name in ("pwsh", "powershell") and flag.lower() == "-command") \
            or (name == "cmd" and flag.lower() == "/c"):
        return str(argv[2])
    return None


def heredoc_patch(script: str) -> tuple[str, str | None] | None:
    """``(patch, cd path or None)`` when ``script`` is one ``apply_patch`` heredoc
    statement (optionally after ``cd PATH &&``), else None."""
    first, _, rest = script.partition("\n")
    start = _HEREDOC_START.match(first)
    if start is None or not rest:
        return None
    lines = rest.rstrip("\n").split("\n")
    # the body ends at the first line that is the tag, as bash ends it; the statement must
    # end there (a line after it is another command, which Codex does not intercept)
    strip = "\t" if start.group("dash") else ""  # `<<-`: leading tabs are not part of the line
    end = next((k for k, line in enumerate(lines) if line.lstrip(strip) == start.group("tag")), None)
    if end is None or end != len(lines) - 1:
        return None
    cd = start.group("cd")
    if cd is not None and cd[:1] in ("'", '"'):
        cd = cd[1:-1]
    return "\n".join(lines[:end]).rstrip("\n"), cd


def invoked_patch(argv: Sequence[Any] | None = None, script: str | None = None) -> tuple[str, str | None] | None:
    """``(patch, cd path or None)`` when a shell call runs ``apply_patch`` as Codex
    intercepts it (an argv, or an ``exec_command`` script), else None."""
    if argv is not None:
        if not isinstance(argv, (list, tuple)):
            return None
        if len(argv) == 2 and argv[0] in APPLY_PATCH_COMMANDS and isinstance(argv[1], str):
            return argv[1], None
        script = shell_script(argv)
    return heredoc_patch(script) if script is not None else None


def under(folder: str | None, paths: list[str]) -> list[str]:
    """``paths`` as the patch's ``cd`` folder resolves them (absolute ones stay)."""
    if not folder:
        return paths
    return [p if p.startswith(("/", "~")) else posixpath.join(folder, p) for p in paths]


def patch_paths(patch: str) -> tuple[list[str], list[str]]:
    """(written, deleted) file paths named by an apply_patch envelope."""
    written: list[str] = []
    deleted: list[str] = []
    for m in _PATCH_FILE.finditer(patch):
        name = (m.group(2) if m.group(1) else m.group(3)).rstrip()
        if not name:
            continue
        (deleted if m.group(1) == "Delete" else written).append(name)
    return list(dict.fromkeys(written)), list(dict.fromkeys(deleted))


def shell_patch(name: str, payload: dict[str, Any], args: Any) -> dict[str, Any] | None:
    """The arguments of an ``apply_patch`` call when a shell call runs ``apply_patch`` as
    Codex intercepts it (:mod:`pipeline.ingest.adapters.codex_patch`), else None."""
    found = None
    if name in ("shell", "container.exec", "local_shell") and isinstance(args, dict) \
            and isinstance(args.get("argv"), list):
        found = invoked_patch(argv=args["argv"])
    elif name == "local_shell" or payload.get("type") == "local_shell_call":
        action = payload.get("action")
        if isinstance(action, dict) and isinstance(action.get("command"), list):
            found = invoked_patch(argv=action["command"])
    elif name == "exec_command" and isinstance(args, str) and "apply" in args:
        parsed = _json_object(args)
        if isinstance(parsed.get("cmd"), str):
            found = invoked_patch(script=parsed["cmd"])
    if found is None:
        return None
    patch, cd = found
    # Codex applies the patch in the call's working folder, then under the `cd` folder: the
    # paths as the step names them (under `cd`), and under that whole folder when the call
    # names its working folder (a later step elsewhere names them so)
    parsed = args if isinstance(args, dict) else _json_object(args)
    workdir = parsed.get("workdir") if isinstance(parsed.get("workdir"), str) and parsed["workdir"] else None
    applied = posixpath.join(workdir, cd or "") if workdir is not None and not (cd or "").startswith("/") else cd
    written, deleted = patch_paths(patch)
    return {"input": patch, "paths_written": _both(cd, applied, written), "paths_deleted": _both(cd, applied, deleted),
            **({"cd": cd} if cd else {}), **({"workdir": applied} if applied else {})}


def _json_object(text: Any) -> dict[str, Any]:
    try:
        parsed = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _both(cd: str | None, applied: str | None, paths: list[str]) -> list[str]:
    """``paths`` under the ``cd`` folder, then under the folder the patch is applied in."""
    return list(dict.fromkeys([*under(cd, paths), *under(applied, paths)]))
