"""Validate tables with their Pandera schema and publish a run atomically.

A run is written into a sibling staging folder and renamed into place, so RUN_DIR
appears whole or not at all; a crash leaves only a ``.staging`` folder behind,
never a partial RUN_DIR.
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
import shutil
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.errors import RunDirError, SchemaValidationError
from schemas import schema_module

if TYPE_CHECKING:  # polars and pandera load with the first table written (start-up of the CLI)
    import polars as pl

_MAX_PART = 200  # file names stay under 255 bytes; longer values are cut and hashed
# an escape quote() wrote (kept as it is), or an upper-case letter (encoded)
_UPPER = re.compile(r"%[0-9A-F]{2}|[A-Z]")


def partition_dir_name(value: str) -> str:
    """A safe folder name for a partition value taken from data (hive style).

    Percent-encodes everything but lower-case letters, digits and ``-_.``, so ``/``,
    ``..``, quotes and ``%`` cannot escape the table folder; upper-case letters are
    encoded too (``Mail`` -> ``%4Dail``), so values differing only in case keep distinct
    folders on a case-insensitive file system (macOS, Windows), where ``suite=Mail`` and
    ``suite=mail`` would be one folder and one suite's files would replace the other's.
    Long values are cut and suffixed with a hash so that distinct values never collide.
    """
    quoted = _UPPER.sub(lambda m: m.group() if len(m.group()) == 3 else f"%{ord(m.group()):02X}",
                        urllib.parse.quote(value, safe=""))
    if quoted in ("", ".", ".."):
        quoted = urllib.parse.quote(value, safe="").replace(".", "%2E") or "%00empty"
    if len(quoted) > _MAX_PART:
        digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        quoted = f"{quoted[:_MAX_PART]}~{digest}"
    return quoted


class _Engine:
    """Who holds Polars' engine affinity for :func:`conform` (see :func:`_in_memory_engine`)."""

    lock = threading.Lock()
    users = 0  # conform calls inside _in_memory_engine now
    replaced: str | None = None  # the affinity they replaced (POLARS_ENGINE_AFFINITY)
    switched = False  # whether the first of them set in-memory (see _restorable)


# the names Config.set_engine_affinity takes (its documented values)
_ENGINE_NAMES = ("auto", "in-memory", "streaming", "gpu")


def _restorable() -> bool:
    """Whether the affinity in force can be put back by ``set_engine_affinity``: not when
    ``POLARS_ENGINE_AFFINITY`` holds a value Polars reads but that function refuses
    (``cpu``, its old name for in-memory) or an engine object is set
    (``set_engine_affinity(pl.StreamingEngine())``: it is not in the variable). Then
    the caller's choice is left as it is."""
    if os.environ.get("POLARS_ENGINE_AFFINITY") not in (None, *_ENGINE_NAMES):
        return False
    try:
        from polars.lazyframe.engine_config import get_engine_affinity_override
    except ImportError:  # a Polars that keeps it elsewhere: an object may be set, leave it
        return False
    return get_engine_affinity_override() is None


@contextmanager
def _in_memory_engine() -> Iterator[None]:
    """Polars' in-memory engine for the queries Pandera runs (restored after).

    Pandera's polars backend collects a small lazy query per check (about 40 per table: a
    column's dtype, nulls, each ``Field`` check, ``unique``); Polars 2's default engine
    for ``collect()`` is the streaming one, whose set-up per query costs more than these
    one-column scans of a frame already in memory (22% of ``conform``'s CPU on a 32 MB
    shard). Same checks, same results. Counted under a lock, so overlapping calls from
    threads set and restore the process-wide affinity once."""
    import polars as pl

    with _Engine.lock:
        if _Engine.users == 0:
            _Engine.replaced = os.environ.get("POLARS_ENGINE_AFFINITY")
            _Engine.switched = _restorable()
            if _Engine.switched:
                pl.Config.set_engine_affinity("in-memory")
        _Engine.users += 1
    try:
        yield
    finally:
        with _Engine.lock:
            _Engine.users -= 1
            if _Engine.users == 0 and _Engine.switched:
                pl.Config.set_engine_affinity(_Engine.replaced)  # type: ignore[arg-type]


def conform(table: str, frame: pl.DataFrame) -> pl.DataFrame:
    """Select the schema's columns in order, sort by grain, validate data."""
    import pandera.errors

    module = schema_module(table)
    schema = module.Schema
    columns = list(schema.to_schema().columns)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise SchemaValidationError(f"table {table}: stage produced no column(s) {missing}")
    frame = frame.select(columns).sort(list(module.GRAIN), nulls_last=True, maintain_order=True)
    try:
        with _in_memory_engine():
            return schema.validate(frame, lazy=True)
    except pandera.errors.SchemaErrors as exc:
        cases = exc.failure_cases
        summary = "; ".join(
            f"{row['column']}: {row['check']} (e.g. {str(row['failure_case'])[:60]!r})"
            for row in cases.unique(subset=["column", "check"], maintain_order=True).head(5).iter_rows(named=True)
        )
        raise SchemaValidationError(f"table {table} failed its schema: {summary}") from exc
    except pandera.errors.SchemaError as exc:
        raise SchemaValidationError(f"table {table} failed its schema: {exc}") from exc


def write_table(staging: Path, table: str, frame: pl.DataFrame) -> int:
    """Write one validated table under ``staging/<table>/``; returns the row count."""
    import polars as pl

    module = schema_module(table)
    folder = staging / table
    folder.mkdir(parents=True, exist_ok=False)
    partition = getattr(module, "PARTITION", None)
    if partition is None or frame.height == 0:
        frame.write_parquet(folder / "part-0.parquet", compression="zstd", statistics=True)
        return frame.height
    for key in sorted(frame.get_column(partition).unique().to_list()):
        part = folder / f"{partition}={partition_dir_name(key)}"
        part.mkdir()
        frame.filter(pl.col(partition) == key).drop(partition).write_parquet(
            part / "part-0.parquet", compression="zstd", statistics=True)
    return frame.height


def table_files(run_dir: Path, table: str) -> list[str]:
    """The Parquet files of one table of a run, as an explicit sorted list (never a
    glob built from the path: RUN_DIR names may hold ``*``, ``[`` or ``?``)."""
    folder = run_dir / table
    return sorted(str(p) for p in folder.rglob("*.parquet")) if folder.is_dir() else []


def staging_dir(out: Path) -> Path:
    """A fresh staging folder beside RUN_DIR (same filesystem, so rename is atomic)."""
    parent = out.resolve().parent  # made and checked by check_out
    for stale in _left_by_the_dead(out, "staging"):  # by a killed run
        shutil.rmtree(stale, ignore_errors=True)
    staging = parent / f".{out.name}.staging-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    return staging


def _left_by_the_dead(out: Path, kind: str) -> list[Path]:
    """The ``.<name>.<kind>-<pid>`` folders beside RUN_DIR (that exact name: not another
    RUN_DIR's, not a user's ``.<name>.old-20240101`` backup, no pid above the system's
    bound) whose process is gone, oldest first. ``old`` folders count only with a
    ``manifest.json``: a run this program published."""
    out = out.resolve()
    name = re.compile(rf"\.{re.escape(out.name)}\.{kind}-(\d+)")
    found = []
    for path in out.parent.glob(f".{glob.escape(out.name)}.{kind}-*"):
        m = name.fullmatch(path.name)
        if (m and int(m.group(1)) <= _PID_MAX and not _alive(int(m.group(1)))
                and (kind != "old" or (path / "manifest.json").is_file())):
            found.append(path)
    return sorted(found, key=lambda p: p.stat().st_mtime)


def _pid_max() -> int:
    try:
        return int(Path("/proc/sys/kernel/pid_max").read_text())
    except (OSError, ValueError):
        return 2**22  # Linux's largest; elsewhere pids stay below it too


_PID_MAX = _pid_max()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def check_out(out: Path, overwrite: bool) -> None:
    """Refuse an existing RUN_DIR unless overwrite, or a place where it cannot be made."""
    parent = out.resolve().parent
    if parent.exists() and not parent.is_dir():
        raise RunDirError(f"cannot create {out}: {parent} is not a folder", "choose another --out")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunDirError(f"cannot create {parent}: {exc.strerror}", "choose a writable --out") from exc
    if not os.access(parent, os.W_OK):
        raise RunDirError(f"{parent} is not writable", "choose a writable --out")
    if out.exists() and not overwrite:
        raise RunDirError(f"{out} already exists", "pass --overwrite to replace it")
    if out.exists() and not out.is_dir():  # a file, a device: --overwrite replaces runs only
        raise RunDirError(f"{out} exists and is not a folder", "refusing to overwrite it")
    if out.exists() and not (out / "manifest.json").exists() and any(out.iterdir()):
        raise RunDirError(f"{out} exists and is not a litmus-gate run", "refusing to overwrite it")


def recover_replaced(out: Path) -> Path | None:
    """Mend what a run killed inside :func:`publish` left beside RUN_DIR (the caller holds
    the run lock, so no other run is publishing): a replaced run moved aside by a process
    that is gone (``.<name>.old-<pid>``) goes back in place when RUN_DIR is missing (the
    killed run stopped between its two renames: the old run stands, as after any run
    that did not finish), else it is the leftover of a finished swap and is removed; so
    is a killed run's staging folder. Returns the folder put back, if one was."""
    out = out.resolve()
    stale = _left_by_the_dead(out, "old")
    restored = None
    if stale and not out.exists():
        restored = stale.pop()  # the newest: the run RUN_DIR held last
        os.rename(restored, out)
    for path in stale + _left_by_the_dead(out, "staging"):  # a killed run's unpublished tables too
        shutil.rmtree(path, ignore_errors=True)
    return restored


def moved_aside(out: Path) -> bool:
    """Whether a run into ``out`` killed inside :func:`publish` left the run it replaced
    beside it (``.<name>.old-<pid>``, its process gone), for :func:`recover_replaced`."""
    return bool(_left_by_the_dead(out, "old"))


def publish(staging: Path, out: Path) -> Path | None:
    """Move a finished staging folder into place as RUN_DIR; returns where the run it
    replaced was moved (for the caller to remove once the new one is in place), else None."""
    out = out.resolve()
    if out.exists():
        trash = out.parent / f".{out.name}.old-{os.getpid()}"
        os.rename(out, trash)
        try:
            os.rename(staging, out)
        except BaseException:
            os.rename(trash, out)  # the old run back in place: never no RUN_DIR at all
            raise
        return trash
    os.rename(staging, out)
    return None
