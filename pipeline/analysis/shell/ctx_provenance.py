"""Provenance, for :class:`pipeline.analysis.shell.ctx.Ctx`: what a file written earlier in
the command was made from (``Analyser.provenance``: written name -> the resources its
content came from), transitively and through the folders it was written in, and the
secrets known to lie in a folder every machine has.
"""

from __future__ import annotations

import posixpath
import re

from pipeline.analysis.shell.model import Acc, normalise
from pipeline.analysis.shell.tables import HOME_FOLDER, HOME_SECRETS, KNOWN_CONTENTS

__all__ = ["derived_from", "known_contents", "names"]

_HOME_FOLDER = re.compile(HOME_FOLDER)


def known_contents(folder: str) -> tuple[str, ...]:
    """The secrets known to lie in ``folder`` (normalised), a folder every machine has: a
    home folder's ``HOME_SECRETS``, ``/``'s and ``/etc``'s (``KNOWN_CONTENTS``); none for any
    other folder, whose contents are not known."""
    inside = HOME_SECRETS if _HOME_FOLDER.fullmatch(folder) else KNOWN_CONTENTS.get(folder, ())
    return tuple(folder.rstrip("/") + "/" + s for s in inside)


def names(acc: Acc, resource: str) -> tuple[str, ...]:
    """The names ``resource`` goes by in this command: as written and, after a ``cd``,
    under that folder (see ``Acc.add``)."""
    name = normalise(resource)
    if not name:
        return ()
    joined = acc.under_cwd(name)
    return (name, joined) if joined else (name,)


def derived_from(acc: Acc, provenance: dict[str, tuple[str, ...]], resource: str,
            leaves_out: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """What ``resource`` (a file this command wrote earlier: ``tar czf a.tgz ~/.ssh``,
    ``base64 key > k.txt``, ``env > e.txt``) was made from, transitively: sending the
    file sends them too. A folder (``.``, ``dist/*``, a build context) also carries what
    the command wrote inside it (``cp key ./creds && npm publish``; not ``../x``, not
    what was written while in another folder). Empty for a file this command did not
    write. Remembered per command (``acc.derived_cache``) until the next write."""
    known = names(acc, resource)
    cached = acc.derived_cache.get((known, leaves_out))
    if cached is not None:
        return cached
    todo = [n for name in known for n in (name, *_written_inside(acc, provenance, name, leaves_out))]
    seen: dict[str, None] = {}
    folders = 4  # folders expanded beyond the first: an image's build context, a copied folder
    while todo and len(seen) < 256:
        for src in provenance.get(todo.pop(), ()):
            src_name = normalise(src)
            if src_name and src_name not in seen:
                seen[src_name] = None
                todo.append(src_name)
                if folders > 0 and (inside := _written_inside(acc, provenance, src_name, leaves_out)):
                    folders -= 1
                    todo.extend(inside)
    result = tuple(seen)
    acc.derived_cache[(known, leaves_out)] = result
    return result


def _written_inside(acc: Acc, provenance: dict[str, tuple[str, ...]], folder: str,
                    leaves_out: frozenset[str] = frozenset()) -> list[str]:
    """The files this command wrote inside ``folder``: for ``.``, the relative names
    that stay in it (not ``../x``), or after a ``cd`` the names under that folder; not
    those named ``leaves_out``."""
    if folder == "." and acc.cwd:
        folder = acc.cwd
    if folder == ".":
        found = [k for k in provenance
                 if not k.startswith(("/", "~", "../")) and k != ".." and ":" not in k]
    else:
        inside = folder.removesuffix("/*").rstrip("/") + "/"
        found = [k for k in provenance if k.startswith(inside) and not k[len(inside):].startswith("../")]
    return [k for k in found if posixpath.basename(k) not in leaves_out] if leaves_out else found
