"""The frozen run configuration built by the CLI (or by a library caller)."""

from __future__ import annotations

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
    memory_limit: str = "2GB"  # a cap per worker connection; a 32 MB shard peaks near 0.75 GB RSS
    workers: int = 1
    shards: int | None = None  # None: one shard per shard_bytes of input
    shard_bytes: int = 32 * 2**20  # peak RSS per worker grows with it: ~0.75 GB at 32 MB, 1.0-1.45 GB at 64 MB
    resume: bool = False
    engine: str = "local"  # local worker processes, or "ray"
    address: str | None = None  # Ray cluster address (engine="ray")
    work_dir: Path | str | None = None  # where .RUN.work goes (None: beside RUN_DIR); may be a URI
    progress: bool = False
    extra: dict[str, str] = field(default_factory=dict)


def sample_root() -> Path:
    """The bundled sample corpus folder (inside the wheel, or in a source checkout)."""
    here = Path(__file__).resolve().parent
    for root in (here / "data" / "sample", here.parent / "data" / "sample"):
        if (root / "corpus").is_dir():
            return root
    raise FileNotFoundError("the bundled sample corpus is missing")
