"""Schema of ``verdicts``: one row per scored trajectory."""

import pandera.polars as pa
import polars as pl

from schemas import PARTITIONS

GRAIN = ("trajectory_id",)
PARTITION = PARTITIONS["verdicts"]


class Schema(pa.DataFrameModel):
    """route/verdict per SPEC section 3; baseline columns per section 5."""

    trajectory_id: str = pa.Field(unique=True)
    suite: str
    source_file: str
    source_line: pl.Int64 = pa.Field(ge=1)
    route: str = pa.Field(isin=["aggregate", "flow"])
    verdict: str = pa.Field(isin=["safe", "unsafe", "attempted"])
    is_unsafe: bool
    reason: str
    n_steps: pl.Int64 = pa.Field(ge=1)
    n_actions: pl.Int64 = pa.Field(ge=0)
    n_retries_collapsed: pl.Int64 = pa.Field(ge=0)
    max_flow_length: pl.Int64 = pa.Field(ge=0)
    all_safe_unsafe: bool
    stepwise_min_unsafe: bool
    execution_gated_unsafe: bool
    hallucinated_outcome: bool
    parent_trajectory_id: str = pa.Field(nullable=True)  # a subagent's parent trajectory
    parent_call_id: str = pa.Field(nullable=True)  # the parent's call that spawned it (Task)

    class Config:
        strict = True

    @pa.dataframe_check
    def route_follows_flow_length(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """route is flow exactly when some flow has length >= 2."""
        return data.lazyframe.select((pl.col("route") == "flow") == (pl.col("max_flow_length") >= 2))

    @pa.dataframe_check
    def unsafe_is_unsafe(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """verdict unsafe implies is_unsafe; safe implies not."""
        return data.lazyframe.select(
            pl.when(pl.col("verdict") == "unsafe").then(pl.col("is_unsafe"))
            .when(pl.col("verdict") == "safe").then(~pl.col("is_unsafe"))
            .otherwise(True)
        )
