"""The pipeline stages: each function materialises the table(s) it is named after in
one DuckDB connection, reading the tables its parameters name (see sql/*.sql)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import duckdb
import pyarrow as pa

from pipeline.config import RunConfig
from pipeline.policy import Policy
from pipeline.records import RawRecord
from pipeline.resources import resources
from pipeline.sql import load_sql, materialize, materialize_per_rule
from pipeline.tables_in import read_gold

RECORDS_SCHEMA = pa.schema([
    ("record_id", pa.int64()), ("source_file", pa.string()), ("source_line", pa.int64()),
    ("text", pa.large_string()), ("reject_reason", pa.string()), ("reject_detail", pa.string()),
    ("fmt", pa.string()),
])


def records_table(records: Iterable[RawRecord], first_id: int = 0) -> pa.Table:
    """The ``records`` relation: one row per input record, numbered in input order."""
    columns: dict[str, list[object]] = {name: [] for name in RECORDS_SCHEMA.names}
    for record_id, rec in enumerate(records, start=first_id):
        columns["record_id"].append(record_id)
        columns["source_file"].append(rec.source_file)
        columns["source_line"].append(rec.source_line)
        columns["text"].append(rec.text)
        columns["reject_reason"].append(rec.reject_reason)
        columns["reject_detail"].append(rec.reject_detail)
        columns["fmt"].append(rec.fmt)
    return pa.table(columns, schema=RECORDS_SCHEMA)


def connect(config: RunConfig) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with bounded memory and our macros."""
    con = duckdb.connect(config={"threads": config.threads, "memory_limit": config.memory_limit,
                                 "preserve_insertion_order": False})
    con.execute("set enable_progress_bar = false")
    for statement in load_sql("macros").split(";\n"):
        if statement.strip() and not all(line.startswith("--") for line in statement.strip().splitlines()):
            con.execute(statement)
    return con


PRIOR_COPIES_SCHEMA = pa.schema([("trajectory_id", pa.string()), ("n", pa.int64())])


def register_inputs(con: duckdb.DuckDBPyConnection, records: pa.Table, policy: Policy, labels: pa.Table,
                    prior_copies: pa.Table | None = None) -> None:
    """Register the records, the policy tables, the labels and ``prior_copies`` (ids
    with scorable copies in earlier shards, and how many) under their SQL names."""
    con.register("records", records)
    con.register("prior_copies", prior_copies if prior_copies is not None else PRIOR_COPIES_SCHEMA.empty_table())
    for name, table in policy.tables().items():
        con.register(f"policy_{name}", table)
    con.register("labels_in", labels)


def _rules(con: duckdb.DuckDBPyConnection, table: str) -> list[dict[str, object]]:
    cur = con.execute(f"select * from {table} order by all")
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


_STEPS_INTERNALS = ("events", "content_error_hits", "error_texts", "error_rule_hits", "classifier_hits")


def steps(con: duckdb.DuckDBPyConnection) -> None:
    """Stages ``trajectories``, ``events``, the rule hits and ``steps`` (record-level
    rejects, explode, call/result pairing, exec_status, built-in labels)."""
    materialize(con, "trajectories")
    materialize(con, "events")
    materialize_per_rule(con, "content_error_hits", _rules(con, "policy_content_errors"))
    materialize(con, "error_texts")
    materialize_per_rule(con, "error_rule_hits", _rules(con, "policy_error_rules"))
    materialize_per_rule(con, "classifier_hits", _rules(con, "policy_classifier"))
    materialize(con, "steps")
    for spent in _STEPS_INTERNALS:  # read by `steps` only: free their memory for the later stages
        con.execute(f"drop table if exists {spent}")


def actions(con: duckdb.DuckDBPyConnection) -> None:
    """Stage ``actions``: retry collapse by gaps and islands."""
    materialize(con, "actions")


def flows(con: duckdb.DuckDBPyConnection, policy: Policy) -> None:
    """Stages ``resources``, ``action_roles``, ``edges``, ``flows``."""
    resources(con)
    materialize(con, "action_roles")
    materialize(con, "outputs")
    materialize_per_rule(con, "injection_spans", _rules(con, "policy_injection"))
    materialize(con, "edges", min_len=int(policy.setting("min_fragment_length")),
                max_sources=int(policy.setting("max_fragment_sources")))
    materialize(con, "flows")


def verdicts(con: duckdb.DuckDBPyConnection, policy: Policy) -> None:
    """Stages ``step_rejects``, ``verdicts``, ``attrition``."""
    materialize(con, "step_rejects")
    materialize(con, "final_texts")
    materialize_per_rule(con, "final_claims", _rules(con, "policy_hallucination"))
    materialize(con, "verdicts", attempted_is_unsafe=bool(policy.setting("attempted_is_unsafe")),
                stepwise_threshold=float(policy.setting("stepwise_threshold")))
    materialize(con, "attrition")


def metrics(con: duckdb.DuckDBPyConnection, gold_path: Path) -> None:
    """Stage ``metrics``: confusion counts per scorer x suite x slice against gold."""
    con.register("gold", read_gold(con, gold_path))
    materialize(con, "metrics")
