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
