"""A shard's large table validated and written in slices of whole trajectories.

Each trajectory's edges, flows and steps are bounded (``settings.max_edge_pairs``,
``max_reach_pairs``, ``max_record_bytes``), but a shard may hold many trajectories just
under those bounds: 40 records of 480 writes then 480 reads of one file (9 MB) make 9.2
million edges, and Pandera's checks on the Polars copy of such a table took a worker to
5 GB (0.4 KB a row). A table of more than ``SLICE_ROWS`` rows whose grain starts with
``trajectory_id`` (never a partitioned one: those hold one row per record) is read from
DuckDB in one pass ordered by ``trajectory_id`` (a stream of Arrow batches; DuckDB sorts
within its ``memory_limit``, spilling past it) and validated and written one slice at a
time: slices are runs of whole trajectories in ``trajectory_id`` order, so each slice
sorted by grain follows the one before (the file is sorted as a whole), the grain is
unique in the table when it is in every slice, and the per-trajectory checks see whole
trajectories. The slices go into one Parquet file through PyArrow's writer (zstd level
3, statistics, as Polars writes): the table's contents are those of the unsliced path;
its bytes differ from it, and are the same for the same shard.

Each slice used to be its own ``where trajectory_id between`` query, a scan of the whole
table per slice: 57.6 of a hostile 16-million-edge shard's CPU seconds went to writing
its edges at a 1 GB cap, 27.9 in one pass (timed alone in one process: docs/design.md,
"Hostile shards"; the whole runs are in ``bench/hostile_memory.py``).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pyarrow as pa

from pipeline.errors import SchemaValidationError
from pipeline.outputs.writer import conform
from schemas import partition_of, schema_module

# the most rows of one table a worker validates at once (a trajectory larger than this, within
# its own bounds, is one slice): a slice's Arrow, Polars and Pandera copies cost about 0.8 KB
# a row at their peak, so 250,000 rows stay near 0.2 GB beside DuckDB's memory_limit
SLICE_ROWS = 250_000
# rows per Arrow batch of DuckDB's ordered result
BATCH_ROWS = 65_536


def slice_bounds(con: duckdb.DuckDBPyConnection, table: str,
                 limit: int | None = None) -> list[tuple[str, str, int]] | None:
    """``(first, last, rows)``: the first and last trajectory id and the rows of each slice of ``table`` (at most ``limit`` rows,
    default :data:`SLICE_ROWS`, unless one trajectory has more); None when the table is
    small enough to be written whole, or is not one that slices."""
    limit = SLICE_ROWS if limit is None else limit
    if partition_of(table) is not None or schema_module(table).GRAIN[0] != "trajectory_id":
        return None
    # the table's name is one of ours (schemas.TABLES), never data
    if con.execute(f'select count(*) from "{table}"').fetchall()[0][0] <= limit:
        return None
    bounds: list[tuple[str, str, int]] = []
    first = last = None
    rows = 0  # rows of the slice being built (0: none started; a NULL id is a trajectory too,
    # sorted last, and must reach conform, which refuses it, not be left out of every slice)
    counts = con.execute(f'select trajectory_id, count(*) from "{table}" group by all order by 1').fetchall()
    for tid, n in counts:
        if rows and rows + n > limit:
            bounds.append((first, last, rows))  # type: ignore[arg-type]
            rows = 0
        first = tid if rows == 0 else first
        last, rows = tid, rows + n
    if rows:
        bounds.append((first, last, rows))  # type: ignore[arg-type]
    return bounds


def _slices(con: duckdb.DuckDBPyConnection, table: str, bounds: list[tuple[str, str, int]]) -> Iterator[pa.Table]:
    """The slices of ``table`` as Arrow tables, from one query ordered by ``trajectory_id``
    (the order of :func:`slice_bounds`'s counts): slice i is the next ``rows`` rows."""
    # the table's name is one of ours (schemas.TABLES), never data
    reader = con.sql(f'select * from "{table}" order by trajectory_id').to_arrow_reader(BATCH_ROWS)
    pending: list[pa.RecordBatch] = []
    have = 0
    for _first, _last, n in bounds:
        while have < n:
            try:
                batch = reader.read_next_batch()
            except StopIteration:  # inside a generator it would surface as a bare RuntimeError
                raise SchemaValidationError(f"table {table}: fewer rows read than counted") from None
            pending.append(batch)
            have += batch.num_rows
        held = pa.Table.from_batches(pending, schema=reader.schema)
        yield held.slice(0, n)
        rest = held.slice(n)
        pending, have = rest.to_batches(), rest.num_rows
        del held, rest
    # every row is in some slice: never silently publish a table with rows left out
    while have == 0:
        try:
            have = reader.read_next_batch().num_rows
        except StopIteration:
            return
    raise SchemaValidationError(f"table {table}: more rows read than its slices counted")


def write_sliced(con: duckdb.DuckDBPyConnection, table: str, bounds: list[tuple[str, str, int]],
                 target: Path) -> int:
    """Validate and write ``table`` slice by slice (:func:`slice_bounds`) into ``target``;
    returns its rows."""
    import polars as pl
    import pyarrow.parquet as pq

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
    rows = 0
    writer: pq.ParquetWriter | None = None
    try:
        for part in _slices(con, table, bounds):
            frame = conform(table, pl.from_arrow(part))  # type: ignore[arg-type]
            del part
            arrow = frame.to_arrow()
            if writer is None:
                writer = pq.ParquetWriter(tmp, arrow.schema, compression="zstd", compression_level=3,
                                          write_statistics=True)
            writer.write_table(arrow)
            rows += frame.height
            del frame, arrow
        if writer is not None:
            writer.close()
            writer = None
        os.replace(tmp, target)
    finally:
        if writer is not None:
            writer.close()
        tmp.unlink(missing_ok=True)
    return rows
