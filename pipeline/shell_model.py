"""Result and accumulator types of the shell analyser, and resource-name normalisation.

:class:`ShellAnalysis` is what the analyser returns for one command or code step;
:class:`Acc` collects it; :class:`Flow` is what one pipeline stage hands the next. The
regular expressions that recognise variables and assignments in raw words live here too,
beside the limits that bound the work per command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.shell_words import restore_private

__all__ = ["ShellAnalysis", "FIELDS", "Acc", "Flow", "normalise", "MAX_COMMAND_CHARS", "MAX_DEPTH",
           "MAX_PRODUCT", "VAR_RE", "ASSIGN_RE", "FIXED_VARS", "DEV_TCP"]

MAX_COMMAND_CHARS = 100_000
MAX_DEPTH = 6
MAX_PRODUCT = 256  # loop-variable combinations tried exhaustively; beyond, each value once
VAR_RE = re.compile(r"\$(?:\{[#!]?([A-Za-z_]\w*|\d+|[@*#?$!-])([^}]*)\}|([A-Za-z_]\w*)|([0-9@*#?$!-]))")
ASSIGN_RE = re.compile(r"^([A-Za-z_]\w*)(\[[^\]]*\])?\+?=(.*)$", re.S)
_NOT_RESOURCES = {"", "-", "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty"}
_PSEUDO_RE = re.compile(r"^[a-z][a-z0-9+.-]*:")
FIXED_VARS = {"HOME": "~", "PWD": "."}
DEV_TCP = re.compile(r"^/dev/(tcp|udp)/([^/]+)/(\d+)$")


@dataclass(frozen=True)
class ShellAnalysis:
    """Resources one shell command (or code step) touches. Tuples keep first-seen order."""

    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    executes: tuple[str, ...] = ()
    sends: tuple[str, ...] = ()
    payloads: tuple[str, ...] = ()
    deletes: tuple[str, ...] = ()
    opaque: bool = False
    opaque_reason: str | None = None


FIELDS = ("reads", "writes", "executes", "sends", "payloads", "deletes")


def normalise(resource: str) -> str | None:
    """Canonical resource name, or None when it is not a resource (``-``, /dev/null...)."""
    r = restore_private(resource).strip()
    if r in _NOT_RESOURCES or r.startswith("/dev/fd/") or r.startswith("/proc/self/fd/"):
        return None
    if "://" in r or _PSEUDO_RE.match(r):
        return r
    r = re.sub(r"/{2,}", "/", r)
    while r.startswith("./"):
        r = r[2:]
    if len(r) > 1 and r.endswith("/"):
        r = r.rstrip("/") or "/"
    return r or "."


class Acc:
    """Mutable accumulator behind one ShellAnalysis."""

    def __init__(self) -> None:
        self.lists: dict[str, list[str]] = {f: [] for f in FIELDS}
        self.reason: str | None = None

    def add(self, kind: str, resource: str) -> None:
        """Record ``resource`` under field ``kind`` (normalised, deduplicated)."""
        r = normalise(resource)
        if r is not None and r not in self.lists[kind]:
            self.lists[kind].append(r)

    def fail(self, reason: str) -> None:
        """Mark opaque; the first reason wins."""
        if self.reason is None:
            self.reason = reason

    def merge(self, other: ShellAnalysis) -> None:
        """Fold a nested analysis into this one."""
        for f in FIELDS:
            for r in getattr(other, f):
                self.add(f, r)
        if other.opaque:
            self.fail(other.opaque_reason or "nested command cannot be analysed")

    def result(self) -> ShellAnalysis:
        """Freeze into a ShellAnalysis."""
        return ShellAnalysis(*(tuple(self.lists[f]) for f in FIELDS),
                             opaque=self.reason is not None, opaque_reason=self.reason)


@dataclass
class Flow:
    """What a command writes to stdout, as far as the next pipeline stage cares.

    ``resources``: files/URLs whose content flows on; ``literal``: known text (echo,
    here-doc); ``items``: names it lists (find, grep -l) for xargs; ``transformed``: the
    data was decoded or rewritten (base64 -d, tr, sed). All empty: output of a program
    we cannot follow."""

    resources: tuple[str, ...] = ()
    literal: str | None = None
    items: tuple[str, ...] = ()
    transformed: bool = False

