"""Combine: each table's shard files into the run's table, sorted by grain, in bounded memory.

Every shard file was validated against the table's Pandera schema by its worker; here
DuckDB reads all of them and sorts by the table's grain (partition column first for
partitioned tables) with an external sort: under ``memory_limit`` it spills to
``WORK/sort-tmp`` instead of growing, so the parent's memory does not grow with the
corpus. The sorted rows stream out in Arrow batches to a Parquet writer; a partitioned
table gets one folder per partition value (``partition_dir_name``), opened as the
sorted stream reaches it. The order is a function of the rows alone (the grain is
unique), so tables do not depend on shard or worker counts.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.errors import SchemaValidationError, StorageError
from pipeline.writer import partition_dir_name
from schemas import schema_module

BATCH_ROWS = 65_536


def shard_files(work: Path, table: str) -> list[str]:
    """One table's shard outputs in the work folder, as an explicit sorted list."""
    return sorted(str(p) for p in (work / "out" / table).glob("shard-*.parquet"))


def _writer(path: Path, schema: pa.Schema, new_folder: bool = False) -> pq.ParquetWriter:
    if new_folder:
        # an existing partition folder would be overwritten: two values that one
        # filesystem cannot tell apart (case-insensitive) must fail loudly, never merge
        path.parent.mkdir()
    return pq.ParquetWriter(path, schema, compression="zstd", write_statistics=True)


def sorted_relation(con: duckdb.DuckDBPyConnection, files: list[str], order: list[str]) -> duckdb.DuckDBPyRelation:
    """Parquet ``files`` as one relation ordered by ``order`` (nulls last)."""
    keys = ", ".join(f'"{name}" asc nulls last' for name in order)  # our schema's names, never data
    return con.sql(f"select * from read_parquet($files, hive_partitioning = false) order by {keys}",
                   params={"files": files})


@contextmanager
def _sorted_batches(work: Path, files: list[str], order: list[str], memory_limit: str,
                    threads: int) -> Iterator[pa.RecordBatchReader]:
    with duckdb.connect(config={"threads": threads, "memory_limit": memory_limit,
                                "temp_directory": str(work / "sort-tmp")}) as con:
        con.execute("set enable_progress_bar = false")
        with sorted_relation(con, files, order).to_arrow_reader(batch_size=BATCH_ROWS) as reader:  # streams: the sort spills
            yield reader


def combine(work: Path, table: str, staging: Path, threads: int, memory_limit: str) -> int:
    """Write ``staging/<table>/`` from the shard files, sorted by grain; returns the row count."""
    module = schema_module(table)
    files = shard_files(work, table)
    if not files:
        raise SchemaValidationError(f"table {table}: no shard wrote it", "rerun with --resume")
    folder = staging / table
    folder.mkdir(parents=True, exist_ok=False)
    schema = pq.read_schema(files[0])  # every shard file was written from the same schema
    partition = getattr(module, "PARTITION", None)
    order = ([partition] if partition else []) + list(module.GRAIN)
    part_schema = schema.remove(schema.get_field_index(partition)) if partition else schema
    try:
        with _sorted_batches(work, files, order, memory_limit, threads) as batches:
            rows = _write(batches, folder, schema, part_schema, partition)
    except (duckdb.Error, pa.ArrowException) as exc:  # out of disk or memory in the sort, ...
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StorageError(f"combining table {table} failed: {first}",
                           "free disk space or memory; --resume continues from the finished shards") from exc
    return rows


def _write(batches: pa.RecordBatchReader, folder: Path, schema: pa.Schema, part_schema: pa.Schema,
           partition: str | None) -> int:
    rows = 0
    writer: pq.ParquetWriter | None = None
    current: object = None
    try:
        for batch in batches:
            rows += batch.num_rows
            if partition is None:
                writer = writer or _writer(folder / "part-0.parquet", schema)
                writer.write_batch(batch.cast(schema))
                continue
            values = batch.column(partition)
            for value in pc.unique(values).to_pylist():  # sorted stream: in order, each once
                if value != current or writer is None:
                    if writer is not None:
                        writer.close()
                    current = value
                    writer = _writer(folder / f"{partition}={partition_dir_name(value)}" / "part-0.parquet",
                                     part_schema, new_folder=True)
                piece = batch.filter(pc.equal(values, value)).drop_columns([partition])
                writer.write_batch(piece.cast(part_schema))
        if writer is None:  # no rows at all: one empty file keeps the table's columns
            pq.write_table(schema.empty_table(), folder / "part-0.parquet", compression="zstd")
    finally:
        if writer is not None:
            writer.close()
    return rows
