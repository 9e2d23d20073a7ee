"""A run's output and work folder on shared storage (URIs), next to the local ones.

**RUN_DIR as a URI** (``--out s3://bucket/runs/nightly``): the run is staged in a local
temporary folder exactly as a local run, then uploaded under the URI: table files and
reports first, ``manifest.json`` LAST. Object stores have no atomic rename, so the
manifest is the commit marker: a prefix without ``manifest.json`` holds no finished
run (readers must check it first). Replacing a run (``--overwrite``) first deletes the
old manifest, then the old objects, then uploads the new run.

**Work folder as a URI** (``--work-dir s3://bucket/tmp``): the shard work folder is
``WORK_DIR/.<RUN name>.work``. The driver splits into a local mirror and uploads the
spill files, then ``split.done``; each shard (a worker process or a Ray task on any
node) downloads its spill files into a local temporary folder, runs the unchanged
local shard code and uploads its tables, then its done marker. ``--resume`` skips the
phases and shards whose markers exist in the remote folder. Local work folders keep
plain local file I/O (:class:`WorkDir` with ``remote=None``).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from contextlib import AbstractContextManager, suppress
from dataclasses import dataclass, replace
from pathlib import Path

import pyarrow.fs as pafs

from pipeline.errors import LitmusError, RunDirError, StorageError, UsageError
from pipeline.shards import ShardTask, prepare_work, score_shard
from pipeline.storage import (
    Location, Remote, download_tree, guard, location, upload_file, upload_tree,
)
from pipeline.writer import check_out, publish, staging_dir

RUN_ENTRIES = frozenset({"steps", "actions", "edges", "flows", "verdicts", "attrition", "metrics",
                         "report.html", "report.md", "manifest.json", "explain"})


def check_out_location(out: Location, overwrite: bool) -> None:
    """Refuse an existing RUN_DIR (local or URI) unless overwrite (see module docstring)."""
    if isinstance(out, Path):
        check_out(out, overwrite)
        return
    with guard(f"cannot use --out {out}", RunDirError, "check the URI, credentials and endpoint"):
        if out.info().type == pafs.FileType.File:
            raise RunDirError(f"{out} is an object, not a folder", "choose another --out")
        entries = out.entries()
        if not entries:
            _check_container(out)
            return
        has_manifest = (out / "manifest.json").is_file()
    if not overwrite:
        raise RunDirError(f"{out} already exists", "pass --overwrite to replace it")
    foreign = sorted({e.base_name for e in entries} - RUN_ENTRIES)
    if not has_manifest and foreign:
        raise RunDirError(f"{out} exists and is not a litmus-gate run (holds {foreign[0]})",
                          "refusing to overwrite it")


def _check_container(out: Remote) -> None:
    """The bucket must exist (object stores) or the parent folder be creatable (file://)."""
    if out.fs.type_name == "local":
        out.fs.create_dir(out.parent.path, recursive=True)
        return
    bucket = out.path.strip("/").split("/", 1)[0]
    if out.fs.get_file_info(bucket).type != pafs.FileType.Directory:
        raise RunDirError(f"bucket {bucket!r} of {out} does not exist or is not reachable",
                          "create it first or check credentials and endpoint")


def staging_for(out: Location) -> Path:
    """Where a run is assembled: beside a local RUN_DIR, in a temporary folder for a URI."""
    if isinstance(out, Path):
        return staging_dir(out)
    return Path(tempfile.mkdtemp(prefix=f"litmus-gate-{out.name}-"))


def publish_to(staging: Path, out: Location) -> None:
    """Publish a finished staging folder: a rename locally, an upload with the
    manifest last for a URI (the staging folder is removed either way)."""
    if isinstance(out, Path):
        publish(staging, out)
        return
    try:
        manifest = (staging / "manifest.json").read_bytes()
        (staging / "manifest.json").unlink()
        with guard(f"cannot write the run to {out}", RunDirError):
            old = out / "manifest.json"
            if old.is_file():
                out.fs.delete_file(old.path)  # un-commit the old run before touching it
            out.delete_contents()
            upload_tree(staging, out)
            _commit(out, manifest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _commit(out: Remote, manifest: bytes) -> None:
    """Write ``manifest.json``: from now on the run at ``out`` is whole."""
    (out / "manifest.json").write_bytes(manifest)


@dataclass(frozen=True)
class WorkDir:
    """The shard work folder: ``local`` is where the driver works (the folder itself,
    or a mirror of ``remote``); ``remote`` is the shared folder, None when local."""

    local: Path
    remote: Remote | None = None

    def records_read(self) -> int | None:
        """Records read by a finished split phase (resume), None when it must run."""
        marker = self.remote / "split.done" if self.remote is not None else self.local / "split.done"
        with self._guard():
            if not marker.is_file():
                return None
            return int(json.loads(marker.read_text())["records_read"])

    def split_finished(self) -> None:
        """Upload the spill files, then the ``split.done`` marker (remote only)."""
        if self.remote is None:
            return
        with self._guard():
            if (self.local / "spill").is_dir():
                upload_tree(self.local / "spill", self.remote / "spill")
            upload_file(self.local / "split.done", self.remote / "split.done")

    def ensure_spill(self) -> None:
        """Make the spill files local (a resumed remote split left none here)."""
        if self.remote is not None and not (self.local / "spill").is_dir():
            with self._guard():
                download_tree(self.remote / "spill", self.local / "spill")

    def fetch_outputs(self) -> None:
        """Bring every shard's tables into the local folder for ``combine``."""
        if self.remote is not None:
            with self._guard():
                download_tree(self.remote / "out", self.local / "out")

    def remove(self) -> None:
        """Delete the work folder (and its local mirror); best effort, never raises."""
        shutil.rmtree(self.local, ignore_errors=True)
        if self.remote is not None:
            with suppress(LitmusError), self._guard():
                self.remote.delete()

    def _guard(self, error: type[LitmusError] = StorageError) -> AbstractContextManager[None]:
        return _work_guard(self.remote or self.local, error)


def _work_guard(where: Location, error: type[LitmusError] = StorageError) -> AbstractContextManager[None]:
    """Storage failures -> ``error``: StorageError mid-run (the work folder is kept for
    --resume), UsageError when opening it (the run has not started)."""
    hint = "check --work-dir, credentials and endpoint"
    return guard(f"cannot use the work folder {where}", error,
                 hint + ("; --resume continues the run" if error is StorageError else ""))


def open_work(out: Location, work_dir: Path | str | None, digest: str, resume: bool) -> WorkDir:
    """The run's work folder: ``.<RUN name>.work`` beside a local RUN_DIR by default;
    ``.<RUN name>-<hash of RUN_DIR>.work`` under ``work_dir`` when given (runs sharing
    one work_dir never meet); for a URI RUN_DIR without ``work_dir``, under the
    system temp folder (keyed by the URI, so ``--resume`` finds it again)."""
    base = location(work_dir) if work_dir is not None else None
    # under a shared --work-dir, runs are told apart by their full output location
    key = hashlib.sha256(str(out.resolve() if isinstance(out, Path) else out).encode()).hexdigest()[:16]
    if isinstance(base, Remote):
        return _remote_work(base / f".{out.name}-{key}.work", digest, resume)
    if base is None and isinstance(out, Path):
        return WorkDir(prepare_work(out, digest, resume))
    if base is None:
        base = Path(tempfile.gettempdir()) / "litmus-gate" / key
        return WorkDir(prepare_work(base / out.name, digest, resume))
    return WorkDir(prepare_work(base / f"{out.name}-{key}", digest, resume))


def _remote_work(remote: Remote, digest: str, resume: bool) -> WorkDir:
    """A remote work folder (reused on --resume when its plan matches) and a fresh local mirror."""
    plan = remote / "plan.sha256"
    with _work_guard(remote, UsageError):
        if not (resume and plan.is_file() and plan.read_text() == digest):
            remote.delete_contents()
            plan.write_text(digest)
    return WorkDir(Path(tempfile.mkdtemp(prefix="litmus-gate-work-")), remote)


def score_remote_shard(task: ShardTask) -> dict[str, int]:
    """``score_shard`` for a shard whose work folder is remote (see module docstring)."""
    assert task.remote is not None
    remote = task.remote
    done = remote / "out" / f"shard-{task.shard}.done"
    with _work_guard(remote):
        if done.is_file():
            return json.loads(done.read_text())
    local = Path(tempfile.mkdtemp(prefix=f"litmus-gate-shard-{task.shard}-"))
    try:
        with _work_guard(remote):
            download_tree(remote / "spill" / f"shard-{task.shard}", local / "spill" / f"shard-{task.shard}")
        counts = score_shard(replace(task, work=local, remote=None))
        with _work_guard(remote):
            for table in task.tables:
                name = f"{table}/shard-{task.shard}.parquet"
                upload_file(local / "out" / name, remote / "out" / name)
            upload_file(local / "out" / f"shard-{task.shard}.done", done)  # the marker last
        return counts
    finally:
        shutil.rmtree(local, ignore_errors=True)
