"""How a written file runs (:mod:`pipeline.analysis.written`): as the interpreter its run
names (:func:`runner_languages`, from ``ShellAnalysis.runners``), else by its name and
``#!`` line (:func:`program_language`). A language is a bool: True shell, False Python."""

from __future__ import annotations

import re
from functools import lru_cache

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
    after it there. Only where the shell expands it (:func:`_expanded`): not inside single
    quotes, `$'...'`, a comment, nor the body of a quoted here-document (`<<'EOF'`: a text
    the script writes, whose own `$0` is another file's). Unchanged when the folder is not a
    plain path (`~`, spaces, quotes)."""
    if "dirname" not in text:
        return text
    folder = name.rsplit("/", 1)[0] if "/" in name else "."
    folder = folder or "/"
    if not _PLAIN_FOLDER_RE.fullmatch(folder):
        return text
    return _expanded(text, folder)


_WORD_END = frozenset(" \t\n;&|<>()")


def _heredoc_word(text: str, k: int) -> tuple[str, bool, int] | None:
    """The here-document delimiter word at ``k`` (after `<<` / `<<-` and blanks), as bash
    reads it: its quotes removed, whether any part was quoted (`'EOF'`, `"E"OF`, `E\\OF`:
    then the body is not expanded), and where it ends; None when there is none."""
    n, word, quoted, start = len(text), [], False, k
    while k < n and text[k] not in _WORD_END:
        ch = text[k]
        if ch in "'\"":
            end = text.find(ch, k + 1)
            if end < 0 or "\n" in text[k:end]:
                return None
            word.append(text[k + 1:end])
            quoted, k = True, end + 1
        elif ch == "\\" and k + 1 < n:
            word.append(text[k + 1])
            quoted, k = True, k + 2
        else:
            word.append(ch)
            k += 1
    return ("".join(word), quoted, k) if k > start else None


@lru_cache(maxsize=64)  # a script run again and again is scanned once (the scan is Python, char by char)
def _expanded(text: str, folder: str) -> str:
    """``text`` with each script-folder substitution the shell would expand written as
    ``folder``: one scan that keeps a stack of what it is inside (code, a substitution's
    code, double quotes, single quotes, `$'...'`, arithmetic, backquotes) across lines,
    skips comments, and reads each here-document's body after the line that opens it
    (expanded unless its delimiter is quoted); `<<` in arithmetic is a shift, `<<<` a
    here-string."""
    out: list[str] = []
    kinds, depths = ["code"], [0]  # what the scan is inside, innermost last; each one's open parentheses
    bodies: list[tuple[str, bool, bool]] = []  # opened on this line: (delimiter, expanded, tabs stripped)
    k, n = 0, len(text)
    while k < n:
        ch, kind = text[k], kinds[-1]
        if kind == "'":
            if ch == "'":
                _pop(kinds, depths)
        elif kind in ("$'", '"') and ch == "\\":
            out.append(text[k:k + 2])
            k += 2
            continue
        elif kind == "$'":
            if ch == "'":
                _pop(kinds, depths)
        elif kind == "((":
            if ch == "(":
                depths[-1] += 1
            elif ch == ")" and depths[-1] == 0 and text.startswith("))", k):
                _pop(kinds, depths)
                out.append("))")
                k += 2
                continue
            elif ch == ")":
                depths[-1] -= 1
        elif ch in "$`" and (m := _SCRIPT_DIR_RE.match(text, k)):
            out.append(folder)
            k = m.end()
            continue
        elif text.startswith("$$", k):  # the shell's pid: no `$'`, `$(` starts at the second
            out.append("$$")
            k += 2
            continue
        elif text.startswith("$((", k) or (kind != '"' and text.startswith("((", k)):
            _push(kinds, depths, "((")
            step = 3 if ch == "$" else 2
            out.append(text[k:k + step])
            k += step
            continue
        elif text.startswith("$(", k):
            _push(kinds, depths, "$(")
            out.append("$(")
            k += 2
            continue
        elif ch == "`":
            if kind == "`":
                _pop(kinds, depths)
            else:
                _push(kinds, depths, "`")
        elif kind == '"':
            if ch == '"':
                _pop(kinds, depths)
        # code: the script's own, a substitution's, a backquoted command's
        elif ch == "\\":
            out.append(text[k:k + 2])
            k += 2
            continue
        elif ch == '"':
            _push(kinds, depths, '"')
        elif text.startswith("$'", k):
            _push(kinds, depths, "$'")
            out.append("$'")
            k += 2
            continue
        elif ch == "'":
            _push(kinds, depths, "'")
        elif ch == "#" and (k == 0 or text[k - 1] in " \t\n;|&("):  # a comment, to its line's end
            end = text.find("\n", k)
            end = n if end < 0 else end
            out.append(text[k:end])
            k = end
            continue
        elif ch == "(" and kind == "$(":
            depths[-1] += 1
        elif ch == ")" and kind == "$(":
            if depths[-1] == 0:
                _pop(kinds, depths)
            else:
                depths[-1] -= 1
        elif text.startswith("<<<", k):  # a here-string: no body follows
            out.append("<<<")
            k += 3
            continue
        elif text.startswith("<<", k):
            dash = text.startswith("<<-", k)
            j = k + (3 if dash else 2)
            while j < n and text[j] in " \t":
                j += 1
            found = _heredoc_word(text, j)
            if found is not None:
                bodies.append((found[0], not found[1], dash))
                out.append(text[k:found[2]])
                k = found[2]
                continue
        elif ch == "\n" and bodies:
            out.append(ch)
            k = _bodies(text, k + 1, bodies, folder, out)
            bodies = []
            continue
        out.append(ch)
        k += 1
    return "".join(out)


def _push(kinds: list[str], depths: list[int], kind: str) -> None:
    kinds.append(kind)
    depths.append(0)


def _pop(kinds: list[str], depths: list[int]) -> None:
    if len(kinds) > 1:  # the script's own code stays
        kinds.pop()
        depths.pop()


def _bodies(text: str, k: int, bodies: list[tuple[str, bool, bool]], folder: str, out: list[str]) -> int:
    """Copy the here-document bodies that start at ``k`` into ``out`` (an expanded one's
    substitutions written as ``folder``); where the text goes on after the last."""
    n = len(text)
    for delimiter, expanded, tabs in bodies:
        while k < n:
            end = text.find("\n", k)
            end = n if end < 0 else end
            line = text[k:end]
            done = (line.lstrip("\t") if tabs else line) == delimiter
            out.append(_SCRIPT_DIR_RE.sub(lambda _: folder, line) if expanded and not done else line)
            k = end
            if k < n:
                out.append("\n")
                k += 1
            if done:
                break
    return k
