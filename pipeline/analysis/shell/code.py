"""Code-step analyser behind :func:`pipeline.analysis.shell.analyse_code`.

Python text is parsed with :mod:`ast` (never executed). File APIs (``open``, ``Path``,
``os``/``shutil``, pandas readers/writers), HTTP clients (requests/httpx/urllib), sockets,
SMTP, subprocess/``os.system`` (their command strings go through ``analyse_command``) and
``os.environ`` dumps are recognised; names bound to constant strings are resolved and a
small taint map carries "this variable holds the content of that file" into payloads.
IPython cells are accepted: ``!cmd`` lines and ``%%bash`` cells are shell, line magics
are skipped. Text that does not parse (other languages) falls back to regexes for URLs,
quoted absolute paths and ``system("...")`` calls and is not opaque for that alone.
Opaque: ``exec``/``eval``/``compile`` of non-literal text, ``__import__`` or
``importlib.import_module`` of a computed name, a shell command built at run time.
"""

from __future__ import annotations

import ast
import re
import warnings

from pipeline.analysis.shell.code_py import MAX_CODE_DEPTH, PyVisitor
from pipeline.analysis.shell.code_tables import URL_RE
from pipeline.analysis.shell.engine import analyse
from pipeline.analysis.shell.model import Acc, ShellAnalysis

_QPATH_RE = re.compile(r"""(['"])((?:/|~/)[^'"\s]{1,300})\1""")
# the home folder as other languages spell it, then the rest of a path: concatenated
# (`process.env.HOME + '/.aws/credentials'`, Perl `$ENV{HOME} . "/.ssh/id_rsa"`) or joined
# (`path.join(os.homedir(), '.ssh', 'id_rsa')`, `File.join(Dir.home, ".netrc")`)
_HOME_EXPR = r"""(?:process\.env\.HOME|os\.homedir\(\)|\$ENV\{\s*['"]?HOME['"]?\s*\}|ENV\[\s*['"]HOME['"]\s*\]|Dir\.home|getenv\(\s*['"]HOME['"]\s*\)|\$_SERVER\[\s*['"]HOME['"]\s*\])"""
_HOME_PATH_RE = re.compile(_HOME_EXPR + r"""\s*(?:\+|\.)\s*(['"])([^'"\s]{1,300})\1|"""
                           + _HOME_EXPR + r"""((?:\s*,\s*(['"])[^'"\s]{1,120}\4){1,8})""")
_SEND_WORDS = re.compile(r"(?i)\b(post|post_form|put|patch|upload\w*|send\w*|sendall|smtp|curlopt_postfields|"
                         r"fetch\s*\([^)]*method)\b")
_SYSTEM_RE = re.compile(r"""\b(?:system|exec|popen|spawn|shell_exec|passthru|execSync|spawnSync)\s*\(\s*(['"])((?:(?!\1).){1,2000})\1""")
_ENV_DUMP_RE = re.compile(r"JSON\.stringify\(\s*process\.env\s*\)|\bprintenv\b|%ENV\b|\bENV\.to_h\b|"
                          r"\bos\.environ\b(?!\s*[\[.])|System\.getenv\(\s*\)|\$_ENV\b|getenv\(\s*\)")
_STRINGS_RE = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")
_DYN_EVAL_RE = re.compile(r"""\beval\s*\(\s*(?!['"`)])""")



# IPython's %run options (its getopt string 'nidtN:b:pD:l:rs:T:em:G'): these take a value
_RUN_VALUES = frozenset("NbDlsTm")


def _run_script(words: list[str]) -> str | None:
    """The file ``%run WORDS`` runs: the first word after its options (None: ``-m MODULE``
    runs a module, or no file is named)."""
    k = 0
    while k < len(words) and words[k].startswith("-") and len(words[k]) > 1:
        letters = words[k][1:]
        for j, ch in enumerate(letters):
            if ch in _RUN_VALUES:
                if ch == "m":
                    return None
                k += 0 if letters[j + 1:] else 1  # the value: the rest of the word, else the next one
                break
        k += 1
    return words[k] if k < len(words) else None


def analyse_command(text: str) -> ShellAnalysis:
    """A command string found in code, analysed as a shell command of its own."""
    return analyse(text, analyse_code_text)


_NAMES_RE = re.compile(r"[\w.,\s\[\]]+")


def _shell_line(line: str) -> tuple[str, str | None, str] | None:
    """An IPython shell line (``!cmd``, ``files = !ls``): (indent, the names assigned or
    None, the command); None for another line. What ``^(\\s*)(?:([\\w.,\\s\\[\\]]+?)\\s*=\\s*)?!(?!=)(.*)$``
    matches, in linear time (that regex backtracks quadratically over a long run of blanks:
    a written file's 64 KB line took seconds)."""
    bang = line.find("!")
    if bang < 0 or line[bang + 1:bang + 2] == "=":
        return None
    head = line[:bang]
    body = head.lstrip()
    indent = head[:len(head) - len(body)]
    if not body:
        return indent, None, line[bang + 1:]
    trimmed = body.rstrip()
    if not trimmed.endswith("=") or trimmed.count("=") != 1:
        return None
    names = trimmed[:-1].rstrip()
    return (indent, names, line[bang + 1:]) if names and _NAMES_RE.fullmatch(names) else None


def _ipython(src: str, acc: Acc) -> str | None:
    """Strip IPython syntax: shell lines go to analyse_command, magics are skipped.
    Returns the remaining Python text, or None when the whole cell is not Python."""
    first = src.lstrip().split("\n", 1)
    head = first[0].strip()
    if head.startswith("%%"):
        body = first[1] if len(first) > 1 else ""
        magic = head[2:].split()
        if magic and magic[0] in ("bash", "sh", "script", "system"):
            acc.merge(analyse_command(body))
        elif magic and magic[0] == "writefile" and len(magic) > 1:
            acc.add("writes", magic[-1])
        return None
    lines = []
    for line in src.split("\n"):
        bang = _shell_line(line)
        if bang:
            indent, names, command = bang
            acc.merge(analyse_command(command))
            lines.append(f"{indent}{names + ' = None' if names else 'pass'}")
            continue
        m = re.match(r"^(\s*)%(\w+)\s*(.*)$", line)
        if m:
            magic, rest = m.group(2), m.group(3)
            if magic in ("sx", "system"):
                acc.merge(analyse_command(rest))
            elif magic == "run" and rest:  # IPython's %run runs a Python file
                script = _run_script(rest.split())
                if script is not None:
                    acc.add("executes", script, "python")
            elif magic == "load" and rest:
                acc.add("reads", rest.split()[0])
            elif magic == "env" and not rest:
                acc.add("reads", "env:")
            lines.append(f"{m.group(1)}pass")
            continue
        lines.append(line)
    return "\n".join(lines)


def _fallback(src: str, acc: Acc, depth: int) -> None:
    """Code that does not parse as Python: URLs, quoted absolute paths, system("...")."""
    sends = bool(_SEND_WORDS.search(src))
    for m in _SYSTEM_RE.finditer(src):
        acc.merge(analyse_command(m.group(2)))
    for m in URL_RE.finditer(src):
        acc.add("sends" if sends else "reads", m.group(0).rstrip(".,;"))
    paths = [m.group(2) for m in _QPATH_RE.finditer(src) if not _after_home(src, m.start())]
    for m in _HOME_PATH_RE.finditer(src):
        parts = [m.group(2)] if m.group(2) else re.findall(r"""(['"])([^'"\s]{1,120})\1""", m.group(3))
        paths.append("~/" + "/".join(p if isinstance(p, str) else p[1] for p in parts).lstrip("/"))
    for path in paths:
        acc.add("reads", path)
        if sends:  # a program that sends and reads files: what it reads is what it can send
            acc.add("payloads", path)
    if _ENV_DUMP_RE.search(src):
        acc.add("reads", "env:")
    if _DYN_EVAL_RE.search(_STRINGS_RE.sub('""', src)):
        acc.fail("eval() of text built at run time")


def _after_home(src: str, start: int) -> bool:
    """Whether the quoted path at ``start`` continues a home-folder expression (read by
    _HOME_PATH_RE as `~/...`, not as an absolute path)."""
    return bool(re.search(_HOME_EXPR + r"\s*(?:\+|\.|,)\s*$", src[max(0, start - 80):start]))


def analyse_code_text(src: str, python: bool = True, depth: int = 0) -> ShellAnalysis:
    """Analyse program text; ``python=False`` skips the ast parse (node -e, perl -e ...)."""
    acc = Acc()
    if depth > MAX_CODE_DEPTH:
        acc.fail("code nested too deeply")
        return acc.result()
    text = _ipython(src, acc) if python else None
    tree = None
    if text is not None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(text)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            tree = None
    if tree is None:
        if text is not None or not python:
            _fallback(src if text is None else text, acc, depth)
        return acc.result()
    visitor = PyVisitor(acc, depth, analyse_code_text, analyse_command)
    for parent in ast.walk(tree):
        for child in ast.iter_child_nodes(parent):
            visitor.parents[child] = parent
    visitor.visit(tree)
    return acc.result()
