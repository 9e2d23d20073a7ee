"""How a written file runs (:mod:`pipeline.analysis.written`): as the interpreter its run
names (:func:`runner_languages`, from ``ShellAnalysis.runners``), else by its name and
``#!`` line (:func:`program_language`). A language is a bool: True shell, False Python."""

from __future__ import annotations

import re

_SHEBANG_PY_RE = re.compile(r"^#![^\n]*\bpython[0-9.]*\b")
_SHEBANG_SH_RE = re.compile(r"^#![^\n]*\b(?:ba|da|z|k)?sh\b")
# the languages a run's interpreter reads (ShellAnalysis.runners): True shell, False Python
# (a pytest run's conftest.py: python)
_RUNNER_LANGUAGES: dict[str, frozenset[bool]] = {"shell": frozenset({True}), "python": frozenset({False}),
                                                 "pytest": frozenset({False})}


def runner_languages(runners: list[str] | tuple[str, ...] | None) -> frozenset[bool]:
    """The languages ``runners`` read a file as (`bash x`: shell; `node x`, `./x`: none
    analysed here)."""
    return frozenset().union(*(_RUNNER_LANGUAGES.get(r, frozenset()) for r in runners or ()))


def program_language(name: str, content: str) -> bool | None:
    """How a written file runs: True shell, False Python, None neither (by its extension,
    else its `#!` line)."""
    base = name.rsplit("/", 1)[-1].lower()
    if base.endswith(".py"):
        return False
    if base.endswith((".sh", ".bash")):
        return True
    if _SHEBANG_PY_RE.match(content):
        return False
    if _SHEBANG_SH_RE.match(content):
        return True
    return None


# the script's own folder as a shell script computes it: `$(dirname "$0")`, `$(dirname
# "${BASH_SOURCE[0]}")`, `` `dirname $0` ``, `$(dirname "$(readlink -f "$0")")` (`realpath`:
# the same folder unless the file is a link)
_SELF = r'(?:\$0|\$\{0\}|\$\{BASH_SOURCE(?:\[0\])?\}|\$BASH_SOURCE)'
_SELF_ARG = (rf'(?:"{_SELF}"|{_SELF}|"\$\((?:readlink\s+-[femn]+|realpath)\s+"?{_SELF}"?\s*\)"'
             rf'|\$\((?:readlink\s+-[femn]+|realpath)\s+"?{_SELF}"?\s*\))')
_SCRIPT_DIR_RE = re.compile(rf'\$\(\s*dirname\s+(?:--\s+)?{_SELF_ARG}\s*\)|`\s*dirname\s+(?:--\s+)?{_SELF_ARG}\s*`')
_PLAIN_FOLDER_RE = re.compile(r"[A-Za-z0-9._/+-]+")


_HEREDOC_RE = re.compile(r"<<-?\s*(?:'([^'\n]+)'|\"([^\"\n]+)\"|\\(\w+)|([A-Za-z_][\w.-]*))")


def script_folder(text: str, name: str) -> str:
    """A shell text run as the file ``name`` with its own folder, as the text computes it
    (`cd "$(dirname "$0")"`, `SCRIPT_DIR=$(dirname "$0")`), written as that folder: the
    folder of ``name`` as the run gives it (`.` for `bash ci.sh`, `scripts` for `bash
    scripts/ci.sh`, `/opt` for `bash /opt/ci.sh`), so the analyser reads the names given
    after it there. Only where the shell expands it: not inside single quotes, nor in the
    body of a quoted here-document (`<<'EOF'`: a text the script writes, whose own `$0` is
    another file's). Unchanged when the folder is not a plain path (`~`, spaces, quotes)."""
    if "dirname" not in text:
        return text
    folder = name.rsplit("/", 1)[0] if "/" in name else "."
    folder = folder or "/"
    if not _PLAIN_FOLDER_RE.fullmatch(folder):
        return text
    out: list[str] = []
    quoted = False  # inside single quotes (across lines)
    bodies: list[tuple[str, bool, bool]] = []  # here-documents to read: (delimiter, expanded, tabs stripped)
    for line in text.split("\n"):
        if bodies:  # a line of a here-document's body
            delimiter, expanded, tabs = bodies[0]
            if (line.lstrip("\t") if tabs else line) == delimiter:
                bodies.pop(0)
            elif expanded:
                line = _SCRIPT_DIR_RE.sub(lambda _: folder, line)
            out.append(line)
            continue
        line, quoted = _outside_single_quotes(line, folder, quoted)
        for m in _HEREDOC_RE.finditer(line):
            bodies.append((next(g for g in m.groups() if g is not None), m.group(4) is not None,
                           m.group(0).startswith("<<-")))
        out.append(line)
    return "\n".join(out)


def _outside_single_quotes(line: str, folder: str, quoted: bool) -> tuple[str, bool]:
    """``line`` with the script-folder substitutions written as ``folder`` where they start
    outside single quotes (``quoted``: the line starts inside them); and whether it ends
    inside them."""
    parts: list[str] = []
    start = 0
    double = False
    k = 0
    while k < len(line):
        ch = line[k]
        if quoted:
            if ch == "'":
                quoted = False
        elif ch == "\\":
            k += 1
        elif ch == "#" and not double and (k == 0 or line[k - 1] in " \t;|&("):
            break  # a comment: its quotes quote nothing
        elif ch == '"':
            double = not double
        elif ch == "'" and not double:
            quoted = True
        elif ch in "$`" and not quoted:
            m = _SCRIPT_DIR_RE.match(line, k)
            if m:
                parts.append(line[start:k] + folder)
                start = k = m.end()
                continue
        k += 1
    parts.append(line[start:])
    return "".join(parts), quoted
