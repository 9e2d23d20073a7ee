"""--engine ray: the same shard function as Ray tasks on a local cluster gives the
same tables as local worker processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.cli import main
from tests.conftest import REPO, parquet_digests

pytest.importorskip("ray")
SAMPLE = REPO / "data" / "sample"




def test_ray_engine_equals_local_workers(tmp_path: Path) -> None:
    args = [str(SAMPLE / "corpus"), "--labels", str(SAMPLE / "labels.jsonl"), "--shards", "3", "--quiet"]
    assert main(["score", *args, "--out", str(tmp_path / "local"), "--workers", "2"]) == 0
    assert main(["score", *args, "--out", str(tmp_path / "ray"), "--workers", "2", "--engine", "ray"]) == 0
    assert parquet_digests(tmp_path / "ray") == parquet_digests(tmp_path / "local") != {}
