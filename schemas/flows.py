"""Schema of ``flows``: source -> sink pairs with a witness path."""

import pandera.polars as pa
import polars as pl

GRAIN = ("trajectory_id", "source_action_idx", "sink_action_idx")
LABELS = [f"{c}/{i}" for c in ("public", "internal", "secret") for i in ("trusted", "untrusted")]
# the bundled kinds; a policy may declare more under [sinks] (each with what it accepts), and
# a catalog tool may name one (pipeline/policy_checks.py), so sink_kind is any kind's name
SINK_KINDS = ["egress", "send_mail", "payment", "share", "execute", "destructive", "privileged"]


class Schema(pa.DataFrameModel):
    """length counts the logical actions on the path (a source that is its own sink: 1)."""

    trajectory_id: str
    source_action_idx: pl.Int64 = pa.Field(ge=0)
    sink_action_idx: pl.Int64 = pa.Field(ge=0)
    length: pl.Int64 = pa.Field(ge=1)
    label: str = pa.Field(isin=LABELS)
    sink_kind: str = pa.Field(str_length={"min_value": 1})
    violation: bool
    sink_blocked: bool
    via_control: bool
    path: pl.List(pl.Int64)

    class Config:
        strict = True
        unique = list(GRAIN)

    @pa.dataframe_check
    def path_matches_length(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """The witness path runs from the source to the sink and has `length` actions."""
        return data.lazyframe.select(
            (pl.col("path").list.len() == pl.col("length"))
            & (pl.col("path").list.first() == pl.col("source_action_idx"))
            & (pl.col("path").list.last() == pl.col("sink_action_idx"))
        )
