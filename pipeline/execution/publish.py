"""Publishing: a finished run's tables assembled from the shard files, then RUN_DIR.

**Tables** are not re-sorted: each shard wrote its tables sorted by grain, named by its
position in the input, so a table is its shards' files in shard order. They are moved
(a rename when the work folder is on the same filesystem as the staging folder) into
``staging/<table>/`` as ``part-00003.parquet`` (partitioned tables: under
``<partition>=<value>/``, created once per value; two values one filesystem cannot
tell apart fail loudly, never merge). Empty shard files are left out unless the table
is empty. The *contents* of a table do not depend on shard, worker count or engine;
its *bytes* are identical for identical settings (SPEC section 6).

**RUN_DIR as a URI** (``--out s3://bucket/runs/nightly``): the run is staged in a local
temporary folder exactly as a local run, then uploaded under the URI: table files and
reports first, ``manifest.json`` LAST. Object stores have no atomic rename, so the
manifest is the commit marker: a prefix without ``manifest.json`` holds no finished
run (readers must check it first). Replacing a run (``--overwrite``) first deletes the
old manifest, then the old objects, then uploads the new run.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from pipeline.config import RunConfig
from pipeline.errors import RunDirError, SchemaValidationError
from pipeline.ingest.label_provenance import provenance_notes
from pipeline.policy import Policy
from pipeline.execution.signals import commit, raise_swallowed
from pipeline.storage import Location, Remote, guard
from pipeline.storage_copy import upload_tree
from pipeline.outputs.writer import check_out, publish, recover_replaced, staging_dir
from schemas import partition_of

@dataclass(frozen=True)
class RunResult:
    """What a finished run reports back (also written to manifest.json)."""

    out: Location  # a local Path, or a storage.Remote for a URI RUN_DIR
    row_counts: dict[str, int]
    records_read: int
    manifest: dict[str, object]


RUN_ENTRIES = frozenset({"steps", "actions", "edges", "flows", "verdicts", "attrition", "metrics",
                         "report.html", "report.md", "manifest.json", "explain"})


def recover_killed_publish(out: Location) -> None:
    """Put back a RUN_DIR a killed ``--overwrite`` moved aside, or remove the old run a
    finished one left (local RUN_DIRs; :func:`pipeline.outputs.writer.recover_replaced`).
    Call it holding the run lock."""
    if isinstance(out, Path) and (restored := recover_replaced(out)) is not None:
        sys.stderr.write(f"litmus-gate: put {out} back in place from {restored.name}: a run killed "
                         "while replacing it had moved it aside\n")


def check_out_location(out: Location, overwrite: bool) -> None:
    """Refuse an existing RUN_DIR (local or URI) unless overwrite (see module docstring)."""
    if isinstance(out, Path):
        check_out(out, overwrite)
        return
    import pyarrow.fs as pafs  # a URI's only: a local run never imports it (pipeline.storage)

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
    import pyarrow.fs as pafs  # a URI's only: a local run never imports it (pipeline.storage)

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
    raise_swallowed()  # before anything is replaced or uploaded
    if isinstance(out, Path):
        # an --overwrite's two renames are never split by a signal (no RUN_DIR left at all)
        replaced = commit(lambda: publish(staging, out))
        if replaced is not None:
            shutil.rmtree(replaced, ignore_errors=True)  # the old run, after the commit
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
            commit(lambda: _commit(out, manifest))
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _commit(out: Remote, manifest: bytes) -> None:
    """Write ``manifest.json``: from now on the run at ``out`` is whole."""
    (out / "manifest.json").write_bytes(manifest)


def assemble(work: Path, markers: list[dict[str, Any]], table: str, staging: Path,
             moved: list[tuple[Path, Path]]) -> list[tuple[str, Any]]:
    """Move ``table``'s shard files into ``staging/<table>/`` in shard order (each move
    appended to ``moved``, so a failed publish can put them back); returns each
    published file (relative to staging) with its partition value."""
    listed = [(k, f) for k, marker in enumerate(markers) for f in marker["files"].get(table, [])]
    if not listed and markers:
        raise SchemaValidationError(f"table {table}: no shard wrote it", "rerun with --resume")
    kept = [(k, f) for k, f in listed if f[2] > 0] or listed[:1]
    folder = staging / table
    folder.mkdir(parents=True, exist_ok=False)
    made: set[str] = set()
    published = []
    for k, (rel, value, _) in kept:
        source = work / "out" / rel
        parent = Path(rel).parent.relative_to(table)
        target = folder / parent / f"part-{k:05d}.parquet"
        if str(parent) != "." and str(parent) not in made:
            target.parent.mkdir()  # never exist_ok: see the module docstring
            made.add(str(parent))
        shutil.move(source, target)
        moved.append((source, target))
        published.append((str(target.relative_to(staging)), value))
    return published


def table_view(con: duckdb.DuckDBPyConnection, staging: Path, table: str, files: list[tuple[str, Any]]) -> None:
    """A view ``table`` over the published files, with the exact partition value back
    in its column (never decoded from a folder name)."""
    partition = partition_of(table)
    paths = [str(staging / rel) for rel, _ in files]
    if partition is None or all(v is None for _, v in files):  # an empty table keeps its column
        con.read_parquet(paths, hive_partitioning=False).create_view(table)
        return
    con.register(f"{table}_files", pa.table({"file": paths, "value": [v for _, v in files]}))
    # our schema's names, never data; the values come in as a registered table
    con.sql(f'select t.* exclude (filename), f.value as "{partition}" '
            "from read_parquet($paths, hive_partitioning = false, filename = true) t "
            f"join {table}_files f on f.file = t.filename", params={"paths": paths}).create_view(table)


def publish_run(config: RunConfig, out: Location, work: Path, markers: list[dict[str, Any]],
             tables: tuple[str, ...], manifest: dict[str, object], policy: Policy, gold: Any = None,
             workers_gone: Callable[[], None] = lambda: None) -> RunResult:
    """Assemble the shards' tables (``markers``: each shard's done marker) into a staging
    folder, write metrics (against ``gold``), report and manifest, and publish RUN_DIR;
    ``workers_gone()`` is called once the tables are checked, before the report's queries.
    Whatever stops it, the shard files moved so far go back to the work folder."""
    staging = staging_for(out)
    moved: list[tuple[Path, Path]] = []
    try:
        return _assemble_and_publish(config, out, work, markers, tables, manifest, staging, moved, policy,
                                     gold, workers_gone)
    except BaseException:
        # whatever stopped it (SIGTERM included), the shard files go back for --resume
        for source, target in reversed(moved):
            if target.exists() and not source.exists():
                shutil.move(target, source)
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _assemble_and_publish(config: RunConfig, out: Location, work: Path, markers: list[dict[str, Any]],
                          tables: tuple[str, ...], manifest: dict[str, object], staging: Path,
                          moved: list[tuple[Path, Path]], policy: Policy, gold: Any,
                          workers_gone: Callable[[], None]) -> RunResult:
    from pipeline.outputs.report import render_report
    from pipeline.stages.tables import connect, metrics
    from pipeline.outputs.writer import conform, write_table

    con = connect(config, macros=False, spill=work / "spill-publish")  # no publishing query calls the macros
    counts: dict[str, int] = {}
    for table in tables:
        counts[table] = sum(f[2] for m in markers for f in m["files"].get(table, []))
        table_view(con, staging, table, assemble(work, markers, table, staging, moved))
    if "verdicts" in tables:
        landed = con.execute("select (select count(*) from verdicts) + (select count(*) from attrition)").fetchall()[0][0]
        if landed != manifest["records_read"]:
            # each shard checked its own records; this catches a shard lost between them
            raise SchemaValidationError(f"{manifest['records_read']} records read, {landed} in verdicts + attrition",
                                        "no run was published; rerun with --resume")
    workers_gone()  # the workers' memory is free before the metrics' and the report's queries
    if gold is not None:
        metrics(con, gold)
        counts["metrics"] = write_table(staging, "metrics", conform("metrics", con.table("metrics").pl()))
    if "verdicts" in tables:
        html, markdown = render_report(con, out.name, staging / "explain",
                                       policy.setting("explain_pages"),
                                       provenance_notes(manifest.get("labels")))
        (staging / "report.html").write_text(html, encoding="utf-8")
        (staging / "report.md").write_text(markdown, encoding="utf-8")
    con.close()
    manifest["row_counts"] = counts
    manifest["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    (staging / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    publish_to(staging, out)
    return RunResult(out, counts, int(manifest["records_read"]), manifest)  # type: ignore[arg-type]
