"""The library entry points: ``score`` and ``explode`` (what the CLI calls).

A run reads every input record exactly once into the ``records`` relation, runs the
SQL stages in one DuckDB connection, validates each table with its Pandera schema
and publishes RUN_DIR atomically with a manifest.
"""

from __future__ import annotations

import hashlib
import json
import platform
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import duckdb
import pyarrow as pa

from pipeline import __version__
from pipeline.config import RunConfig
from pipeline.policy import Policy, load_policy
from pipeline.reader import discover_inputs, iter_records
from pipeline.records import RawRecord
from pipeline.resources import resources
from pipeline.sql import load_sql, materialize, query
from pipeline.report import render_report
from pipeline.tables_in import read_gold, read_labels
from pipeline.writer import check_out, conform, publish, staging_dir, write_table

RECORDS_SCHEMA = pa.schema([
    ("record_id", pa.int64()), ("source_file", pa.string()), ("source_line", pa.int64()),
    ("text", pa.large_string()), ("reject_reason", pa.string()), ("reject_detail", pa.string()),
    ("fmt", pa.string()),
])
SCORE_TABLES = ("steps", "actions", "edges", "flows", "verdicts", "attrition")


@dataclass(frozen=True)
class RunResult:
    """What a finished run reports back (also written to manifest.json)."""

    out: Path
    row_counts: dict[str, int]
    records_read: int
    manifest: dict[str, object]


def records_table(records: Iterable[RawRecord]) -> pa.Table:
    """The ``records`` relation: one row per input record, numbered in input order."""
    columns: dict[str, list[object]] = {name: [] for name in RECORDS_SCHEMA.names}
    for record_id, rec in enumerate(records):
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


def register_inputs(con: duckdb.DuckDBPyConnection, records: pa.Table, policy: Policy, labels: pa.Table) -> None:
    """Register the records, the policy tables and the labels under their SQL names."""
    con.register("records", records)
    for name, table in policy.tables().items():
        con.register(f"policy_{name}", table)
    con.register("labels_in", labels)


def steps(con: duckdb.DuckDBPyConnection) -> None:
    """Stages ``trajectories`` and ``steps`` (record-level rejects, explode, exec_status)."""
    materialize(con, "trajectories")
    materialize(con, "steps")


def actions(con: duckdb.DuckDBPyConnection) -> None:
    """Stage ``actions``: retry collapse by gaps and islands."""
    materialize(con, "actions")


def flows(con: duckdb.DuckDBPyConnection, policy: Policy) -> None:
    """Stages ``resources``, ``action_roles``, ``edges``, ``flows``."""
    resources(con)
    materialize(con, "action_roles")
    materialize(con, "edges", min_len=int(policy.setting("min_fragment_length")),
                max_sources=int(policy.setting("max_fragment_sources")))
    materialize(con, "flows")


def verdicts(con: duckdb.DuckDBPyConnection, policy: Policy) -> None:
    """Stages ``step_rejects``, ``verdicts``, ``attrition``."""
    materialize(con, "step_rejects")
    materialize(con, "verdicts", attempted_is_unsafe=bool(policy.setting("attempted_is_unsafe")),
                stepwise_threshold=float(policy.setting("stepwise_threshold")))
    materialize(con, "attrition")


def metrics(con: duckdb.DuckDBPyConnection, gold_path: Path) -> None:
    """Stage ``metrics``: confusion counts per scorer x suite x slice against gold."""
    con.register("gold", read_gold(con, gold_path))
    materialize(con, "metrics")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _versions() -> dict[str, str]:
    out = {"litmus-gate": __version__, "python": platform.python_version()}
    for dist in ("duckdb", "polars", "pyarrow", "pandera"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "unknown"
    return out


def _publish_run(config: RunConfig, con: duckdb.DuckDBPyConnection, tables: Iterator[str],
                 manifest: dict[str, object]) -> RunResult:
    frames = {name: conform(name, con.table(name).pl()) for name in tables}
    staging = staging_dir(config.out)
    counts = {name: write_table(staging, name, frame) for name, frame in frames.items()}
    if "verdicts" in frames:
        html, markdown = render_report(con, config.out.name)
        (staging / "report.html").write_text(html, encoding="utf-8")
        (staging / "report.md").write_text(markdown, encoding="utf-8")
    manifest["row_counts"] = counts
    manifest["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    (staging / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    publish(staging, config.out)
    return RunResult(config.out, counts, int(manifest["records_read"]), manifest)  # type: ignore[arg-type]


def _prepare(config: RunConfig) -> tuple[list[Path], Policy, duckdb.DuckDBPyConnection, dict[str, object]]:
    check_out(config.out, config.overwrite)
    files = discover_inputs(list(config.inputs))
    policy = load_policy(config.policy)
    con = connect(config)
    manifest: dict[str, object] = {
        "command": config.extra.get("command", "score"),
        "inputs": [{"path": str(p), "sha256": _sha256(p), "bytes": p.stat().st_size} for p in files],
        "format": config.fmt,
        "policy": {"sha256": policy.sha256, "sources": list(policy.sources)},
        "labels": {"path": str(config.labels), "sha256": _sha256(config.labels)} if config.labels else None,
        "versions": _versions(),
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    return files, policy, con, manifest


def score(config: RunConfig) -> RunResult:
    """Score every input record: verdicts or attrition for each, plus the stage tables."""
    files, policy, con, manifest = _prepare(config)
    records = records_table(iter_records(files, config.fmt, int(policy.setting("max_record_bytes"))))
    manifest["records_read"] = records.num_rows
    labels = read_labels(con, config.labels)
    register_inputs(con, records, policy, labels)
    steps(con)
    _check_label_ids(con, config.labels)
    actions(con)
    flows(con, policy)
    verdicts(con, policy)
    tables = list(config.tables)
    if config.gold is not None:
        metrics(con, config.gold)
        tables.append("metrics")
        manifest["gold"] = {"path": str(config.gold), "sha256": _sha256(config.gold)}
    return _publish_run(config, con, iter(tables), manifest)


def explode(config: RunConfig) -> RunResult:
    """Only the ``steps`` table (for an external classifier to label)."""
    files, policy, con, manifest = _prepare(config)
    records = records_table(iter_records(files, config.fmt, int(policy.setting("max_record_bytes"))))
    manifest["records_read"] = records.num_rows
    register_inputs(con, records, policy, read_labels(con, None))
    steps(con)
    return _publish_run(config, con, iter(("steps",)), manifest)


def _check_label_ids(con: duckdb.DuckDBPyConnection, labels_path: Path | None) -> None:
    from pipeline.errors import LabelsError

    unknown = con.sql(
        "select l.trajectory_id from labels_in l anti join trajectories t using (trajectory_id) "
        "order by 1 limit 3").fetchall()
    if unknown:
        ids = ", ".join(repr(r[0]) for r in unknown)
        raise LabelsError(f"labels file {labels_path} names trajectories not in the input: {ids}",
                          "labels must come from an explode run of the same corpus")


def suggest(inputs: tuple[Path, ...], fmt: str, policy_file: Path | None) -> str:
    """Draft policy entries (TOML text) for the tools of ``inputs`` the catalog lacks."""
    from pipeline.suggest import suggest_toml

    files = discover_inputs(list(inputs))
    policy = load_policy(policy_file)
    con = connect(RunConfig(inputs=inputs, out=Path(".")))
    records = records_table(iter_records(files, fmt, int(policy.setting("max_record_bytes"))))
    register_inputs(con, records, policy, read_labels(con, None))
    steps(con)
    found = query(con, "unknown_tools").fetchall()
    return suggest_toml([(t, n, m, list(a)) for t, n, m, _, a in found])


def rebuild_report(run_dir: Path, gold: Path | None) -> dict[str, int]:
    """Recompute ``metrics`` (when gold is given) and the reports of an existing run.

    Files are replaced one by one with ``os.replace`` so each is whole at any moment.
    """
    import os

    from pipeline.errors import RunDirError

    manifest_path = run_dir / "manifest.json"
    if not manifest_path.is_file():
        raise RunDirError(f"{run_dir} is not a litmus-gate run (no manifest.json)")
    con = connect(RunConfig(inputs=(), out=run_dir))
    for name in ("steps", "actions", "flows", "verdicts", "attrition"):
        folder = run_dir / name
        if not folder.is_dir():
            raise RunDirError(f"{run_dir} has no {name} table", "report needs a score run")
        con.execute(f"create temp table {name} as select * from read_parquet(?, hive_partitioning = true, "
                    "union_by_name = true)", [str(folder / "**" / "*.parquet")])
    counts: dict[str, int] = {}
    if gold is not None:
        metrics(con, gold)
        frame = conform("metrics", con.table("metrics").pl())
        tmp = run_dir / f".metrics.tmp-{os.getpid()}"
        write_table(tmp, "metrics", frame)
        old = run_dir / "metrics"
        if old.exists():
            os.rename(old, run_dir / f".metrics.old-{os.getpid()}")
        os.rename(tmp / "metrics", old)
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(run_dir / f".metrics.old-{os.getpid()}", ignore_errors=True)
        counts["metrics"] = frame.height
    elif (run_dir / "metrics").is_dir():
        con.execute("create temp table metrics as select * from read_parquet(?)",
                    [str(run_dir / "metrics" / "**" / "*.parquet")])
    html, markdown = render_report(con, run_dir.name)
    for name, text in (("report.html", html), ("report.md", markdown)):
        tmp_file = run_dir / f".{name}.tmp"
        tmp_file.write_text(text, encoding="utf-8")
        os.replace(tmp_file, run_dir / name)
    return counts
