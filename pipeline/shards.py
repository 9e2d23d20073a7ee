"""Sharded execution: bounded memory on any corpus size, worker processes, resume.

1. **split**: records stream from the readers in bounded chunks; DuckDB assigns each
   record a shard by a hash of its trajectory id (so every copy of an id lands in the
   same shard and duplicate detection stays exact) and the chunk is spilled to
   ``WORK/spill/shard-K/``. Only one chunk is in memory at a time.
2. **score**: each shard runs every stage in its own DuckDB connection (bounded by
   ``memory_limit``) in a worker process and writes its validated tables to
   ``WORK/out/<table>/shard-K.parquet`` (temp file, then rename) and a done marker.
3. **combine** (``pipeline/combine.py``): each table's shard files are sorted by the
   table's grain into one Parquet dataset with DuckDB's external sort, so the result
   does not depend on shard or worker count and memory does not grow with the corpus.

``WORK`` is a sibling folder of RUN_DIR (or under ``--work-dir``, which may be a URI:
see ``pipeline.remote_run``); ``--resume`` reuses a work folder whose plan
(inputs, policy, labels, shard count) matches, skipping the finished phases/shards.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import resource
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.policy import Policy, load_policy
from pipeline.records import RawRecord
from pipeline.stages import actions, connect, flows, records_table, register_inputs, steps, verdicts
from pipeline.config import RunConfig
from pipeline.errors import SchemaValidationError, UsageError
from pipeline.storage import Remote
from pipeline.writer import conform

CHUNK_ROWS = 20_000
CHUNK_BYTES = 64 * 2**20
MAX_OPEN_SPILLS = max(16, min(2_000, resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 256))
_SHARD_OF = """
select *, (hash(coalesce(try(json_extract_string(text, '$.trajectory_id')), 'record:' || record_id))
           % $n)::bigint as shard,
       try(json_extract_string(text, '$.trajectory_id')) as raw_id
from chunk
"""


@dataclass(frozen=True)
class ShardTask:
    """What a worker needs to score one shard (picklable)."""

    shard: int
    work: Path
    policy_file: Path | None
    labels: pa.Table
    tables: tuple[str, ...]
    threads: int
    memory_limit: str
    remote: Remote | None = None  # the shared work folder (--work-dir URI); ``work`` is then unused


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


def split(records: Iterable[RawRecord], work: Path, n_shards: int) -> int:
    """Spill records to per-shard Parquet; returns the number of records read.

    Each shard's file stays open and gets one row group per chunk, so the number of
    files is the number of shards, not shards x chunks (up to ``MAX_OPEN_SPILLS``
    shards; beyond that, one file per shard and chunk)."""
    spill = work / "spill"
    shutil.rmtree(spill, ignore_errors=True)
    con = duckdb.connect(config={"threads": 1, "memory_limit": "1GB"})
    con.execute("set enable_progress_bar = false")
    writers: dict[int, pq.ParquetWriter] = {}
    n_read = 0
    try:
        for part, chunk in enumerate(chunks(records)):
            con.register("chunk", records_table(chunk, first_id=n_read))
            n_read += len(chunk)
            tagged = con.sql(_SHARD_OF, params={"n": n_shards}).to_arrow_table().drop_columns(["raw_id"])
            con.unregister("chunk")
            for shard in range(n_shards):
                rows = tagged.filter(pc.equal(tagged.column("shard"), shard)).drop_columns(["shard"])
                if not rows.num_rows:
                    continue
                folder = spill / f"shard-{shard}"
                folder.mkdir(parents=True, exist_ok=True)
                if n_shards > MAX_OPEN_SPILLS:
                    pq.write_table(rows, folder / f"part-{part:06d}.parquet", compression="zstd")
                    continue
                if shard not in writers:
                    writers[shard] = pq.ParquetWriter(folder / "part-000000.parquet", rows.schema, compression="zstd",
                                                      write_statistics=False)  # no min/max of texts per row group
                writers[shard].write_table(rows)
            del tagged
    finally:
        for writer in writers.values():
            writer.close()
        con.close()
    (work / "split.done").write_text(json.dumps({"records_read": n_read}))
    return n_read


def unknown_label_ids(work: Path, labels: pa.Table, limit: int = 3) -> list[str]:
    """Trajectory ids named by the labels file but absent from the spilled input."""
    if labels.num_rows == 0:
        return []
    con = duckdb.connect(config={"threads": 1})
    con.register("labels_in", labels)
    parts = sorted(str(p) for p in (work / "spill").glob("shard-*/*.parquet"))
    if not parts:
        return sorted({str(i) for i in labels.column("trajectory_id").to_pylist()})[:limit]
    rows = con.execute(
        "select distinct l.trajectory_id from labels_in l anti join "
        "(select distinct try(json_extract_string(text, '$.trajectory_id')) as trajectory_id "
        " from read_parquet(?, hive_partitioning = false)) r using (trajectory_id) order by 1 limit ?",
        [parts, limit]).fetchall()
    return [r[0] for r in rows]


def score_shard(task: ShardTask) -> dict[str, int]:
    """Run every stage on one shard; write its validated tables. Returns row counts."""
    if task.remote is not None:
        from pipeline.remote_run import score_remote_shard

        return score_remote_shard(task)
    done = task.work / "out" / f"shard-{task.shard}.done"
    if done.exists():
        return json.loads(done.read_text())
    policy = load_policy(task.policy_file)
    con = connect(RunConfig(inputs=(), out=task.work, threads=task.threads, memory_limit=task.memory_limit))
    folder = task.work / "spill" / f"shard-{task.shard}"
    parts = sorted(str(p) for p in folder.glob("*.parquet")) if folder.is_dir() else []
    if parts:  # an explicit file list: RUN_DIR names may hold glob characters
        records = con.sql("select * from read_parquet($files, hive_partitioning = false) order by record_id",
                          params={"files": parts}).to_arrow_table()
    else:
        records = records_table([])
    register_inputs(con, records, policy, task.labels)
    n_records = records.num_rows
    steps(con)
    con.unregister("records")  # the shard's text is no longer needed: let it go
    del records
    if task.tables != ("steps",):
        actions(con)
        flows(con, policy)
        verdicts(con, policy)
    if "verdicts" in task.tables:
        landed = con.execute("select (select count(*) from verdicts) + (select count(*) from attrition)").fetchall()[0][0]
        if landed != n_records:  # a bug, never the input's fault: refuse to publish
            raise SchemaValidationError(
                f"shard {task.shard}: {n_records} records in, {landed} in verdicts + attrition")
    counts = {}
    for table in task.tables:
        frame = conform(table, con.table(table).pl())
        target = task.work / "out" / table / f"shard-{task.shard}.parquet"
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".tmp")
        frame.write_parquet(tmp, compression="zstd")
        os.replace(tmp, target)
        counts[table] = frame.height
    done.write_text(json.dumps(counts))
    return counts


def shard_done(task: ShardTask) -> bool:
    """True when the shard's done marker exists (in the shared work folder if any)."""
    if task.remote is not None:
        return (task.remote / "out" / f"shard-{task.shard}.done").is_file()
    return (task.work / "out" / f"shard-{task.shard}.done").exists()


def _progress(done: int, total: int, started: float, records: int) -> None:
    elapsed = max(time.monotonic() - started, 1e-6)
    rate = records * done / total / elapsed if total else 0.0
    eta = elapsed / done * (total - done) if done else 0.0
    line = f"shards {done}/{total}  {rate:,.0f} records/s  ETA {eta:,.0f}s"
    if sys.stderr.isatty():
        sys.stderr.write("\r" + line + ("\n" if done == total else ""))
    else:
        sys.stderr.write(f"litmus-gate: {line}\n")
    sys.stderr.flush()


def _score_with_ray(tasks: list[ShardTask], workers: int, address: str | None,
                    on_done: Callable[[int], None]) -> None:
    """The same shard function as Ray tasks (optional extra: ``litmus-gate[ray]``).

    Every node must see the work folder: at the same path (a shared mount), or as a
    URI (``--work-dir s3://...``, see ``pipeline.remote_run``)."""
    try:
        import ray
    except ImportError as exc:
        raise UsageError("--engine ray needs Ray", "pip install 'litmus-gate[ray]'") from exc
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=address, num_cpus=None if address else workers, include_dashboard=False,
                 log_to_driver=False, configure_logging=False)
    try:
        remote = ray.remote(score_shard)
        pending = [remote.remote(t) for t in tasks]
        done = 0
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            ray.get(ready)
            done += 1
            on_done(done)
    finally:
        if started_here:
            ray.shutdown()


def score_shards(tasks: list[ShardTask], workers: int, records: int, progress: bool,
                 engine: str = "local", address: str | None = None) -> None:
    """Score every shard: in worker processes when more than one worker and shard, or
    as Ray tasks with ``engine="ray"``."""
    started = time.monotonic()
    finished = [t for t in tasks if shard_done(t)]
    if finished:
        sys.stderr.write(f"litmus-gate: resuming: {len(finished)} of {len(tasks)} shards already done\n")
    if engine == "ray":
        _score_with_ray(tasks, workers, address,
                        lambda i: _progress(i, len(tasks), started, records) if progress and len(tasks) > 1 else None)
        return
    if workers <= 1 or len(tasks) <= 1:
        for i, task in enumerate(tasks, start=1):
            score_shard(task)
            if progress and len(tasks) > 1:
                _progress(i, len(tasks), started, records)
        return
    ctx = multiprocessing.get_context("spawn")  # DuckDB threads do not survive fork
    with ctx.Pool(processes=min(workers, len(tasks))) as pool:
        for i, _ in enumerate(pool.imap_unordered(score_shard, tasks), start=1):
            if progress and len(tasks) > 1:
                _progress(i, len(tasks), started, records)


def plan_digest(files: list[Path], digests: list[str], policy: Policy, labels_sha: str | None,
                n_shards: int, fmt: str, tables: tuple[str, ...]) -> str:
    """What a work folder was made for: resume only reuses a matching one."""
    plan = {"inputs": [[str(p), d] for p, d in zip(files, digests)], "policy": policy.sha256,
            "labels": labels_sha, "shards": n_shards, "format": fmt, "tables": list(tables)}
    return hashlib.sha256(json.dumps(plan, sort_keys=True).encode()).hexdigest()


def prepare_work(out: Path, digest: str, resume: bool) -> Path:
    """The work folder beside RUN_DIR: reused on --resume when its plan matches."""
    work = out.resolve().parent / f".{out.name}.work"
    plan = work / "plan.sha256"
    if resume and plan.is_file() and plan.read_text() == digest:
        return work
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    plan.write_text(digest)
    return work
