"""The frozen run configuration built by the CLI (or by a library caller)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class RunConfig:
    """Everything a run depends on. Two runs with equal configs give equal tables."""

    inputs: tuple[Path | str, ...]  # local paths, or URIs (s3://, gs://, file://; see pipeline.storage)
    out: Path | str  # a local folder, or a URI prefix
    fmt: str = "auto"
    suite: str | None = None  # --suite: suite of claude-code / codex / otel records
    labels: Path | None = None
    gold: Path | None = None
    policy: Path | None = None
    overwrite: bool = False
    tables: tuple[str, ...] = ("steps", "actions", "edges", "flows", "verdicts", "attrition")
    threads: int = 2
    # DuckDB's cap on each connection that scores shards (a size DuckDB reads: 800MB, 1.5GiB);
    # None: shard_memory_limit's share of SHARD_MEMORY_BUDGET
    memory_limit: str | None = None
    workers: int = 1
    shards: int | None = None  # None: one shard per shard_bytes of input
    shard_bytes: int = 32 * 2**20  # peak RSS per worker grows with it: ~0.6 GB at 32 MB, 1.0-1.45 GB at 64 MB
    resume: bool = False
    engine: str = "local"  # local worker processes, or "ray"
    address: str | None = None  # Ray cluster address (engine="ray")
    work_dir: Path | str | None = None  # where .RUN.work goes (None: beside RUN_DIR); may be a URI
    progress: bool = False
    extra: dict[str, str] = field(default_factory=dict)


# what the connections scoring shards at once on one machine may hold together, by default:
# beside it each worker process holds about 0.45 GB (imports, a slice being validated) and
# the driver 0.25 GB, so two workers stay within 2.5 GB (docs/performance.md, "Hostile input")
SHARD_MEMORY_BUDGET = 1280 * 2**20
# no connection gets less by default: below it a normal 32 MB shard would spill
SHARD_MEMORY_FLOOR = 512 * 2**20
# the least a user may set (--memory-limit): a normal 32 MB shard ran out of memory in its
# explode query at 128 MiB, scored at 256 MiB (measured)
MEMORY_LIMIT_MIN = 256 * 2**20
# the most a user may set: far beyond any machine, far below what DuckDB refuses (2^64)
MEMORY_LIMIT_MAX = 2**50
_UNITS = {"b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "tb": 1000**4,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def memory_bytes(text: str, minimum: int = 0) -> int:
    """Bytes of a size written as DuckDB reads it (``800MB`` = 800 x 1000^2, ``1.5GiB`` = 1.5 x
    2^30; a subset of what DuckDB takes: no ``2g``, no percentages); ValueError for anything
    else, above :data:`MEMORY_LIMIT_MAX` or below ``minimum``."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgt]i?b|b)\s*", text.lower())  # ASCII digits, as DuckDB
    if m is None:
        raise ValueError(f"{text!r} is not a size such as 800MB or 1.5GiB")
    n = int(float(m.group(1)) * _UNITS[m.group(2)])
    if n > MEMORY_LIMIT_MAX:  # DuckDB refuses it ("Memory value out of range") in every worker
        raise ValueError(f"{text!r} is above {MEMORY_LIMIT_MAX // 2**40} TiB")
    if n < minimum:
        raise ValueError(f"{text!r} is below {minimum // 2**20} MiB")
    return n


def shard_memory_limit(config: RunConfig, concurrent: int) -> str:
    """DuckDB's ``memory_limit`` for a connection scoring a shard while ``concurrent``
    connections (itself included) score shards on the same machine: ``config.memory_limit``
    when set, else an equal share of :data:`SHARD_MEMORY_BUDGET`, at least
    :data:`SHARD_MEMORY_FLOOR` (1.25 GiB for one, 640 MiB each for two, 512 MiB from three)."""
    if config.memory_limit is not None:
        return f"{memory_bytes(config.memory_limit)}B"
    return f"{max(SHARD_MEMORY_FLOOR, SHARD_MEMORY_BUDGET // max(concurrent, 1))}B"


# DuckDB's cap on the driver's own connections (publishing, report, canaries) unless
# --memory-limit is given: publishing runs once every worker is gone, so it has the
# machine's budget to itself (2 GB, what every connection had before the shards' budget)
DRIVER_MEMORY_LIMIT = 2 * 1000**3


def driver_memory_limit(config: RunConfig) -> str:
    """DuckDB's ``memory_limit`` for a connection of the driver: ``config.memory_limit``
    when set, else :data:`DRIVER_MEMORY_LIMIT`."""
    return f"{memory_bytes(config.memory_limit) if config.memory_limit is not None else DRIVER_MEMORY_LIMIT}B"


def sample_root() -> Path:
    """The bundled sample corpus folder (inside the wheel, or in a source checkout)."""
    here = Path(__file__).resolve().parent
    for root in (here / "data" / "sample", here.parent / "data" / "sample"):
        if (root / "corpus").is_dir():
            return root
    raise FileNotFoundError("the bundled sample corpus is missing")
