"""Reachability (``sql/flows.sql``) a batch of trajectories at a time, so a shard's memory
does not follow how many large graphs it holds.

The recursive query keeps every state it reached with its witness path until it ends,
and DuckDB cannot spill it: a shard cut by input bytes may hold hundreds of trajectories
each within the per-trajectory bounds (``settings.max_reach_pairs``, ``max_reach_work``)
whose states together outgrow the connection's ``memory_limit``. Measured: 200 chains of
100 steps, each reading a secret and the previous file into the next (5 MB), raised
OutOfMemory at 640 MiB; 400 did at 2 GB. ``sql/reach_sizes.sql`` bounds each
trajectory's states and levels; the trajectories are cut, in id order, into batches whose
summed ``n_states x (n_levels + ROW_SLOTS)`` stays within the memory limit divided by
``BYTES_PER_SLOT``, and each batch is one run of the query, its rows appended to
``flows``. A shard whose graphs fit (every normal one) is one batch: the query as before.
The rows are those of one query over the whole shard (trajectories never interact).
"""

from __future__ import annotations

import duckdb

from pipeline.config import memory_bytes

# what a state costs beyond its path, in path entries (row, key and hash-table overhead)
ROW_SLOTS = 6
# bytes of the connection's memory per (state x path entry) slot counted in a batch. The
# chains above count about 1.1 million slots each: 200 of them (3.1 bytes of the 640 MiB
# limit per slot) failed, 100 (6.2 bytes) passed; 16 keeps a margin of 2.5x over the latter
BYTES_PER_SLOT = 16


def memory_limit_bytes(con: duckdb.DuckDBPyConnection) -> int | None:
    """The connection's ``memory_limit`` in bytes, as DuckDB shows it (``640.0 MiB``);
    None when it shows none it can be read from."""
    shown = str(con.execute("select current_setting('memory_limit')").fetchall()[0][0])
    try:
        return memory_bytes(shown)
    except ValueError:
        return None


def flow_batches(con: duckdb.DuckDBPyConnection, budget: int | None) -> list[tuple[str | None, str | None]]:
    """``(first, until)``: the trajectory ids of each batch, from ``first`` up to but not
    including ``until`` (None: no bound; the batches cover every id), whose summed slots
    (``reach_sizes``, rejected trajectories left out) stay within ``budget`` (a trajectory
    over it alone is a batch); ``[(None, None)]``: one batch."""
    if budget is None:
        return [(None, None)]
    sizes = con.execute("""
        select trajectory_id, n_states * (n_levels + $slots) from reach_sizes
        anti join graph_rejects using (trajectory_id) anti join edge_rejects using (trajectory_id)
        order by trajectory_id""", {"slots": ROW_SLOTS}).fetchall()
    starts: list[str | None] = [None]
    held = 0
    for tid, n in sizes:
        if held and held + n > budget:
            starts.append(tid)  # a new batch starts here
            held = 0
        held += n
    return list(zip(starts, [*starts[1:], None]))
