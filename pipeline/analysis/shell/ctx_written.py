"""Written names with computed parts, for :class:`pipeline.analysis.shell.ctx.Ctx`.

A written target holding a variable or substitution is known up to a glob when the
computed part cannot change its folder (:func:`written_glob`); a variable bound in the
command to ``$(mktemp ...)`` is the fresh path that call names (:func:`mktemp_glob`,
:func:`with_temps`).
"""

from __future__ import annotations

import posixpath
import re
import shlex

from collections.abc import Callable

from pipeline.analysis.shell.model import VAR_RE
from pipeline.analysis.shell.words import SUB_RE, restore_private

__all__ = ["mktemp_glob", "with_temps", "written_glob"]

_DYNAMIC = re.compile(f"{SUB_RE.pattern}|{VAR_RE.pattern}")
_TMPDIR = re.compile(r"\$(?:TMPDIR\b|\{TMPDIR(?::?-[^}]*)?\})")
# pseudo resources written with a computed part (`docker build -t api:$VERSION`): never a file
_PSEUDO_WRITES = ("image:",)


def mktemp_glob(inner: str) -> str | None:
    """The path ``$(inner)`` names when ``inner`` is a plain ``mktemp`` call: a fresh
    file or folder, as a glob (``/tmp/tmp.*``; a template's ``XXX`` run as ``*``, under
    ``-p DIR``/``--tmpdir[=DIR]``/``-t`` in that folder; ``$TMPDIR`` is taken to be
    ``/tmp``). None for anything else (a computed folder or template, other commands)."""
    try:
        words = shlex.split(_TMPDIR.sub("/tmp", inner))
    except ValueError:
        return None
    if not words or words[0] != "mktemp" or any(c in w for w in words for c in "$`<>|;&()"):
        return None
    folder: str | None = None
    template: str | None = None
    suffix, intmp, i = "", False, 1
    while i < len(words):
        w = words[i]
        if w in ("-p", "--tmpdir") and i + 1 < len(words) and not (w == "--tmpdir"):
            folder, i = words[i + 1], i + 2
            continue
        if w.startswith("--tmpdir"):
            folder = w.partition("=")[2] or "/tmp"
        elif w.startswith("--suffix"):
            if "=" not in w:
                if i + 1 >= len(words):
                    return None
                suffix, i = words[i + 1], i + 2
                continue
            suffix = w.partition("=")[2]
        elif w in ("--directory", "--dry-run", "--quiet"):
            pass
        elif w.startswith("-") and len(w) > 1 and not w.startswith("--"):
            flags = w[1:]
            if "p" in flags:
                at = flags.index("p")
                if set(flags[:at]) - set("dqut"):
                    return None
                intmp = intmp or "t" in flags[:at]
                rest = flags[at + 1:]
                if not rest:
                    if i + 1 >= len(words):
                        return None
                    rest, i = words[i + 1], i + 1
                folder = rest
            elif set(flags) - set("dqut"):
                return None
            else:
                intmp = intmp or "t" in flags
        elif template is None and not w.startswith("-"):
            template = w
        else:
            return None
        i += 1
    if template is None:
        name = "tmp.*"
        folder = folder or "/tmp"
    else:
        name, n = re.subn(r"X{3,}(?!.*X{3})", "*", template)
        if not n or "$" in name:
            return None
        if intmp and folder is None:
            folder = "/tmp"
        if folder is not None:
            name = posixpath.basename(name)
    if folder == "":
        folder = "/tmp"
    path = posixpath.join(folder, name + suffix) if folder is not None else name + suffix
    return path if "*" in path else None


def with_temps(word: str, temps: dict[str, str]) -> str:
    """``word`` with each variable bound to a fresh ``$(mktemp)`` path (``temps``: variable
    -> glob) replaced by its glob."""

    def temp(m: re.Match[str]) -> str:
        var = m.group(4) or (m.group(2) if m.group(0) == "${" + str(m.group(2)) + "}" else None)
        return temps.get(var or "", m.group(0))
    return _DYNAMIC.sub(temp, word) if temps else word


_NOT_A_NAME = re.compile(r"[\s|;&<>(){}\"'`]")


def written_glob(word: str, subs: list[tuple[str, str]], temps: dict[str, str],
                 restore: Callable[[str], str]) -> str | None:
    """A written target with a computed part, known up to a glob (``*`` for each computed
    part), or None (opaque). A variable bound in the command to ``$(mktemp ...)`` is that
    fresh path (``"$D/out.json"``: ``/tmp/tmp.*/out.json``). Any other computed part must
    lie in the last path component, after literal text (``backups/app-$(date +%F).db``:
    ``backups/app-*.db``; ``/tmp/out-$$.log``; ``release-${V}.tgz``), and hold no ``/``
    in its own text (``${X:-/etc/x}``, ``$(date +%Y/%m)``): it cannot move the file to
    another folder, so the folder is known. A computed folder (``"$DIR/x"``,
    ``$(cat f)/x``), a component that is computed from its start (``"$LOG"``,
    ``~/$NAME``, ``out/$F``: it may be ``..`` or absolute) stays opaque. A pseudo
    resource (``image:api:$VERSION``) is never a file: ``*`` for each computed part.
    ``subs``: the command's substitutions (kind, inner text); ``restore``: the word as
    written (:meth:`Ctx.text`)."""
    word = with_temps(word, temps)
    text = restore(word)
    if text.startswith(_PSEUDO_WRITES):
        scheme = len(text.split(":", 1)[0]) + 1
        if not _DYNAMIC.search(word[:scheme]):
            return restore_private(re.sub(r"\*+", "*", _DYNAMIC.sub("*", word)))
        return None
    spans = list(_DYNAMIC.finditer(word))
    if not spans:
        return restore_private(word)  # only temp paths: known
    if _NOT_A_NAME.search(restore_private(_DYNAMIC.sub("", word))):
        return None  # blanks or shell/awk syntax around the computed part: not a file name
    last = word.rfind("/")
    if spans[0].start() <= last + 1 or (last < 0 and word.startswith("~")):
        return None
    for m in spans:
        if m.group(1) is not None:
            kind, inner = subs[int(m.group(1))]
            if kind not in ("$", "=") or "/" in inner:
                return None
        elif "/" in (m.group(3) or ""):
            return None
    return restore_private(re.sub(r"\*+", "*", _DYNAMIC.sub("*", word)))
