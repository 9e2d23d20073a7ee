"""Constant values of Python expressions, for the code-step analyser
(:mod:`pipeline.analysis.shell.code_py`): strings, names bound to them, f-strings,
concatenation and ``/``, path calls (``os.path.join``, ``Path(...)``, ``expanduser``),
the home folder however it is spelled (``Path.home()``, ``os.environ['HOME']``,
``os.getenv('HOME')``: ``~``, as the shell analyser reads ``$HOME``), and what a loop over
a glob binds its variable to (the pattern: the files it names).
"""

from __future__ import annotations

import ast
from typing import Protocol

from pipeline.analysis.shell.code_names import is_environ
from pipeline.analysis.shell.model import FIXED_VARS, MAX_COMMAND_CHARS

__all__ = ["const_value", "fixed_env", "loop_value"]

_PATH_CALLS = ("Path", "PurePath", "PosixPath", "str", "fspath", "expanduser", "abspath", "realpath", "normpath")
_GETENV = ("os.getenv", "getenv", "os.environ.get", "environ.get")


class Values(Protocol):
    """What constant folding asks of the code visitor."""

    consts: dict[str, str]

    def qual(self, node: ast.AST) -> str: ...


def fixed_env(v: Values, node: ast.AST) -> str | None:
    """The value of ``os.environ['HOME']`` / ``os.getenv('HOME')`` / ``os.environ.get('PWD')``:
    a variable whose value the analyser knows by its meaning (``FIXED_VARS``), else None."""
    key: str | None = None
    if isinstance(node, ast.Subscript) and is_environ(node.value):
        key = const_value(v, node.slice)
    elif isinstance(node, ast.Call) and node.args and v.qual(node.func) in _GETENV:
        key = const_value(v, node.args[0])
    return FIXED_VARS.get(key) if key is not None else None


# a value computed longer than the analyser's own bound on a program is not known: `s = s + s`
# repeated doubles it (34 times in 200 bytes of code: 34 GB)
MAX_VALUE_CHARS = MAX_COMMAND_CHARS


def const_value(v: Values, node: ast.AST | None) -> str | None:
    """Constant string value of an expression, when it is knowable without running it (and
    at most MAX_VALUE_CHARS long)."""
    value = _const_value(v, node)
    return value if value is None or len(value) <= MAX_VALUE_CHARS else None


def _const_value(v: Values, node: ast.AST | None) -> str | None:
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return v.consts.get(node.id)
    if isinstance(node, ast.JoinedStr):
        parts = [const_value(v, x.value) if isinstance(x, ast.FormattedValue) else const_value(v, x)
                 for x in node.values]
        if any(p is None for p in parts) or sum(map(len, parts)) > MAX_VALUE_CHARS:  # type: ignore[arg-type]
            return None
        return "".join(parts)  # type: ignore[arg-type]
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Div)):
        a, b = const_value(v, node.left), const_value(v, node.right)
        if a is None or b is None or len(a) + len(b) > MAX_VALUE_CHARS:
            return None
        return a + b if isinstance(node.op, ast.Add) else a.rstrip("/") + "/" + b
    fixed = fixed_env(v, node)
    if fixed is not None:
        return fixed
    if isinstance(node, ast.Call):
        name = v.qual(node.func)
        args = [const_value(v, a) for a in node.args]
        if name.endswith(("Path.home", "expanduser")) and not node.args:
            return "~" if name.endswith("home") else const_value(v, getattr(node.func, "value", None))
        if name.split(".")[-1] in _PATH_CALLS and len(args) == 1:
            return args[0]
        if name.split(".")[-1] in ("join", "Path", "PurePath", "PosixPath") and args and all(
                a is not None for a in args) and sum(map(len, args)) <= MAX_VALUE_CHARS:  # type: ignore[arg-type]
            return "/".join(a.rstrip("/") for a in args)  # type: ignore[union-attr]
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("expanduser", "resolve", "absolute"):
            return const_value(v, node.func.value)
    return None


def loop_value(v: Values, iterable: ast.AST) -> str | None:
    """What a ``for`` loop's variable stands for when the loop walks a glob's matches
    (``glob.glob(p)``, ``glob.iglob(p)``, ``Path(d).glob(p)``, ``Path(d).rglob(p)``): the
    pattern, which names every file it matches (``~/.ssh/*``), as the shell analyser
    reads ``for f in ~/.ssh/*``; a folder's entries (``Path(d).iterdir()``: ``d/*``;
    ``os.listdir(d)``: their names, ``*``, which ``os.path.join(d, name)`` puts under ``d``).
    None for any other iterable."""
    if (isinstance(iterable, ast.Call) and not iterable.args and isinstance(iterable.func, ast.Attribute)
            and iterable.func.attr == "iterdir"):  # Path(d).iterdir(): every entry's path
        folder = const_value(v, iterable.func.value)
        return None if folder is None else folder.rstrip("/") + "/*"
    if not isinstance(iterable, ast.Call) or not iterable.args:
        return None
    name = v.qual(iterable.func)
    if name == "os.listdir":  # entry names: `os.path.join(d, name)` is `d/*`
        return "*" if const_value(v, iterable.args[0]) is not None else None
    pattern = const_value(v, iterable.args[0])
    if pattern is None:
        return None
    if name in ("glob.glob", "glob.iglob"):
        return pattern
    if isinstance(iterable.func, ast.Attribute) and iterable.func.attr in ("glob", "rglob"):
        folder = const_value(v, iterable.func.value)
        if folder is not None:
            middle = "/**/" if iterable.func.attr == "rglob" else "/"
            return folder.rstrip("/") + middle + pattern
    return None
