"""bench/digests.py: the before/after table digests that show a refactor changed nothing."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

SPEC = importlib.util.spec_from_file_location("digests", Path(__file__).resolve().parent.parent / "bench" / "digests.py")
assert SPEC is not None and SPEC.loader is not None
digests = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(digests)


def _write(run_dir: Path, rows: list[dict[str, object]], row_group_size: int = 64) -> None:
    folder = run_dir / "verdicts" / "suite=a"
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), folder / "part-0.parquet", row_group_size=row_group_size)
    (run_dir / "manifest.json").write_text('{"started": "now"}')


def test_identical_runs_compare_equal_and_metadata_is_left_out(tmp_path: Path) -> None:
    rows = [{"trajectory_id": f"t{i}", "verdict": "safe"} for i in range(5)]
    _write(tmp_path / "a", rows)
    _write(tmp_path / "b", rows)
    (tmp_path / "b" / "manifest.json").write_text('{"started": "later"}')
    a, b = digests.table_digests(tmp_path / "a"), digests.table_digests(tmp_path / "b")
    assert set(a) == {"verdicts"} and a["verdicts"]["rows"] == 5
    assert digests.compare({"s/catalogs": a}, {"s/catalogs": b}) == []


def test_reordered_rows_differ_in_bytes_only_and_a_changed_row_in_contents(tmp_path: Path) -> None:
    rows = [{"trajectory_id": f"t{i}", "verdict": "safe"} for i in range(5)]
    _write(tmp_path / "a", rows)
    _write(tmp_path / "b", rows[::-1])
    _write(tmp_path / "c", rows[:4] + [{"trajectory_id": "t4", "verdict": "unsafe"}])
    a, b, c = (digests.table_digests(tmp_path / n) for n in "abc")
    assert digests.compare({"r": a}, {"r": b}) == ["r/verdicts: bytes differ, contents identical"]
    assert digests.compare({"r": a}, {"r": c}) == ["r/verdicts: contents differ (rows 5 -> 5)"]
    assert digests.compare({"r": a}, {}) == ["r: only in before"]
