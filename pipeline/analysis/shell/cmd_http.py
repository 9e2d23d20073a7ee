"""Shell command handler: HTTPie and xh (``http``, ``https``, ``xh``, ``xhs``), the
request-item HTTP clients. Handler signature as in :mod:`pipeline.analysis.shell.cmd_text`.

``http [METHOD] URL [ITEM...]``: items are ``Header:value`` (a header), ``name==value``
(a query parameter), ``name=value`` / ``name:=json`` (body fields), ``name@path`` (a file
uploaded), ``name=@path`` / ``name:=@path`` / ``Header:@path`` (a field or header read
from a file) and, in xh, ``@path`` (the body from a file). The method defaults to POST
when a body item is given (or stdin is piped in), GET otherwise; a URL without a scheme
gets ``http://`` (``https://`` for ``https`` / ``xhs``), ``:3000/x`` is localhost.
"""

from __future__ import annotations

import re

from pipeline.analysis.shell.args import join_path, opt_values, parse_opts, url_basename
from pipeline.analysis.shell.cmd_net import oauth_credentials
from pipeline.analysis.shell.ctx import Ctx
from pipeline.analysis.shell.tables import SEND_METHODS

# options taking a value (HTTPie 3 and xh): auth, output, sessions, TLS, proxies, printing
_SHORT = "aAops"
_LONG = ("auth", "auth-type", "output", "session", "session-read-only", "verify", "cert", "cert-key",
         "cert-key-pass", "timeout", "proxy", "print", "style", "pretty", "format-options", "max-redirects",
         "boundary", "raw", "ssl", "ciphers", "default-scheme", "response-charset", "response-mime",
         "history-print", "unix-socket", "http-version", "resolve", "interface", "bearer")
_METHOD = re.compile(r"[A-Z]+")
# an item: its name, its separator, its value (the separators HTTPie tries, longest first)
_ITEM = re.compile(r"((?:\\.|[^:=@\\])*)(:=@|=@|:@|==|:=|=|:|@)(.*)", re.S)
_BODY_SEPARATORS = ("=", ":=", "@", "=@", ":=@")


def _full_url(url: str, name: str) -> str:
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", url):
        return url
    if url.startswith(":"):  # HTTPie's localhost shorthand
        url = "localhost" + url
    return ("https://" if name in ("https", "xhs") else "http://") + url


def h_httpie(ctx: Ctx, args: list[str], name: str) -> None:
    """HTTPie / xh: the URL is read, or sent to with the body items (files they name, data
    they hold) as payloads; headers, query items and ``--auth`` carry credentials."""
    opts, pos = parse_opts(args, _SHORT, _LONG)
    method = ""
    if len(pos) > 1 and _METHOD.fullmatch(ctx.text(pos[0])):
        method, pos = ctx.text(pos[0]), pos[1:]
    if not pos:
        return
    url, items = pos[0], pos[1:]
    target = _full_url(ctx.text(url), name)
    sending = method in SEND_METHODS
    carried = False
    texts = [ctx.text(i) for i in items]
    own = oauth_credentials([t for t in texts if (m := _ITEM.fullmatch(t)) and m.group(2) == "="])
    for item, text in zip(items, texts):
        m = _ITEM.fullmatch(text)
        if m is None:
            continue
        sep, value = m.group(2), m.group(3)
        if sep in _BODY_SEPARATORS:
            sending = True
        if sep in ("@", "=@", ":=@", ":@"):  # a file's content: uploaded, a field or a header
            ctx.read(value)
            ctx.payload(value)
            carried = True
        elif sep in ("=", ":="):
            ctx.payload(item, literal=True, own=own)
        else:  # a header or a query parameter: how a service takes its own credentials
            carried = ctx.credential(item) or carried
        if not m.group(1) and sep == "@":  # xh's `@file`: the whole body
            sending = True
    for v in opt_values(opts, "-a", "--auth", "--bearer"):
        carried = ctx.credential(v) or carried
    for v in opt_values(opts, "--raw"):
        sending = True
        ctx.payload(v, literal=True)
    ignore_stdin = any(k in ("-I", "--ignore-stdin") for k, _ in opts)
    if not ignore_stdin and (ctx.stdin_literal() is not None or ctx.stdin.resources
                             or ctx.stdin_redirect() is not None):
        sending = True  # a piped or redirected body
        ctx.stdin_payloads()
    word = url if target == ctx.text(url) else target  # the word keeps its substitutions
    (ctx.send if sending or carried else ctx.read)(word)
    outs = opt_values(opts, "-o", "--output")
    if outs:
        ctx.write(outs[-1], (target,))
    elif any(k in ("-d", "--download") for k, _ in opts):
        ctx.write(join_path("", url_basename(target)), (target,))
    else:
        ctx.stdout_resources((target,))
