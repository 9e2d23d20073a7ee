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
    def attempts_form_a_retry_chain(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """SPEC section 2: every attempt but the last failed, the last decides the action's
        exec_status, a blocked attempt always stands alone (blocked = its exec_status), and
        action_idx numbers a trajectory's actions 0..n-1 (with the grain unique and >= 0)."""
        statuses = pl.col("attempt_statuses")
        return data.lazyframe.select(
            statuses.list.head(statuses.list.len() - 1).list.eval(pl.element() == "failed").list.all()
            & (statuses.list.last() == pl.col("exec_status"))
            & (pl.col("blocked") == (pl.col("exec_status") == "blocked"))
            & (~pl.col("blocked") | (pl.col("attempts") == 1))
            & (pl.col("first_step_idx") <= pl.col("last_step_idx"))
            & (pl.col("action_idx").max().over("trajectory_id") == pl.len().over("trajectory_id") - 1)
        )

    @pa.dataframe_check
    def attempts_match_ids(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """One collapsed call id and one status per attempt."""
        return data.lazyframe.select(
            (pl.col("attempt_statuses").list.len() == pl.col("attempts"))
            & (pl.col("collapsed_call_ids").list.len() <= pl.col("attempts"))
        )
