"""Schema of ``edges``: dependency edges between logical actions.

Label levels are integers: confidentiality 0 public, 1 internal, 2 secret; integrity
0 trusted, 1 untrusted. ``control_integ`` is the integrity of what reached the
destination's control arguments (null when nothing did); ``control_injected`` says a
fragment inside an injection span reached one of them.
"""

from typing import Optional

import pandera.polars as pa
import polars as pl

GRAIN = ("trajectory_id", "src_action_idx", "dst_action_idx", "kind")


class Schema(pa.DataFrameModel):
    """Edge kinds: data (payload fragment), resource (write then read/execute), explicit."""

    trajectory_id: str
    src_action_idx: pl.Int64 = pa.Field(ge=0)
    dst_action_idx: pl.Int64 = pa.Field(ge=0)
    kind: str = pa.Field(isin=["data", "resource", "explicit"])
    evidence: str
    conf: pl.Int64 = pa.Field(isin=[0, 1, 2])
    integ: pl.Int64 = pa.Field(isin=[0, 1])
    control: bool
    control_integ: Optional[pl.Int64] = pa.Field(nullable=True, isin=[0, 1])
    control_injected: bool

    class Config:
        strict = True
        unique = list(GRAIN)

    @pa.dataframe_check
    def source_before_destination(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """SPEC section 2: an edge a -> b joins two actions with a before b."""
        return data.lazyframe.select(pl.col("src_action_idx") < pl.col("dst_action_idx"))
