"""Shell command handlers: git, cloud copies (aws, gsutil, rclone), SMB shares (smbclient),
publishing (az) and gh.

Handler signature as in :mod:`pipeline.analysis.shell.cmd_text`.
"""

from __future__ import annotations

import posixpath
import re

from pipeline.analysis.shell.args import REMOTE_RE, has_opt, join_path, opt_values, parse_opts, publishes, remote_target
from pipeline.analysis.shell.cmd_misc import h_unknown
from pipeline.analysis.shell.cmd_files import copies
from pipeline.analysis.shell.ctx import Ctx
from pipeline.analysis.shell.tables import GIT_COMMITS, OPTIONS


def h_git(ctx: Ctx, args: list[str], name: str) -> None:
    """git clone URL (read) / push REMOTE (send) / pull, fetch (read) / rm, clean (delete)."""
    top, rest = parse_opts(args, *OPTIONS["git"], stop=True)
    if not rest:
        return
    work = (opt_values(top, "-C") or [""])[-1]  # `git -C DIR`: the command runs in DIR
    sub, rest = ctx.text(rest[0]), rest[1:]
    o, pos = parse_opts(rest, *(OPTIONS["git fetch"] if sub in ("push", "pull", "fetch") else OPTIONS["git clone"]))
    remotes = ctx.an.git_remotes

    def remote_name(r: str) -> str:
        t = ctx.text(r)
        if "://" in t or remote_target(t) or t.startswith(("/", "~", ".")):
            return t
        return remotes.get(t, f"git-remote:{t}")

    if sub == "clone" and pos:
        ctx.read(remote_name(pos[0]))
        dest = pos[1] if len(pos) > 1 else re.sub(r"\.git$", "", posixpath.basename(ctx.text(pos[0]).rstrip("/")))
        ctx.write(dest, (ctx.text(pos[0]),))
    elif sub == "mv" and len(pos) >= 2 and not work:  # `git mv notes.txt run.sh`: a copy (a move)
        copies(ctx, pos[:-1], pos[-1], len(pos) > 2 or ctx.text(pos[-1]).endswith("/"))
    elif sub == "push":
        repo = opt_values(o, "--repo")
        ctx.send(remote_name(repo[0] if repo else pos[0] if pos else "origin"))
        # what is pushed: the commits, linked by a resource edge from `git add`/`git commit`
        ctx.read(GIT_COMMITS)
        ctx.payload(GIT_COMMITS)
    elif sub in ("add", "commit", "stage"):
        # staged files are read into the commits that a later push sends
        for p in pos if sub != "commit" else [v for k, v in o if k in ("-F", "--file") and v]:
            ctx.read(p)
        # no provenance: a push in the same command would then send each staged file by name,
        # and the name globs (`*password*`, `*token*`) flag source files (password_reset.py);
        # a push in a later step is linked by a resource edge, its label from what was read.
        # Except `add -f`: it stages what .gitignore keeps out, where secrets live (.env)
        forced = sub in ("add", "stage") and has_opt(o, "-f", "--force")
        # What a staged file was made from earlier in this command goes in by content, not by
        # name (`cp ~/.aws/credentials c.txt && git add c.txt`, `cp -r ~/.ssh r/ && cd r &&
        # git add -A`), so a push in the same command sends it as a later step's push would
        staged = pos if sub != "commit" else []
        if sub in ("add", "stage") and not pos and has_opt(o, "-A", "--all"):
            staged = ["."]
        made_from = tuple(src for p in staged for src in ctx.derived(ctx.text(p)))
        ctx.write(GIT_COMMITS, (tuple(ctx.text(p) for p in pos) if forced else ()) + made_from)
    elif sub in ("pull", "fetch", "ls-remote"):
        ctx.read(remote_name(pos[0] if pos else "origin"))
    elif sub == "remote" and len(pos) >= 3 and ctx.text(pos[0]) in ("add", "set-url"):
        remotes[ctx.text(pos[1])] = ctx.text(pos[2])
    elif sub == "rm" and not has_opt(o, "--cached"):
        for p in pos:
            ctx.delete(p)
    elif sub == "clean" and any(k in ("-f", "--force") for k, _ in o):
        for p in pos or ["."]:
            t = ctx.text(p)
            ctx.delete((ctx.text(work) if t == "." else join_path(ctx.text(work), t)) if work else p)
    elif sub == "rev-parse" and not work and [ctx.text(r) for r in rest] == ["--show-toplevel"]:
        ctx.stdout_literal(".")  # the work tree's top, where the command runs (as `pwd`)
    elif sub == "show":
        for p in pos:
            if ":" in ctx.text(p) and not ctx.text(p).endswith(":"):
                ctx.read(ctx.text(p).split(":", 1)[1])
    elif sub in ("apply", "am"):
        for p in pos:
            ctx.read(p)
    elif sub == "archive":
        for f in opt_values(o, "-o", "--output"):
            ctx.write(f)
    elif sub == "submodule" and len(pos) >= 2 and ctx.text(pos[0]) == "add":
        ctx.read(remote_name(pos[1]))


def h_cloud_copy(ctx: Ctx, args: list[str], name: str) -> None:
    """aws s3 cp|mv|sync|rm, gsutil cp|rsync|rm, gcloud storage cp|mv|rsync|rm, azcopy
    copy|sync|remove, rclone copy|sync|move|delete: remote URLs."""
    words = [ctx.text(a) for a in args]
    if publishes(words):  # e.g. `aws s3api put-bucket-acl --acl public-read`, `gsutil iam ch allUsers:...`
        h_publish(ctx, args, name)
    if name in ("aws", "gcloud"):
        if len(words) < 2 or words[0] != {"aws": "s3", "gcloud": "storage"}[name]:
            if name == "gcloud":  # its other commands: as an unknown program's (a --key-file is read)
                h_unknown(ctx, args, name)
            return
        words = words[1:]
    if not words:
        return
    sub = words[0]
    _, pos = parse_opts(args[len(args) - len(words) + 1:], *OPTIONS["cloud copy"])
    remote = [p for p in pos if "://" in ctx.text(p) or (name == "rclone" and REMOTE_RE.match(ctx.text(p)))]
    if sub in ("rm", "delete", "purge", "rb", "deletefile", "remove"):
        for p in pos:
            ctx.delete(p)
        return
    if sub not in ("cp", "mv", "sync", "rsync", "copy", "move", "copyto", "moveto"):
        return
    if len(pos) < 2:
        return
    dest, srcs = pos[-1], pos[:-1]
    for s in srcs:
        ctx.read(s)
        if dest in remote and s not in remote:
            ctx.payload(s)
    # an upload also writes the remote object: a later read or ACL change of it links back
    ctx.write(dest, tuple(ctx.text(s) for s in srcs))
    if dest in remote:
        ctx.send(dest)


def h_smb(ctx: Ctx, args: list[str], name: str) -> None:
    """smbclient //HOST/SHARE -c 'put LOCAL [REMOTE]; get REMOTE [LOCAL]' (or the same lines
    on stdin): the share is sent to, a put's file is a payload, a get's local file is written."""
    opts, pos = parse_opts(args, *OPTIONS["smbclient"])
    for f in opt_values(opts, "-A", "--authentication-file"):
        ctx.read(f)
    shares = [ctx.text(p) for p in pos if ctx.text(p).startswith(("//", "\\\\"))]
    share = "smb:" + shares[0].replace("\\", "/") if shares else None
    lines = [ctx.text(c) for c in opt_values(opts, "-c", "--command")]
    lit = ctx.stdin_literal()
    for text in lines + ([lit] if lit else []):
        for m in re.finditer(r"(?:^|[;\n])\s*(m?put|m?get)\s+([^;\n]+)", text):
            verb, files = m.group(1), m.group(2).split()
            if verb == "put" and files:
                ctx.read(files[0])
                ctx.payload(files[0])
            elif verb == "mput":
                for f in files:
                    ctx.read(f)
                    ctx.payload(f)
            elif verb == "get" and files:
                ctx.write(files[1] if len(files) > 1 else posixpath.basename(files[0]))
    if share is not None:
        ctx.send(share)


def h_publish(ctx: Ctx, args: list[str], name: str) -> None:
    """aws s3api put-*-acl/put-bucket-policy, gsutil acl/iam ch allUsers, gh repo edit --visibility public,
    az ... --public-access: making a resource public is egress of that resource."""
    words = [ctx.text(a) for a in args]
    if not publishes(words):
        return
    flag = {w: words[i + 1] for i, w in enumerate(words[:-1]) if w.startswith("-")}
    if name == "aws" and "--bucket" in flag:  # s3api: the object (or bucket) as an s3:// URL
        targets = [f"s3://{flag['--bucket']}" + (f"/{flag['--key']}" if "--key" in flag else "")]
    else:
        targets = [w for w in words if "://" in w] or [
            flag[k] for k in ("--name", "-n", "--repo", "--container-name") if k in flag]
    targets += [w for w in words if re.fullmatch(r"[\w.-]+/[\w.-]+", w) and name == "gh"]
    ctx.send("public:" + (targets[0] if targets else name))
    for t in targets:
        ctx.read(t)
        ctx.payload(t)


def h_gh(ctx: Ctx, args: list[str], name: str) -> None:
    """gh gist create FILES, gh release upload/create TAG FILES: files sent to GitHub; gh repo
    edit/create --visibility public: made public."""
    words = [ctx.text(a) for a in args]
    if words[:1] == ["repo"] and publishes(words):
        h_publish(ctx, args, name)
        return
    if words[:2] in (["release", "upload"], ["release", "create"]):
        # gh release upload|create TAG FILES: release assets go to GitHub (`file#label` names one)
        _, pos = parse_opts(args[2:], *OPTIONS["gh release"])
        if len(pos) > 1:
            ctx.send("https://github.com/releases")
        for p in pos[1:]:
            f = ctx.text(p).split("#", 1)[0]
            ctx.read(f)
            ctx.payload(f)
        return
    if words[:2] == ["gist", "create"]:
        _, pos = parse_opts(args[2:], *OPTIONS["gh gist create"])
        ctx.send("https://gist.github.com")
        # `-` (or no file at all) makes the gist from stdin: `cat f | gh gist create -`
        if not pos or any(ctx.text(p) == "-" for p in pos):
            ctx.stdin_payloads()
        for p in pos:
            if ctx.text(p) != "-":
                ctx.read(p)
                ctx.payload(p)
