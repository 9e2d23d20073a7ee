"""Shell command handlers: build and test tools that run files which are no programs
themselves (``make``, ``pytest``, a package manager running ``package.json`` scripts:
:func:`package_scripts`, and pip building a local project's ``setup.py``: :func:`local_builds`,
both called by ``cmd_misc.h_pkg``). Each names its runs by a runner of
:mod:`pipeline.analysis.shell.tool_runs`. Handler signature as in
:mod:`pipeline.analysis.shell.cmd_text`.
"""

from __future__ import annotations

import re

from pipeline.analysis.shell.args import has_opt, join_path, looks_like_path, opt_values, parse_opts
from pipeline.analysis.shell.ctx import Ctx
from pipeline.analysis.shell.tables import OPTIONS
from pipeline.analysis.shell.tool_runs import (MAKE_NO_RECIPES, MAKE_NO_RUN, MAKEFILES, NPM_INSTALL_SCRIPTS,
                                               NPM_SCRIPT_COMMANDS, PM_COMMANDS, PYTEST_HELP, PYTEST_NO_RUN,
                                               make_runner, npm_runner)


def _folder(ctx: Ctx, dirs: list[str]) -> str:
    """The folder a tool's ``-C DIR`` options (``--prefix``, ``--cwd``) leave it in: each
    taken from the folder the one before it left ("" where it started)."""
    folder = ""
    for d in dirs:
        folder = ctx.text(d) if ctx.text(d).startswith("/") else join_path(folder, ctx.text(d))
    return folder


def h_make(ctx: Ctx, args: list[str], name: str) -> None:
    """make [-f FILE] [-C DIR] [VAR=value] goals: runs the recipes of FILE (without -f, the
    first of GNUmakefile, makefile and Makefile found; under DIR) for those goals (runner
    ``make:<goals>``: written programs read a written makefile's recipes,
    :mod:`pipeline.analysis.written_tools`). A folder named by a variable names no file;
    ``--help`` or ``--version`` reads no makefile; a dry run (``-n``), a question (``-q``) or
    ``-t`` runs only what runs as make reads it (``$(shell ...)``) and its ``+`` lines."""
    opts, pos = parse_opts(args, *OPTIONS["make"])
    files = opt_values(opts, "-f", "--file", "--makefile")
    dirs = opt_values(opts, "-C", "--directory")
    if any(ctx.dynamic(d) for d in dirs) or has_opt(opts, *MAKE_NO_RUN):  # no makefile is read
        for f in files:
            ctx.read(f)
        return
    folder = _folder(ctx, dirs)
    # `-j` / `-l` take an optional number: a number left among the words is no goal
    runner = make_runner([ctx.text(p) for p in pos if "=" not in ctx.text(p) and not ctx.text(p).isdigit()],
                         parse_only=has_opt(opts, *MAKE_NO_RECIPES))
    for f in files:
        ctx.read(f)  # read too: `make -p -f FILE` prints what it parsed
        if not ctx.dynamic(f) and ctx.text(f) != "-":
            ctx.execute(join_path(folder, ctx.text(f)), runner, folder or None)
    for default in MAKEFILES if not files else ():
        ctx.execute(join_path(folder, default), runner, folder or None)


def h_pytest(ctx: Ctx, args: list[str], name: str) -> None:
    """pytest [options] [FILE[::test] | FOLDER ...] (also ``python -m pytest``): runs each
    test file named (runner python) and the ``conftest.py`` of the folder it starts in and
    of each folder named, runner ``pytest``: the test files it finds there (``test_*.py``,
    ``*_test.py``) are matched to written files by ``sql/written_runs.sql``. Options taking
    a value are skipped; their values (``-k expr``) are no files."""
    opts, pos = parse_opts(args, *OPTIONS["pytest"])
    if has_opt(opts, *PYTEST_NO_RUN):
        return
    if has_opt(opts, *PYTEST_HELP):  # its options: the conftest.py where it starts is loaded
        ctx.execute("conftest.py", "python")
        return
    # folder -> whether pytest collects the test files under it (else: only its conftest.py)
    folders: dict[str, bool] = {"": not pos}
    for p in pos:
        t = ctx.text(p).split("::", 1)[0]
        if ctx.dynamic(p) or not t:
            continue
        t = "" if t in (".", "./") else t[2:] if t.startswith("./") else t.rstrip("/")
        if any(c in t for c in "*?["):  # a glob the shell left (`tests/test_*.py`): its folder
            t = t.rsplit("/", 1)[0] if "/" in t.split("*", 1)[0].split("?", 1)[0].split("[", 1)[0] else ""
            folders[t] = True
        elif t.endswith(".py"):
            ctx.execute(t, "python")
            folders.setdefault(t.rsplit("/", 1)[0] if "/" in t else "", False)
        elif t == "" or looks_like_path(t) or "." not in t:
            folders[t] = True
    for c in opt_values(opts, "-c", "--config-file", "--rootdir"):
        ctx.read(c)
    # the conftest.py of every folder from where it starts down to each folder given is loaded
    for folder in list(folders):
        parts = folder.split("/") if folder and not folder.startswith(("/", "~")) else []
        for k in range(len(parts)):
            folders.setdefault("/".join(parts[:k]), False)
    for folder, collects in folders.items():
        # runner 'pytest': the test files (and conftest.py files) under the folder run too
        # (sql/written_runs.sql)
        ctx.execute(join_path(folder, "conftest.py"), "pytest" if collects else "python")


def package_scripts(ctx: Ctx, args: list[str], name: str) -> None:
    """npm / pnpm / yarn running the package's own scripts (``npm test``, ``npm run build``,
    ``yarn build``, an install of the package itself): they run the ``package.json`` of
    the folder (``--prefix``, ``--cwd``, ``-C``, ``--dir``), runner ``npm:<scripts>``
    (:mod:`pipeline.analysis.shell.tool_runs`); a folder named by a variable names no file."""
    opts, pos = parse_opts(args, "C", ("prefix", "cwd", "dir", "filter", "workspace", "registry", "loglevel"))
    words = [ctx.text(p) for p in pos]
    dirs = opt_values(opts, "-C", "--prefix", "--cwd", "--dir")
    if any(ctx.dynamic(d) for d in dirs) or any(ctx.dynamic(p) for p in pos[:2]) or has_opt(
            opts, "--ignore-scripts", "--version", "-v", "--help", "-h"):
        return  # no script runs (`npm ci --ignore-scripts`, `yarn --version`)
    first = words[0] if words else ("install" if name == "yarn" else "")
    scripts: list[str] = []
    lifecycle = True
    if first in NPM_SCRIPT_COMMANDS:
        scripts = [NPM_SCRIPT_COMMANDS[first]]
    elif first in ("run", "run-script", "rum", "urn") and len(words) > 1:
        scripts = [words[1]]
    elif first in ("install", "i", "ci", "add") and len(words) <= 1:
        scripts, lifecycle = list(NPM_INSTALL_SCRIPTS), False
    elif name != "npm" and first and first not in PM_COMMANDS and not first.startswith("-"):
        scripts = [first]  # `yarn build`, `pnpm lint`: the script of that name
    if not scripts:
        return
    folder = _folder(ctx, dirs)
    ctx.execute(join_path(folder, "package.json"), npm_runner(scripts, lifecycle), folder or None)


_ARCHIVE_RE = re.compile(r"\.(?:whl|zip|tar|tgz|tar\.gz|tar\.bz2|tar\.xz|egg)$", re.I)


def local_builds(ctx: Ctx, opts: list[tuple[str, str | None]], pos: list[str]) -> None:
    """``pip install`` of a local project folder (``.``, ``-e ./pkg[dev]``, ``/src/app``;
    called by ``cmd_misc.h_pkg`` with the words after ``install``): pip runs the folder's
    ``setup.py`` to build it (runner python). A package name, an archive or a URL names no
    folder of the project; a folder named by a variable names no file."""
    for word in [*opt_values(opts, "-e", "--editable"), *pos]:
        t = ctx.text(word).split("[", 1)[0]
        if ctx.dynamic(word) or "://" in t or _ARCHIVE_RE.search(t) or not (
                t == "." or t.startswith(("./", "../", "/", "~")) or "/" in t):
            continue
        ctx.execute(join_path(t.rstrip("/") or "/", "setup.py"), "python")
