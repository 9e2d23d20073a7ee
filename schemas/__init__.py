"""Pandera (polars backend) schemas, one module per output table.

Each module defines ``Schema`` (a strict ``DataFrameModel``) and ``GRAIN`` (the
columns that identify a row). The writer selects exactly the schema's columns, in
order, sorts by the grain and validates data (not only the schema) before writing.
"""

from __future__ import annotations

import importlib
from types import ModuleType

TABLES = ("steps", "actions", "edges", "flows", "verdicts", "attrition", "metrics")


def schema_module(table: str) -> ModuleType:
    """The schema module of one output table."""
    if table not in TABLES:
        raise KeyError(table)
    return importlib.import_module(f"schemas.{table}")
