"""The driver of a multi-worker run never imports Polars or Pandera: the workers
validate and write the tables, the driver only moves files and renders the report, and
those imports cost it about half a CPU second per run. No local run imports
``pyarrow.fs`` (only a URI location needs it) or ``pyarrow.compute`` (about 55 ms
together, in every process of a run)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from schemas import PARTITIONS, TABLES, partition_of, schema_module
REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"
PROBE = """
import sys
from pipeline.cli import main
code = main(["score", sys.argv[1], "--out", sys.argv[2], "--workers", "2", "--shards", "2", "--quiet"])
heavy = sorted(m for m in ("polars", "pandera") if m in sys.modules)
print("heavy:" + ",".join(heavy))
print("unused:" + ",".join(m for m in ("pyarrow.fs", "pyarrow.compute") if m in sys.modules))
raise SystemExit(code)
"""
# one shard in this process (the path of a small input): every stage, the canaries, the report
SERIAL_PROBE = """
import sys
from pipeline.cli import main
code = main(["score", sys.argv[1], "--out", sys.argv[2], "--workers", "1", "--quiet"])
print("unused:" + ",".join(m for m in ("pyarrow.fs", "pyarrow.compute") if m in sys.modules))
raise SystemExit(code)
"""


def test_partition_lookup_agrees_with_the_schema_modules() -> None:
    for table in TABLES:
        assert partition_of(table) == getattr(schema_module(table), "PARTITION", None)
    assert set(PARTITIONS) == {"verdicts", "attrition"}


def test_driver_imports_neither_polars_nor_pandera(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", PROBE, str(SAMPLE / "corpus"), str(tmp_path / "run")],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "heavy:\n" in proc.stdout, proc.stdout  # the workers imported them, not this process
    assert "unused:\n" in proc.stdout, proc.stdout
    assert (tmp_path / "run" / "verdicts").is_dir()


def test_a_local_run_imports_neither_pyarrow_fs_nor_compute(tmp_path: Path) -> None:
    # a cache folder of its own: the canaries run (and are remembered), as on a fresh install
    env = {**os.environ, "LITMUS_GATE_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-c", SERIAL_PROBE, str(SAMPLE / "corpus"), str(tmp_path / "run")],
                          cwd=REPO, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "unused:\n" in proc.stdout, proc.stdout
    assert (tmp_path / "run" / "verdicts").is_dir() and any((tmp_path / "cache").iterdir())
