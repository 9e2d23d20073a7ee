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
