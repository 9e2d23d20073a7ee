"""Shell command handlers: the ssh family (scp/rsync, ssh, ssh-copy-id, ssh-keygen).
Handler signature as in :mod:`pipeline.analysis.shell.cmd_text`.
"""

from __future__ import annotations

import re

from pipeline.analysis.shell.args import has_opt, opt_values, parse_opts, remote_target
from pipeline.analysis.shell.cmd_files import copies
from pipeline.analysis.shell.ctx import Ctx
from pipeline.analysis.shell.tables import OPTIONS


def h_scp(ctx: Ctx, args: list[str], name: str) -> None:
    """scp/rsync SRC... DEST: to a remote = send host + payload sources; from a remote = read."""
    if name == "rsync":
        opts, pos = parse_opts(args, *OPTIONS["rsync"])
    else:
        opts, pos = parse_opts(args, *OPTIONS["scp"])
    for f in opt_values(opts, "-i", "--password-file", "--exclude-from", "--include-from", "--files-from", "-F"):
        ctx.read(f)
    for f in opt_values(opts, "--log-file"):
        ctx.write(f)
    if len(pos) < 2:
        for p in pos:
            r = remote_target(ctx.text(p))
            ctx.send(r[0]) if r else ctx.read(p)
        return
    dest, srcs = pos[-1], pos[:-1]
    rdest = remote_target(ctx.text(dest))
    for s in srcs:
        rs = remote_target(ctx.text(s))
        if rs:
            ctx.send(rs[0])
            ctx.read(f"scp://{rs[0]}/{rs[1].lstrip('/')}")
        else:
            ctx.read(s)
            if rdest:
                ctx.payload(s)
    if rdest:
        ctx.send(rdest[0])
    else:
        ctx.write(dest, tuple(ctx.text(s) for s in srcs))
        local = [s for s in srcs if not remote_target(ctx.text(s))]  # a local copy (`rsync x.sh y.sh`)
        copies(ctx, local, dest, len(srcs) > 1 or ctx.text(dest).endswith("/"))
    if any(k.startswith("--delete") for k, _ in opts):
        ctx.delete(dest)


def h_ssh(ctx: Ctx, args: list[str], name: str) -> None:
    """ssh [opts] [user@]HOST [remote command]: send host; stdin is a payload."""
    opts, pos = parse_opts(args, *OPTIONS["ssh"], stop=True)
    for f in opt_values(opts, "-i", "-F"):
        ctx.read(f)
    if not pos:
        return
    dest = ctx.text(pos[0])
    m = re.match(r"^(?:ssh://)?(?:[^@]+@)?([^:/]+)", dest)
    ctx.send(m.group(1) if m else dest)
    ctx.stdin_payloads()


def h_ssh_copy_id(ctx: Ctx, args: list[str], name: str) -> None:
    """ssh-copy-id [-i KEY] HOST: the public key is sent to the host."""
    opts, pos = parse_opts(args, *OPTIONS["ssh-copy-id"])
    keys = opt_values(opts, "-i") or ["~/.ssh/id_rsa.pub"]
    for k in keys:
        ctx.read(k)
        ctx.payload(k)
    for p in pos[:1]:
        ctx.send(re.sub(r"^[^@]+@", "", ctx.text(p)))


def h_ssh_keygen(ctx: Ctx, args: list[str], name: str) -> None:
    """ssh-keygen -f FILE: generates (writes FILE, FILE.pub) unless it only inspects a key."""
    opts, _ = parse_opts(args, *OPTIONS["ssh-keygen"])
    inspect = has_opt(opts, "-y", "-l", "-e", "-i", "-p", "-c", "-B")
    for f in opt_values(opts, "-f"):
        if inspect:
            ctx.read(f)
        else:
            ctx.write(f)
            ctx.write(ctx.text(f) + ".pub")
    if opt_values(opts, "-R"):
        ctx.write("~/.ssh/known_hosts")
