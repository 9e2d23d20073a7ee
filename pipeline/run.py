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
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import duckdb

from pipeline import __version__
from pipeline.config import RunConfig
from pipeline.canaries import check_canaries
from pipeline.errors import CanaryError, LabelsError, SchemaValidationError, UsageError
from pipeline.policy import Policy, load_policy
from pipeline.reader import discover_inputs, iter_records
from pipeline.sql import query
from pipeline.stages import connect, metrics, records_table, register_inputs, steps
from pipeline.report import render_report
from pipeline.tables_in import read_labels
from pipeline.label.provenance import label_provenance, provenance_notes
from pipeline.query import table_relation
from pipeline.combine import combine, shard_files, sorted_relation
from pipeline.shards import ShardTask, chunks, plan_digest, score_shards, split, unknown_label_ids
from pipeline.writer import conform, table_files, write_table
from schemas import schema_module
from pipeline.remote_run import check_out_location, open_work, publish_to, staging_for
from pipeline.storage import Location, location, open_raw, size

@dataclass(frozen=True)
class RunResult:
    """What a finished run reports back (also written to manifest.json)."""

    out: Location  # a local Path, or a storage.Remote for a URI RUN_DIR
    row_counts: dict[str, int]
    records_read: int
    manifest: dict[str, object]


def _sha256(path: Location) -> str:
    digest = hashlib.sha256()
    with open_raw(path) as handle:
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


def _manifest(config: RunConfig, files: list[Location], digests: list[str], policy: Policy) -> dict[str, object]:
    return {
        "command": config.extra.get("command", "score"),
        "inputs": [{"path": str(p), "sha256": d, "bytes": size(p)} for p, d in zip(files, digests)],
        "format": config.fmt,
        "suite": config.suite,
        "policy": {"sha256": policy.sha256, "sources": list(policy.sources)},
        "labels": {"path": str(config.labels), "sha256": _sha256(config.labels), **label_provenance(config.labels)}
        if config.labels else None,
        "gold": {"path": str(config.gold), "sha256": _sha256(config.gold)} if config.gold else None,
        "versions": _versions(),
        "settings": {"workers": config.workers, "shards": config.shards},
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def _shard_count(config: RunConfig, files: list[Location]) -> int:
    if config.shards:
        return config.shards
    total = sum(size(p) for p in files)
    return max(1, -(-total // config.shard_bytes))


def _run(config: RunConfig, tables: tuple[str, ...]) -> RunResult:
    """Split, score shards, combine, validate and publish one run."""
    out = location(config.out)
    check_out_location(out, config.overwrite)
    files = discover_inputs(list(config.inputs))
    policy = load_policy(config.policy)
    labels = read_labels(duckdb.connect(), config.labels)
    digests = [_sha256(p) for p in files]
    n_shards = _shard_count(config, files)
    plan = plan_digest(files, digests, policy, _sha256(config.labels) if config.labels else None,
                       n_shards, config.fmt if config.suite is None else f"{config.fmt}|suite={config.suite}", tables)
    workdir = open_work(out, config.work_dir, plan, config.resume)
    work = workdir.local
    try:
        records_read = workdir.records_read()
        if records_read is None:
            records_read = split(iter_records(files, config.fmt, int(policy.setting("max_record_bytes")),
                                              config.suite),
                                 work, n_shards)
            workdir.split_finished()
        if labels.num_rows:
            workdir.ensure_spill()
        unknown = unknown_label_ids(work, labels)
        if unknown:
            raise LabelsError(f"labels file {config.labels} names trajectories not in the input: "
                              + ", ".join(repr(i) for i in unknown),
                              "labels must come from an explode run of the same corpus")
        threads = 1 if config.workers > 1 and n_shards > 1 else config.threads
        tasks = [ShardTask(k, work, config.policy, labels, tables, threads, config.memory_limit, workdir.remote)
                 for k in range(n_shards)]
        score_shards(tasks, config.workers, records_read, config.progress, config.engine, config.address)
        workdir.fetch_outputs()
    except UsageError:
        workdir.remove()
        raise
    if tables != ("steps",):
        # canaries check the grader (code, SQL, bundled policy), not a user's judgement calls
        failures = check_canaries(load_policy(None))
        if failures:
            raise CanaryError("canaries failed, the grader is broken: " + "; ".join(failures),
                              "no run was published")
    manifest = _manifest(config, files, digests, policy)
    manifest["records_read"] = records_read
    result = _publish(config, out, work, tables, manifest)
    workdir.remove()
    return result


def _publish(config: RunConfig, out: Location, work: Path, tables: tuple[str, ...],
             manifest: dict[str, object]) -> RunResult:
    staging = staging_for(out)
    con = connect(config)
    counts: dict[str, int] = {}
    for table in tables:
        counts[table] = combine(work, table, staging, config.threads, config.memory_limit)
        module = schema_module(table)
        if getattr(module, "PARTITION", None):  # one row per record: small; keeps the partition column
            sorted_relation(con, shard_files(work, table), list(module.GRAIN)).create_view(table)
        else:
            con.read_parquet(table_files(staging, table), hive_partitioning=False).create_view(table)
    if "verdicts" in tables and counts["verdicts"] + counts["attrition"] != manifest["records_read"]:
        # each shard checked its own records; this catches a shard lost between them
        raise SchemaValidationError(
            f"{manifest['records_read']} records read, {counts['verdicts'] + counts['attrition']} in verdicts "
            "+ attrition", "no run was published; rerun with --resume")
    if config.gold is not None and "verdicts" in tables:
        metrics(con, config.gold)
        counts["metrics"] = write_table(staging, "metrics", conform("metrics", con.table("metrics").pl()))
    if "verdicts" in tables:
        html, markdown = render_report(con, out.name, staging / "explain",
                                       load_policy(config.policy).setting("explain_pages"),
                                       provenance_notes(manifest.get("labels")))
        (staging / "report.html").write_text(html, encoding="utf-8")
        (staging / "report.md").write_text(markdown, encoding="utf-8")
    manifest["row_counts"] = counts
    manifest["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    (staging / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    publish_to(staging, out)
    return RunResult(out, counts, int(manifest["records_read"]), manifest)  # type: ignore[arg-type]


def score(config: RunConfig) -> RunResult:
    """Score every input record: verdicts or attrition for each, plus the stage tables."""
    return _run(config, config.tables)


def explode(config: RunConfig) -> RunResult:
    """Only the ``steps`` table (for an external classifier to label)."""
    return _run(config, ("steps",))


def suggest(inputs: tuple[Path | str, ...], fmt: str, policy_file: Path | None) -> str:
    """Draft policy entries (TOML text) for the tools of ``inputs`` the catalog lacks."""
    from pipeline.suggest import suggest_toml

    files = discover_inputs(list(inputs))
    policy = load_policy(policy_file)
    found: dict[str, tuple[int, int, set[str]]] = {}
    first_id = 0
    # one bounded chunk at a time, like the shards; counts add up across chunks
    for chunk in chunks(iter_records(files, fmt, int(policy.setting("max_record_bytes")))):
        con = connect(RunConfig(inputs=inputs, out=Path(".")))
        register_inputs(con, records_table(chunk, first_id), policy, read_labels(con, None))
        first_id += len(chunk)
        steps(con)
        for tool, n_calls, n_traj, _, args in query(con, "unknown_tools").fetchall():
            calls, trajs, names = found.get(tool, (0, 0, set()))
            found[tool] = (calls + n_calls, trajs + n_traj, names | set(args))
        con.close()
    ordered = sorted(found.items(), key=lambda kv: (-kv[1][0], kv[0]))
    return suggest_toml([(t, n, m, sorted(a)) for t, (n, m, a) in ordered], policy.data.get("inference", {}))


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
        relation = table_relation(con, run_dir, name)
        if relation is None:
            raise RunDirError(f"{run_dir} has no {name} table", "report needs a score run")
        relation.create_view(name)
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
    elif (relation := table_relation(con, run_dir, "metrics")) is not None:
        relation.create_view("metrics")
    if (relation := table_relation(con, run_dir, "edges")) is not None:  # for the explain pages
        relation.create_view("edges")
    from pipeline.report_explain import recorded_policy

    html, markdown = render_report(con, run_dir.name, run_dir / "explain",
                                   load_policy(recorded_policy(run_dir)).setting("explain_pages"),
                                   provenance_notes(json.loads(manifest_path.read_text()).get("labels")))
    for name, text in (("report.html", html), ("report.md", markdown)):
        tmp_file = run_dir / f".{name}.tmp"
        tmp_file.write_text(text, encoding="utf-8")
        os.replace(tmp_file, run_dir / name)
    return counts
