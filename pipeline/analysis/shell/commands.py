"""Per-command table of the shell analyser: which handler reads each command's arguments.

Each handler gets the :class:`pipeline.analysis.shell.ctx.Ctx` of one simple command and its raw
argument words (``argv[1:]``) and records reads, writes, executes, sends, payloads and
deletes through the context. Which command goes to which handler is data
(``COMMAND_FAMILIES`` and the option tables of :mod:`pipeline.analysis.shell.tables`); the
handlers live in the ``shell_cmd_*`` modules. Commands not in the table are not opaque:
their path-looking arguments count as reads (most programs read the files they are given).
"""

from __future__ import annotations

import re

from pipeline.analysis.shell import cmd_archive as shell_cmd_archive
from pipeline.analysis.shell import cmd_exec as shell_cmd_exec
from pipeline.analysis.shell import cmd_files as shell_cmd_files
from pipeline.analysis.shell import cmd_http as shell_cmd_http
from pipeline.analysis.shell import cmd_misc as shell_cmd_misc
from pipeline.analysis.shell import cmd_net as shell_cmd_net
from pipeline.analysis.shell import cmd_serve as shell_cmd_serve
from pipeline.analysis.shell import cmd_shell as shell_cmd_shell
from pipeline.analysis.shell import cmd_ssh as shell_cmd_ssh
from pipeline.analysis.shell import cmd_text as shell_cmd_text
from pipeline.analysis.shell import cmd_tools as shell_cmd_tools
from pipeline.analysis.shell import cmd_vcs as shell_cmd_vcs
from pipeline.analysis.shell.args import Handler
from pipeline.analysis.shell.ctx import Ctx
from pipeline.analysis.shell.model import FIXED_VARS, VAR_RE
from pipeline.analysis.shell.tables import (
    SYSTEM_BIN,
    CODE_FLAGS,
    COMMAND_FAMILIES,
    COMPRESS_SUFFIX,
    DECOMPRESSORS,
    KEYWORDS,
    READERS,
    WRAPPERS,
)

__all__ = ["HANDLERS", "KEYWORDS", "canonical", "run_command_words"]

_MODULES = (shell_cmd_archive, shell_cmd_exec, shell_cmd_files, shell_cmd_http, shell_cmd_misc, shell_cmd_net, shell_cmd_serve,
            shell_cmd_shell, shell_cmd_ssh, shell_cmd_text, shell_cmd_tools, shell_cmd_vcs)


def _handler(family: str) -> Handler:
    """The ``h_<family>`` function of the handler modules."""
    for module in _MODULES:
        fn = getattr(module, f"h_{family}", None)
        if fn is not None:
            return fn  # type: ignore[no-any-return]
    raise LookupError(f"no handler for command family {family!r}")


def _table() -> dict[str, Handler]:
    derived = {"reader": list(READERS), "wrapper": list(WRAPPERS), "interp": list(CODE_FLAGS),
               "compress": list(COMPRESS_SUFFIX) + list(DECOMPRESSORS)}
    table: dict[str, Handler] = {}
    for family, names in [*derived.items(), *((f, n.split()) for f, n in COMMAND_FAMILIES.items())]:
        fn = _handler(family)
        for name in names:
            table[name] = fn
    return table


HANDLERS: dict[str, Handler] = _table()


def canonical(name: str) -> str:
    """Map versioned or variant program names onto table keys (python3.11 -> python)."""
    if re.fullmatch(r"python[\d.]*|pypy[\d.]*|ipython[\d.]*", name):
        return "python"
    if re.fullmatch(r"pip[\d.]*", name):
        return "pip"
    if name.startswith("mkfs"):
        return "mkfs"
    if re.fullmatch(r"(node|perl|ruby|php)[\d.]*", name):
        return re.sub(r"[\d.]+$", "", name)
    return name


def _defaulted(word: str, ctx: Ctx) -> str:
    """A command name ``${VAR:-default}`` (or ``${VAR-default}``) with a literal default and
    VAR never assigned in the command (nor bound by a loop): the default (`"${PYTHON:-python3}"
    -m pytest` runs python3). A VAR the command assigned a known value was expanded already;
    one assigned a computed value stays unknown, and so does the name."""
    def put(m: re.Match[str]) -> str:
        name, rest = m.group(1), m.group(2) or ""
        dflt = re.fullmatch(r":?-([\w./~+@%:,=-]+)", rest)  # plain text: no quote, `$`, glob
        if (not m.group(0).startswith("${") or m.group(0)[2] in "#!" or not dflt or not name
                or not re.fullmatch(r"[A-Za-z_]\w*", name) or name in ctx.an.env or name in FIXED_VARS):
            return m.group(0)
        return dflt.group(1)
    return VAR_RE.sub(put, word) if "${" in word else word


def run_command_words(words: list[str], ctx: Ctx) -> None:
    """Dispatch one simple command (raw words, assignments already removed)."""
    if not words:
        return
    w0 = _defaulted(words[0], ctx)
    if ctx.dynamic(w0):
        ctx.fail(f"command name built from a variable or substitution: {ctx.text(w0)[:60]}")
        return
    text = ctx.text(w0)
    name = text
    if "/" in text:
        parent, _, base = text.rpartition("/")
        known = canonical(base) in HANDLERS
        # /usr/bin/git is the system's git; ./gh_2.45/bin/gh or ~/.local/bin/kubectl is a file
        # of its own (downloaded, built), and so is a system path this command wrote
        if not (known and SYSTEM_BIN.fullmatch(parent)) or ctx.derived(text):
            ctx.execute(w0)
        if not known:
            shell_cmd_misc.h_unknown(ctx, words[1:], base)
            return
        name = base
    else:
        # a program this command put into a bin folder (`mv kubectl ~/.local/bin/`,
        # `install -m 755 x /usr/local/bin/x`) runs by its name: that file runs (the last 64
        # writes are looked at: a bound, so 1,000 writes then 1,000 commands stay linear)
        for written in [w for w in list(ctx.acc.lists["writes"])[-64:] if w.endswith(f"bin/{text}")]:
            ctx.execute(written)
    name = canonical(name)
    HANDLERS.get(name, shell_cmd_misc.h_unknown)(ctx, words[1:], name)
