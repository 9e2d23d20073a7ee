"""Network calls in Python code, for the code-step analyser
(:mod:`pipeline.analysis.shell.code_py`): HTTP clients (requests, httpx, aiohttp, urllib3),
urllib, sockets (a UDP ``sendto`` goes to ``udp://host:port``), SMTP, FTP, DNS lookups (a
name built from data sends it to the name's domain). A request's URL, headers, auth,
cookies and query parameters carry its credentials
(:mod:`pipeline.analysis.shell.code_credentials`); its other arguments are the data it sends.
"""

from __future__ import annotations

import ast

from pipeline.analysis.shell.code_credentials import Reader, oauth_env, passed_env
from pipeline.analysis.shell.code_tables import DNS_LOOKUPS, HTTP_NOT_BODY, HTTP_READ, HTTP_SEND


def network(v: Reader, node: ast.Call, name: str, attr: str, a: list[str | None]) -> None:
    """What a call to an HTTP client, urllib, a socket, SMTP or FTP sends and reads;
    ``a``: its positional arguments' constant values."""
    url_node = node.args[0] if node.args else v.kw(node, "url")
    if attr == "request" and len(node.args) > 1:
        method, url_node = (a[0] or "").upper(), node.args[1]
        attr = method.lower() if method else attr
        body = node.args[2] if len(node.args) > 2 else v.kw(node, "body")
        if method in ("POST", "PUT", "PATCH") and body is not None:
            # http.client's conn.request('POST', '/path', body=...): the connection's host
            # (HTTPSConnection('host'), below) is sent the body, whatever the client's name
            for r in v.sources(body):
                v.acc.add("payloads", r)
    url = v.const(url_node)
    http_lib = name.split(".")[0] in ("requests", "httpx", "aiohttp", "urllib3", "session", "s", "client")
    # sftp.put('~/.ssh/id_rsa', '/tmp/k') (paramiko, pysftp): a local path first, no URL
    sftp_put = (attr == "put" and len(node.args) >= 2 and url is not None and "://" not in url
                and url.startswith(("/", "~", ".")))
    http_lib = http_lib and not sftp_put
    target = url or ("${%s}" % ast.unparse(url_node) if url_node is not None else "${url}")
    if http_lib and attr in HTTP_SEND | HTTP_READ or attr in ("urlopen", "Request") and url_node is not None:
        # a request's URL, headers, auth, cookies and query: the environment variables they
        # carry are its credentials; any other data in them (a file's content) is sent, by
        # a GET too (as a shell URL carrying local data, pipeline/analysis/shell/ctx.py)
        carried: set[str] = set()
        for x in (url_node, *(v.kw(node, k) for k in ("headers", "auth", "cookies", "params"))):
            for r in passed_env(v, x):
                v.acc.add("credentials", r)
            carried |= {r for r in v.sources(x) if not r.startswith("env:")}
        proxies = v.kw(node, "proxies", "proxy")
        if proxies is not None:  # where the request really goes
            v.acc.add("sends", v.const(proxies) or "${%s}" % ast.unparse(proxies))
        if carried:
            v.acc.add("sends", target)
            for r in sorted(carried):
                v.acc.add("payloads", r)
    if attr in HTTP_SEND and (url and "://" in url or http_lib) and not sftp_put:
        v.acc.add("sends", target)
        others = [x for x in node.args[1:]] + [k.value for k in node.keywords if k.arg not in HTTP_NOT_BODY]
        for x in others:
            own = oauth_env(v, x)  # a token request's client_secret: its own credential
            for r in v.sources(x):
                v.acc.add("credentials" if r in own else "payloads", r)
            c = v.const(x)
            if c:
                v.acc.add("payloads", "data:" + c[:256])
        if attr in ("delete", "put", "patch") and url:  # remote mutation: a destructive sink
            v.acc.add("deletes", url)
    elif attr in HTTP_READ and http_lib and url is None and url_node is not None and attr != "get":
        v.acc.add("reads", "${%s}" % ast.unparse(url_node))
    elif attr == "get" and name.split(".")[0] in ("requests", "httpx") and url is None and url_node is not None:
        v.acc.add("reads", "${%s}" % ast.unparse(url_node))
    elif attr == "Request" and url:
        data = node.args[1] if len(node.args) > 1 else v.kw(node, "data")
        method = (v.const(v.kw(node, "method")) or "").upper()
        if data is not None or method in ("POST", "PUT", "PATCH", "DELETE"):
            v.acc.add("sends", url)
            for r in v.sources(data):
                v.acc.add("payloads", r)
        else:
            v.acc.add("reads", url)
    elif attr == "urlopen" and url_node is not None and (len(node.args) > 1 or v.kw(node, "data") is not None):
        if url:
            v.acc.add("sends", url)
        for r in v.sources(node.args[1] if len(node.args) > 1 else v.kw(node, "data")):
            v.acc.add("payloads", r)
    elif attr in ("HTTPConnection", "HTTPSConnection") and a and a[0]:
        v.acc.add("sends", a[0])
    elif attr in ("put", "upload_file", "upload_fileobj") and not http_lib and len(node.args) >= 2:
        # paramiko's sftp.put(local, remote), boto3's s3.upload_file(local, bucket, key):
        # the local file is sent (a queue's put(item) has one argument)
        local = v.const(node.args[0])
        if attr == "upload_file" and len(node.args) >= 3:
            bucket, key = v.const(node.args[1]), v.const(node.args[2])
            v.acc.add("sends", f"s3://{bucket or '${bucket}'}/{key or ''}")
        if local and (attr != "put" or local.startswith(("/", "~", "."))):
            v.acc.add("reads", local)
            v.acc.add("payloads", local)
        for r in v.sources(node.args[0]):
            v.acc.add("payloads", r)
    elif attr in ("connect", "create_connection", "connect_ex") and node.args:
        target = node.args[0]
        if isinstance(target, ast.Tuple) and len(target.elts) >= 2:
            if v.const(target.elts[0]):
                v.acc.add("sends", _address("tcp", v, target))
        elif a and a[0] and not a[0].startswith(("/", ".")) and ":" not in a[0] and "." in a[0]:
            v.acc.add("sends", a[0])  # paramiko / ftplib style connect(host)
    elif attr in ("send", "sendall", "sendto", "sendmail", "send_message", "storbinary", "storlines",
                  "sendfile"):
        if attr == "sendmail" and len(node.args) > 1:
            to = v.const(node.args[1])
            if to:
                v.acc.add("sends", "mailto:" + to)
        data = node.args
        if attr == "sendto" and len(node.args) > 1 and isinstance(node.args[-1], ast.Tuple):
            v.acc.add("sends", _address("udp", v, node.args[-1]))  # a datagram to (host, port)
            data = node.args[:-1]
        for x in data:
            for r in v.sources(x):
                v.acc.add("payloads", r)
    elif attr in ("SMTP", "SMTP_SSL", "FTP", "FTP_TLS", "Telnet") and a and a[0]:
        v.acc.add("sends", a[0])
    elif name in DNS_LOOKUPS or attr in ("resolve", "query") and "resolver" in name.lower():
        lookup(v, node)


def _address(scheme: str, v: Reader, target: ast.Tuple) -> str:
    """``scheme://host:port`` of a socket address tuple (unknown parts as ``${expr}`` / ``?``)."""
    host_node, port = target.elts[0], target.elts[1]
    host = v.const(host_node) or "${%s}" % ast.unparse(host_node)
    port_s = str(port.value) if isinstance(port, ast.Constant) else "?"
    return f"{scheme}://{host}:{port_s}"


def lookup(v: Reader, node: ast.Call) -> None:
    """A DNS lookup: the name leaves the machine, to the servers of its domain. A name
    built from local data (``b32encode(key)[:60] + '.ns.example'``) sends that data to
    them (as ``dig $c.x.example.net`` in the shell analyser); the destination is the
    constant domain it ends with (``ns.example``). A name with no constant domain (a host
    read from a config) is a lookup of that host: a send, no payload."""
    name = node.args[0] if node.args else v.kw(node, "host", "hostname", "qname")
    if name is None:
        return
    const = v.const(name)
    if const is not None:
        v.acc.add("sends", const)
        return
    tail = _suffix(v, name)
    domain = tail[1:] if tail.startswith(".") else tail.partition(".")[2]
    if "." not in domain:  # a host read from somewhere (a config's db host): a lookup, no data sent
        v.acc.add("sends", "${%s}" % ast.unparse(name))
        return
    v.acc.add("sends", domain)
    for r in v.sources(name):  # data under a fixed domain: the exfiltration shape
        v.acc.add("payloads", r)


def _suffix(v: Reader, node: ast.AST) -> str:
    """The constant text an expression's value ends with (``d + '.ns.example'``,
    ``f'{d}.ns.example'``, ``'{}.ns.example'.format(d)``)."""
    const = v.const(node)
    if const is not None:
        return const
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        right = v.const(node.right)
        return _suffix(v, node.left) + right if right is not None else _suffix(v, node.right)
    if isinstance(node, ast.JoinedStr):
        tail = []
        for part in reversed(node.values):
            if isinstance(part, ast.FormattedValue):
                break
            tail.append(v.const(part) or "")
        return "".join(reversed(tail))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        template = v.const(node.func.value)
        return template.rpartition("}")[2] if template else ""
    return ""
