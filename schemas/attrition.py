"""Schema of ``attrition``: one row per rejected input record."""

from typing import Optional

import pandera.polars as pa
import polars as pl

from schemas import PARTITIONS

# One rejected input record. A record is usually one line (or one file) of its input, but
# one line of an OTLP export holds many traces, each its own record: two rejected traces
# of one line differ by trajectory_id, or (a trace that cannot be read has no id) by the
# detail naming the trace. (source_file, source_line) alone refused such a run (exit 4).
GRAIN = ("source_file", "source_line", "trajectory_id", "detail")
PARTITION = PARTITIONS["attrition"]
REASONS = [
    "record_too_large", "malformed_record", "missing_trajectory_id", "duplicate_trajectory_id",
    "empty_trajectory", "orphan_tool_result", "unparseable_arguments", "unknown_tool",
    "opaque_step", "missing_tool_result",
]


class Schema(pa.DataFrameModel):
    """trajectory_id is null when the record has none (or it could not be read)."""

    trajectory_id: Optional[str] = pa.Field(nullable=True)
    suite: str
    reason: str = pa.Field(isin=REASONS)
    detail: str
    source_file: str
    source_line: pl.Int64 = pa.Field(ge=1)

    class Config:
        strict = True
        unique = list(GRAIN)
