"""Commands a Python code step hands to a shell or to ``exec``, for the code-step analyser
(:mod:`pipeline.analysis.shell.code_py`): ``subprocess.run("...")``, ``os.system(...)``,
``os.execv(path, argv)``. Their text is rebuilt from the call's arguments (a part known
only at run time becomes a ``$PY_<expression>`` variable, so the shell analyser still sees
the command's name and its literal arguments) and analysed as shell text.
"""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Callable
from typing import Protocol

from pipeline.analysis.shell.code_flow import Flows, ran
from pipeline.analysis.shell.model import ShellAnalysis

__all__ = ["Spawner", "run_subprocess", "command_text"]


class Spawner(Flows, Protocol):
    """What running a command asks of the code visitor."""

    shell: Callable[[str], ShellAnalysis]

    @staticmethod
    def kw(node: ast.Call, *names: str) -> ast.AST | None: ...


def run_subprocess(v: Spawner, node: ast.Call, name: str) -> None:
    """Commands handed to a shell or exec (``name``: the call's qualified name): analysed
    as shell text; a command whose name is built at run time cannot be analysed."""
    if name.startswith(("os.exec", "os.spawn")):  # execv(path, argv) / execl(path, arg0, ...)
        target: ast.AST | None = _exec_argv(node, name)
        if target is None:  # an argv not written out (a variable, `*args`, keywords)
            v.acc.fail("subprocess command built at run time")
            return
    else:
        target = node.args[0] if node.args else v.kw(node, "args", "cmd", "command")
        if target is None:
            return
    text = command_text(v, target)
    if text is None:
        v.acc.fail("subprocess command built at run time")
        return
    result = v.shell(text)
    v.acc.merge(result)
    ran(v, result)


def _exec_argv(node: ast.Call, name: str) -> ast.List | None:
    """The command an ``os.exec*`` / ``os.spawn*`` call runs: its path (a name looked up on
    PATH for the ``p`` variants), then its arguments after ``argv[0]``, which is only the
    name the program is told (`os.execv('/usr/bin/curl', ['ls', ...])` runs curl); an
    ``e`` variant's last argument is the environment."""
    kind = name.rsplit(".", 1)[-1].removeprefix("exec").removeprefix("spawn")
    args = list(node.args) if name.startswith("os.exec") else list(node.args[1:])  # spawn*: a mode first
    if not args or node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
        return None
    path, rest = args[0], args[1:]
    if "e" in kind and rest:
        rest = rest[:-1]
    if "v" in kind:
        if not rest or not isinstance(rest[0], (ast.List, ast.Tuple)) or any(
                isinstance(e, ast.Starred) for e in rest[0].elts):
            return None
        rest = list(rest[0].elts)
    return ast.List(elts=[path, *rest[1:]], ctx=ast.Load())


def command_text(v: Flows, node: ast.AST) -> str | None:
    """Shell text of a command argument; unknown parts become ``$PY_`` variables (None
    when the command's name itself is unknown)."""
    c = v.const(node)
    if c is not None:
        return c
    if isinstance(node, (ast.List, ast.Tuple)):
        parts = []
        for k, e in enumerate(node.elts):
            s = v.const(e)
            if s is None and k == 0:
                return None
            parts.append(shlex.quote(s) if s is not None else f'"$PY_{_varname(e)}"')
        return " ".join(parts)
    if isinstance(node, ast.JoinedStr):
        out = []
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                cv = v.const(part.value)
                out.append(cv if cv is not None else "${PY_%s}" % _varname(part.value))
            else:
                out.append(v.const(part) or "")
        text = "".join(out)
        return None if re.match(r"^\s*\$\{PY_", text) else text
    return None


def _varname(node: ast.AST) -> str:
    """A shell variable name for an expression known only at run time."""
    return re.sub(r"\W+", "_", ast.unparse(node))[:40] or "EXPR"
