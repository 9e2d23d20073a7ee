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


def script_folder(text: str, name: str) -> str:
    """A shell text run as the file ``name`` with its own folder, as the text computes it
    (`cd "$(dirname "$0")"`, `SCRIPT_DIR=$(dirname "$0")`), written as that folder: the
    folder of ``name`` as the run gives it (`.` for `bash ci.sh`, `scripts` for `bash
    scripts/ci.sh`, `/opt` for `bash /opt/ci.sh`), so the analyser reads the names given
    after it there. Unchanged when the folder is not a plain path (`~`, spaces, quotes)."""
    if "dirname" not in text:
        return text
    folder = name.rsplit("/", 1)[0] if "/" in name else "."
    folder = folder or "/"
    if not _PLAIN_FOLDER_RE.fullmatch(folder):
        return text
    return _SCRIPT_DIR_RE.sub(lambda _: folder, text)
