"""Duplicate trajectory ids across shards, and label ids absent from the input.

Each shard writes ``ids/shard-K.<token>.parquet``: its trajectory ids and how many of
its records of each are scorable copies. Shards are contiguous in input order, so an
id's copies in shard ``k`` come after all its copies in shards ``< k``: the number of
earlier copies (``priors``) is a running sum over shards. Only shards that share an id
with an earlier shard get priors, and only those are scored a second time with them;
a corpus without duplicates across shards is scored once. The id files are small
(one row per id); DuckDB reads them under a memory limit and may spill.
"""

from __future__ import annotations

from itertools import groupby
from pathlib import Path

import duckdb
import pyarrow as pa

_PRIORS = """
with ids as (
    select shard, trajectory_id, n_copies from read_parquet($files, hive_partitioning = false)
),
running as (
    select shard, trajectory_id, n_copies,
           coalesce(sum(n_copies) over (partition by trajectory_id order by shard
                                        rows between unbounded preceding and 1 preceding), 0) as n
    from ids
),
final as (
    -- n as BIGINT: a sum of BIGINTs is a HUGEINT (DECIMAL in Arrow), and the priors
    -- schema's int64 then needs an Arrow cast, which imports pyarrow.compute
    select shard, trajectory_id, n::bigint as n from running where n > 0 and n_copies > 0
)
select * from final order by shard, trajectory_id
"""


def _connect(work: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(config={"threads": 1, "memory_limit": "512MB", "temp_directory": str(work / "ids-tmp")})
    con.execute("set enable_progress_bar = false")
    return con


def shard_priors(work: Path, id_files: list[str], n_shards: int) -> list[pa.Table]:
    """For each shard, ``(trajectory_id, n)``: its ids' scorable copies in earlier shards."""
    from pipeline.stages.tables import PRIOR_COPIES_SCHEMA

    out = [PRIOR_COPIES_SCHEMA.empty_table() for _ in range(n_shards)]
    if not id_files:
        return out
    with _connect(work) as con:
        found = con.sql(_PRIORS, params={"files": id_files}).to_arrow_table()
    # the rows come ordered by shard: each shard's are one slice (no pyarrow.compute
    # filter, whose import costs every run's driver about 30 ms)
    start = 0
    for shard, run in groupby(found.column("shard").to_pylist()):
        length = sum(1 for _ in run)
        piece = found.slice(start, length)
        # from_arrays checks the types against the schema without casting (see _PRIORS)
        out[shard] = pa.Table.from_arrays([piece.column("trajectory_id"), piece.column("n")],
                                          schema=PRIOR_COPIES_SCHEMA)
        start += length
    return out


def unknown_label_ids(work: Path, id_files: list[str], labels: pa.Table, limit: int = 3) -> list[str]:
    """Trajectory ids named by the labels file but absent from the input."""
    if labels.num_rows == 0:
        return []
    if not id_files:
        return sorted({str(i) for i in labels.column("trajectory_id").to_pylist()})[:limit]
    with _connect(work) as con:
        con.register("labels_in", labels)
        rows = con.execute(
            "select distinct l.trajectory_id from labels_in l anti join "
            "read_parquet(?, hive_partitioning = false) r using (trajectory_id) order by 1 limit ?",
            [id_files, limit]).fetchall()
    return [r[0] for r in rows]
