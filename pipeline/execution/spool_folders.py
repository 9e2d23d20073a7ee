"""The local pool's spool folder (where :mod:`pipeline.execution.spool` writes what is too
big for a pipe): named by the driver that made it, so that a later run removes the folders
of drivers that are gone (:func:`sweep_spools`) and leaves those in use.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import stat
import tempfile
from pathlib import Path

SPOOL_PREFIX = "litmus-gate-pool-"


def _host() -> str:
    """This host's name as spool folder names hold it: never an ``@`` (it ends the name)."""
    return "".join(c if c.isalnum() or c in ".-" else "_" for c in socket.gethostname())[:64]


def _spool_tag() -> str:
    """``<pid>@<host>@``: whose spool folder it is, so a later run can tell one left by a
    driver that is gone from one in use (``mkdtemp`` adds a random suffix after it)."""
    return f"{os.getpid()}@{_host()}@"


_SPOOL_NAME = re.compile(r"([0-9]{1,10})@([^@]*)@[^@]*")


def new_spool() -> Path:
    """A new spool folder in the temporary directory (private: mode 0700), named by this
    driver (:func:`_spool_tag`), once the folders of drivers that are gone are removed
    (:func:`sweep_spools`)."""
    sweep_spools(Path(tempfile.gettempdir()))
    return Path(tempfile.mkdtemp(prefix=SPOOL_PREFIX + _spool_tag()))


def sweep_spools(root: Path) -> list[Path]:
    """Remove the spool folders under ``root`` of drivers of this host that are gone: a
    driver killed by SIGKILL (a scheduler's, the OOM killer's) runs no cleanup, and every
    such run left one folder behind in the temporary directory. A folder of a live process,
    of another host, of another user, a symbolic link or a name not of this form stays.
    Containers that share both a host name and ``/tmp`` are not told apart (their process
    ids are): give them distinct host names or temporary folders. Never raises: a folder
    it cannot judge stays. Returns the folders removed."""
    removed = []
    try:
        folders = sorted(root.glob(f"{SPOOL_PREFIX}*@*@*"))
    except OSError:
        return removed
    host = _host()
    for folder in folders:
        name = _SPOOL_NAME.fullmatch(folder.name[len(SPOOL_PREFIX):])
        if name is None or name.group(2) != host:
            continue
        try:
            st = folder.lstat()
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or _alive(int(name.group(1))):
                continue
            shutil.rmtree(folder, ignore_errors=True)
        except (OSError, OverflowError, ValueError):
            continue
        removed.append(folder)
    return removed


def _alive(pid: int) -> bool:
    """Whether process ``pid`` may be running (of any user); 0 counts as alive (a signal
    to it would go to our own process group)."""
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True
