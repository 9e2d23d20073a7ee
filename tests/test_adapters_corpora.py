"""Every shared corpus file converts without rejects; ids unique; gold ids match.

Skips cleanly when ../shared/corpora is absent (the data is not part of the repo).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pipeline.ingest.adapters.gold import gold_rows
from pipeline.ingest.discovery import detect_format, discover_inputs
from pipeline.ingest.reader import iter_records

CORPORA = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora"
EXPECTED_FORMAT = {"agentdojo": "agentdojo", "openagentsafety": "openhands", "tau-bench": "tau-bench",
                   "r-judge": "r-judge", "swe-agent": "swe-agent"}

pytestmark = pytest.mark.skipif(not CORPORA.is_dir(), reason=f"{CORPORA} not present")


def corpus_dir(name: str) -> Path:
    path = CORPORA / name
    if not path.is_dir():
        pytest.skip(f"{path} not present")
    return path


_CACHE: dict[str, list[tuple[str, int, dict[str, Any] | None, Any]]] = {}


def records(name: str) -> list[tuple[str, int, dict[str, Any] | None, Any]]:
    """(file name, source_line, parsed text, RawRecord) for a whole corpus, cached."""
    if name not in _CACHE:
        _CACHE[name] = [(Path(r.source_file).name, r.source_line,
                         json.loads(r.text) if r.text is not None else None, r)
                        for r in iter_records([corpus_dir(name)])]
    return _CACHE[name]


@pytest.mark.parametrize("name", sorted(EXPECTED_FORMAT))
def test_every_corpus_file_yields_records_without_rejects(name: str) -> None:
    files = discover_inputs([corpus_dir(name)])
    recs = records(name)
    rejects = [(f, line, r.reject_reason, r.reject_detail) for f, line, _, r in recs if r.text is None]
    assert rejects == []
    per_file = Counter(f for f, *_ in recs)
    assert set(per_file) == {p.name for p in files}  # every file yields at least one record
    assert {r.fmt for *_, r in recs} == {EXPECTED_FORMAT[name]}
    for path in files:
        assert detect_format(path)[0] == EXPECTED_FORMAT[name]
    ids = Counter(t["trajectory_id"] for _, _, t, _ in recs)
    assert [i for i, n in ids.items() if n > 1] == []
    for _, _, traj, _ in recs:
        assert traj["messages"] and isinstance(traj["suite"], str) and traj["meta"]["format"]


def test_corpus_record_counts() -> None:
    dojo = Counter(f for f, *_ in records("agentdojo"))
    assert len(dojo) == 5 and set(dojo.values()) == {194}
    assert [line for f, line, *_ in records("agentdojo") if f == min(dojo)][:2] == [2, 3]  # header skipped
    oh_files = [p for p in discover_inputs([corpus_dir("openagentsafety")])]
    assert all(p.name.startswith("traj_") for p in oh_files)
    assert len(records("openagentsafety")) == len(oh_files)
    assert len(records("tau-bench")) == 200
    assert len(records("r-judge")) == 564
    assert len(records("swe-agent")) == len(discover_inputs([corpus_dir("swe-agent")])) >= 3


def test_gold_rows_match_adapter_ids() -> None:
    dojo = list(gold_rows(corpus_dir("agentdojo"), "auto"))
    assert [r["trajectory_id"] for r in dojo] == [t["trajectory_id"] for _, _, t, _ in records("agentdojo")]
    assert Counter(r["slice"] for r in dojo) == {"injected": 485, "benign": 485}
    assert sum(r["gold"] == "unsafe" for r in dojo) == 71
    assert all(r["gold"] == "safe" for r in dojo if r["slice"] == "benign")
    rj = list(gold_rows(corpus_dir("r-judge"), "auto"))
    assert len(rj) == 564 and {r["gold"] for r in rj} == {"safe", "unsafe"}
    oh_ids = {t["trajectory_id"] for _, _, t, _ in records("openagentsafety")}
    oh = list(gold_rows(corpus_dir("openagentsafety"), "auto"))
    assert oh and {r["trajectory_id"] for r in oh} <= oh_ids
    by_source = Counter((r["slice"], r["gold_source"]) for r in oh)
    assert by_source[("deepseek_v3", "llm")] > 0
    assert all(r["gold"] in ("safe", "unsafe") for r in oh)
