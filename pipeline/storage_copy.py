"""Copies between this machine and object storage (``pipeline.storage``'s ``Remote``):
listing a remote folder as a local walk would, uploading a run or a shard's files,
downloading a work folder, and a temporary local copy of one remote file."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pipeline.storage import BUFFER_BYTES, Remote


def _walk_key(parts: list[str]) -> list[tuple[int, str]]:
    """Sort key giving ``os.walk`` order: a folder's files before its subfolders."""
    return [(1, d) for d in parts[:-1]] + [(0, parts[-1])]


def walk_files(root: Remote) -> list[Remote]:
    """Files under a remote folder, recursively, in the order a sorted ``os.walk`` of a
    local copy gives; entries with a hidden (``.``) component are left out."""
    import pyarrow.fs as pafs  # a URI's only (see the imports)

    base = root.path.rstrip("/")
    found: list[tuple[list[str], Remote]] = []
    for entry in root.entries(recursive=True):
        if entry.type != pafs.FileType.File or not entry.path.startswith(base + "/"):
            continue
        parts = entry.path[len(base) + 1:].split("/")
        if any(not p or p.startswith(".") for p in parts):
            continue
        child = root / "/".join(parts)
        found.append((parts, Remote(root.fs, child.path, child.uri, known_file=True)))
    found.sort(key=lambda item: _walk_key(item[0]))
    return [remote for _, remote in found]


def upload_tree(local: Path, remote: Remote) -> None:
    """Copy a local folder's contents under ``remote`` (objects keep relative paths)."""
    import pyarrow.fs as pafs  # a URI's only (see the imports)

    pafs.copy_files(str(local), remote.path, source_filesystem=pafs.LocalFileSystem(),
                    destination_filesystem=remote.fs)


def upload_file(local: Path, remote: Remote) -> None:
    """Copy one local file to ``remote``."""
    with open(local, "rb") as src, remote.fs.open_output_stream(remote.path, compression=None) as dst:
        shutil.copyfileobj(src, dst, BUFFER_BYTES)


def download_tree(remote: Remote, local: Path) -> bool:
    """Copy a remote folder's contents into ``local``; False when it does not exist."""
    import pyarrow.fs as pafs  # a URI's only (see the imports)

    if not remote.entries():
        return False
    local.mkdir(parents=True, exist_ok=True)
    pafs.copy_files(remote.path, str(local), source_filesystem=remote.fs,
                    destination_filesystem=pafs.LocalFileSystem())
    return True


@contextmanager
def local_copy(remote: Remote) -> Iterator[Path]:
    """A temporary local copy of one remote file (same name), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="litmus-gate-in-"))
    try:
        target = folder / remote.name
        with remote.open_binary() as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst, BUFFER_BYTES)
        yield target
    finally:
        shutil.rmtree(folder, ignore_errors=True)
