"""Which environment variables an expression passes on as their own text, for a request's
credentials (URL, headers, auth, cookies, query parameters): through names, f-strings,
concatenation, containers and calls, but not through a call that hides it
(``TEXT_HIDING_*``: ``hmac.new(secret, ...)``, ``jwt.encode(..., secret)``, ``AWS4Auth``: a
signature made with a key does not send the key). Any call not known to hide it passes it
on (``codecs.encode(s, 'rot13')``, a user's own function): missing a send is the worse error.
"""

from __future__ import annotations

import ast
from typing import Protocol

from pipeline.analysis.shell.code_tables import TEXT_HIDING_NAMES, TEXT_HIDING_PREFIXES
from pipeline.analysis.shell.model import Acc
from pipeline.analysis.shell.tables import own_credential


class Reader(Protocol):
    """What the walk asks of the code visitor."""

    direct: dict[str, set[str]]
    acc: Acc

    @staticmethod
    def kw(node: ast.Call, *names: str) -> ast.AST | None: ...

    def qual(self, node: ast.AST) -> str: ...
    def call_reads(self, node: ast.Call) -> list[str]: ...
    def environ_reads(self, node: ast.AST) -> list[str]: ...
    def sources(self, node: ast.AST | None) -> set[str]: ...
    def const(self, node: ast.AST | None) -> str | None: ...


def passed_env(v: Reader, node: ast.AST | None) -> set[str]:
    """The ``env:`` resources whose text ``node``'s value may hold verbatim."""
    out: set[str] = set()
    stack = [node] if node is not None else []
    while stack:
        sub = stack.pop()
        if isinstance(sub, ast.Name):
            out |= v.direct.get(sub.id, set())
            continue
        if isinstance(sub, ast.Call):
            out |= {r for r in v.call_reads(sub) if r.startswith("env:")}
            if not keeps_text(v, sub):
                continue  # a signature, a hash, an object made with it: not its text
            if isinstance(sub.func, ast.Attribute):
                stack.append(sub.func.value)  # "...".join(x), secret.encode()
            stack.extend(sub.args)
            stack.extend(k.value for k in sub.keywords)
            continue
        if isinstance(sub, (ast.Attribute, ast.Subscript)):
            found = [r for r in v.environ_reads(sub) if r.startswith("env:")]
            if found:
                out |= set(found)
                continue
        if isinstance(sub, ast.Lambda):
            continue
        stack.extend(ast.iter_child_nodes(sub))
    return out


def keeps_text(v: Reader, call: ast.Call) -> bool:
    """Whether ``call``'s result may hold its arguments' (or receiver's) text."""
    name = v.qual(call.func)
    return not (name.startswith(TEXT_HIDING_PREFIXES) or name.split(".")[-1] in TEXT_HIDING_NAMES)


def oauth_env(v: Reader, body: ast.AST) -> set[str]:
    """The ``env:`` resources a request body passes as an OAuth token request's own
    credentials: a dict with a ``grant_type`` key whose credential fields
    (``OAUTH_CREDENTIAL_FIELDS``: ``client_secret``, ``refresh_token``...) hold variables
    named for them, and that no other value of the dict carries."""
    if not isinstance(body, ast.Dict):
        return set()
    keys = [v.const(k) if k is not None else None for k in body.keys]
    if "grant_type" not in keys:
        return set()
    own: set[str] = set()
    other: set[str] = set()
    for key, value in zip(keys, body.values):
        named = {r for r in passed_env(v, value) if key is not None and own_credential(key, r)}
        own |= named
        other |= v.sources(value) - named
    return own - other
