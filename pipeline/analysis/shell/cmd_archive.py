"""Shell command handlers: archives, compressors, encoders and crypto tools.

tar/zip/7z/unzip, gzip/xz/... (COMPRESS_SUFFIX, DECOMPRESSORS), base64/xxd, openssl, gpg.
Handler signature as in :mod:`pipeline.analysis.shell.cmd_text`.
"""

from __future__ import annotations

from pipeline.analysis.shell.args import has_opt, join_path, opt_values, parse_opts
from pipeline.analysis.shell.tables import COMPRESS_SUFFIX, DECOMPRESSORS, OPENSSL_ARG, OPTIONS
from pipeline.analysis.shell.ctx import Ctx


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
            ctx.read_tree(p)  # an archive holds what is in the folders it is given
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
        # what is extracted came from the archive (read from stdin: `curl URL | tar x -C d`)
        made_from = tuple(ctx.text(a) for a in archives if ctx.text(a) != "-") or ctx.stdin.resources
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
                ctx.read_tree(p)
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
    recursive = has_opt(opts, "-r", "--recurse-paths", "-R")
    for m in members:
        ctx.read_tree(m) if recursive else ctx.read(m)
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
    made_from = tuple(ctx.text(p) for p in pos[:1])  # what is extracted came from the archive
    if dest:
        ctx.write(dest, made_from)
    for m in pos[1:]:
        ctx.write(join_path(ctx.text(dest), ctx.text(m)), made_from)


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
