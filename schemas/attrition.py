"""Schema of ``attrition``: one row per rejected input record."""

from typing import Optional

import pandera.polars as pa
import polars as pl

from schemas import PARTITIONS

GRAIN = ("source_file", "source_line")
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
