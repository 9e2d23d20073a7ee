"""What ``manifest.json`` records of a run: inputs, policy, labels and gold by hash,
versions and settings (publishing adds the row counts)."""

from __future__ import annotations

import hashlib
import platform
import time
from importlib import metadata

from pipeline import __version__
from pipeline.config import RunConfig
from pipeline.execution.plan import InputFile
from pipeline.ingest.label_provenance import label_provenance
from pipeline.policy import Policy
from pipeline.storage import Location, open_raw


def sha256_of(path: Location) -> str:
    """SHA-256 of a (small) file: labels, gold."""
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


def run_manifest(config: RunConfig, inputs: list[InputFile], policy: Policy, records: int) -> dict[str, object]:
    """A run's ``manifest.json`` before publishing adds its row counts: the command, the
    inputs with their hashes, policy, labels and gold with theirs, versions, settings."""
    return {
        "command": config.extra.get("command", "score"),
        "inputs": [{"path": str(f.path), "sha256": f.sha256, "bytes": f.bytes} for f in inputs],
        "format": config.fmt,
        "suite": config.suite,
        "policy": {"sha256": policy.sha256, "sources": list(policy.sources)},
        "labels": {"path": str(config.labels), "sha256": sha256_of(config.labels),
                   **label_provenance(config.labels)} if config.labels else None,
        "gold": {"path": str(config.gold), "sha256": sha256_of(config.gold)} if config.gold else None,
        "versions": _versions(),
        "settings": {"workers": config.workers, "shards": config.shards},
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "records_read": records,
    }
