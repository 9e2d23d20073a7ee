"""Score one shard: read its pieces of the inputs, run every stage, write its tables.

A worker process (or a Ray task) reads the shard's record-aligned byte ranges straight
from the input files (no copy of the corpus), runs every stage in one DuckDB
connection (bounded by ``memory_limit``), validates each table with its Pandera schema
(sorted by grain) and writes it under ``WORK/out/<table>/`` as
``shard-K.<token>.parquet`` (a partitioned table: one file per partition folder),
plus ``ids/`` (the shard's trajectory ids, for duplicate ids across shards), then the
done marker last, each file written whole (temp file, rename).

``priors`` holds, for ids this shard shares with earlier shards, how many scorable
copies came before: the first pass scores without them and a second pass rescores
only the shards that have any (``pipeline.execution.duplicates``).
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from pipeline.config import RunConfig, memory_bytes
from pipeline.errors import PolicyError, SchemaValidationError, ShardMemoryError
from pipeline.execution.plan import Piece
from pipeline.execution.signals import deferred
from pipeline.execution.sliced import slice_bounds, write_sliced
from pipeline.execution.workdir import WorkDir, work_guard, write_marker
from pipeline.policy import Policy, document_sha256
from pipeline.ingest.records import RawRecord
from pipeline.stages.tables import (
    PRIOR_COPIES_SCHEMA, actions, connect, flows, records_table, register_inputs, steps, verdicts,
)
from pipeline.storage_copy import upload_file
from pipeline.outputs.writer import conform, partition_dir_name
from schemas import partition_of

if TYPE_CHECKING:  # loaded by the first table a worker writes, not by the driver's start-up
    import polars as pl

CHUNK_ROWS = 20_000
CHUNK_BYTES = 64 * 2**20
# a record is scorable at record level (counts as a copy of its id) unless rejected before the id checks
# label rows naming a step that a trajectory scored in this shard does not have: they label
# nothing (the driver warns; labels of ids absent from the input are an error there)
_UNMATCHED_LABELS = """
select count(*), min(l.trajectory_id), arg_min(l.step_idx, l.trajectory_id)
from labels_in l
semi join steps s on s.trajectory_id = l.trajectory_id
anti join steps t on t.trajectory_id = l.trajectory_id and t.step_idx = l.step_idx
"""
_IDS = """
select $shard::bigint as shard, trajectory_id,
       count(*) filter (where reject_reason is null
                        or reject_reason in ('duplicate_trajectory_id', 'empty_trajectory')) as n_copies
from trajectories where trajectory_id is not null group by trajectory_id order by trajectory_id
"""


@dataclass(frozen=True)
class ShardTask:
    """What a worker needs to score one shard (picklable)."""

    shard: int
    pieces: tuple[Piece, ...]
    work: WorkDir
    fmt: str
    max_record_bytes: int
    policy: Policy  # as the driver validated it (and hashed into the plan): never re-read here
    labels: pa.Table
    tables: tuple[str, ...]
    threads: int
    memory_limit: str
    priors: pa.Table = field(default_factory=PRIOR_COPIES_SCHEMA.empty_table)
    suite: str | None = None  # --suite: the suite of session formats whose files name none


def prepare_worker() -> None:
    """A pool worker's start-up, while the driver still plans: import what scoring a shard
    loads lazily (Polars, Pandera, the schemas, each built), then move every object the
    imports made out of the garbage collector's reach (``gc.freeze``). Without it each full
    collection during the shard walks the libraries' hundreds of thousands of objects again
    (about 0.07 CPU s a 32 MB shard, measured); they live as long as the worker anyway."""
    import gc

    import pandera.polars  # noqa: F401 - imported for its side effect: loaded once, here
    import polars  # noqa: F401

    from schemas import TABLES, schema_module

    for table in TABLES:
        schema_module(table).Schema.to_schema()  # Pandera builds (and keeps) each schema once
    gc.freeze()


def priors_digest(priors: pa.Table) -> str:
    """A digest of a priors table ("" when empty): the marker says which it was scored with."""
    if priors.num_rows == 0:
        return ""
    rows = sorted(zip(priors.column("trajectory_id").to_pylist(), priors.column("n").to_pylist()))
    return hashlib.sha256(repr(rows).encode()).hexdigest()


def chunks(records: Iterable[RawRecord]) -> Iterator[list[RawRecord]]:
    """Records in bounded lists (CHUNK_ROWS records or CHUNK_BYTES of text)."""
    chunk: list[RawRecord] = []
    size = 0
    for rec in records:
        chunk.append(rec)
        size += len(rec.text or "")
        if len(chunk) >= CHUNK_ROWS or size >= CHUNK_BYTES:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


def _records(task: ShardTask) -> pa.Table:
    from pipeline.ingest.reader import iter_piece

    def stream() -> Iterator[RawRecord]:
        for p in task.pieces:
            yield from iter_piece(p.path, task.fmt, task.max_record_bytes, p.start, p.end, p.first_line,
                                  task.suite, p.bound)

    return records_table(stream())


def _write(frame: pl.DataFrame, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    # a temp name of this writer alone: a task of a killed run may still write this shard
    tmp = target.with_name(f"{target.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        frame.write_parquet(tmp, compression="zstd", statistics=True)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _write_table(table: str, frame: pl.DataFrame, out: Path, stem: str) -> list[list[Any]]:
    """One validated table as the run publishes it; returns ``[path, partition value, rows]``s."""
    import polars as pl

    partition = partition_of(table)
    if partition is None or frame.height == 0:
        _write(frame, out / table / f"{stem}.parquet")
        return [[f"{table}/{stem}.parquet", None, frame.height]]
    files = []
    for key in sorted(frame.get_column(partition).unique().to_list()):
        rel = f"{table}/{partition}={partition_dir_name(key)}/{stem}.parquet"
        piece = frame.filter(pl.col(partition) == key).drop(partition)
        _write(piece, out / rel)
        files.append([rel, key, piece.height])
    return files


def _drop_tables(con: duckdb.DuckDBPyConnection, keep: set[str]) -> None:
    """Drop every temp table but ``keep``: the stages are done, their memory is the
    writer's (a 64 MB shard's intermediate tables hold about 0.4 GB)."""
    names = [r[0] for r in con.execute("select table_name from duckdb_tables() where temporary").fetchall()]
    for name in names:
        if name not in keep:
            con.execute(f'drop table "{name}"')  # a stage's name (sql/<name>.sql), never data


def _score_local(task: ShardTask, local: Path) -> dict[str, Any]:
    """:func:`_scored` with DuckDB's out-of-memory as one line: some operators (the
    recursive reachability of sql/flows.sql) cannot spill past ``memory_limit``."""
    try:
        return _scored(task, local)
    except duckdb.OutOfMemoryException as exc:
        size = f"{memory_bytes(task.memory_limit) / 2**20:.0f} MiB"
        raise ShardMemoryError(f"shard {task.shard}: DuckDB needed more than its memory limit ({size}): "
                               f"{str(exc).splitlines()[0]}; no run was published",
                               "the work folder is kept: rerun with --resume and a larger --memory-limit "
                               "(e.g. 2GB), or fewer --workers") from None


def _scored(task: ShardTask, local: Path) -> dict[str, Any]:
    policy = task.policy
    if document_sha256(policy.data) != policy.sha256:  # never score with another document than was planned
        raise PolicyError(f"shard {task.shard}: the policy differs from the one this run validated and planned with")
    con = connect(RunConfig(inputs=(), out=local, threads=task.threads, memory_limit=task.memory_limit),
                  # in the work folder (counted, removed with it), one folder per shard: DuckDB
                  # removes the folder it made when its connection closes, other workers' files too
                  spill=local / f"spill-{task.work.name(task.shard)}")
    records = _records(task)
    register_inputs(con, records, policy, task.labels, task.priors)
    n_records = records.num_rows
    steps(con)
    con.unregister("records")  # the shard's text is no longer needed: let it go
    del records
    out, stem = local / "out", task.work.name(task.shard)
    ids = con.sql(_IDS, params={"shard": task.shard}).pl()
    _write(ids, out / "ids" / f"{stem}.parquet")
    unmatched = con.sql(_UNMATCHED_LABELS).fetchall()[0] if task.labels.num_rows else (0, None, None)
    if task.tables != ("steps",):
        actions(con)
        flows(con, policy, deferred)  # signals wait for the recursive query (stages/tables.py)
        verdicts(con, policy)
    if "verdicts" in task.tables:
        landed = con.execute("select (select count(*) from verdicts) + (select count(*) from attrition)").fetchall()[0][0]
        if landed != n_records:  # a bug, never the input's fault: refuse to publish
            raise SchemaValidationError(f"shard {task.shard}: {n_records} records in, {landed} in verdicts + attrition")
    files: dict[str, list[list[Any]]] = {}
    _drop_tables(con, keep=set(task.tables))
    for table in task.tables:
        bounds = slice_bounds(con, table)
        if bounds is not None:  # many heavy trajectories: validated a slice at a time (sliced.py)
            rel = f"{table}/{stem}.parquet"
            files[table] = [[rel, None, write_sliced(con, table, bounds, out / rel)]]
            _drop_tables(con, keep=set(task.tables) - set(files))
            continue
        frame = con.table(table).pl()
        _drop_tables(con, keep=set(task.tables) - set(files) - {table})  # DuckDB's copy goes first
        files[table] = _write_table(table, conform(table, frame), out, stem)
        del frame
    con.close()
    marker = {"plan": task.work.plan, "token": task.work.token, "priors": priors_digest(task.priors),
              "records": n_records, "ids": f"ids/{stem}.parquet", "files": files,
              "labels_unmatched": [unmatched[0], unmatched[1], unmatched[2]]}
    write_marker(out / f"{stem}.done", marker)
    return marker


def score_shard(task: ShardTask) -> dict[str, Any]:
    """Score one shard unless this run already did (with the same priors); returns its marker."""
    found = task.work.done(task.shard)
    if found is not None and found.get("priors") == priors_digest(task.priors):
        return found
    remote = task.work.remote
    if remote is None:
        return _score_local(task, task.work.local)
    local = Path(tempfile.mkdtemp(prefix=f"litmus-gate-shard-{task.shard}-"))
    try:
        marker = _score_local(replace(task, work=replace(task.work, local=local)), local)
        with work_guard(remote):
            for rel in [marker["ids"]] + [f[0] for files in marker["files"].values() for f in files]:
                upload_file(local / "out" / rel, remote / "out" / rel)
            upload_file(local / "out" / f"{task.work.name(task.shard)}.done", task.work.marker(task.shard))  # last
        return marker
    finally:
        shutil.rmtree(local, ignore_errors=True)


def first_pass(task: ShardTask) -> dict[str, Any]:
    """The first pass: any marker of this run will do (a shard's ids do not depend on priors)."""
    found = task.work.done(task.shard)
    return found if found is not None else score_shard(task)
