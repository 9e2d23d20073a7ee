"""What files a Python code step makes and from what, for the code-step analyser
(:mod:`pipeline.analysis.shell.code_py`): the provenance the shell analyser keeps in
``Analyser.provenance`` (:meth:`pipeline.analysis.shell.ctx.Ctx.derived`), for code.

A file written from data (``open(p, 'wb').write(r.content)``, ``Path(p).write_bytes(x)``,
``shutil.copyfileobj(src, f)``) or copied (``urllib.request.urlretrieve(url, p)``,
``shutil.copy(a, p)``) was made from what that data came from, transitively: reading it
back reads them too (so sending it sends them), and running it runs the URLs it was
downloaded from (``remote_code_run``). An email message (``EmailMessage``, ``MIME*``) holds
what was put in it (``set_content``, ``add_attachment``, ``attach``, ``set_payload``), so
sending it sends that.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import Protocol

from pipeline.analysis.shell.code_tables import COPY, OPEN
from pipeline.analysis.shell.code_values import MAX_VALUE_CHARS
from pipeline.analysis.shell.model import Acc, ShellAnalysis, normalise

__all__ = ["Flows", "bound", "derived", "track", "ran"]

# methods that put data into an email message (email.message / email.mime): the message
# then carries it
MESSAGE_FILL = {"set_content", "add_attachment", "add_related", "add_alternative", "attach", "set_payload"}
_MAX_DERIVED = 256  # resources followed per question: a bound on hostile provenance chains


class Flows(Protocol):
    """What provenance tracking asks of the code visitor."""

    acc: Acc
    taint: dict[str, set[str]]
    made_from: dict[str, set[str]]  # file written -> the resources it was made from
    handles: dict[str, str]  # name -> the file it holds open for writing

    def qual(self, node: ast.AST) -> str: ...
    def const(self, node: ast.AST | None) -> str | None: ...
    def sources(self, node: ast.AST | None) -> set[str]: ...
    def open_args(self, node: ast.Call) -> tuple[str | None, str]: ...


def derived(v: Flows, resources: Iterable[str]) -> set[str]:
    """``resources`` and what this step made them from, transitively."""
    out: set[str] = set()
    todo = [r for r in resources]
    while todo and len(out) < _MAX_DERIVED:
        r = todo.pop()
        if r in out:
            continue
        out.add(r)
        todo.extend(v.made_from.get(normalise(r) or r, ()))
    return out


def _written(v: Flows, node: ast.AST | None) -> str | None:
    """The file an expression holds open for writing: ``open(p, 'w')`` or a name bound to one."""
    if isinstance(node, ast.Name):
        return v.handles.get(node.id)
    if isinstance(node, ast.Call) and (v.qual(node.func) in OPEN or isinstance(node.func, ast.Attribute)
                                       and node.func.attr == "open"):
        path, mode = v.open_args(node)
        return path if path and any(c in mode for c in "wax+") else None
    return None


def _made(v: Flows, path: str | None, sources: Iterable[str]) -> None:
    """Record that ``path`` was made from ``sources`` (ignoring itself)."""
    name = normalise(path) if path else None
    if name:
        v.made_from.setdefault(name, set()).update(s for s in sources if normalise(s) != name)


def bound(v: Flows, target: ast.AST, value: ast.AST | None) -> None:
    """A name bound to a file opened for writing (``f = open(p, 'wb')``, ``with ... as f``)
    holds that file; rebinding it to anything else forgets it."""
    if isinstance(target, ast.Name):
        path = _written(v, value)
        if path:
            v.handles[target.id] = path
        else:
            v.handles.pop(target.id, None)


def _known(v: Flows, items: list[ast.expr], sep: str) -> str | None:
    """The text of ``items`` joined by ``sep`` when every one is a known string (or bytes
    constant, read as UTF-8), else None."""
    parts, size = [], 0
    for item in items:
        if isinstance(item, ast.Constant) and isinstance(item.value, bytes):
            text = item.value.decode("utf-8", "replace")
        elif (text := v.const(item)) is None:
            return None
        size += len(text) + len(sep)
        if size > MAX_VALUE_CHARS:  # `f.writelines([s] * ...)` of a long s: not followed
            return None
        parts.append(text)
    return sep.join(parts)


def track(v: Flows, node: ast.Call, name: str, attr: str) -> None:
    """Provenance of files a call writes or copies, and what a call puts in a message."""
    args = node.args
    if name == "print" and (handle := next((k.value for k in node.keywords if k.arg == "file"), None)) is not None:
        # print(TEXT, file=f): a piece of f's file, as print writes it (sep, end: None is the
        # default; a `**kw` may hold either: not followed)
        if any(k.arg is None for k in node.keywords) or any(isinstance(a, ast.Starred) for a in args):
            return
        given = {k.arg: k.value for k in node.keywords if k.arg in ("sep", "end")}
        seps = {key: " " if key == "sep" else "\n" for key in ("sep", "end")}
        for key, value in given.items():
            text = None if isinstance(value, ast.Constant) and value.value is None else v.const(value)
            if text is None and not (isinstance(value, ast.Constant) and value.value is None):
                return  # a computed separator: not followed
            seps[key] = seps[key] if text is None else text  # type: ignore[index]
        path = _written(v, handle)
        if path and (text := _known(v, list(args), seps["sep"])) is not None:
            v.acc.wrote_text(path, text + seps["end"], True)
        return
    if name in COPY and len(args) > 1:
        src = v.const(args[0])
        _made(v, v.const(args[1]), ({src} if src else set()) | v.sources(args[0]))
    elif name == "shutil.copyfileobj" and len(args) > 1:
        _made(v, _written(v, args[1]), v.sources(args[0]))
    elif not isinstance(node.func, ast.Attribute) or not args:
        return
    elif attr in ("write", "writelines"):
        path = _written(v, node.func.value)
        _made(v, path, v.sources(args[0]))
        items = args[0].elts if attr == "writelines" and isinstance(args[0], (ast.List, ast.Tuple)) else [args[0]]
        if path and (text := _known(v, items, "")) is not None:
            v.acc.wrote_text(path, text, True)  # a piece: a handle's writes follow one another
    elif attr in ("write_text", "write_bytes"):
        _made(v, v.const(node.func.value), v.sources(args[0]))
        if (path := v.const(node.func.value)) and (text := _known(v, [args[0]], "")) is not None:
            v.acc.wrote_text(path, text, False)  # Path(p).write_text(TEXT)
    elif attr in MESSAGE_FILL and isinstance(node.func.value, ast.Name):
        carried = set().union(*(v.sources(x) for x in [*args, *(k.value for k in node.keywords)]))
        if carried:
            v.taint.setdefault(node.func.value.id, set()).update(carried)


def ran(v: Flows, result: ShellAnalysis) -> None:
    """A command the step ran: the files it executes run the URLs they were downloaded
    from in this step (as ``curl -o x URL && bash x`` does in the shell analyser)."""
    for executed in result.executes:
        for src in sorted(derived(v, [executed])):
            if "://" in src:
                v.acc.add("executes", src)
