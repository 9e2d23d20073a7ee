"""The shard work folder: where shards write their tables and done markers.

``.<RUN name>.work`` beside a local RUN_DIR by default; ``.<RUN name>-<hash of
RUN_DIR>.work`` under ``--work-dir`` (runs sharing one work dir never meet); for a URI
RUN_DIR without ``--work-dir``, under this user's temp folder (:func:`private_temp`; keyed by the URI, so
``--resume`` finds it again). ``plan.json`` holds the run's plan digest and a run
token drawn when the folder is made: ``--resume`` reuses a folder whose plan matches
(keeping its token), any other run replaces it with a new token. Every shard output
and done marker carries the token in its name and the plan and token in the marker,
so a writer left over from another run can never count in this one.

A work folder given as a URI (``--work-dir s3://bucket/tmp``) is shared by every node:
each shard scores into a local temporary folder and uploads its tables, then its
marker; the driver downloads the finished outputs (``fetch_outputs``) to publish.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import secrets
import shutil
import stat
import sys
import tempfile
from contextlib import AbstractContextManager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.errors import LitmusError, StorageError, UsageError
from pipeline.execution.signals import deferred
from pipeline.storage import Location, Remote, guard, location
from pipeline.storage_copy import download_tree

PLAN_FILE = "plan.json"


@dataclass(frozen=True)
class WorkDir:
    """``local`` is where the driver works (the folder itself, or a mirror of
    ``remote``); ``remote`` is the shared folder (None when local). Picklable."""

    local: Path
    plan: str
    token: str
    remote: Remote | None = None

    def name(self, shard: int) -> str:
        """The stem of shard ``shard``'s files in this run: ``shard-00003.<token>``."""
        return f"shard-{shard:05d}.{self.token}"

    def marker(self, shard: int) -> Location:
        """Where shard ``shard``'s done marker is (in the shared folder when remote)."""
        return (self.remote if self.remote is not None else self.local) / "out" / f"{self.name(shard)}.done"

    def done(self, shard: int) -> dict[str, Any] | None:
        """Shard ``shard``'s done marker when it was written by this run, else None."""
        where = self.marker(shard)
        with self.guard():
            if not where.is_file():
                return None
            try:
                found = json.loads(where.read_text())
            except ValueError:
                return None
        if found.get("plan") != self.plan or found.get("token") != self.token:
            return None
        if self.remote is None and not self._outputs_present(found):
            return None  # a publish killed mid-way moved some away (SIGKILL: no rollback): score again
        return found

    def _outputs_present(self, marker: dict[str, Any]) -> bool:
        """Whether every file a local marker lists is still in the work folder."""
        out = self.local / "out"
        listed = [marker.get("ids")] + [f[0] for files in marker.get("files", {}).values() for f in files]
        return all(isinstance(rel, str) and (out / rel).is_file() for rel in listed)

    def fetch_outputs(self) -> None:
        """Bring every shard's tables into the local folder (remote only)."""
        if self.remote is not None:
            with self.guard():
                download_tree(self.remote / "out", self.local / "out")

    def remove(self) -> None:
        """Delete the work folder (and its local mirror); best effort, never raises."""
        shutil.rmtree(self.local, ignore_errors=True)
        if self.remote is not None:
            with suppress(LitmusError), self.guard():
                self.remote.delete()

    def guard(self, error: type[LitmusError] = StorageError) -> AbstractContextManager[None]:
        """Storage failures of the work folder -> ``error`` (see :func:`work_guard`)."""
        return work_guard(self.remote or self.local, error)


def work_guard(where: Location, error: type[LitmusError] = StorageError) -> AbstractContextManager[None]:
    """Storage failures -> ``error``: StorageError mid-run (the work folder is kept for
    --resume), UsageError when opening it (the run has not started)."""
    hint = "check --work-dir, credentials and endpoint"
    return guard(f"cannot use the work folder {where}", error,
                 hint + ("; --resume continues the run" if error is StorageError else ""))


def _claim(plan_file: Location, digest: str, resume: bool, clear: Any, shards: int | None) -> str:
    """The run token: the folder's own on a matching --resume, else a new one
    (after ``clear()`` empties the folder; ``shards`` is recorded for :func:`planned_shards`)."""
    if resume and plan_file.is_file():
        try:
            found = json.loads(plan_file.read_text())
        except ValueError:
            found = {}
        if found.get("plan") == digest and isinstance(found.get("token"), str):
            return found["token"]
    clear()
    token = secrets.token_hex(8)
    plan_file.write_text(json.dumps({"plan": digest, "token": token, "shards": shards}))
    return token


def _local(work: Path, digest: str, resume: bool, shards: int | None) -> WorkDir:
    def clear() -> None:
        shutil.rmtree(work, ignore_errors=True)
        # a killed run's stale writer may have made the folder again meanwhile: its files
        # carry that run's token, so they never count here (module docstring)
        work.mkdir(parents=True, exist_ok=True)

    work.parent.mkdir(parents=True, exist_ok=True)
    token = _claim(work / PLAN_FILE, digest, resume, clear, shards)
    return WorkDir(work, digest, token)


def _remote(remote: Remote, digest: str, resume: bool, shards: int | None) -> WorkDir:
    with work_guard(remote, UsageError):
        token = _claim(remote / PLAN_FILE, digest, resume, remote.delete_contents, shards)
    return WorkDir(Path(tempfile.mkdtemp(prefix="litmus-gate-work-")), digest, token, remote)


def _folder(out: Location, work_dir: Path | str | None) -> Location:
    """Where the run's work folder goes (see the module docstring)."""
    base = location(work_dir) if work_dir is not None else None
    key = hashlib.sha256(str(out.resolve() if isinstance(out, Path) else out).encode()).hexdigest()[:16]
    if isinstance(base, Remote):
        return base / f".{out.name}-{key}.work"
    if base is None and isinstance(out, Path):
        return out.resolve().parent / f".{out.name}.work"
    if base is None:
        return private_temp() / key / f".{out.name}.work"
    return base.resolve() / f".{out.name}-{key}.work"


def private_temp() -> Path:
    """This user's folder of the system temp folder (``litmus-gate-<uid>``, mode 0700),
    for what a URI run keeps on this machine: its default work folder and its lock. One
    another user made (a shared /tmp) is refused, not used."""
    folder = Path(tempfile.gettempdir()) / f"litmus-gate-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = folder.lstat()
    except OSError as exc:
        raise UsageError(f"cannot create {folder}: {exc.strerror or exc}",
                         "check the system temp folder (TMPDIR), or pass --work-dir") from exc
    if info.st_uid != os.getuid() or info.st_mode & 0o077 or not stat.S_ISDIR(info.st_mode):  # lstat: a link is no dir
        raise UsageError(f"{folder} is not this user's private folder", "remove it, or set TMPDIR")
    return folder


def lock_file(out: Location) -> Path:
    """The file a run into ``out`` locks: ``.<RUN name>.lock`` beside a local RUN_DIR; for a
    URI, ``<key>.lock`` in this user's temp folder (:func:`private_temp`; runs of one
    machine and user only)."""
    if isinstance(out, Path):
        return out.resolve().parent / f".{out.name}.lock"
    return private_temp() / f"{hashlib.sha256(str(out).encode()).hexdigest()[:16]}.lock"


class RunLock:
    """The lock of runs into one RUN_DIR: two runs into it (a nightly job started while
    the last one still runs) would share the work folder, each clearing the other's
    shards. :meth:`acquire` takes it or fails at once (no waiting); leaving the ``with``
    block releases it and removes its file (a run leaves nothing beside RUN_DIR). The
    kernel releases an ``flock`` however the process ends (SIGKILL too): a killed run's
    file never blocks."""

    def __init__(self, out: Location) -> None:
        self.out = out
        self._path: Path | None = None
        self._handle: Any = None
        self.locked = False  # the file system keeps locks, and this run holds the lock

    def acquire(self) -> None:
        """Hold the lock until the block ends, or raise :class:`UsageError`."""
        self._path = path = self._path or lock_file(self.out)
        hint = "check that the folder of --out is writable" if isinstance(self.out, Path) else \
            "check the system temp folder (TMPDIR)"
        for _ in range(_LOCK_TRIES):
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                handle = open(path, "a+")  # noqa: SIM115 - held until release
            except OSError as exc:
                raise UsageError(f"cannot create the run's lock file {path}: {exc.strerror or exc}", hint) from exc
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                raise UsageError(f"another litmus-gate run is writing to {self.out} (it holds {path})",
                                 "wait for it to end, or give another --out") from None
            except OSError as exc:
                if exc.errno not in _NO_LOCKS:
                    handle.close()
                    raise UsageError(f"cannot lock {path}: {exc.strerror or exc}", hint) from exc
                # a file system without locks (some FUSE and network mounts): the run goes on
                # unguarded, as it did before runs locked, and says so
                sys.stderr.write(f"litmus-gate: warning: cannot lock {path} ({exc.strerror}): "
                                 "runs into this RUN_DIR are not guarded against each other\n")
                self._handle = handle  # nothing is locked, so nothing to check
                return
            # a run that ended between our open and our flock removed the file we opened:
            # locking it locks nothing another run would look at; open the path's new file
            if _same_file(path, handle):
                self._handle = handle
                self.locked = True
                return
            handle.close()
        raise UsageError(f"cannot lock {path}: it was replaced {_LOCK_TRIES} times while this run locked it",
                         "is another program removing it?")

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc: object) -> None:
        # a signal while the lock goes waits for it: dropped when the run is already on its
        # way out with an error (or published: signals.commit), else raised after it
        with deferred(drop=exc[1] is not None):
            self._release()

    def _release(self) -> None:
        if self._handle is not None and self._path is not None:
            # removed while still held, and only if it is still ours: a run that opened it
            # meanwhile sees the path gone (or another file) once it gets the lock, and reopens
            if _same_file(self._path, self._handle):
                with suppress(OSError):
                    self._path.unlink()
            self._handle.close()
            self._handle = None
            self.locked = False


# a lock file replaced this often between a run's open and its flock is no race between
# runs (each ends after its flock): something else is removing it
_LOCK_TRIES = 5
# flock's errors that mean the file system keeps no locks at all (not that one is held)
_NO_LOCKS = {errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP, errno.ENOSYS}


def _same_file(path: Path, handle: Any) -> bool:
    """Whether ``path`` names the file ``handle`` has open."""
    try:
        found, held = os.stat(path), os.fstat(handle.fileno())
    except OSError:
        return False
    return (found.st_dev, found.st_ino) == (held.st_dev, held.st_ino)


def open_work(out: Location, work_dir: Path | str | None, digest: str, resume: bool,
              shards: int | None = None) -> WorkDir:
    """The run's work folder (see the module docstring for where it goes)."""
    folder = _folder(out, work_dir)
    if isinstance(folder, Remote):
        return _remote(folder, digest, resume, shards)
    return _local(folder, digest, resume, shards)


def planned_shards(out: Location, work_dir: Path | str | None) -> int | None:
    """The shard count of the run that left its work folder for ``out`` (None: no such
    folder, or one that does not say): ``--resume`` takes it, as the default count
    follows ``--workers``, which a rerun may change."""
    folder = _folder(out, work_dir)
    with work_guard(folder, UsageError):
        plan_file = folder / PLAN_FILE
        text = plan_file.read_text() if plan_file.is_file() else ""
    try:
        found = json.loads(text) if text else {}
    except ValueError:
        return None
    shards = found.get("shards") if isinstance(found, dict) else None
    return shards if isinstance(shards, int) and not isinstance(shards, bool) and shards >= 1 else None


def write_marker(path: Path, content: dict[str, Any]) -> None:
    """Write a done marker whole (temp file, then rename)."""
    tmp = path.with_name(path.name + f".tmp-{os.getpid()}")
    tmp.write_text(json.dumps(content, sort_keys=True))
    os.replace(tmp, path)
