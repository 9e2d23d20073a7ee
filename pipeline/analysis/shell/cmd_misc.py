"""Shell command handlers: schedulers (crontab, at), database clients, docker, compilers,
package managers (make, pytest and package scripts: :mod:`.cmd_tools`), tr, commands with
no resource, and the fallback for commands not in the table (the shell's own commands are in :mod:`pipeline.analysis.shell.cmd_shell`). Handler
signature as in :mod:`pipeline.analysis.shell.cmd_text`.
"""

from __future__ import annotations

import re

from pipeline.analysis.shell.args import has_opt, looks_like_path, opt_values, parse_opts, sql_effects
from pipeline.analysis.shell.ctx import Ctx
from pipeline.analysis.shell.cmd_serve import serve
from pipeline.analysis.shell.cmd_tools import local_builds, package_scripts
from pipeline.analysis.shell.tables import (ENV_RUNNERS, FOLDER_SERVERS, OPTIONS, PUBLISH, PUBLISH_LEAVES_OUT,
                                             PUBLISH_REGISTRY_OPTS)


def h_crontab(ctx: Ctx, args: list[str], name: str) -> None:
    """crontab FILE|- (install: write crontab:), -l (read), -r (delete), -e (write)."""
    opts, pos = parse_opts(args, *OPTIONS["crontab"])
    if has_opt(opts, "-l"):
        ctx.read("crontab:")
        ctx.stdout_resources(("crontab:",))
    elif has_opt(opts, "-r"):
        ctx.delete("crontab:")
    else:
        for p in pos:
            if ctx.text(p) != "-":
                ctx.read(p)
        ctx.write("crontab:", tuple(ctx.text(p) for p in pos) + ctx.stdin.resources)
        for line in (ctx.stdin_literal() or "").splitlines():  # scheduled commands run later
            m = re.match(r"^\s*(?:@\w+|(?:\S+\s+){5})(.+)$", line)
            if m and not line.lstrip().startswith("#") and not re.match(r"^\s*\w+=", line):
                ctx.run_text_literal(m.group(1))


def h_at(ctx: Ctx, args: list[str], name: str) -> None:
    """at/batch: schedules the shell program from stdin (or -f FILE)."""
    opts, _ = parse_opts(args, *OPTIONS["at"])
    for f in opt_values(opts, "-f"):
        ctx.execute(f, "shell")
        return
    ctx.write("at:")
    ctx.stdin_program("shell")


def h_db(ctx: Ctx, args: list[str], name: str) -> None:
    """mysql/psql/sqlite3: the database is read; SQL that drops/deletes/inserts too."""
    sql: list[str] = []
    if name == "sqlite3":
        i, pos = 0, []
        while i < len(args):
            t = ctx.text(args[i])
            if t in ("-cmd", "-init", "-separator", "-newline", "-nullvalue", "-vfs"):
                if t == "-init" and i + 1 < len(args):
                    ctx.read(args[i + 1])
                if t == "-cmd" and i + 1 < len(args):
                    sql.append(ctx.text(args[i + 1]))
                i += 2
                continue
            if not t.startswith("-"):
                pos.append(args[i])
            i += 1
        db = ctx.text(pos[0]) if pos else ""
        if pos:
            ctx.read(pos[0])
        sql += [ctx.text(p) for p in pos[1:]]
    elif name in ("psql", "pg_dump"):
        opts, pos = parse_opts(args, *OPTIONS["psql"])
        db = "postgres:" + ctx.text((opt_values(opts, "-d", "--dbname") or pos or [""])[0])
        sql += [ctx.text(c) for c in opt_values(opts, "-c", "--command")]
        for f in opt_values(opts, "-f", "--file") if name == "psql" else []:
            ctx.read(f)
        for f in opt_values(opts, "-o", "--output", "-L", "--log-file") + (opt_values(opts, "-f", "--file") if name == "pg_dump" else []):
            ctx.write(f)
        ctx.read(db)
    else:
        args = [a for a in args if not (a.startswith("-p") and not a.startswith("--"))]  # -pPASSWORD
        opts, pos = parse_opts(args, *OPTIONS["mysql"])
        db = "mysql:" + ctx.text((opt_values(opts, "-D", "--database") or pos or [""])[0])
        sql += [ctx.text(c) for c in opt_values(opts, "-e", "--execute")]
        for f in opt_values(opts, "--defaults-file"):
            ctx.read(f)
        for f in opt_values(opts, "--result-file"):
            ctx.write(f)
        ctx.read(db)
    lit = ctx.stdin_literal()
    if lit:
        sql.append(lit)
    for text in sql:
        sql_effects(ctx, text, db)
        for m in re.finditer(r"(?m)^\s*\.(?:import|read)\s+(\S+)", text):
            ctx.read(m.group(1))
        for m in re.finditer(r"(?m)^\s*\.(?:output|once|backup|save)\s+(\S+)", text):
            ctx.write(m.group(1))
        for m in re.finditer(r"(?m)^\s*\.(?:shell|system)\s+(.+)$", text):
            ctx.run_text_literal(m.group(1))


def h_docker(ctx: Ctx, args: list[str], name: str) -> None:
    """docker/podman run IMAGE (executes image:IMAGE), cp, build, pull, push, save, load, rm."""
    _, rest = parse_opts(args, *OPTIONS["docker"], stop=True)
    if not rest:
        return
    sub, rest = ctx.text(rest[0]), rest[1:]
    if sub in ("container", "image") and rest:
        sub, rest = ctx.text(rest[0]), rest[1:]
    if sub in ("run", "create"):
        opts, pos = parse_opts(rest, *OPTIONS["docker run"],
            stop=True)
        for f in opt_values(opts, "--env-file"):
            ctx.read(f)
        for v in opt_values(opts, "-v", "--volume"):
            host = ctx.text(v).split(":")[0]
            if host.startswith(("/", "~", ".")):
                ctx.read(host)
        if pos:
            ctx.execute("image:" + ctx.text(pos[0]))
    elif sub == "exec":
        _, pos = parse_opts(rest, *OPTIONS["docker exec"], stop=True)
        if pos:
            ctx.execute("container:" + ctx.text(pos[0]))
    elif sub == "cp" and len(rest) >= 2:
        _, pos = parse_opts(rest)
        if len(pos) >= 2:
            ctx.read(pos[0])
            ctx.write(pos[1], (ctx.text(pos[0]),))
    elif sub in ("build", "buildx"):
        opts, pos = parse_opts(rest, *OPTIONS["docker build"])
        if sub == "buildx" and pos and ctx.text(pos[0]) == "build":
            pos = pos[1:]
        for f in opt_values(opts, "-f", "--file"):
            ctx.read(f)
        for p in pos:
            ctx.read(p)
        for tag in opt_values(opts, "-t", "--tag"):  # the image is made from its build context
            ctx.write("image:" + ctx.text(tag), tuple(ctx.text(p) for p in pos))
            if has_opt(opts, "--push"):
                ctx.send("image:" + ctx.text(tag))
                ctx.add_payload("image:" + ctx.text(tag))
    elif sub == "tag" and len(rest) >= 2:  # the new name is the same image
        ctx.write("image:" + ctx.text(rest[1]), ("image:" + ctx.text(rest[0]),))
    elif sub == "pull" and rest:
        ctx.read("image:" + ctx.text(rest[-1]))
    elif sub == "push" and rest:
        ctx.send("image:" + ctx.text(rest[-1]))
        ctx.add_payload("image:" + ctx.text(rest[-1]))  # an image built here sends its context
    elif sub == "save":
        opts, _ = parse_opts(rest, *OPTIONS["docker save"])
        for f in opt_values(opts, "-o", "--output"):
            ctx.write(f)
    elif sub in ("load", "import"):
        opts, pos = parse_opts(rest, *OPTIONS["docker load"])
        for f in opt_values(opts, "-i", "--input") + pos[:1]:
            ctx.read(f)
    elif sub in ("rm", "rmi", "prune"):
        _, pos = parse_opts(rest)
        for p in pos:
            ctx.delete(("image:" if sub == "rmi" else "container:") + ctx.text(p))


def h_compiler(ctx: Ctx, args: list[str], name: str) -> None:
    """gcc/cc/clang/g++/rustc: sources read, -o OUT written."""
    i = 0
    while i < len(args):
        t = ctx.text(args[i])
        if t == "-o" and i + 1 < len(args):
            ctx.write(args[i + 1])
            i += 2
            continue
        if t.startswith("-o") and len(t) > 2 and name != "rustc":
            ctx.write(t[2:])
        elif t in ("-I", "-L", "-D", "-U", "-include", "-isystem", "-x", "-MF", "-MT", "-MQ", "--target"):
            i += 1
        elif not t.startswith("-"):
            ctx.read(args[i])
        i += 1


def _npx_serves(ctx: Ctx, args: list[str]) -> bool:
    """``npx [-y] http-server|serve ARGS``: the package serves a folder (True)."""
    i = 0
    while i < len(args) and ctx.text(args[i]).startswith("-"):
        i += 2 if ctx.text(args[i]) in ("-p", "--package", "-c", "--call") else 1
    package = re.sub(r"(?<=.)@[^/]*$", "", ctx.text(args[i])) if i < len(args) else ""
    if package in FOLDER_SERVERS:
        serve(ctx, package, args[i + 1:])
        return True
    return False


def h_pkg(ctx: Ctx, args: list[str], name: str) -> None:
    """pip/npm/apt-get/...: installs have no file resource; -r FILE and local paths/URLs are read.
    Publishing (`npm publish`, `twine upload`, `cargo publish`, ... in PUBLISH) sends the
    named files, or the package folder or dist/*, to the registry."""
    if name == "npx" and _npx_serves(ctx, args):
        return
    if name in ENV_RUNNERS and _env_run(ctx, args, name):
        return
    if name in ("npm", "pnpm", "yarn"):
        package_scripts(ctx, args, name)
    opts, pos = parse_opts(args, *OPTIONS["pkg"])
    words = [ctx.text(p) for p in pos]
    if name == "yarn" and words[:1] == ["npm"]:
        pos, words = pos[1:], words[1:]  # yarn npm publish (berry)
    publish = PUBLISH.get(name)
    if publish and words[:1] == [publish[0]]:
        ctx.send((opt_values(opts, *PUBLISH_REGISTRY_OPTS) or [publish[1]])[-1])
        named = pos[1:]
        for p in named:
            ctx.read(p)
            ctx.payload(p)
        if not named and publish[2]:
            ctx.read(publish[2])
            ctx.add_payload(publish[2], PUBLISH_LEAVES_OUT)
        return
    if not opts and (words in (["root"], ["bin"]) and name in ("npm", "pnpm") or name == "yarn" and words == ["bin"]):
        # the project's own package folder: `$(npm root)/.bin/eslint` runs node_modules/.bin/eslint
        ctx.stdout_literal("node_modules" if words == ["root"] else "node_modules/.bin")
        return
    # pip's words (`uv pip install .`): an install of a local project folder builds it
    pip = words[1:] if name == "uv" and words[:1] == ["pip"] else words if name in ("pip", "pip3") else []
    if pip[:1] == ["install"]:
        local_builds(ctx, opts, pos[len(words) - len(pip) + 1:])
    for f in opt_values(opts, "-r", "--requirement", "-c", "--constraint"):
        ctx.read(f)
    for p in pos:
        t = ctx.text(p)
        if "://" in t or looks_like_path(t):
            ctx.read(p)


def _env_run(ctx: Ctx, args: list[str], name: str) -> bool:
    """``uv run CMD``, ``poetry run CMD``, ``uvx TOOL``, ... (ENV_RUNNERS): CMD is analysed as
    a command of its own (``uv run x.py`` and ``uv run -m M`` run python); False when the
    words name no such subcommand (``uv pip install``: a package command)."""
    subs, short, long = ENV_RUNNERS[name]
    opts, pos = parse_opts(args, short, long, stop=True)
    words = [ctx.text(p) for p in pos]
    for sub in subs:
        if tuple(words[:len(sub)]) != sub:
            continue
        more, rest = parse_opts(pos[len(sub):], short, long, stop=True)
        if not rest:
            return True
        first = ctx.text(rest[0])
        if name == "hatch" and ":" in first and "/" not in first.split(":", 1)[0] and not ctx.dynamic(rest[0]):
            rest = [first.split(":", 1)[1], *rest[1:]]  # `hatch run ENV:CMD`
        if name in ("uv", "uvx", "rye") and sub != ("tool", "run") and has_opt(opts + more, "-m", "--module"):
            ctx.run_argv(["python", "-m", *rest])
        elif name in ("uv", "rye") and sub == ("run",) and (first.endswith((".py", ".pyw")) or first == "-"
                                                            or has_opt(more, "-s", "--script")):
            ctx.run_argv(["python", *rest])  # a script, `-` (stdin): run by python
        else:
            ctx.run_argv(rest)
        return True
    return False


def h_none(ctx: Ctx, args: list[str], name: str) -> None:
    """Commands with no resource (ps, kill, date, ...)."""


def h_tr(ctx: Ctx, args: list[str], name: str) -> None:
    """tr SET1 SET2: no file; stdout is stdin rewritten."""
    ctx.stdout_transformed()


def h_unknown(ctx: Ctx, args: list[str], name: str) -> None:
    """Unknown programs: path-looking arguments are reads."""
    for a in args:
        t = ctx.text(a)
        if "=" in t and t.startswith("--"):
            t = t.split("=", 1)[1]
        if looks_like_path(t) or "://" in t:
            ctx.read(t if a.startswith("--") else a)
