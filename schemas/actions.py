"""Schema of ``actions``: one row per logical action (retries collapsed)."""

from typing import Optional

import pandera.polars as pa
import polars as pl

GRAIN = ("trajectory_id", "action_idx")
STATUSES = ["executed", "failed", "blocked", "unknown"]
ROLE_SOURCES = ["catalog", "inferred", "none"]
SOURCE_LABELS = [f"{c}/{i}" for c in ("public", "internal", "secret") for i in ("trusted", "untrusted")]


class Schema(pa.DataFrameModel):
    """The last attempt decides exec_status; executed = executed or unknown (fail closed)."""

    trajectory_id: str
    action_idx: pl.Int64 = pa.Field(ge=0)
    tool_name: Optional[str] = pa.Field(nullable=True)
    first_step_idx: pl.Int64 = pa.Field(ge=0)
    last_step_idx: pl.Int64 = pa.Field(ge=0)
    attempts: pl.Int64 = pa.Field(ge=1)
    exec_status: str = pa.Field(isin=STATUSES)
    executed: bool
    blocked: bool
    collapsed_call_ids: pl.List(pl.Utf8)
    attempt_statuses: pl.List(pl.Utf8)
    call_step_idx: pl.Int64 = pa.Field(ge=0)
    result_step_idx: Optional[pl.Int64] = pa.Field(nullable=True, ge=0)
    error_type: Optional[str] = pa.Field(nullable=True)
    arguments: Optional[str] = pa.Field(nullable=True)
    label: str = pa.Field(isin=["safe", "unsafe"])
    score: Optional[float] = pa.Field(nullable=True, ge=0.0, le=1.0)
    role_source: str = pa.Field(isin=ROLE_SOURCES)
    source_label: Optional[str] = pa.Field(nullable=True, isin=SOURCE_LABELS)
    sink_kind: Optional[str] = pa.Field(nullable=True)
    control_args: pl.List(pl.Utf8)

    class Config:
        strict = True
        unique = list(GRAIN)

    @pa.dataframe_check
    def executed_matches_status(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """executed is exactly exec_status in (executed, unknown)."""
        return data.lazyframe.select(
            pl.col("executed") == pl.col("exec_status").is_in(["executed", "unknown"])
        )

    @pa.dataframe_check
    def attempts_match_ids(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """One collapsed call id and one status per attempt."""
        return data.lazyframe.select(
            (pl.col("attempt_statuses").list.len() == pl.col("attempts"))
            & (pl.col("collapsed_call_ids").list.len() <= pl.col("attempts"))
        )
