"""What ``litmus-gate label`` asks: the configuration, the explode of the inputs (the
existing :func:`pipeline.run.explode`, so ``step_idx`` is the one of ``explode``) and one
:class:`Request` per judged step, built from the prompt file."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from pipeline.config import RunConfig
from pipeline.errors import RunDirError, UsageError
from pipeline.label.cache import cache_key, content_sha256
from pipeline.label.client import RetryPolicy
from pipeline.label.endpoint import is_loopback
from pipeline.label.prompt import KINDS, Prompt, Step, TrajectoryView
from pipeline.outputs.query import table_relation
from pipeline.ingest.discovery import discover_inputs
from pipeline.storage import open_raw

_STEP_COLUMNS = "trajectory_id, step_idx, kind, tool_name, arguments, content, error_text"


@dataclass(frozen=True)
class LabelConfig:
    """Everything one ``label`` run depends on."""

    inputs: tuple[Path | str, ...]
    out: Path
    endpoint: str
    model: str
    prompt: Path | None = None
    concurrency: int = 8
    api_key_env: str = "OPENAI_API_KEY"
    api_key_required: bool = False  # --api-key-env given explicitly: the variable must be set
    kinds: tuple[str, ...] = ("tool_call", "assistant_text")
    resume: bool = False
    overwrite: bool = False
    progress: bool = True
    cache: Path | None = None
    fmt: str = "auto"
    workers: int = 1
    retry: RetryPolicy = field(default_factory=RetryPolicy)


@dataclass(frozen=True)
class Request:
    """One judged step and its request."""

    trajectory_id: str
    step_idx: int
    key: str
    content_sha: str
    body: dict[str, Any]


def check_config(config: LabelConfig) -> str | None:
    """Validate the operator's choices; returns the API key (or None)."""
    import httpx

    if config.concurrency < 1 or config.workers < 1:
        raise UsageError("--concurrency and --workers must be at least 1")
    bad = sorted(set(config.kinds) - set(KINDS))
    if bad or not config.kinds:
        raise UsageError(f"--steps: unknown kind(s) {', '.join(bad) or '(none given)'}", f"known: {', '.join(KINDS)}")
    if not config.model.strip():
        raise UsageError("--model must name the served model")
    try:
        url = httpx.URL(config.endpoint)
    except (httpx.InvalidURL, TypeError) as exc:
        raise UsageError("--endpoint is not a URL") from exc
    if url.scheme not in ("http", "https") or not url.host:
        raise UsageError("--endpoint must be an http(s) URL such as http://localhost:8000/v1")
    if url.userinfo:
        raise UsageError("--endpoint carries credentials; put the key in an environment variable",
                         "see --api-key-env")
    if config.out.exists() and not config.overwrite:
        raise RunDirError(f"{config.out} exists", "pass --overwrite to replace it")
    if config.out.is_dir():
        raise RunDirError(f"{config.out} is a folder; --out names the labels file (e.g. labels.parquet)")
    # a key read from a secret file or a CRLF .env often ends in a line break: not part
    # of the key (and a header cannot carry it: the HTTP library's error would print it)
    key = (os.environ.get(config.api_key_env) or "").strip()
    if config.api_key_required and not key:
        raise UsageError(f"environment variable {config.api_key_env} (--api-key-env) is not set")
    if key and not config.api_key_required and not sends_default_key(config.endpoint):
        sys.stderr.write(f"litmus-gate: label: ${config.api_key_env} is not sent to a plain-http remote endpoint "
                         "(name the variable with --api-key-env to send it anyway)\n")
        return None
    if any(not "\x21" <= c <= "\x7e" for c in key):
        raise UsageError(f"${config.api_key_env} (--api-key-env) holds a character an HTTP header cannot carry "
                         "(a key is printable ASCII without spaces); the key is not shown")
    return key or None


def sends_default_key(endpoint: str) -> bool:
    """Whether the default key variable (not named with --api-key-env) goes to ``endpoint``:
    over https, or to this machine. An exported OpenAI key never travels in clear text to a
    server that was not named for it."""
    import httpx

    url = httpx.URL(endpoint)
    return url.scheme == "https" or is_loopback(url.host)


def _digests(inputs: tuple[Path | str, ...]) -> list[dict[str, str]]:
    out = []
    for path in discover_inputs(list(inputs)):
        digest = hashlib.sha256()
        with open_raw(path) as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
        out.append({"path": str(path), "sha256": digest.hexdigest()})
    return out


def explode_steps(config: LabelConfig, work: Path) -> Path:
    """The explode run of the inputs (reused by ``--resume`` when its inputs match)."""
    from pipeline import run

    run_dir = work / "explode"
    if config.resume and (run_dir / "manifest.json").is_file():
        manifest = json.loads((run_dir / "manifest.json").read_text())
        kept = [{"path": i["path"], "sha256": i["sha256"]} for i in manifest.get("inputs", [])]
        if kept == _digests(config.inputs) and manifest.get("format") == config.fmt:
            return run_dir
        sys.stderr.write("litmus-gate: label: inputs changed since the killed run; exploding again\n")
    elif not config.resume:
        shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    run.explode(RunConfig(inputs=config.inputs, out=run_dir, fmt=config.fmt, overwrite=True,
                          workers=config.workers, resume=config.resume,
                          progress=config.progress and sys.stderr.isatty(),
                          extra={"command": "explode"}))
    return run_dir


def _trajectories(con: duckdb.DuckDBPyConnection, run_dir: Path) -> Iterator[tuple[str, list[Step]]]:
    relation = table_relation(con, run_dir, "steps")
    if relation is None:
        return
    reader = relation.select(_STEP_COLUMNS).order("trajectory_id, step_idx").to_arrow_reader(4096)
    current: str | None = None
    steps: list[Step] = []
    for batch in reader:
        for row in batch.to_pylist():
            if row["trajectory_id"] != current:
                if current is not None:
                    yield current, steps
                current, steps = row["trajectory_id"], []
            steps.append(Step(row["step_idx"], row["kind"], row["tool_name"], row["arguments"], row["content"],
                              row["error_text"]))
    if current is not None:
        yield current, steps


def requests(con: duckdb.DuckDBPyConnection, run_dir: Path, config: LabelConfig, prompt: Prompt) -> Iterator[Request]:
    """One request per judged step, in (trajectory_id, step_idx) order."""
    for trajectory_id, steps in _trajectories(con, run_dir):
        view = TrajectoryView(trajectory_id, steps, prompt.context)
        for pos, step in enumerate(steps):
            if step.kind not in config.kinds:
                continue
            messages = view.messages(prompt, pos)
            csha = content_sha256(messages)
            yield Request(trajectory_id, step.step_idx, cache_key(config.model, prompt.sha256, csha), csha,
                          {**prompt.request, "model": config.model, "messages": messages})
