"""Pandera (polars backend) schemas, one module per output table.

Each module defines ``Schema`` (a strict ``DataFrameModel``) and ``GRAIN`` (the
columns that identify a row). The writer selects exactly the schema's columns, in
order, sorts by the grain and validates data (not only the schema) before writing.
"""

from __future__ import annotations

import importlib
from types import ModuleType

TABLES = ("steps", "actions", "edges", "flows", "verdicts", "attrition", "metrics")
# the column a table's files are partitioned by (one folder per value); here, not only in
# the schema modules, so a caller that only names files need not import Pandera and Polars
PARTITIONS = {"verdicts": "suite", "attrition": "suite"}


def partition_of(table: str) -> str | None:
    """The partition column of one output table (None: not partitioned)."""
    if table not in TABLES:
        raise KeyError(table)
    return PARTITIONS.get(table)


def schema_module(table: str) -> ModuleType:
    """The schema module of one output table."""
    if table not in TABLES:
        raise KeyError(table)
    return importlib.import_module(f"schemas.{table}")
