"""bench/plan_scan.py: planning's read timed alone, and a threaded scan that plans the
same shards (hashes and cut points) as the pipeline's."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from pipeline.execution.plan import scan_inputs

SPEC = importlib.util.spec_from_file_location(
    "plan_scan", Path(__file__).resolve().parent.parent / "bench" / "plan_scan.py")
assert SPEC is not None and SPEC.loader is not None
plan_scan = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(plan_scan)


def test_the_threaded_scan_plans_what_the_pipeline_plans(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for k, lines in enumerate((40, 1, 300)):
        (tmp_path / f"f{k}.jsonl").write_text("".join(f'{{"trajectory_id": "t{k}-{i}", "x": "{"y" * (i % 17)}"}}\n'
                                                      for i in range(lines)))
    files = sorted(tmp_path.glob("*.jsonl"))
    plain = scan_inputs(files, 7, "auto")
    assert sum(len(f.cuts) for f in plain) > 3  # cut points inside files, not only at their starts
    assert plan_scan.scan_threaded(files, 7, "auto", 2) == plain
    assert plan_scan.main([str(tmp_path), "--shards", "7"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "plans identical"
