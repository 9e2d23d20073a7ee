"""Schema of ``metrics``: per scorer x suite x slice, only when gold labels are given.

Undefined rates (no positives predicted, no positives in gold) are null, never 0.
"""

from typing import Optional

import pandera.polars as pa
import polars as pl

GRAIN = ("scorer", "suite", "slice")
SCORERS = ["flow_aware", "execution_gated", "stepwise_min", "all_safe"]


class Schema(pa.DataFrameModel):
    """Wilson 95% intervals for precision, recall and F1 (via J = tp / (tp + fp + fn), F1 = 2J / (1 + J))."""

    scorer: str = pa.Field(isin=SCORERS)
    suite: str
    slice: str
    tp: pl.Int64 = pa.Field(ge=0)
    fp: pl.Int64 = pa.Field(ge=0)
    fn: pl.Int64 = pa.Field(ge=0)
    tn: pl.Int64 = pa.Field(ge=0)
    n_unscored: pl.Int64 = pa.Field(ge=0)
    precision: Optional[float] = pa.Field(nullable=True, ge=0, le=1)
    recall: Optional[float] = pa.Field(nullable=True, ge=0, le=1)
    f1: Optional[float] = pa.Field(nullable=True, ge=0, le=1)
    precision_low: Optional[float] = pa.Field(nullable=True, ge=0, le=1)
    precision_high: Optional[float] = pa.Field(nullable=True, ge=0, le=1)
    recall_low: Optional[float] = pa.Field(nullable=True, ge=0, le=1)
    recall_high: Optional[float] = pa.Field(nullable=True, ge=0, le=1)
    f1_low: Optional[float] = pa.Field(nullable=True, ge=0, le=1)
    f1_high: Optional[float] = pa.Field(nullable=True, ge=0, le=1)

    class Config:
        strict = True
        unique = list(GRAIN)
