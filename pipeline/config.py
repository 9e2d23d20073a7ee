"""The frozen run configuration built by the CLI (or by a library caller)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class RunConfig:
    """Everything a run depends on. Two runs with equal configs give equal tables."""

    inputs: tuple[Path, ...]
    out: Path
    fmt: str = "auto"
    labels: Path | None = None
    gold: Path | None = None
    policy: Path | None = None
    overwrite: bool = False
    tables: tuple[str, ...] = ("steps", "actions", "edges", "flows", "verdicts", "attrition")
    threads: int = 2
    memory_limit: str = "2GB"  # per DuckDB connection, i.e. per worker
    workers: int = 1
    shards: int | None = None  # None: one shard per shard_bytes of input
    shard_bytes: int = 256 * 2**20
    resume: bool = False
    engine: str = "local"  # local worker processes, or "ray"
    address: str | None = None  # Ray cluster address (engine="ray")
    progress: bool = False
    extra: dict[str, str] = field(default_factory=dict)


def sample_root() -> Path:
    """The bundled sample corpus folder (inside the wheel, or in a source checkout)."""
    here = Path(__file__).resolve().parent
    for root in (here / "data" / "sample", here.parent / "data" / "sample"):
        if (root / "corpus").is_dir():
            return root
    raise FileNotFoundError("the bundled sample corpus is missing")
