"""Shell command handlers: programs that serve a folder over HTTP (``python3 -m http.server``,
``php -S``, ``ruby -run -e httpd``, ``busybox httpd``, ``http-server``, ``twistd web``...:
table ``FOLDER_SERVERS`` of :mod:`pipeline.analysis.shell.tables`).

Serving DIR on an address others reach is sending what is in it, for as long as it runs:
DIR is read and is a payload (so the folder-contents labels see ``DIR/*``, a home folder's
known secrets are sent too, and what the command wrote into DIR goes with it: see
:meth:`pipeline.analysis.shell.ctx.Ctx.add_payload`), and the destination is
``serve://ADDR:PORT``, ``*`` for every interface (the default, and ``0.0.0.0``/``::``). An
explicit loopback address (``--bind 127.0.0.1``, ``php -S localhost:8000``) is a send to
this machine, which the sink rules do not count as egress.

Handler signature as in :mod:`pipeline.analysis.shell.cmd_text`.
"""

from __future__ import annotations

import re

from pipeline.analysis.shell.args import opt_values, parse_opts
from pipeline.analysis.shell.ctx import Ctx
from pipeline.analysis.shell.tables import FOLDER_SERVERS

__all__ = ["serve", "interp_serves", "h_serve", "listen_address"]

_EVERY = {"", "*", "0.0.0.0", "::", "[::]"}


def listen_address(value: str) -> tuple[str | None, str | None]:
    """(host, port) of a listening address as servers take it: ``ADDR``, ``ADDR:PORT``,
    ``[IP:]PORT``, ``[::1]:PORT``, ``tcp://ADDR:PORT`` or Twisted's
    ``tcp:PORT:interface=ADDR``; None where the value does not say."""
    if value.startswith("tcp:") and not value.startswith("tcp://"):  # Twisted endpoint
        parts = value.split(":")
        iface = next((p.split("=", 1)[1] for p in parts if p.startswith("interface=")), None)
        return iface, parts[1] if len(parts) > 1 and parts[1].isdigit() else None
    value = re.sub(r"^[a-z]+://", "", value).rstrip("/")
    if value.isdigit():
        return None, value
    m = re.fullmatch(r"\[([^\]]*)\](?::(\d+))?|([^:]*):(\d+)", value)
    if m:
        return (m.group(1), m.group(2)) if m.group(1) is not None else (m.group(3), m.group(4))
    return value, None


def serve(ctx: Ctx, kind: str, args: list[str]) -> None:
    """``args`` of the server ``kind`` (a key of ``FOLDER_SERVERS``): its folder is sent to
    where it listens."""
    spec = FOLDER_SERVERS[kind]
    opts, pos = parse_opts(args, spec.short, spec.long)
    folders = opt_values(opts, *spec.folder) if spec.folder else []
    host: str | None = None
    port: str | None = None
    for value in opt_values(opts, *spec.bind):
        found_host, found_port = listen_address(ctx.text(value))
        host, port = found_host if found_host is not None else host, found_port or port
    for value in opt_values(opts, *spec.port):
        port = ctx.text(value)
    if pos and spec.positional == "folder" and not folders:
        folders = [pos[0]]
    elif pos and spec.positional == "port":
        port = ctx.text(pos[0])
    shown = "*" if host is None or host in _EVERY else host
    shown = f"[{shown}]" if ":" in shown else shown
    ctx.send(f"serve://{shown}" + (f":{port}" if port else ""))
    folder = folders[-1] if folders else "."
    ctx.read(folder)
    ctx.payload(folder)


def interp_serves(ctx: Ctx, name: str, args: list[str]) -> bool:
    """``php -S ADDR:PORT [-t DIR]`` and ``ruby -run -e httpd [DIR] [-p PORT]``: serve the
    folder (True) rather than run code."""
    words = [ctx.text(a) for a in args]
    if name == "php" and any(w == "-S" or (w.startswith("-S") and len(w) > 2) for w in words):
        serve(ctx, "php -S", args)
        return True
    if name == "ruby" and "-run" in words and "-e" in words:
        at = words.index("-e")
        if at + 1 < len(words) and words[at + 1] == "httpd":
            rest = args[at + 2:]
            serve(ctx, "ruby httpd", rest[1:] if rest and ctx.text(rest[0]) == "--" else rest)
            return True
    return False


def h_serve(ctx: Ctx, args: list[str], name: str) -> None:
    """http-server, serve, darkhttpd; ``busybox httpd`` (another applet runs as its own
    command); ``twistd [options] web ...`` (another plugin reads its path-like arguments)."""
    if name == "busybox":
        if args and ctx.text(args[0]) == "httpd":
            serve(ctx, "busybox httpd", args[1:])
        elif args:
            ctx.run_argv(args)
        return
    if name == "twistd":
        words = [ctx.text(a) for a in args]
        if "web" in words:
            serve(ctx, "twistd web", args[words.index("web") + 1:])
        return
    serve(ctx, name, args)
