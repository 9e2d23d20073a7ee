"""attrition: one row per rejected input record (SPEC section 6), also when one input line
holds several records (an OTLP export line holds many traces)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from pipeline.cli import main
from tests.test_adapters_otel import _tool_span


def _export(path: Path, spans: list[dict[str, Any]]) -> None:
    """One OTLP/JSON export request (one line) holding every span given."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"resourceSpans": [{"resource": {"attributes": []},
                                                   "scopeSpans": [{"scope": {}, "spans": spans}]}]}))


def _rows(run: Path, table: str) -> list[tuple]:
    return duckdb.sql(f"select trajectory_id, reason, source_line from read_parquet('{run}/{table}/**/*.parquet', "
                      "hive_partitioning = true) order by all").fetchall()


def test_two_rejected_traces_of_one_export_line_are_two_rows(tmp_path: Path) -> None:
    """The same export (two traces on line 1) in two files: both traces of the second file
    are duplicate_trajectory_id, each its own attrition row. The schema's key was
    (source_file, source_line), so the run failed with exit 4 and published nothing."""
    a, b = "aa" * 16, "bb" * 16
    for name in ("a.json", "b.json"):
        _export(tmp_path / "in" / name, [_tool_span(a, "11" * 8), _tool_span(b, "22" * 8)])
    run = tmp_path / "run"
    assert main(["score", str(tmp_path / "in"), "--format", "otel", "--out", str(run), "--workers", "1",
                 "--quiet"]) == 0
    assert _rows(run, "attrition") == [(a, "duplicate_trajectory_id", 1), (b, "duplicate_trajectory_id", 1)]
    assert len(_rows(run, "verdicts")) == 2
    assert json.loads((run / "manifest.json").read_text())["records_read"] == 4


def test_two_unreadable_traces_of_one_line_are_two_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A trace whose span cannot be read is rejected without an id (malformed_record); two
    such traces on one line are two records, told apart by their detail (it names the trace)."""
    import pipeline.ingest.adapters.otlp as otlp

    real = otlp.Span

    def reading(raw: dict[str, Any], line: int, resource: dict[str, Any]) -> Any:
        if raw.get("spanId") in ("33" * 8, "44" * 8):
            raise RecursionError("maximum recursion depth exceeded")
        return real(raw, line, resource)

    monkeypatch.setattr(otlp, "Span", reading)
    _export(tmp_path / "in" / "spans.json", [_tool_span("aa" * 16, "33" * 8), _tool_span("bb" * 16, "44" * 8),
                                             _tool_span("cc" * 16, "55" * 8)])
    run = tmp_path / "run"
    assert main(["score", str(tmp_path / "in"), "--format", "otel", "--out", str(run), "--workers", "1",
                 "--quiet"]) == 0
    assert _rows(run, "attrition") == [(None, "malformed_record", 1), (None, "malformed_record", 1)]
    assert [r[0] for r in _rows(run, "verdicts")] == ["cc" * 16]
