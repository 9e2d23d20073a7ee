"""The short summary printed after ``make run`` (and ``score --summary``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from pipeline.storage import Location, Remote
from pipeline.outputs.query import read_table
from pipeline.outputs.writer import table_files

if TYPE_CHECKING:
    from pipeline.run import RunResult


def run_table(con: duckdb.DuckDBPyConnection, out: Location, table: str) -> duckdb.DuckDBPyRelation:
    """One table of a run as a relation (a URI run is read through pyarrow datasets)."""
    if isinstance(out, Remote):
        import pyarrow.dataset as ds

        return con.from_arrow(ds.dataset((out / table).path, filesystem=out.fs, format="parquet"))
    return read_table(con, table_files(Path(out), table), table)


def print_summary(result: RunResult) -> None:
    """Records read, verdict counts by route, rejected by reason, where the tables are."""
    out = result.out
    con = duckdb.connect()
    print(f"litmus-gate: {result.records_read} records read -> "
          f"{result.row_counts.get('verdicts', 0)} scored, {result.row_counts.get('attrition', 0)} rejected")
    if result.row_counts.get("verdicts"):
        rows = run_table(con, out, "verdicts").query(
            "v", "select route, verdict, count(*) from v group by all order by 1, 2").fetchall()
        print("verdicts by route:")
        for route, verdict, n in rows:
            print(f"  {route:<10} {verdict:<10} {n:>7}")
    if result.row_counts.get("attrition"):
        rows = run_table(con, out, "attrition").query(
            "a", "select reason, count(*) from a group by all order by 2 desc, 1").fetchall()
        print("rejected by reason:")
        for reason, n in rows:
            print(f"  {reason:<24} {n:>7}")
    print(f"tables: {', '.join(sorted(result.row_counts))} under {out}/ (manifest.json beside them)")
