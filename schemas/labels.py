"""Schema of the labels file written by ``litmus-gate label`` (SPEC section 4 plus
provenance): one row per judged step. Not a run table: ``score --labels`` reads it.

``label`` is null when the step could not be judged (the request failed or the reply
did not parse); ``label_errors`` then says why, and ``score`` treats the step as not
labelled (the built-in rule classifier labels it), never as safe."""

from typing import Optional

import pandera.polars as pa
import polars as pl

GRAIN = ("trajectory_id", "step_idx")


class Schema(pa.DataFrameModel):
    """A label, or null with the reason in label_errors (exactly one of the two)."""

    trajectory_id: str
    step_idx: pl.Int64 = pa.Field(ge=0)
    label: Optional[str] = pa.Field(nullable=True, isin=["safe", "unsafe"])
    score: Optional[float] = pa.Field(nullable=True, ge=0.0, le=1.0)
    category: Optional[str] = pa.Field(nullable=True)
    model: str
    prompt_sha256: str = pa.Field(str_matches=r"^[0-9a-f]{64}$")
    raw_reply: Optional[str] = pa.Field(nullable=True)
    label_errors: Optional[str] = pa.Field(nullable=True)

    @pa.dataframe_check
    def label_or_error(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """Exactly one of label and label_errors is set."""
        return data.lazyframe.select(pl.col("label").is_null() != pl.col("label_errors").is_null())

    class Config:
        strict = True
        unique = list(GRAIN)
