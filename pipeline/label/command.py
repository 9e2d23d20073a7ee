"""``litmus-gate label``: explode, ask the guard model about each step worth judging,
write the labels file (SPEC section 4 plus provenance columns).

1. **explode** with :func:`pipeline.run.explode` into a work folder beside ``--out``
   (``.<out name>.label-work/``), so ``step_idx`` is exactly the one of ``explode``;
2. **request**: one request per judged step (``--steps`` kinds), built from the prompt
   file, skipped when the cache holds its reply, sent with at most ``--concurrency`` in
   flight; every reply is committed to the cache as it arrives;
3. **write**: the steps are read again in order and each judged step's row comes from
   the cache (or its failure), validated by ``schemas/labels.py`` and written to a
   temporary file that is renamed onto ``--out``.

A kill loses only the requests in flight: the rerun (``--resume`` also keeps the
explode) sends only the requests whose reply is not cached. SIGTERM / SIGINT stop the
command with :class:`pipeline.errors.Interrupted` (exit 143 / 130, one line; the
connections are closed, the cache is closed whole, ``--out`` is not written) until
``--out`` is renamed into place; from then on a signal is dropped and the command ends
as it would have.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

import pandera.errors

from pipeline.errors import Interrupted, LitmusError, SchemaValidationError
from pipeline.execution.signals import commit, continue_after_run, interruptible
from pipeline.label.cache import CachedReply, ReplyCache, default_cache_path
from pipeline.label.client import ChatClient
from pipeline.label.plan import LabelConfig, Request, check_config, explode_steps, requests
from pipeline.label.progress import Counters, Progress
from pipeline.label.prompt import Prompt, load_prompt
from pipeline.label.reply import parse_reply
from pipeline.outputs.query import table_relation
from schemas.labels import Schema as LabelsSchema

MAX_CONSECUTIVE_FAILURES = 50  # then the endpoint is down, not one step hard: stop
WRITE_ROWS = 50_000
OUT_SCHEMA = pa.schema([("trajectory_id", pa.string()), ("step_idx", pa.int64()), ("label", pa.string()),
                        ("score", pa.float64()), ("category", pa.string()), ("model", pa.string()),
                        ("prompt_sha256", pa.string()), ("raw_reply", pa.string()), ("label_errors", pa.string())])


async def _send_all(pending: Iterator[Request], client: ChatClient, cache: ReplyCache, config: LabelConfig,
                    prompt: Prompt, counters: Counters, failures: dict[str, str], progress: Progress) -> None:
    queue: asyncio.Queue[Request | None] = asyncio.Queue(maxsize=2 * config.concurrency)
    in_flight: set[str] = set()
    consecutive = [0]

    async def worker(slot: int) -> None:
        while (item := await queue.get()) is not None:
            outcome = await client.complete(item.body, slot)
            counters.requests += 1
            if outcome.reply is not None:
                cache.put(item.key, config.model, prompt.sha256, item.content_sha, outcome.reply)
                counters.prompt_tokens += outcome.reply.prompt_tokens
                counters.completion_tokens += outcome.reply.completion_tokens
                consecutive[0] = 0
            else:
                failures[item.key] = outcome.error or "request failed"
                counters.failed += 1
                consecutive[0] += 1
                if consecutive[0] >= MAX_CONSECUTIVE_FAILURES:
                    raise LitmusError(f"{consecutive[0]} requests in a row failed, the last with: {outcome.error}",
                                      "replies so far are cached; fix the endpoint and rerun with --resume")
            in_flight.discard(item.key)
            counters.done += 1
            progress.show(counters)

    async def produce() -> None:
        for item in pending:
            if item.key in in_flight or item.key in failures or cache.get(item.key) is not None:
                counters.cached += 1
                counters.done += 1
                progress.show(counters)
                continue
            in_flight.add(item.key)
            await queue.put(item)
        for _ in range(config.concurrency):
            await queue.put(None)

    try:
        async with asyncio.TaskGroup() as group:
            group.create_task(produce())
            for slot in range(config.concurrency):
                group.create_task(worker(slot))
    except BaseExceptionGroup as exc:
        first = exc.exceptions[0]
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        raise first from None
    finally:
        await client.aclose()


def _row(item: Request, reply: CachedReply | None, error: str | None, config: LabelConfig,
         prompt: Prompt, redact: Callable[[str], str]) -> dict[str, Any]:
    if reply is None:
        parsed_label = parsed_score = category = None
        error = error or "no reply (the request was not sent)"
    else:
        parsed = parse_reply(reply.reply, reply.logprobs, prompt.parse, redact)
        parsed_label, parsed_score, category, error = parsed.label, parsed.score, parsed.category, parsed.error
    # a reply cached by an older litmus-gate was redacted by its rules: redacted again
    raw = redact(reply.reply) if reply is not None and reply.reply is not None else None
    return {"trajectory_id": item.trajectory_id, "step_idx": item.step_idx, "label": parsed_label,
            "score": parsed_score, "category": category, "model": config.model, "prompt_sha256": prompt.sha256,
            "raw_reply": raw, "label_errors": error}


def _flush(writer: pq.ParquetWriter, rows: list[dict[str, Any]]) -> None:
    table = pa.Table.from_pylist(rows, schema=OUT_SCHEMA)
    try:
        LabelsSchema.validate(pl.from_arrow(table), lazy=True)
    except pandera.errors.SchemaErrors as exc:  # a bug in litmus-gate, never in the replies: exit 4
        raise SchemaValidationError(f"labels table failed its schema: {str(exc)[:300]}") from exc
    writer.write_table(table)


def write_labels(items: Iterator[Request], cache: ReplyCache, failures: dict[str, str], config: LabelConfig,
                 prompt: Prompt, counters: Counters, redact: Callable[[str], str]) -> None:
    """The labels file, written to a temporary file and renamed onto ``config.out``;
    ``redact`` takes the API key out of every text of a reply."""
    tmp = config.out.parent / f".{config.out.name}.tmp-{os.getpid()}"
    rows: list[dict[str, Any]] = []
    try:
        with pq.ParquetWriter(str(tmp), OUT_SCHEMA, compression="zstd") as writer:
            for item in items:
                row = _row(item, cache.get(item.key), failures.get(item.key), config, prompt, redact)
                counters.count_label(row["label"], row["raw_reply"] is not None)
                rows.append(row)
                if len(rows) >= WRITE_ROWS:
                    _flush(writer, rows)
                    rows = []
            if rows:
                _flush(writer, rows)
        commit(lambda: os.replace(tmp, config.out))  # written: a signal from here is dropped, exit 0
    finally:
        tmp.unlink(missing_ok=True)


def _label_steps(config: LabelConfig, key: str | None, prompt: Prompt, cache: ReplyCache, counters: Counters,
                 work: Path, run_dir: Path) -> None:
    """Ask about every judged step of the explode in ``run_dir``, then write ``--out``."""
    # the ordered read of `steps` sorts out of core, in the work folder, past 1 GB
    con = duckdb.connect(config={"memory_limit": "1GB", "threads": 2, "temp_directory": str(work / "sort")})
    con.execute("set enable_progress_bar = false")
    relation = table_relation(con, run_dir, "steps")
    total = 0
    if relation is not None:
        relation.create_view("exploded")
        total = con.execute("select count(*) from exploded where kind = any($kinds)",
                            {"kinds": list(config.kinds)}).fetchall()[0][0]
    progress = Progress(total, config.progress and sys.stderr.isatty())
    failures: dict[str, str] = {}
    client = ChatClient(config.endpoint, key, config.concurrency, config.retry, config.api_key_env)
    asyncio.run(_send_all(requests(con, run_dir, config, prompt), client, cache, config, prompt, counters,
                          failures, progress))
    progress.finish(counters)
    counters.attempts, counters.retries = client.stats.attempts, client.stats.retries
    write_labels(requests(con, run_dir, config, prompt), cache, failures, config, prompt, counters, client.redact)
    con.close()


def label(config: LabelConfig) -> Counters:
    """Run the ``label`` command; returns the counters of the closing summary."""
    key = check_config(config)
    prompt = load_prompt(config.prompt)
    config.out.parent.mkdir(parents=True, exist_ok=True)
    work = config.out.parent / f".{config.out.name}.label-work"
    cache = ReplyCache(config.cache or default_cache_path())
    counters = Counters(started=time.monotonic())
    try:
        run_dir = explode_steps(config, work)
        # SIGTERM / SIGINT from here: Interrupted (exit 143 / 130, one line), also inside a
        # DuckDB query; replies received are in the cache, --out is not written
        continue_after_run()  # the explode published its run: signals would be dropped
        # requests a signal cuts short leave coroutines that are never awaited (the HTTP
        # client's lock: `coroutine 'AsyncLock.__aexit__' was never awaited`, printed when
        # the interrupted frames are freed, during the loop's teardown or at exit): not the
        # one line a user gets (a CI run caught that warning around the SIGTERM line); only
        # that lock's: a missing `await` of our own still warns
        warnings.filterwarnings("ignore", message=r"coroutine 'AsyncLock\.__a(enter|exit)__' was never awaited",
                                category=RuntimeWarning)
        try:
            with interruptible():
                _label_steps(config, key, prompt, cache, counters, work, run_dir)
        except Interrupted as exc:  # what a labelling run leaves is not a run folder
            exc.message = f"{exc.message.split(';')[0]}; {config.out} was not written"
            exc.hint = "the replies received are in the cache: rerun with --resume to ask only for the rest"
            raise
    finally:
        cache.close()
    shutil.rmtree(work, ignore_errors=True)
    counters.seconds = time.monotonic() - counters.started
    return counters
