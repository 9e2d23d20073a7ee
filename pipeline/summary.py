"""The short summary printed after ``make run`` (and ``score --summary``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import duckdb

from pipeline.writer import table_files

if TYPE_CHECKING:
    from pipeline.run import RunResult


def print_summary(result: RunResult) -> None:
    """Records read, verdict counts by route, rejected by reason, where the tables are."""
    out = result.out
    con = duckdb.connect()
    print(f"litmus-gate: {result.records_read} records read -> "
          f"{result.row_counts.get('verdicts', 0)} scored, {result.row_counts.get('attrition', 0)} rejected")
    if result.row_counts.get("verdicts"):
        rows = con.execute(
            "select route, verdict, count(*) from read_parquet(?, hive_partitioning = true) "
            "group by all order by 1, 2", [table_files(out, "verdicts")]).fetchall()
        print("verdicts by route:")
        for route, verdict, n in rows:
            print(f"  {route:<10} {verdict:<10} {n:>7}")
    if result.row_counts.get("attrition"):
        rows = con.execute(
            "select reason, count(*) from read_parquet(?, hive_partitioning = true) group by all order by 2 desc, 1",
            [table_files(out, "attrition")]).fetchall()
        print("rejected by reason:")
        for reason, n in rows:
            print(f"  {reason:<24} {n:>7}")
    print(f"tables: {', '.join(sorted(result.row_counts))} under {out}/ (manifest.json beside them)")
