"""Shell command handlers: file operations, archives, encoders, crypto tools.

Copy/move/link, write, delete, dd, mkfs, chmod, find, tar/zip/unzip, compressors, base64,
openssl, gpg. Handler signature as in :mod:`pipeline.analysis.shell.cmd_text`.
"""

from __future__ import annotations

import posixpath
import re

from pipeline.analysis.shell.args import MODE_RE, has_opt, join_path, looks_like_path, opt_values, parse_opts
from pipeline.analysis.shell.tables import COMPRESS_SUFFIX, DECOMPRESSORS, OPENSSL_ARG, OPTIONS
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
    for s in srcs:
        ctx.read(s)
    ctx.write(dest, tuple(ctx.text(s) for s in srcs))
    if is_dir:
        for s in srcs:
            base = posixpath.basename(ctx.text(s).rstrip("/"))
            if base and not ctx.dynamic(s):
                ctx.write(join_path(ctx.text(dest), base), (ctx.text(s),))


def h_ln(ctx: Ctx, args: list[str], name: str) -> None:
    """ln [-s] TARGET LINK: the link is written."""
    _, pos = parse_opts(args, *OPTIONS["ln"])
    if len(pos) >= 2:
        ctx.write(pos[-1])
    elif pos:
        ctx.write(posixpath.basename(ctx.text(pos[0])))


def h_write_all(ctx: Ctx, args: list[str], name: str) -> None:
    """tee, touch, mkdir: every positional is written."""
    opts, pos = parse_opts(args, {"touch": "drt", "mkdir": "m", "tee": ""}.get(name, ""),
                           ("reference", "date", "mode", "context"))
    for r in opt_values(opts, "-r", "--reference") if name == "touch" else []:
        ctx.read(r)
    for p in pos:
        ctx.write(p, ctx.stdin.resources if name == "tee" else ())
    if name == "tee":
        ctx.stdout_passthrough()


def h_delete(ctx: Ctx, args: list[str], name: str) -> None:
    """rm, rmdir, shred, unlink, truncate, wipe: every positional is destroyed."""
    opts, pos = parse_opts(args, {"shred": "ns", "truncate": "sr"}.get(name, ""),
                           ("iterations", "size", "reference", "random-source"))
    for r in opt_values(opts, "-r", "--reference") if name == "truncate" else []:
        ctx.read(r)
    for p in pos:
        ctx.delete(p)


def h_dd(ctx: Ctx, args: list[str], name: str) -> None:
    """dd if=IN of=OUT: OUT is written and destroyed."""
    for a in args:
        t = ctx.text(a)
        if t.startswith("if="):
            ctx.read(a[3:])
        elif t.startswith("of="):
            ctx.write(a[3:])
            ctx.delete(a[3:])


def h_mkfs(ctx: Ctx, args: list[str], name: str) -> None:
    """mkfs*, wipefs, mkswap: the device is destroyed."""
    _, pos = parse_opts(args, *OPTIONS["mkfs"])
    for p in pos:
        if looks_like_path(ctx.text(p)):
            ctx.delete(p)
            ctx.write(p)


def _only_restricts(mode: str) -> bool:
    """A chmod mode that grants group and others nothing and sets no special bit (600,
    0700, 400) or only takes permissions away (go-rwx, o-w): hardening, no change
    another user or program could use."""
    if mode.isdigit():
        return int(mode, 8) & 0o7077 == 0
    return all(re.fullmatch(r"[ugoa]*-[rwxXst]*", part) for part in mode.split(","))


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


def h_tar(ctx: Ctx, args: list[str], name: str) -> None:
    """tar c/x/t/r/u [-f ARCHIVE] [-C DIR] MEMBERS."""
    args = list(args)
    if args and not ctx.text(args[0]).startswith("-"):
        letters, rest, expanded = args[0], args[1:], []
        for ch in letters:
            expanded.append("-" + ch)
            if ch in "fCTXbHKNVLg" and rest:
                expanded.append(rest.pop(0))
        args = expanded + rest
    opts, pos = parse_opts(args, *OPTIONS["tar"])
    mode = next((k for k, _ in opts if k in ("-c", "-x", "-t", "-r", "-u", "--create", "--extract",
                                              "--get", "--list", "--append", "--update", "--delete")), "-t")
    archives = opt_values(opts, "-f", "--file")
    cdir = (opt_values(opts, "-C", "--directory") or [""])[-1]
    for f in opt_values(opts, "-T", "--files-from", "-X", "--exclude-from"):
        ctx.read(f)
    creating = mode in ("-c", "--create", "-r", "-u", "--append", "--update")
    if creating:
        members = [join_path(cdir, ctx.text(p)) if cdir and not ctx.text(p).startswith(("/", "~")) else p
                   for p in pos]
        for p in members:
            ctx.read(p)
        for a in archives:
            ctx.write(a, tuple(ctx.text(p) for p in members))
        if not archives or ctx.text(archives[0]) == "-":
            ctx.stdout_resources(tuple(ctx.text(p) for p in members))
        if has_opt(opts, "--remove-files"):
            for p in members:
                ctx.delete(p)
        return
    for a in archives:
        ctx.read(a)
    if mode in ("-x", "--extract", "--get"):
        made_from = tuple(ctx.text(a) for a in archives)  # what is extracted came from the archive
        if cdir:
            ctx.write(cdir, made_from)
        for p in pos:
            ctx.write(join_path(cdir, ctx.text(p)), made_from)
    elif mode == "--delete":
        for a in archives:
            ctx.write(a)


def h_zip(ctx: Ctx, args: list[str], name: str) -> None:
    """zip [-r] OUT.zip FILES (-m deletes inputs); 7z a/x."""
    if name in ("7z", "7za", "7zr"):
        sub, rest = (ctx.text(args[0]), args[1:]) if args else ("", [])
        opts = [ctx.text(a) for a in rest if ctx.text(a).startswith("-")]
        pos = [a for a in rest if not ctx.text(a).startswith("-")]
        if sub in ("a", "u") and pos:
            ctx.write(pos[0], tuple(ctx.text(p) for p in pos[1:]))
            for p in pos[1:]:
                ctx.read(p)
        elif pos:
            ctx.read(pos[0])
            for o in opts:
                if o.startswith("-o") and len(o) > 2:
                    ctx.write(o[2:])
        return
    cleaned, skip_list = [], False
    for a in args:
        t = ctx.text(a)
        if t in ("-x", "-i", "--exclude", "--include"):
            skip_list = True
            continue
        if skip_list and not t.startswith("-"):
            continue
        skip_list = False
        cleaned.append(a)
    opts, pos = parse_opts(cleaned, *OPTIONS["zip"])
    if not pos:
        return
    out, members = pos[0], pos[1:]
    for m in members:
        ctx.read(m)
    if ctx.text(out) == "-":
        ctx.stdout_resources(tuple(ctx.text(m) for m in members))
    else:
        ctx.write(out, tuple(ctx.text(m) for m in members))
    for o in opt_values(opts, "-O", "--output-file"):
        ctx.write(o)
    if has_opt(opts, "-m", "--move"):
        for m in members:
            ctx.delete(m)


def h_unzip(ctx: Ctx, args: list[str], name: str) -> None:
    """unzip [-d DIR] FILE.zip [MEMBERS]."""
    cleaned, skip = [], False
    for a in args:
        if ctx.text(a) == "-x":
            skip = True
            continue
        if skip and not ctx.text(a).startswith("-"):
            continue
        skip = False
        cleaned.append(a)
    opts, pos = parse_opts(cleaned, *OPTIONS["unzip"])
    if pos:
        ctx.read(pos[0])
    dest = (opt_values(opts, "-d") or [""])[-1]
    if has_opt(opts, "-p", "-c"):
        ctx.stdout_resources(tuple(ctx.text(p) for p in pos[:1]))
        return
    if has_opt(opts, "-l", "-t", "-v", "-Z"):
        return
    if dest:
        ctx.write(dest)
    for m in pos[1:]:
        ctx.write(join_path(ctx.text(dest), ctx.text(m)))


def h_compress(ctx: Ctx, args: list[str], name: str) -> None:
    """gzip/bzip2/xz/zstd (and un*): FILE -> FILE.gz or back; -c to stdout."""
    opts, pos = parse_opts(args, *OPTIONS["compress"])
    base = DECOMPRESSORS.get(name, name)
    decompress = name in DECOMPRESSORS or has_opt(opts, "-d", "--decompress", "--uncompress")
    suffix = (opt_values(opts, "-S", "--suffix") or [COMPRESS_SUFFIX.get(base, ".gz")])[-1]
    for p in pos:
        ctx.read(p)
    outs = opt_values(opts, "-o", "--output")
    if has_opt(opts, "-c", "--stdout", "--to-stdout") or (not pos and not outs):
        ctx.stdout_resources(tuple(ctx.text(p) for p in pos) + ctx.stdin.resources, transformed=decompress)
        return
    for o in outs:
        ctx.write(o, tuple(ctx.text(p) for p in pos))
    if not outs:
        for p in pos:
            t = ctx.text(p)
            ctx.write(t[: -len(suffix)] if decompress and t.endswith(suffix) else t + ("" if decompress else suffix),
                      (t,))


def h_base64(ctx: Ctx, args: list[str], name: str) -> None:
    """base64/base32/basenc [-d] [FILE]; xxd [-r] [IN [OUT]]; uudecode; od."""
    if name == "xxd":
        opts, pos = parse_opts(args, *OPTIONS["xxd"])
        decode = has_opt(opts, "-r", "--revert")
        if pos:
            ctx.read(pos[0])
        if len(pos) > 1:
            ctx.write(pos[1], (ctx.text(pos[0]),))
            return
    else:
        opts, pos = parse_opts(args, *OPTIONS["base64"])
        decode = has_opt(opts, "-d", "-D", "--decode")
        for p in pos[:1]:
            ctx.read(p)
        for o in opt_values(opts, "-o", "--output"):
            ctx.write(o, tuple(ctx.text(p) for p in pos))
            return
    ctx.stdout_resources(ctx.stdin.resources + tuple(ctx.text(p) for p in pos[:1]),
                         transformed=decode or ctx.stdin.transformed)


def h_openssl(ctx: Ctx, args: list[str], name: str) -> None:
    """openssl SUBCMD -in F -out F -inkey F -pass file:F; s_client -connect HOST:PORT."""
    sub = ctx.text(args[0]) if args else ""
    i, decode = 1, False
    while i < len(args):
        t = ctx.text(args[i])
        key = t[1:]
        if t in ("-d", "-decrypt"):
            decode = True
        if key in OPENSSL_ARG and i + 1 < len(args):
            val = args[i + 1]
            vt = ctx.text(val)
            if key in ("in", "inkey", "key", "keyfile", "CAfile", "cert", "certfile", "signkey", "kfile",
                       "sigfile", "signature", "recip", "CA", "CAkey", "extfile", "peerkey"):
                ctx.read(val)
            elif key in ("out", "keyout"):
                ctx.write(val)
            elif key in ("pass", "passin", "passout") and vt.startswith("file:"):
                ctx.read(vt[5:])
            elif key == "connect":
                host, _, port = vt.rpartition(":")
                ctx.send(f"tcp://{host}:{port}" if host else vt)
                ctx.stdin_payloads()
            i += 2
            continue
        if not t.startswith("-") and sub not in ("rand", "prime", "passwd", "s_client"):
            ctx.read(args[i])
        i += 1
    ctx.stdout_resources(ctx.stdin.resources, transformed=True if decode or sub in ("enc", "base64") else
                         ctx.stdin.transformed)


def h_gpg(ctx: Ctx, args: list[str], name: str) -> None:
    """gpg [-o OUT] [--import|-d|-e] FILE; --export-secret-keys reads the private keyring."""
    opts, pos = parse_opts(args, *OPTIONS["gpg"])
    for o in opt_values(opts, "-o", "--output"):
        ctx.write(o, tuple(ctx.text(p) for p in pos))
    for f in opt_values(opts, "--passphrase-file"):
        ctx.read(f)
    for p in pos:
        ctx.read(p)
    keyring: tuple[str, ...] = ()
    if has_opt(opts, "--export-secret-keys", "--export-secret-subkeys"):  # the private keyring itself
        keyring = ("~/.gnupg/private-keys-v1.d",)
        ctx.read(keyring[0])
        for o in opt_values(opts, "-o", "--output"):
            ctx.write(o, keyring)
    ctx.stdout_resources(ctx.stdin.resources + tuple(ctx.text(p) for p in pos) + keyring, transformed=True)
