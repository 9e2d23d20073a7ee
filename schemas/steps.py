"""Schema of ``steps``: one row per transcript event (SPEC section 2 explode order)."""

from typing import Optional

import pandera.polars as pa
import polars as pl

GRAIN = ("trajectory_id", "step_idx")
KINDS = ["system", "user", "assistant_text", "tool_call", "tool_result"]
STATUSES = ["executed", "failed", "blocked", "unknown"]


class Schema(pa.DataFrameModel):
    """Steps of every trajectory that passed the record-level checks (one rejected at step
    level keeps its steps, for diagnosis: join `verdicts` to keep scored ones);
    exec_status only on tool calls and results."""

    trajectory_id: str
    step_idx: pl.Int64 = pa.Field(ge=0)
    suite: str
    message_idx: pl.Int64 = pa.Field(ge=0)
    kind: str = pa.Field(isin=KINDS)
    tool_name: Optional[str] = pa.Field(nullable=True)
    call_id: Optional[str] = pa.Field(nullable=True)
    arguments: Optional[str] = pa.Field(nullable=True)
    args_ok: Optional[bool] = pa.Field(nullable=True)
    content: Optional[str] = pa.Field(nullable=True)
    error_type: Optional[str] = pa.Field(nullable=True)
    error_text: Optional[str] = pa.Field(nullable=True)
    exec_status: Optional[str] = pa.Field(nullable=True, isin=STATUSES)
    result_step_idx: Optional[pl.Int64] = pa.Field(nullable=True, ge=0)
    call_step_idx: Optional[pl.Int64] = pa.Field(nullable=True, ge=0)
    label: str = pa.Field(isin=["safe", "unsafe"])
    score: Optional[float] = pa.Field(nullable=True, ge=0.0, le=1.0)
    label_source: str = pa.Field(isin=["input", "rules"])
    label_rule: Optional[str] = pa.Field(nullable=True)

    class Config:
        strict = True
        unique = list(GRAIN)

    @pa.dataframe_check
    def tool_calls_have_exec_status(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """Every tool call is an attempt, and every attempt is executed, failed, blocked or
        unknown (SPEC section 2: no result at all is unknown)."""
        return data.lazyframe.select((pl.col("kind") != "tool_call") | pl.col("exec_status").is_not_null())

    @pa.dataframe_check
    def step_idx_is_the_position(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """step_idx is the 0-based position in the trajectory's event stream: with the grain
        unique and step_idx >= 0, a largest step_idx of n - 1 means exactly 0..n-1."""
        return data.lazyframe.select(
            pl.col("step_idx").max().over("trajectory_id") == pl.len().over("trajectory_id") - 1)
