"""eval/evaluate.py on the AgentDojo corpus: conservation holds and the doc has its tables.

Skips when ../shared (the third-party corpora) is absent; the skip path itself is tested always.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import duckdb
import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


def load_evaluate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("litmus_evaluate", REPO / "eval" / "evaluate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_skips_cleanly_without_corpora(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "evaluation.md"
    rc = load_evaluate().main(["--shared", str(tmp_path / "absent"), "--out", str(out), "--work", str(tmp_path)])
    assert rc == 0 and not out.exists()
    assert "not present" in capsys.readouterr().out


def test_agentdojo_evaluation(tmp_path: Path) -> None:
    corpora = SHARED / "corpora"
    if not (corpora / "agentdojo").is_dir():
        pytest.skip(f"{corpora / 'agentdojo'} not present")
    out, work = tmp_path / "evaluation.md", tmp_path / "work"
    rc = load_evaluate().main(["--shared", str(corpora), "--out", str(out), "--work", str(work),
                               "--corpora", "agentdojo"])
    assert rc == 0
    run_dir = work / "agentdojo" / "run"
    records = json.loads((run_dir / "manifest.json").read_text())["records_read"]
    con = duckdb.connect()
    counts = [con.sql(f"select count(*) from read_parquet('{run_dir / t}/**/*.parquet', hive_partitioning = true)")
              .fetchall()[0][0] for t in ("verdicts", "attrition")]
    assert records > 0 and records == sum(counts)
    doc = out.read_text()
    assert doc.startswith("# Evaluation") and "eval/evaluate.py" in doc.splitlines()[2]
    assert f"{records} = {counts[0]} + {counts[1]} → **holds**" in doc
    assert "| scorer | precision [95% CI] | recall [95% CI] | F1 [95% CI] |" in doc
    for scorer in ("flow_aware", "execution_gated", "stepwise_min", "all_safe"):
        assert f"\n| {scorer} | " in doc
    assert "slice injected" in doc and "suite banking" in doc
    assert "False positives of `flow_aware`" in doc and "False negatives of `flow_aware`" in doc
    # leave-one-corpus-out: a second run on default.toml alone, both columns in the doc
    inferred = json.loads((work / "agentdojo-default-only" / "run" / "manifest.json").read_text())
    assert [s for s in json.dumps(inferred) .split('"') if s.startswith("bundled:")] == ["bundled:default.toml"]
    assert "## Out of the box: bundled catalogs vs inference only" in doc
    assert "| corpus | gold | scorer | catalogs: attrition | P | R | F1 | inference only: attrition |" in doc
    assert "| agentdojo | gold | flow_aware |" in doc


def test_metrics_for_a_further_gold_are_computed_in_memory(tmp_path: Path) -> None:
    """``metrics_in_memory`` (the metrics of a corpus's second and later golds) on a scored
    run: the same rows as the run's own metrics against the same gold."""
    from pipeline.cli import main

    sample = REPO / "data" / "sample"
    run_dir = tmp_path / "run"
    assert main(["score", str(sample / "corpus"), "--gold", str(sample / "gold.jsonl"), "--out", str(run_dir),
                 "--quiet"]) == 0
    problems: list[str] = []
    table = load_evaluate().metrics_in_memory(run_dir, sample / "gold.jsonl", problems, "gold")
    own = duckdb.sql(f"select * from read_parquet('{run_dir}/metrics/*.parquet')").to_arrow_table()
    key = ["scorer", "suite", "slice"]
    assert problems == [] and table.num_rows == own.num_rows > 0
    assert table.sort_by([(k, "ascending") for k in key]).select(["tp", "fp", "fn", "tn"]).to_pylist() == \
        own.sort_by([(k, "ascending") for k in key]).select(["tp", "fp", "fn", "tn"]).to_pylist()
