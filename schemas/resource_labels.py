"""Schema of ``resource_labels`` (``sql/resource_labels.sql``): the policy's label of each
distinct resource string of one shard that matches at least one ``labels.resources`` rule.
Not a run table: an intermediate table of a shard's connection, read by ``action_roles``
and ``self_sends``; ``tests/test_resource_labels.py`` validates it (a worker does not, and
the driver, which scores the canaries, imports no Pandera).

Label levels are integers: confidentiality 0 public, 1 internal, 2 secret; integrity
0 trusted, 1 untrusted. A resource matched only by override rules that set neither level
(`*.pub`: public) keeps a row with both at 0.
"""

import pandera.polars as pa
import polars as pl

GRAIN = ("resource",)


class Schema(pa.DataFrameModel):
    """The join (max) of the matching rules' levels, only override rules when one matches."""

    resource: str
    conf: pl.Int64 = pa.Field(isin=[0, 1, 2])
    integ: pl.Int64 = pa.Field(isin=[0, 1])

    class Config:
        strict = True
        unique = list(GRAIN)
