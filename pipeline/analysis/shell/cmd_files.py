"""Shell command handlers: file operations.

Copy/move/link, write, delete, dd, mkfs, chmod, find (archives, encoders and crypto tools:
:mod:`pipeline.analysis.shell.cmd_archive`). Handler signature as in
:mod:`pipeline.analysis.shell.cmd_text`.
"""

from __future__ import annotations

import posixpath
import re

from pipeline.analysis.shell.args import (MODE_RE, copy_pairs, has_opt, join_path, looks_like_path, opt_values,
                                          parse_opts)
from pipeline.analysis.shell.tables import OPTIONS
from pipeline.analysis.shell.ctx import Ctx


def h_copy(ctx: Ctx, args: list[str], name: str) -> None:
    """cp/mv/install SRC... DEST (-t DIR): sources read, destination (and DEST/basename) written."""
    opts, pos = parse_opts(args, *(OPTIONS["install"] if name == "install" else OPTIONS["cp"]))
    target = opt_values(opts, "-t", "--target-directory")
    if target:
        dest, srcs, is_dir = target[0], pos, True
    elif len(pos) >= 2:
        dest, srcs = pos[-1], pos[:-1]
        is_dir = len(srcs) > 1 or ctx.text(dest).endswith("/") or ctx.text(dest) in (".", "..", "~")
    else:
        for p in pos:
            ctx.write(p) if name == "install" else ctx.read(p)
        return
    recursive = has_opt(opts, "-r", "-R", "-a", "--recursive", "--archive")
    for s in srcs:
        ctx.read_tree(s) if recursive else ctx.read(s)
    ctx.write(dest, tuple(ctx.text(s) for s in srcs))
    if is_dir:
        for s in srcs:
            base = posixpath.basename(ctx.text(s).rstrip("/"))
            if base and not ctx.dynamic(s):
                ctx.write(join_path(ctx.text(dest), base), (ctx.text(s),))
    copies(ctx, srcs, dest, is_dir)


def copies(ctx: Ctx, originals: list[str], dest: str, into: bool, symbolic: bool = False) -> None:
    """Record the copies a command makes of ``originals`` (words) at ``dest``
    (:func:`pipeline.analysis.shell.args.copy_pairs`; names computed at run time: none)."""
    if not ctx.dynamic(dest):
        known = [ctx.text(w) for w in originals if not ctx.dynamic(w)]
        for copy, original in copy_pairs(known, ctx.text(dest), into or len(originals) > 1, symbolic):
            ctx.acc.copied(copy, original)


def h_ln(ctx: Ctx, args: list[str], name: str) -> None:
    """ln [-s] TARGET... LINK (-t DIR): the link is written; it reads as its target."""
    opts, pos = parse_opts(args, *OPTIONS["ln"])
    target = opt_values(opts, "-t", "--target-directory")
    if len(pos) >= 2 and not target:
        ctx.write(pos[-1])
    elif pos:
        ctx.write(posixpath.basename(ctx.text(pos[0])))
    symbolic = has_opt(opts, "-s", "--symbolic")
    if target:
        copies(ctx, pos, target[0], True, symbolic)
    elif len(pos) >= 2:
        link = ctx.text(pos[-1])
        copies(ctx, pos[:-1], pos[-1], len(pos) > 2 or link.endswith("/") or link in (".", "..", "~"), symbolic)
    elif pos:  # `ln -s /w/x.sh`: the link is ./x.sh
        copies(ctx, pos, ".", True, symbolic)


def h_write_all(ctx: Ctx, args: list[str], name: str) -> None:
    """tee, touch, mkdir: every positional is written."""
    opts, pos = parse_opts(args, {"touch": "drt", "mkdir": "m", "tee": ""}.get(name, ""),
                           ("reference", "date", "mode", "context"))
    for r in opt_values(opts, "-r", "--reference") if name == "touch" else []:
        ctx.read(r)
    for p in pos:
        ctx.write(p, ctx.stdin.resources if name == "tee" else ())
    if name == "tee" and (original := ctx.stdin_file()) is not None:  # `tee y.sh < x.sh`
        for p in pos:
            if not ctx.dynamic(p):
                ctx.acc.copied(ctx.text(p), original)
    if name == "tee":
        text = _teed_text(ctx)
        appended = any(k in ("-a", "--append") for k, _ in opts)
        for p in pos:
            if text is not None and not ctx.dynamic(p):  # `echo TEXT | tee x.sh`, `tee x.sh <<'EOF'`
                ctx.acc.wrote_text(ctx.text(p), text, appended)
        ctx.stdout_passthrough()


def _teed_text(ctx: Ctx) -> str | None:
    """The known text ``tee`` copies into its files: what the command before it printed,
    exactly (``Flow.exact``: echo, printf, cat of a known text), or its own here-document's
    or here-string's text (as ``cat``'s: engine.written_text); None when anything else may
    be in it (a file's content, a decoded text, a program's output)."""
    into = ctx.stdin_redirect()
    if ctx.stdin_taken:  # under xargs or sudo -S
        return None
    if into is None:
        return ctx.stdin.exact
    # a here-document's substitutions (`$(cat key)`) carry resources: then not known
    known = (into[0] == "<<" or into[0] == "<<<" and not ctx.dynamic(into[1])) \
        and not ctx.stdin.resources and not ctx.stdin.transformed
    return ctx.stdin_literal() if known else None


def h_delete(ctx: Ctx, args: list[str], name: str) -> None:
    """rm, rmdir, shred, unlink, truncate, wipe: every positional is destroyed."""
    opts, pos = parse_opts(args, {"shred": "ns", "truncate": "sr"}.get(name, ""),
                           ("iterations", "size", "reference", "random-source"))
    for r in opt_values(opts, "-r", "--reference") if name == "truncate" else []:
        ctx.read(r)
    for p in pos:
        ctx.delete(p)


def h_dd(ctx: Ctx, args: list[str], name: str) -> None:
    """dd if=IN of=OUT: OUT is written and destroyed (and, unless a `conv=` rewrites the
    bytes, a copy of IN)."""
    given: dict[str, str] = {}
    for a in args:
        t = ctx.text(a)
        if t.startswith("if="):
            ctx.read(a[3:])
        elif t.startswith("of="):
            ctx.write(a[3:])
            ctx.delete(a[3:])
        given[t.split("=", 1)[0]] = a[3:] if t[:3] in ("if=", "of=") else t.split("=", 1)[-1]
    rewrites = {"ascii", "ebcdic", "ibm", "block", "unblock", "lcase", "ucase", "swab"} & set(given.get("conv", "").split(","))
    if "if" in given and "of" in given and not rewrites and not any(map(ctx.dynamic, (given["if"], given["of"]))):
        ctx.acc.copied(ctx.text(given["of"]), ctx.text(given["if"]))


def h_mkfs(ctx: Ctx, args: list[str], name: str) -> None:
    """mkfs*, wipefs, mkswap: the device is destroyed."""
    _, pos = parse_opts(args, *OPTIONS["mkfs"])
    for p in pos:
        if looks_like_path(ctx.text(p)):
            ctx.delete(p)
            ctx.write(p)


def _only_restricts(mode: str) -> bool:
    """A chmod mode that keeps the owner's read, grants group and others nothing and sets
    no special bit (600, 0700, 400), or only takes group's and others' permissions away
    (go-rwx, o-w): hardening, no change another user or program could use. `chmod 000
    /etc/passwd` or `a-r` takes the owner's too: it breaks logins, a write that counts."""
    if mode.isdigit():
        return int(mode, 8) & 0o7477 == 0o400
    return all(re.fullmatch(r"[go]+-[rwxXst]*", part) for part in mode.split(","))


def h_chmod(ctx: Ctx, args: list[str], name: str) -> None:
    """chmod/chown/chgrp MODE FILES: metadata writes of the files (none for a chmod that
    only restricts access: `chmod 600 ~/.ssh/authorized_keys` rewrites no login grant)."""
    rest, mode_seen, restricts = [], False, False
    for a in args:
        t = ctx.text(a)
        if t.startswith("--reference="):
            ctx.read(a[12:])
            mode_seen = True
        elif not mode_seen and (name != "chmod" or MODE_RE.match(t)) and not (name != "chmod" and t.startswith("-")):
            mode_seen, restricts = True, name == "chmod" and _only_restricts(t)
        elif t.startswith("-") and not MODE_RE.match(t):
            continue
        else:
            rest.append(a)
    for p in [] if restricts else rest:
        ctx.write(p)


def h_find(ctx: Ctx, args: list[str], name: str) -> None:
    """find PATHS EXPR: paths read; -delete deletes matches; -exec runs on matches ({})."""
    i, paths = 0, []
    while i < len(args) and not ctx.text(args[i]).startswith(("-", "(", "!", ")")):
        paths.append(args[i])
        i += 1
    paths = paths or ["."]
    expr = args[i:]
    names = [expr[k + 1] for k, a in enumerate(expr[:-1]) if a in ("-name", "-iname")]
    texts = [ctx.text(p) for p in paths]
    matches = [join_path(p, "**/" + ctx.text(n)) for p in texts for n in names[:1]] or texts
    for p in paths:
        ctx.read(p)
    k = 0
    while k < len(expr):
        a = expr[k]
        if a in ("-exec", "-execdir", "-ok", "-okdir"):
            end = k + 1
            while end < len(expr) and ctx.text(expr[end]) not in (";", "+"):
                end += 1
            cmd = expr[k + 1:end]
            if cmd:
                for m in matches[:8]:
                    ctx.run_argv([m if ctx.text(w) == "{}" else w.replace("{}", m) for w in cmd])
            k = end + 1
            continue
        if a == "-delete":
            for m in matches:
                ctx.delete(m)
        elif a in ("-fprint", "-fprint0", "-fprintf", "-fls") and k + 1 < len(expr):
            ctx.write(expr[k + 1])
        elif a in ("-newer", "-samefile", "-files0-from") and k + 1 < len(expr):
            ctx.read(expr[k + 1])
        k += 1
    ctx.stdout_items(matches)
