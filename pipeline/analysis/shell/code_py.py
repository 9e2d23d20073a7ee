"""The Python visitor of the code-step analyser: :class:`PyVisitor`.

Walks one parsed module in statement order and records the files, URLs and commands its
calls touch into an :class:`pipeline.analysis.shell.model.Acc` (API facts from
:mod:`pipeline.analysis.shell.code_tables`). Nested program text (``exec("...")``) and command
strings (``subprocess.run("...")``) go to the two functions it is given, so this module
imports neither the engine nor :mod:`pipeline.analysis.shell.code`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from pipeline.analysis.shell.args import copy_pairs
from pipeline.analysis.shell.code_credentials import passed_env
from pipeline.analysis.shell.code_flow import bound, derived, track
from pipeline.analysis.shell.code_net import network
from pipeline.analysis.shell.code_subprocess import run_subprocess
from pipeline.analysis.shell.code_tables import (
    COPY, COPY_FILE, DELETE, HTTP_READ, HTTP_SEND, LIST, MKDIR, NO_READ, OPEN, READ_METHODS, SUBPROCESS,
    URL_RE, WRITE_METHODS
)
from pipeline.analysis.shell.code_names import dotted, is_environ, pathlike
from pipeline.analysis.shell.code_values import const_value, fixed_env, loop_value
from pipeline.analysis.shell.engine import CodeAnalyser
from pipeline.analysis.shell.model import Acc, ShellAnalysis

__all__ = ["PyVisitor", "MAX_CODE_DEPTH"]

MAX_CODE_DEPTH = 4  # program text nested in program text, levels


class PyVisitor(ast.NodeVisitor):
    """Walks one module in statement order, recording effects into an Acc."""

    def __init__(self, acc: Acc, depth: int, code: CodeAnalyser, shell: Callable[[str], ShellAnalysis]) -> None:
        self.acc, self.depth = acc, depth
        self.code, self.shell = code, shell  # nested program text / command strings
        self.consts: dict[str, str] = {}
        self.taint: dict[str, set[str]] = {}
        self.direct: dict[str, set[str]] = {}  # env vars a name holds as their own text
        self.parents: dict[ast.AST, ast.AST] = {}
        self.aliases: dict[str, str] = {}  # local name -> qualified name, from imports
        self.made_from: dict[str, set[str]] = {}  # file written -> what it was made from
        self.handles: dict[str, str] = {}  # name -> file it holds open for writing

    def qual(self, node: ast.AST) -> str:
        """Dotted name of an expression with import aliases resolved (sp.run -> subprocess.run)."""
        name = dotted(node)
        head, dot, rest = name.partition(".")
        return self.aliases.get(head, head) + dot + rest

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            if a.asname:
                self.aliases[a.asname] = a.name

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for a in node.names:
            self.aliases[a.asname or a.name] = f"{node.module or ''}.{a.name}"

    # ---- values
    def const(self, node: ast.AST | None) -> str | None:
        """Constant string value of an expression (:func:`code_values.const_value`)."""
        return const_value(self, node)

    def sources(self, node: ast.AST | None) -> set[str]:
        """Resources whose content an expression may carry (reads inside it, tainted names)."""
        out: set[str] = set()
        if node is None:
            return out
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                out |= self.taint.get(sub.id, set())
            elif isinstance(sub, ast.Call):
                out |= derived(self, self.call_reads(sub))
            elif isinstance(sub, (ast.Attribute, ast.Subscript)):
                out |= set(self.environ_reads(sub))
        return out

    def environ_reads(self, node: ast.AST) -> list[str]:
        """env: reads of os.environ[...] and bare os.environ dumps (not HOME: a path)."""
        if fixed_env(self, node) is not None:
            return []
        if isinstance(node, ast.Subscript) and is_environ(node.value) and isinstance(node.ctx, ast.Load):
            key = self.const(node.slice)
            return [f"env:{key}" if key else "env:"]
        if is_environ(node) and isinstance(node, ast.Attribute):
            parent = self.parents.get(node)
            if isinstance(parent, ast.Subscript) and parent.value is node:
                return []
            if isinstance(parent, ast.Attribute) and parent.attr in ("get", "setdefault", "pop", "update",
                                                                     "__setitem__", "__contains__"):
                return []
            if isinstance(parent, ast.Compare) and parent.left is not node:
                return []
            if isinstance(parent, ast.keyword) and parent.arg == "env":
                return []
            return ["env:"]
        return []

    def call_reads(self, node: ast.Call) -> list[str]:
        """Resources a call reads (without recording): open(r), Path.read_text, getenv, GET."""
        name = self.qual(node.func)
        attr = name.split(".")[-1]
        a0 = self.const(node.args[0]) if node.args else self.const(self.kw(node, "file", "path", "url"))
        recv = self.const(node.func.value) if isinstance(node.func, ast.Attribute) else None
        if name in OPEN or (attr == "open" and recv is not None):
            path, mode = self.open_args(node)
            return [path] if path and ("r" in mode or "+" in mode or not any(c in mode for c in "wax")) else []
        if attr in ("read_text", "read_bytes") and recv:
            return [recv]
        if attr in READ_METHODS and a0 and (pathlike(a0) or attr.startswith("read_") or attr == "load_workbook"):
            return [a0]
        if name in ("os.getenv", "getenv", "os.environ.get", "environ.get", "os.getenvb"):
            return [] if fixed_env(self, node) is not None else [f"env:{a0}" if a0 else "env:"]
        if isinstance(node.func, ast.Attribute) and is_environ(node.func.value) and attr in (
                "copy", "items", "keys", "values", "__iter__"):
            return ["env:"]
        if name in ("dict", "list", "str", "repr", "json.dumps", "sorted") and node.args and is_environ(node.args[0]):
            return ["env:"]
        if attr in HTTP_READ and a0 and "://" in a0:
            return [a0]
        return []

    def open_args(self, node: ast.Call) -> tuple[str | None, str]:
        """(path, mode) of open(path, mode) or Path(path).open(mode)."""
        if isinstance(node.func, ast.Attribute) and self.qual(node.func) not in OPEN:
            path = self.const(node.func.value)
            mode_node = node.args[0] if node.args else self.kw(node, "mode")
        else:
            path = self.const(node.args[0] if node.args else self.kw(node, "file"))
            mode_node = node.args[1] if len(node.args) > 1 else self.kw(node, "mode")
        return path, self.const(mode_node) or "r"

    @staticmethod
    def kw(node: ast.Call, *names: str) -> ast.AST | None:
        return next((k.value for k in node.keywords if k.arg in names), None)

    def copies_of(self, node: ast.Call, name: str, attr: str, a: list[str | None], recv: str | None) -> None:
        """The copies a call makes that the branches of :meth:`visit_Call` do not record (what
        it reads and writes they still do): by keyword (``shutil.copyfile('a', dst='b')``,
        ``(src=..., dst=...)``), and a ``Path``'s ``rename`` / ``replace`` (a str has no
        rename; a str's replace is no copy), whose original it reads."""
        if name in COPY_FILE and len(a) < 2 and (src := a[0] if a else self.const(self.kw(node, "src"))) \
                and (dst := self.const(self.kw(node, "dst"))):
            self.acc.add("reads", src)
            self.copied(src, dst, name == "os.symlink")
        elif recv is not None and a and a[0] and (attr == "rename" or attr == "replace" and isinstance(
                node.func, ast.Attribute) and isinstance(node.func.value, ast.Call)
                and self.qual(node.func.value.func).split(".")[-1] in ("Path", "PosixPath", "PurePath")):
            self.acc.add("reads", recv)
            self.copied(recv, a[0])

    def copied(self, original: str, dest: str, symbolic: bool = False) -> None:
        """A call makes a copy of ``original`` at ``dest``, or in it when ``dest`` is a folder
        (:func:`pipeline.analysis.shell.args.copy_pairs`)."""
        for copy, source in copy_pairs([original], dest, dest.endswith("/"), symbolic):
            self.acc.copied(copy, source)

    # ---- statements binding names
    def bind(self, target: ast.AST, value: ast.AST | None) -> None:
        src = self.sources(value)
        const = self.const(value)
        passed = passed_env(self, value)
        for t in ast.walk(target):
            if isinstance(t, ast.Name):
                if const is not None and t is target:
                    self.consts[t.id] = const
                else:
                    self.consts.pop(t.id, None)
                if src:
                    self.taint[t.id] = src
                else:
                    self.taint.pop(t.id, None)
                if passed:
                    self.direct[t.id] = passed
                else:
                    self.direct.pop(t.id, None)
        bound(self, target, value)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for t in node.targets:
            self.bind(t, node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            self.bind(node.target, node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            self.taint.setdefault(node.target.id, set()).update(self.sources(node.value))
            self.direct.setdefault(node.target.id, set()).update(passed_env(self, node.value))
            self.consts.pop(node.target.id, None)

    def visit_For(self, node: ast.For) -> None:
        self.visit(node.iter)
        self.bind(node.target, node.iter)
        if isinstance(node.target, ast.Name):
            self.consts.pop(node.target.id, None)
            pattern = loop_value(self, node.iter)  # for p in glob.glob('~/.ssh/*')
            var = node.target.id  # an `if` testing it picks some matches only: not the whole pattern
            filtered = any(isinstance(n, ast.If) and any(isinstance(x, ast.Name) and x.id == var
                                                         for x in ast.walk(n.test)) for s in node.body for n in ast.walk(s))
            if pattern is not None and not filtered:
                self.consts[var] = pattern
        for stmt in node.body + node.orelse:
            self.visit(stmt)

    def visit_With(self, node: ast.With) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self.bind(item.optional_vars, item.context_expr)
                for t in ast.walk(item.optional_vars):
                    if isinstance(t, ast.Name):
                        self.consts.pop(t.id, None)
        for stmt in node.body:
            self.visit(stmt)

    visit_AsyncWith = visit_With  # type: ignore[assignment]

    def visit_Subscript(self, node: ast.Subscript) -> None:
        for r in self.environ_reads(node):
            self.acc.add("reads", r)
        if not is_environ(node.value):
            self.generic_visit(node)
        else:
            self.visit(node.slice)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        for r in self.environ_reads(node):
            self.acc.add("reads", r)
        self.generic_visit(node)

    # ---- calls
    def visit_Call(self, node: ast.Call) -> None:
        name = self.qual(node.func)
        attr = name.split(".")[-1]
        args = node.args
        a = [self.const(x) for x in args]
        recv = self.const(node.func.value) if isinstance(node.func, ast.Attribute) else None
        for r in self.call_reads(node):
            self.acc.add("reads", r)
        track(self, node, name, attr)
        self.copies_of(node, name, attr, a, recv)
        if name in OPEN or (attr == "open" and recv is not None):
            path, mode = self.open_args(node)
            if path and any(c in mode for c in "wax+"):
                self.acc.add("writes", path)
        elif attr in ("ZipFile", "open") and name.split(".")[0] in ("zipfile", "tarfile") and a and a[0]:
            mode = (a[1] if len(a) > 1 else self.const(self.kw(node, "mode"))) or "r"
            self.acc.add("writes" if mode[:1] in "wax" else "reads", a[0])
        elif attr in WRITE_METHODS and (recv is not None and attr in ("write_text", "write_bytes", "touch", "mkdir")):
            self.acc.add("writes", recv)
        elif attr in WRITE_METHODS and a and a[0] and (pathlike(a[0]) or attr.startswith("to_")):
            self.acc.add("writes", a[0])
        elif attr in ("unlink", "rmdir") and recv is not None:
            self.acc.add("deletes", recv)
        elif name in DELETE and a and a[0]:
            self.acc.add("deletes", a[0])
        elif name in COPY and len(a) > 1:
            if a[0]:
                self.acc.add("reads", a[0])
            if a[1]:
                self.acc.add("writes", a[1])
            if a[0] and a[1] and name in COPY_FILE:  # shutil.copy('x.sh', 'y.sh'): y holds x's text
                self.copied(a[0], a[1], name == "os.symlink")
        elif name in LIST and a and a[0]:
            self.acc.add("reads", a[0])
        elif name in MKDIR and a and a[0]:
            self.acc.add("writes", a[0])
        elif name in SUBPROCESS or attr in ("create_subprocess_shell", "create_subprocess_exec"):
            run_subprocess(self, node, name)
        elif name in ("exec", "eval", "compile", "builtins.exec", "builtins.eval"):
            code = a[0] if a else None
            srcs = self.sources(args[0]) if args else set()
            if code is None and srcs and not any(isinstance(n, ast.Name) and n.id not in ("open", "Path")
                                                 for n in ast.walk(args[0])):
                for r in sorted(srcs):  # exec(open(f).read()): runs the file, as Python
                    self.acc.add("executes", r, "python")
            elif code is None:
                self.acc.fail(f"{name}() of text built at run time")
            elif self.depth < MAX_CODE_DEPTH:
                self.acc.merge(self.code(code, True, self.depth + 1))
        elif name in ("__import__", "importlib.import_module", "import_module") and (not a or a[0] is None):
            self.acc.fail(f"{name}() of a computed module name")
        else:
            network(self, node, name, attr, a)
            if name.split(".")[-1] not in NO_READ and not name.startswith("os.path.") and not (
                    attr in HTTP_READ | HTTP_SEND) and not self.call_reads(node):
                for x in a:
                    if x and (pathlike(x) or URL_RE.fullmatch(x)):
                        self.acc.add("reads", x)
        for k in node.keywords:
            if k.arg == "env":
                continue
            self.visit(k.value)
        self.visit(node.func)
        for x in args:
            self.visit(x)
