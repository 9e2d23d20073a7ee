"""One run end to end: plan, score the shards, check, publish (what ``run.score`` calls).

1. **plan** (``plan.py``): one streaming pass over each input hashes it for the
   manifest and finds record-aligned cut points; the plan digest names the work folder.
2. **score** (``shard.py`` on an engine of ``engines.py``): every shard reads its own
   byte ranges of the inputs and writes its validated tables and a done marker.
3. **duplicates** (``duplicates.py``): ids shared with earlier shards; only the shards
   that have any are scored again, with the number of earlier copies.
4. **publish** (``publish.py``): the shard files become the tables (moved, not sorted),
   then metrics, report and manifest; RUN_DIR appears whole (a rename, or an upload
   with ``manifest.json`` last).

SIGTERM / SIGINT at any point: :class:`pipeline.errors.Interrupted` (``signals.py``),
workers terminated, nothing published, the work folder kept for ``--resume`` (none yet
while planning: then the message says to rerun the same command).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import duckdb

from pipeline.config import RunConfig, shard_memory_limit
from pipeline.errors import CanaryError, InputChangedError, Interrupted, LabelsError, UsageError
from pipeline.execution.closing import Closing
from pipeline.execution.duplicates import shard_priors, unknown_label_ids
from pipeline.execution.engines import Progress, WorkerPool, run_tasks
from pipeline.execution.manifest import run_manifest, sha256_of
from pipeline.execution.gzip_plan import gzip_index, indexed_inputs
from pipeline.execution.plan import (InputFile, changed_inputs, plan_digest, planned_sizes,
                                     scan_inputs, shard_pieces)
from pipeline.execution.publish import RunResult, check_out_location, publish_run, recover_killed_publish
from pipeline.execution.shard import ShardTask, first_pass, prepare_worker, priors_digest, score_shard
from pipeline.execution.signals import interruptible
from pipeline.execution.workdir import RunLock, WorkDir, open_work, planned_shards
from pipeline.stages.canary_cache import CanaryCheck
from pipeline.policy import Policy, load_policy
from pipeline.storage import Location, location

if TYPE_CHECKING:
    import pyarrow as pa


# below this many bytes per worker, one shard in this process beats starting a pool
MIN_SPLIT_BYTES = 8 * 2**20
# rounding down to a multiple of the workers may grow shards this much over shard_bytes
SHARD_SLACK = 1.25


def shard_count(config: RunConfig, total: int) -> int:
    """Shards of a run over ``total`` input bytes: ``--shards``, else one per
    ``shard_bytes`` (which bounds a worker's memory), as a multiple of the workers so
    the last round keeps every worker busy (3 shards on 2 workers would leave one idle
    for a third of the run): rounded down when the shards stay within ``SHARD_SLACK`` of
    ``shard_bytes`` (fewer shards, less fixed cost per shard), else up. A small input
    stays one shard."""
    if config.shards:
        return config.shards
    n = max(1, -(-total // config.shard_bytes))
    workers = config.workers
    if workers > 1 and total >= workers * MIN_SPLIT_BYTES:
        down = max(workers, n // workers * workers)
        n = down if total <= down * config.shard_bytes * SHARD_SLACK else -(-n // workers) * workers
    return n


def _score(config: RunConfig, tasks: list[ShardTask], workdir: WorkDir, labels: Any,
           n_bytes: int = 0, pool: Callable[[], WorkerPool | None] = lambda: None) -> list[dict[str, Any]]:
    """Both passes over the shards; returns each shard's final done marker. ``pool()``
    gives the run's local pool (None: none), asked only when a shard is left to score."""
    done = [workdir.done(t.shard) for t in tasks]
    finished = sum(1 for m in done if m is not None)
    if finished:
        sys.stderr.write(f"litmus-gate: resuming: {finished} of {len(tasks)} shards already done\n")
    workers = config.workers
    shared = (tasks[0].policy, tasks[0].labels) if tasks else ()  # every task's: shipped once to each worker
    if finished == len(tasks):  # a --resume of a run killed after its last shard: no worker needed
        markers = [m for m in done if m is not None]
    else:
        markers = run_tasks(first_pass, tasks, workers, config.engine, config.address,
                            Progress(len(tasks), n_bytes, config.progress), pool(), shared)
    workdir.fetch_outputs()
    id_files = [str(workdir.local / "out" / m["ids"]) for m in markers]
    unknown = unknown_label_ids(workdir.local, id_files, labels)
    if unknown:
        raise LabelsError(f"labels file {config.labels} names trajectories not in the input: "
                          + ", ".join(repr(i) for i in unknown), "labels must come from an explode run of the same corpus")
    _warn_unmatched_labels(config, markers)
    again = [replace(t, priors=p) for t, p in zip(tasks, shard_priors(workdir.local, id_files, len(tasks)))]
    stale = [t for t, m in zip(again, markers) if m.get("priors") != priors_digest(t.priors)]
    if stale:
        rescored = run_tasks(score_shard, stale, workers, config.engine, config.address, pool=pool(), shared=shared)
        workdir.fetch_outputs()
        for t, m in zip(stale, rescored):
            markers[t.shard] = m
    return markers


def _warn_unmatched_labels(config: RunConfig, markers: list[dict[str, Any]]) -> None:
    """One warning line when label rows name steps their trajectories do not have (they
    label nothing: a labels file from an explode of another version of the corpus)."""
    found = [m.get("labels_unmatched") or [0, None, None] for m in markers]
    n = sum(int(f[0]) for f in found)
    if n:
        first = next(f for f in found if f[0])
        sys.stderr.write(f"litmus-gate: warning: {n} row(s) of labels file {config.labels} name a step their "
                         f"trajectory does not have (first: {first[1]!r} step {first[2]}); they label nothing\n")


def execute(config: RunConfig, tables: tuple[str, ...]) -> RunResult:
    """Plan, score, check and publish one run (see the module docstring), holding the
    lock of runs into its RUN_DIR from after the operator's checks to the work folder's
    removal."""
    kept: list[bool] = []  # a work folder is there for --resume: this run's, or a killed run's
    # one block from the first step to the last: a signal after publishing (the work
    # folder's removal, the lock's release) is dropped like one during it (signals.commit)
    with _resume_hint(kept), interruptible():
        out = location(config.out)  # a URI may look its bucket up on the network
        with RunLock(out) as lock:
            return _execute(config, tables, out, lock, kept)


def _execute(config: RunConfig, tables: tuple[str, ...], out: Location, lock: RunLock,
             kept: list[bool]) -> RunResult:
    from pipeline.ingest.discovery import discover_inputs

    with ExitStack() as pools:
        check_out_location(out, config.overwrite)
        lock.acquire()  # after the operator's mistakes (which write nothing), before the work folder
        if lock.locked:  # no other run can be publishing: mend what a killed one left
            recover_killed_publish(out)
        check_out_location(out, config.overwrite)  # again: a run may have published meanwhile
        files = discover_inputs(list(config.inputs))
        # a gzip NDJSON file counts by its uncompressed bytes (read once here, see plan.py):
        # the user's files are read first then, so a bad one is reported at once, not after
        # minutes of decompressing (without one, after the pool starts: its imports overlap them)
        compressed = indexed_inputs(files, config.fmt)
        user_files = _user_files(config, tables) if compressed else None
        indexes = {str(p): gzip_index(p) for p in compressed}
        n_bytes = sum(planned_sizes(files, indexes))
        n_shards = shard_count(config, n_bytes)
        # a --resume that finds a killed run's work folder may have nothing left to score
        killed = planned_shards(out, config.work_dir) if config.resume else None
        if killed:
            kept.append(True)
        if killed and not config.shards:  # the default follows --workers: keep the killed run's
            n_shards = killed
        # shards run in worker processes (local pool or Ray), not in this one
        in_workers = config.workers > 1 and n_shards > 1
        # a local pool starts now: its workers import their libraries while this process
        # plans; resuming a killed run, only if planning finds a shard left (_score)
        early = pools.enter_context(_early_pool(config, in_workers and killed is None, n_shards))

        def pool() -> WorkerPool | None:
            nonlocal early
            if early is None and killed is not None:
                early = pools.enter_context(_early_pool(config, in_workers, n_shards))
            return early
        policy, labels, gold = user_files or _user_files(config, tables)
        inputs = scan_inputs(files, n_shards, config.fmt, indexes)
        plan = plan_digest(inputs, policy.sha256, sha256_of(config.labels) if config.labels else None,
                           n_shards, config.fmt if config.suite is None else f"{config.fmt}|suite={config.suite}",
                           tables)
        kept.append(True)  # from here a folder may exist: a --resume of it is always safe
        workdir = open_work(out, config.work_dir, plan, config.resume, n_shards)
        threads = 1 if in_workers else config.threads
        # shards scored at once on this machine share its memory budget; a remote Ray
        # cluster's tasks run on other machines, each its own
        concurrent = min(config.workers, n_shards) if config.address is None else 1
        memory = shard_memory_limit(config, concurrent)
        tasks = [ShardTask(k, tuple(pieces), workdir, config.fmt, int(policy.setting("max_record_bytes")),
                           policy, labels, tables, threads, memory, suite=config.suite)
                 for k, pieces in enumerate(shard_pieces(inputs, n_shards))]
        # canaries check the grader (code, SQL, bundled policy), not a user's judgement calls;
        # they run in a thread of the driver while worker processes score the shards
        elsewhere = config.engine == "ray" or in_workers
        canaries = CanaryCheck(background=elsewhere) if tables != ("steps",) else None
        try:
            markers = _score(config, tasks, workdir, labels, sum(f.planned for f in inputs), pool)
            _unchanged(inputs, config.fmt)  # every read is done: was it of what planning hashed?
        except (UsageError, InputChangedError):
            pools.close()  # no worker may write into the folder once it is removed
            kept.clear()
            workdir.remove()
            raise
        # the workers are done: terminated and joined in a thread while publishing moves the
        # files and opens its views; gone before its queries (closing.py)
        closing = Closing(pools)
        try:
            failures = canaries.failures() if canaries is not None else []
            if failures:
                raise CanaryError("canaries failed, the grader is broken: " + "; ".join(failures),
                                  "no run was published")
            manifest = run_manifest(config, inputs, policy, sum(int(m["records"]) for m in markers))
            result = publish_run(config, out, workdir.local, markers, tables, manifest, policy, gold, closing.wait)
        finally:
            closing.wait()  # no worker outlives the run, however it ends
    workdir.remove()
    return result


def _unchanged(inputs: list[InputFile], fmt: str) -> None:
    """Raise :class:`InputChangedError` when an input changed while the run read it
    (:func:`pipeline.execution.plan.changed_inputs`): its tables would not be of the bytes
    the manifest's hash names."""
    changed = changed_inputs(inputs, fmt)
    if changed:
        more = f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""
        raise InputChangedError(f"an input changed while the run read it: {changed[0]}{more}; no run was published",
                                "rerun once the inputs are no longer rewritten (a log that is only appended "
                                "to is fine: a run scores the bytes it planned, up to their end then; an agent's "
                                "SQLite store in use: score a copy)")


def _user_files(config: RunConfig, tables: tuple[str, ...]) -> tuple[Policy, pa.Table, pa.Table | None]:
    """The run's policy, labels and gold (``None`` when not given or not scored), each read
    and checked before any scoring: a bad one found after scoring cost the whole run."""
    from pipeline.ingest.tables_in import LABELS_SCHEMA, read_gold, read_labels

    policy = load_policy(config.policy)
    # a DuckDB connection costs about 15 ms: opened only to read a labels file
    labels = read_labels(duckdb.connect(), config.labels) if config.labels else LABELS_SCHEMA.empty_table()
    gold = read_gold(duckdb.connect(), config.gold) if config.gold is not None and "verdicts" in tables else None
    return policy, labels, gold


@contextmanager
def _resume_hint(kept: list[bool]) -> Iterator[None]:
    """An interrupt before any work folder exists (planning: hashing the inputs) leaves
    nothing for ``--resume``: its hint says to rerun the same command instead."""
    try:
        yield
    except Interrupted as exc:
        if not kept:
            exc.hint = "nothing was kept: rerun the same command"
        raise


def _early_pool(config: RunConfig, in_workers: bool, n_shards: int) -> AbstractContextManager[WorkerPool | None]:
    """The local worker pool of a run that scores shards in worker processes, else None."""
    if config.engine == "local" and in_workers:
        return WorkerPool(min(config.workers, n_shards), prepare=prepare_worker)
    return nullcontext(None)
