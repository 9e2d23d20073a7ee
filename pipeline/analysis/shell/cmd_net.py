"""Shell command handlers: network clients (curl, wget, nc, socat, ftp, mail, DNS probes;
the ssh family is in :mod:`pipeline.analysis.shell.cmd_ssh`). Handler signature as in
:mod:`pipeline.analysis.shell.cmd_text`.
"""

from __future__ import annotations

import re

from pipeline.analysis.shell.args import has_opt, join_path, opt_values, parse_opts, url_basename
from pipeline.analysis.shell.tables import (
    CURL_ARG_LONG, CURL_ARG_SHORT, CURL_DATA, OAUTH_CREDENTIAL_FIELDS, OPTIONS, SEND_METHODS, own_credential
)
from pipeline.analysis.shell.ctx import Ctx
from pipeline.analysis.shell.model import Flow


_GRANT = re.compile(r'(?:^|[&{,\s])"?grant_type"?\s*[=:]')
_OAUTH_FIELD = re.compile(r'(?:^|[&{,\s])"?(' + "|".join(OAUTH_CREDENTIAL_FIELDS)
                          + r')"?\s*[=:]\s*"?\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))"?\s*(?=$|[&,}])')
_VAR = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")


def oauth_credentials(texts: list[str]) -> frozenset[str]:
    """The ``env:`` resources a request body (its data values, joined as curl joins them)
    passes as an OAuth token request's own credentials: a variable named for the field
    (:func:`own_credential`) that is the whole value of a credential field
    (``client_secret=$CLIENT_SECRET``, ``"refresh_token": "$REFRESH_TOKEN"``), in a body
    that has a ``grant_type``, and nowhere else in the body."""
    body = "&".join(texts)
    if not _GRANT.search(body):
        return frozenset()
    fields = [(f, a or b) for f, a, b in _OAUTH_FIELD.findall(body) if own_credential(f, a or b)]
    uses = [a or b for a, b in _VAR.findall(body)]
    names = [n for _, n in fields]
    return frozenset(f"env:{n}" for n in set(names) if uses.count(n) == names.count(n))


def h_curl(ctx: Ctx, args: list[str], name: str) -> None:
    """curl: GET URL = read; -d/-F/-T/POST/PUT = send (payloads from @file, -T file, stdin)."""
    opts, pos = parse_opts(args, CURL_ARG_SHORT, CURL_ARG_LONG)
    urls = pos + opt_values(opts, "--url")
    sending = False
    query = has_opt(opts, "-G", "--get")  # the data goes into the URL's query
    signed = has_opt(opts, "--aws-sigv4")  # -u's secret signs the request and is not sent
    carried = False
    own = oauth_credentials([ctx.text(v) for k, v in opts if v is not None and (
        k in CURL_DATA or k in ("--data-raw", "--data-urlencode"))])
    for k, v in opts:
        if v is None:
            continue
        t = ctx.text(v)
        if k in CURL_DATA or k in ("--data-raw", "--data-urlencode", "-F", "--form", "--form-string"):
            sending = True
            ref = None
            if k in CURL_DATA and t.startswith("@"):
                ref = t[1:]
            elif k == "--data-urlencode" and re.match(r"^[^=]*@", t):
                ref = t.split("@", 1)[1]
            elif k in ("-F", "--form") and re.match(r"^[^=]+=[@<]", t):
                ref = t.split("=", 1)[1][1:].split(";")[0]
            if ref == "-":
                ctx.stdin_payloads()
            elif ref:
                ctx.read(ref)
                ctx.payload(ref)
            else:
                ctx.payload(v, literal=True, own=own)
                if query and ctx.credential(v):  # `-G -d "k=$KEY"`: the URL's `?k=...`, as a URL's own variables
                    carried = True
        elif k in ("-T", "--upload-file"):
            sending = True
            if t in ("-", "."):
                ctx.stdin_payloads()
            else:
                ctx.read(v)
                ctx.payload(v)
        elif k in ("-X", "--request"):
            if t.upper() in SEND_METHODS:
                sending = True
            if t.upper() in ("DELETE", "PUT", "PATCH"):  # remote mutation: a destructive sink
                for u in urls:
                    ctx.delete(u)
        elif k in ("-K", "--config", "--netrc-file", "-E", "--cert", "--key"):
            ctx.read(v)
        elif k in ("-x", "--proxy", "--preproxy", "--socks4", "--socks4a", "--socks5", "--socks5-hostname",
                   "--connect-to", "--resolve"):
            ctx.acc.add("sends", ctx.text(v))  # where the request really goes
        elif k in ("-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--stderr"):
            ctx.write(v)
        elif k in ("-u", "--user") and signed:
            continue
        elif k in ("-H", "--header", "-u", "--user", "-b", "--cookie", "--oauth2-bearer", "-A", "--user-agent",
                   "-e", "--referer"):
            carried = ctx.credential(v) or carried  # how a service takes its own credentials: not payload
    if query:
        sending = False
    sending = sending or carried  # local data in a header or -G's query goes out with a GET too
    for u in urls:
        (ctx.send if sending else ctx.read)(u)
    outdir = (opt_values(opts, "--output-dir") or [""])[-1]
    outs = [o for o in opt_values(opts, "-o", "--output") if ctx.text(o) != "-"]
    url_texts = tuple(ctx.text(u) for u in urls)
    for o in outs:
        ctx.write(join_path(ctx.text(outdir), ctx.text(o)) if outdir else o, url_texts)
    if has_opt(opts, "-O", "--remote-name", "--remote-name-all"):
        for u in url_texts:
            ctx.write(join_path(ctx.text(outdir), url_basename(u)), (u,))
    elif not outs:
        ctx.stdout_resources(url_texts)


def h_wget(ctx: Ctx, args: list[str], name: str) -> None:
    """wget URL [-O FILE|-O-] [--post-data|--post-file]."""
    opts, pos = parse_opts(args, *OPTIONS["wget"])
    sending = False
    own = oauth_credentials([ctx.text(v) for k, v in opts if v is not None and k in ("--post-data", "--body-data")])
    for k, v in opts:
        if v is None:
            continue
        if k in ("--post-data", "--body-data"):
            sending = True
            ctx.payload(v, literal=True, own=own)
        elif k in ("--post-file", "--body-file"):
            sending = True
            ctx.read(v)
            ctx.payload(v)
        elif k == "--method" and ctx.text(v).upper() in SEND_METHODS:
            sending = True
        elif k in ("-i", "--input-file", "--load-cookies", "--config", "--certificate", "--private-key"):
            ctx.read(v)
        elif k in ("-o", "-a", "--output-file", "--append-output", "--save-cookies"):
            ctx.write(v)
        elif k in ("--header", "--user", "--password", "--http-user", "--http-password"):
            sending = ctx.credential(v) or sending
    url_texts = tuple(ctx.text(u) for u in pos)
    for u in pos:
        (ctx.send if sending else ctx.read)(u)
    outs = opt_values(opts, "-O", "--output-document")
    prefix = ctx.text((opt_values(opts, "-P", "--directory-prefix") or [""])[-1])
    if outs and ctx.text(outs[-1]) == "-":
        ctx.stdout_resources(url_texts)
    elif outs:
        ctx.write(outs[-1], url_texts)
    elif not has_opt(opts, "-r", "--recursive", "-m", "--mirror", "--spider"):
        for u in url_texts:
            ctx.write(join_path(prefix, url_basename(u)), (u,))


def h_nc(ctx: Ctx, args: list[str], name: str) -> None:
    """nc/ncat/netcat/telnet HOST PORT: send tcp://host:port; stdin is the payload."""
    opts, pos = parse_opts(args, *(OPTIONS["nc"] if name != "telnet" else OPTIONS["telnet"]))
    for prog in opt_values(opts, "-e", "--exec"):
        ctx.execute(prog)
    for cmd in opt_values(opts, "-c", "--sh-exec"):
        ctx.run_text(cmd)
    for proxy in opt_values(opts, "-x", "--proxy"):  # where the connection really goes
        ctx.send(f"tcp://{ctx.text(proxy)}")
    if has_opt(opts, "-l", "--listen"):
        return
    if pos:
        host = ctx.text(pos[0])
        peer = f"tcp://{host}:{ctx.text(pos[1])}" if len(pos) > 1 else host
        ctx.send(peer)
        ctx.stdin_payloads()
        if opt_values(opts, "-e", "-c", "--exec", "--sh-exec", "--lua-exec"):
            # a program whose stdin is the connection (a reverse shell): the peer's bytes run
            ctx.acc.add("executes", peer)


def h_socat(ctx: Ctx, args: list[str], name: str) -> None:
    """socat ADDR ADDR: TCP:host:port sends, EXEC:/SYSTEM: run, FILE:/OPEN: read, CREATE: write."""
    addrs = [ctx.text(a) for a in args if not ctx.text(a).startswith("-") or ctx.text(a) == "-"]
    peers: list[str] = []
    for a in addrs:
        kind, _, rest = a.partition(":")
        kind = kind.upper()
        if kind in ("TCP", "TCP4", "TCP6", "TCP-CONNECT", "UDP", "UDP4", "UDP-SENDTO", "OPENSSL", "SSL",
                    "UDP-CONNECT", "OPENSSL-CONNECT", "SOCKS4", "SOCKS4A", "PROXY"):
            peers.append(f"tcp://{rest.split(',')[0]}")
            ctx.send(peers[-1])
    for a in addrs:
        kind, _, rest = a.partition(":")
        kind, target = kind.upper(), rest.split(",")[0]
        if kind in ("EXEC", "SYSTEM"):
            # the program reads the connection: a shell given no script runs what the peer
            # sends (h_shell's stdin_program, as for `nc h p | sh`); a client does not
            ctx.run_text_literal(target, Flow(resources=tuple(peers)) if peers else None)
        elif kind in ("FILE", "OPEN", "GOPEN"):
            ctx.read(target)
            if peers:
                ctx.payload(target)
        elif kind == "CREATE":
            ctx.write(target)
        elif a in ("-", "STDIO", "STDIN") and peers:
            ctx.stdin_payloads()


def h_ftp(ctx: Ctx, args: list[str], name: str) -> None:
    """ftp/sftp/lftp HOST: send host; `put FILE` lines of the batch are payloads."""
    opts, pos = parse_opts(args, *(OPTIONS["sftp"] if name != "ftp" else OPTIONS["ftp"]))
    batches = [ctx.text(b) for b in opt_values(opts, "-e")]
    for b in opt_values(opts, "-b", "-f"):
        ctx.read(b)
    for f in opt_values(opts, "-i"):
        ctx.read(f)
    for p in pos:
        t = ctx.text(p)
        m = re.match(r"^(?:[a-z]+://)?(?:[^@/]+@)?([^:/\s]+)", t)
        if m and not re.fullmatch(r"\d+", t):
            ctx.send(m.group(1))
    lit = ctx.stdin_literal()
    for text in batches + ([lit] if lit else []):
        for m in re.finditer(r"(?m)(?:^|;)\s*m?put\s+(?:-\S+\s+)*(\S+)", text):
            ctx.read(m.group(1))
            ctx.payload(m.group(1))


def h_mail(ctx: Ctx, args: list[str], name: str) -> None:
    """mail/mailx/mutt/sendmail RCPT...: send mailto:RCPT; -a FILE and stdin are payloads."""
    opts, pos = parse_opts(args, *(OPTIONS["mail"] if name != "sendmail" else OPTIONS["sendmail"]))
    for f in opt_values(opts, "-a", "-A", "--attach"):
        ctx.read(f)
        ctx.payload(f)
    for r in pos + opt_values(opts, "-c", "-b"):
        t = ctx.text(r)
        if "@" in t or not t.startswith("-"):
            ctx.send("mailto:" + t.strip("<>"))
    ctx.stdin_payloads()


def h_dns(ctx: Ctx, args: list[str], name: str) -> None:
    """ping/dig/host/nslookup/traceroute/whois HOST: the name leaves the machine."""
    opts, pos = parse_opts(args, *OPTIONS["dns"])
    for p in pos:
        t = ctx.text(p)
        if re.fullmatch(r"[A-Za-z0-9@][\w.@:-]*\.[\w.-]+|\d+\.\d+\.\d+\.\d+", t) or ctx.dynamic(p):
            ctx.send(t.lstrip("@"))
            if ctx.dynamic(p):
                ctx.payload(p, literal=True)
    if name in ("ping", "ping6"):
        for pattern in opt_values(opts, "-p"):  # `ping -p HEX`: the packets carry these bytes
            if ctx.dynamic(pattern):
                ctx.payload(pattern, literal=True)
