"""Argument helpers shared by the per-command handlers of the shell analyser.

Option parsing (which options take a value comes from :mod:`pipeline.analysis.shell.tables`),
path-looking words, remote ``[user@]host:path`` targets, SQL effects, publish words.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

from pipeline.analysis.shell.ctx import Ctx
from pipeline.analysis.shell.tables import EXTENSIONS

Handler = Callable[["Ctx", list[str], str], None]

PATHY = re.compile(r"^(?:/|~|\.{1,2}/|\.[A-Za-z0-9_])|/")
REMOTE_RE = re.compile(r"^(?:(?P<user>[^@/:\s]+)@)?(?P<host>\[[^\]]+\]|[A-Za-z0-9][A-Za-z0-9.-]*):(?!//)(?P<path>.*)$")
MODE_RE = re.compile(r"^(?:[0-7]{3,4}|[ugoa]*(?:[-+=][rwxXstugo]*)+(?:,[ugoa]*(?:[-+=][rwxXstugo]*)+)*)$")
SQL_DESTROY = re.compile(r"(?i)\b(drop\s+(table|database|schema)|delete\s+from|truncate)\b")
SQL_WRITE = re.compile(r"(?i)\b(insert\s+into|update\s+\w+\s+set|create\s+table|alter\s+table|replace\s+into)\b")


def looks_like_path(text: str) -> bool:
    """A word that names a file: has a slash, starts with ~ . /, or ends in a known extension."""
    if not text or text.startswith("-") or "=" in text or "://" in text or "\n" in text:
        return False
    if re.search(r"[(){}]| / ", text):
        return False  # code or prose, not a file name
    if PATHY.search(text):
        return True
    ext = text.rsplit(".", 1)[-1].lower() if "." in text else ""
    return ext in EXTENSIONS


def parse_opts(args: list[str], short: str = "", long: tuple[str, ...] = (),
               stop: bool = False) -> tuple[list[tuple[str, str | None]], list[str]]:
    """Split ``args`` into (option, value) pairs and positionals.

    ``short``: letters whose option takes a value (attached or next word); ``long``: long
    option names (without ``--``) taking a value; ``stop``: options end at the first
    positional (wrappers and interpreters)."""
    opts: list[tuple[str, str | None]] = []
    pos: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            pos.extend(args[i + 1:])
            break
        if a.startswith("--") and len(a) > 2:
            key, eq, val = a.partition("=")
            if eq:
                opts.append((key, val))
            elif key[2:] in long and i + 1 < len(args):
                opts.append((key, args[i + 1]))
                i += 1
            else:
                opts.append((key, None))
        elif a.startswith("-") and len(a) > 1:
            for j in range(1, len(a)):
                if a[j] in short:
                    val = a[j + 1:]
                    if not val and i + 1 < len(args):
                        val = args[i + 1]
                        i += 1
                    opts.append(("-" + a[j], val))
                    break
                opts.append(("-" + a[j], None))
        else:
            if stop:
                pos.extend(args[i:])
                break
            pos.append(a)
        i += 1
    return opts, pos


def opt_values(opts: list[tuple[str, str | None]], *names: str) -> list[str]:
    return [v for k, v in opts if k in names and v is not None]


def has_opt(opts: list[tuple[str, str | None]], *names: str) -> bool:
    return any(k in names for k, _ in opts)


def join_path(d: str, name: str) -> str:
    return name if d in ("", ".") else d.rstrip("/") + "/" + name


def copy_pairs(originals: list[str], dest: str, into: bool, symbolic: bool = False) -> list[tuple[str, str]]:
    """The (copy, original) pairs of copying ``originals`` to ``dest`` (ShellAnalysis.copies):
    ``dest`` itself for one original unless it is a folder (``into``), and DEST/name for
    each (DEST may be a folder: `cp x.sh /usr/local/bin`). A ``symbolic`` link's relative
    original is read from the link's folder (`ln -s ../x.sh bin/run`: x.sh)."""
    def original_of(original: str, link: str) -> str:
        folder = posixpath.dirname(link)
        relative = symbolic and folder and not original.startswith(("/", "~"))
        return posixpath.normpath(posixpath.join(folder, original)) if relative else original

    pairs = []
    for o in originals:
        if o == dest:
            continue
        if not into and len(originals) == 1:
            pairs.append((dest, original_of(o, dest)))
        if base := posixpath.basename(o.rstrip("/")):
            pairs.append((join_path(dest, base), original_of(o, join_path(dest, base))))
    return pairs


def url_basename(url: str) -> str:
    path = re.sub(r"^[a-z]+://[^/]*", "", url).split("?")[0].split("#")[0]
    return posixpath.basename(path) or "index.html"


def sql_effects(ctx: Ctx, sql: str, resource: str) -> None:
    if SQL_DESTROY.search(sql):
        ctx.delete(resource)
    if SQL_WRITE.search(sql):
        ctx.write(resource)


def remote_target(text: str) -> tuple[str, str] | None:
    if text.startswith(("/", "./", "../", "~")):
        return None
    m = re.match(r"^(?:scp|sftp|rsync|ssh)://(?:[^@/]+@)?([^/:]+)(?::\d+)?(/.*)?$", text)
    if m:
        return m.group(1), m.group(2) or ""
    m = REMOTE_RE.match(text)
    if m:
        return m.group("host").strip("[]"), m.group("path").lstrip(":")
    return None
PUBLIC_WORDS = re.compile(r"(?i)^(?:--acl=?)?public-read(?:-write)?$|^allusers(?::\w+)?$|^allauthenticatedusers|"
                           r"^--visibility=?public$|^public$|^--public-access=?(?:blob|container)$")


def publishes(words: list[str]) -> bool:
    """Whether a cloud/git-hosting command grants public access (ACL, IAM, visibility)."""
    return any(PUBLIC_WORDS.match(w) for w in words)
