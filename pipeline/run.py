"""The library entry points: ``score`` and ``explode`` (what the CLI calls), ``suggest``
and ``rebuild_report``.

A run is planned, scored shard by shard and published by ``pipeline.execution``
(``pipeline/execution/driver.py``): every input record is read once, lands in exactly
one of ``verdicts`` or ``attrition``, and RUN_DIR appears whole with its manifest.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from pipeline.config import RunConfig
from pipeline.errors import PolicyError, RunDirError
from pipeline.policy import load_policy
from pipeline.ingest.discovery import discover_inputs
from pipeline.ingest.reader import iter_records
from pipeline.sql import query
from pipeline.stages.tables import connect, metrics, records_table, register_inputs, steps
from pipeline.outputs.format_hints import warn_without_calls
from pipeline.outputs.report import render_report
from pipeline.ingest.tables_in import read_gold, read_labels
from pipeline.ingest.label_provenance import provenance_notes
from pipeline.outputs.query import table_relation
from pipeline.execution.driver import RunResult, execute
from pipeline.execution.shard import chunks
from pipeline.execution.workdir import RunLock
from pipeline.execution.publish import recover_killed_publish
from pipeline.outputs.writer import conform, moved_aside, publish, staging_dir, write_table

__all__ = ["RunResult", "explode", "rebuild_report", "score", "suggest"]


def _run(config: RunConfig, tables: tuple[str, ...]) -> RunResult:
    result = execute(config, tables)
    if "verdicts" in tables:
        warn_without_calls(result, config.fmt)  # a layout no reader sees scores as text alone
    return result


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

    The rebuilt run is staged beside RUN_DIR (the files it keeps hard-linked, not
    copied) and swapped in as a ``score --overwrite`` publishes (:func:`publish`): a
    report killed at any point leaves the old run or the new one, whole, never new
    metrics beside an old manifest or a run without its ``metrics`` table or ``explain``
    pages (before, each was swapped in by two renames of its own, and a kill between
    them lost it for good). Under the run lock of RUN_DIR: never while a ``score`` into
    it (or another ``report``) writes there; holding it, what a killed ``score`` or
    ``report`` left beside RUN_DIR is mended first (:func:`recover_killed_publish`).
    """
    manifest_path = run_dir / "manifest.json"
    # before the lock: an operator's mistake writes nothing (a run a killed swap moved aside counts)
    if not manifest_path.is_file() and not moved_aside(run_dir):
        raise RunDirError(f"{run_dir} is not a litmus-gate run (no manifest.json)")
    with RunLock(run_dir) as lock:
        lock.acquire()  # a score into RUN_DIR publishes under it: the run is whole here
        if lock.locked:
            recover_killed_publish(run_dir)
        if not manifest_path.is_file():
            raise RunDirError(f"{run_dir} is not a litmus-gate run (no manifest.json)")
        return _rebuild_report(run_dir, gold, manifest_path)


def _rebuild_report(run_dir: Path, gold: Path | None, manifest_path: Path) -> dict[str, int]:
    # everything that can fail is read and computed before anything in the run changes: a
    # report that fails leaves metrics, pages and manifest as they were, in agreement
    import duckdb

    from pipeline.execution.manifest import sha256_of
    from pipeline.outputs.report_explain import recorded_policy

    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RunDirError(f"{manifest_path} cannot be read as JSON ({type(exc).__name__})",
                          "the run folder is damaged: score again") from exc
    if not isinstance(manifest, dict):
        raise RunDirError(f"{manifest_path} holds no JSON object", "the run folder is damaged: score again")
    try:  # only for explain_pages: a policy file edited (or refused by newer checks) since the run
        explain_pages = load_policy(recorded_policy(run_dir)).setting("explain_pages")
    except PolicyError as exc:
        sys.stderr.write(f"litmus-gate: report: the run's policy file no longer loads ({exc.one_line()}); "
                         "explain pages as the bundled policy sets them\n")
        explain_pages = load_policy(None).setting("explain_pages")
    gold_table = read_gold(duckdb.connect(), gold) if gold is not None else None
    con = connect(RunConfig(inputs=(), out=run_dir))
    counts: dict[str, int] = {}
    staging = staging_dir(run_dir)
    try:
        try:
            for name in ("steps", "actions", "flows", "verdicts", "attrition"):
                relation = table_relation(con, run_dir, name)
                if relation is None:
                    raise RunDirError(f"{run_dir} has no {name} table", "report needs a score run")
                relation.create_view(name)
            frame = None
            if gold_table is not None:
                metrics(con, gold_table)
                frame = conform("metrics", con.table("metrics").pl())
            elif (relation := table_relation(con, run_dir, "metrics")) is not None:
                relation.create_view("metrics")
            if (relation := table_relation(con, run_dir, "edges")) is not None:  # for the explain pages
                relation.create_view("edges")
            html, markdown = render_report(con, run_dir.name, staging / "explain", explain_pages,
                                           provenance_notes(manifest.get("labels")))
        except duckdb.Error as exc:  # a damaged Parquet file of the run
            raise RunDirError(f"{run_dir} cannot be read: {str(exc).splitlines()[0]}",
                              "the run folder is damaged: score again") from exc
        con.close()
        rebuilt = {"explain", "report.html", "report.md"}
        if frame is not None and gold is not None:
            counts["metrics"] = write_table(staging, "metrics", frame)
            # the manifest names the gold the metrics now hold (diff compares manifests)
            manifest["gold"] = {"path": str(gold), "sha256": sha256_of(gold)}
            row_counts = manifest.get("row_counts")
            if isinstance(row_counts, dict):
                row_counts["metrics"] = frame.height
            (staging / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
            rebuilt |= {"metrics", "manifest.json"}
        (staging / "report.html").write_text(html, encoding="utf-8")
        (staging / "report.md").write_text(markdown, encoding="utf-8")
        _link_rest(run_dir, staging, rebuilt)
        replaced = publish(staging, run_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if replaced is not None:
        shutil.rmtree(replaced, ignore_errors=True)  # the old run, once the new one is in place
    return counts


def _link_rest(run_dir: Path, staging: Path, rebuilt: set[str]) -> None:
    """Every entry of the run a report does not rebuild, into ``staging`` as hard links
    (a copy where the file system has none); dot-entries (another program's leftovers)
    are left out."""
    def link(source: str, target: str) -> None:
        try:
            os.link(source, target)
        except OSError:
            shutil.copy2(source, target)

    for entry in sorted(run_dir.iterdir()):
        if entry.name in rebuilt or entry.name.startswith("."):
            continue
        if entry.is_dir():
            shutil.copytree(entry, staging / entry.name, copy_function=link)
        else:
            link(str(entry), str(staging / entry.name))
