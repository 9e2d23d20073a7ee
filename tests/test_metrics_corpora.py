"""Metrics of a real corpus run against the plain-Python oracle of ``tests/test_metrics.py``,
with the gold read straight from the corpus file (not through the product's gold adapter).

R-Judge (``../shared/corpora/r-judge/rjudge.json``: ``label`` 1 = unsafe, id ``rjudge:<id>``):
scored with its gold, every metrics row (per scorer x suite x slice, with ``n_unscored`` for
the rejected records) must equal the oracle's. Skips cleanly when the corpora are absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from pipeline.cli import main
from tests.test_metrics import assert_same, oracle

RJUDGE = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora" / "r-judge" / "rjudge.json"


@pytest.mark.skipif(not RJUDGE.is_file(), reason="shared corpora absent")
def test_rjudge_metrics_equal_the_oracle(tmp_path: Path) -> None:
    raw = json.loads(RJUDGE.read_text(encoding="utf-8"))
    gold = [{"trajectory_id": f"rjudge:{r['id']}", "gold": "unsafe" if r["label"] == 1 else "safe",
             "slice": ["r-judge"]} for r in raw if r.get("label") in (0, 1)]
    gold_file = tmp_path / "gold.jsonl"
    gold_file.write_text("".join(json.dumps(g) + "\n" for g in gold), encoding="utf-8")
    run = tmp_path / "run"
    assert main(["score", str(RJUDGE), "--format", "r-judge", "--gold", str(gold_file), "--out", str(run),
                 "--quiet"]) == 0

    def table(name: str) -> list[dict[str, object]]:
        return duckdb.sql(f"select * from read_parquet('{run}/{name}/**/*.parquet', hive_partitioning = true, "
                          "hive_types_autocast = false)").to_arrow_table().to_pylist()

    verdicts, attrition = table("verdicts"), table("attrition")
    assert len(verdicts) + len(attrition) == len(raw) and attrition  # some records are rejected
    got = {(r.pop("scorer"), r.pop("suite"), r.pop("slice")): r for r in table("metrics")}
    assert_same(got, oracle(verdicts, attrition, gold))
    assert got[("flow_aware", "*", "*")]["n_unscored"] == len(attrition)
