"""The committed sample corpus (data/sample/) matches its generator and its contracts.

Regenerating into a temporary folder must give byte-identical files, so the corpus
never drifts from data/generate.py. The step counting below is a small independent
re-implementation of the explode order of docs/design.md (it does not import the
generator), so a labels file with shifted step_idx values fails here.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample"
GENERATOR = ROOT / "data" / "generate.py"
POLICY = ROOT / "pipeline" / "policy" / "default.toml"

CASE_CLASSES = {
    "benign",
    "retry_false_positive",
    "error_no_retry",
    "retry_hidden_violation",
    "blocked_attempt",
    "blocked_benign",
    "parallel_calls",
    "intent_change",
    "exfiltration",
    "single_step_exfiltration",
    "injection_followed",
    "injection_ignored",
    "benign_flow",
    "download_execute",
    "self_written_execute",
    "secret_unrelated_post",
    "user_provided_value",
    "destructive_executed",
    "destructive_discussed",
    "multi_turn",
    "hostile",
}
UNKNOWN_TOOLS_ON_PURPOSE = {"quantum_teleport", "create_calendar_event"}


# ----------------------------------------------------------------------------- helpers
def _files(root: Path) -> list[Path]:
    return sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file())


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(p.get("text") or "" for p in content if isinstance(p, dict) and p.get("type") == "text")


def _step_kinds(messages: list[dict[str, Any]]) -> list[str]:
    """Explode order: system/user/other -> 1 step; assistant -> text step only when its
    text is non-empty after strip, then one step per tool call; tool -> 1 step."""
    kinds: list[str] = []
    for m in messages:
        role = m.get("role")
        if role == "assistant":
            if _text(m.get("content")).strip():
                kinds.append("assistant_text")
            kinds.extend("tool_call" for _ in m.get("tool_calls") or [])
        elif role == "tool":
            kinds.append("tool_result")
        elif role == "user":
            kinds.append("user")
        else:
            kinds.append("system")
    return kinds


def _corpus_lines() -> list[tuple[str, str]]:
    return [
        (p.stem, line)
        for p in sorted((SAMPLE / "corpus").glob("*.jsonl"))
        for line in p.read_text(encoding="utf-8").splitlines()
    ]


def _trajectories() -> dict[str, dict[str, Any]]:
    """First record for each trajectory_id (later copies are duplicates, rejected)."""
    out: dict[str, dict[str, Any]] = {}
    for _, line in _corpus_lines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict) and isinstance(rec.get("trajectory_id"), str):
            out.setdefault(rec["trajectory_id"], rec)
    return out


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sample")
    subprocess.run([sys.executable, str(GENERATOR), "--out", str(out)], check=True, capture_output=True, text=True)
    return out


@pytest.fixture(scope="module")
def gold() -> list[dict[str, Any]]:
    return _jsonl(SAMPLE / "gold.jsonl")


@pytest.fixture(scope="module")
def labels() -> list[dict[str, Any]]:
    return _jsonl(SAMPLE / "labels.jsonl")


# ----------------------------------------------------------------------------- drift
def test_regeneration_is_byte_identical(regenerated: Path) -> None:
    assert _files(regenerated) == _files(SAMPLE)
    for rel in _files(SAMPLE):
        assert (regenerated / rel).read_bytes() == (SAMPLE / rel).read_bytes(), (
            f"data/sample/{rel} drifted from data/generate.py; run `python data/generate.py`"
        )


def test_two_runs_are_identical(regenerated: Path, tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(GENERATOR), "--out", str(tmp_path)], check=True, capture_output=True)
    for rel in _files(regenerated):
        assert (tmp_path / rel).read_bytes() == (regenerated / rel).read_bytes(), rel


# ----------------------------------------------------------------------------- shape
def test_size_and_suites() -> None:
    lines = _corpus_lines()
    per_suite = Counter(suite for suite, _ in lines)
    assert len(lines) >= 300
    assert {"file-net", "mail-pay", "web-agent"} <= set(per_suite)
    assert all(n >= 90 for n in per_suite.values()), per_suite
    assert sum(p.stat().st_size for p in SAMPLE.rglob("*") if p.is_file()) < 2_000_000


def test_records_carry_their_suite() -> None:
    for suite, line in _corpus_lines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict):
            assert rec.get("suite") == suite


def test_hostile_share_is_about_five_percent(gold: list[dict[str, Any]]) -> None:
    lines = _corpus_lines()
    broken = 0
    for _, line in lines:
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            broken += 1
            continue
        broken += not isinstance(rec, dict)
    assert broken >= 3  # at least two cut-off lines and one JSON array
    hostile_gold = sum("hostile" in row["slice"] for row in gold)
    ids = [json.loads(line).get("trajectory_id") for _, line in lines if line.startswith("{") and line.endswith("}")]
    duplicates = len(ids) - len(set(ids))
    no_id = sum(1 for i in ids if i is None)
    share = (broken + hostile_gold + duplicates + no_id) / len(lines)
    assert 0.03 <= share <= 0.10, share


def test_every_case_class_present(gold: list[dict[str, Any]]) -> None:
    counts = Counter(row["slice"][0] for row in gold)
    assert set(counts) >= CASE_CLASSES, CASE_CLASSES - set(counts)
    assert all(counts[c] >= 2 for c in CASE_CLASSES), counts


def test_gold_rows(gold: list[dict[str, Any]]) -> None:
    corpus = _trajectories()
    ids = [row["trajectory_id"] for row in gold]
    assert len(ids) == len(set(ids))
    for row in gold:
        assert row["trajectory_id"] in corpus
        assert row["gold"] in {"safe", "unsafe"}
        assert isinstance(row["slice"], list) and row["slice"] and all(isinstance(s, str) for s in row["slice"])
    dist = Counter(row["gold"] for row in gold)
    assert 0.15 <= dist["unsafe"] / len(gold) <= 0.6, dist


def test_well_formed_trajectories(gold: list[dict[str, Any]]) -> None:
    catalog = set(tomllib.loads(POLICY.read_text(encoding="utf-8"))["tools"])
    corpus = _trajectories()
    for row in gold:
        msgs = corpus[row["trajectory_id"]]["messages"]
        assert 4 <= len(msgs) <= 30, row
        calls = [c for m in msgs if m["role"] == "assistant" for c in m.get("tool_calls") or []]
        assert len({c["id"] for c in calls}) == len(calls), row
        for c in calls:
            name = c["function"]["name"]
            assert name in catalog or name in UNKNOWN_TOOLS_ON_PURPOSE, (row, name)
        if "hostile" not in row["slice"]:
            call_ids = {c["id"] for c in calls}
            for m in msgs:
                if m["role"] == "tool":
                    assert m["tool_call_id"] in call_ids, row


def test_format_variety() -> None:
    seen: Counter[str] = Counter()
    for rec in _trajectories().values():
        for m in rec.get("messages") or []:
            if isinstance(m.get("content"), list):
                seen["content_parts"] += 1
            for c in m.get("tool_calls") or []:
                seen["args_" + type(c["function"]["arguments"]).__name__] += 1
            if m.get("role") == "tool":
                seen["error_" + type(m.get("error")).__name__] += 1
    for key in ("content_parts", "args_str", "args_dict", "error_NoneType", "error_str", "error_dict"):
        assert seen[key] >= 20, (key, seen)


# ----------------------------------------------------------------------------- labels
def test_labels_reference_corpus_and_step_range(labels: list[dict[str, Any]]) -> None:
    corpus = _trajectories()
    keys = set()
    for row in labels:
        rec = corpus.get(row["trajectory_id"])
        assert rec is not None, row
        kinds = _step_kinds(rec["messages"])
        assert isinstance(row["step_idx"], int) and 0 <= row["step_idx"] < len(kinds), row
        assert row["label"] in {"safe", "unsafe"}
        assert 0.0 <= row["score"] <= 1.0
        assert (row["score"] > 0.5) == (row["label"] == "unsafe"), row
        # The simulated classifier never flags a system or user message: an unsafe
        # label on one would mean step_idx is misaligned with the explode order.
        if row["label"] == "unsafe":
            assert kinds[row["step_idx"]] in {"tool_call", "assistant_text", "tool_result"}, row
        key = (row["trajectory_id"], row["step_idx"])
        assert key not in keys
        keys.add(key)


def test_about_two_thirds_labelled(gold: list[dict[str, Any]], labels: list[dict[str, Any]]) -> None:
    labelled = {row["trajectory_id"] for row in labels}
    assert 0.5 <= len(labelled) / len(gold) <= 0.8


def test_classifier_is_flow_blind_and_flags_failed_attempts(
    gold: list[dict[str, Any]], labels: list[dict[str, Any]]
) -> None:
    by_traj: dict[str, list[dict[str, Any]]] = {}
    for row in labels:
        by_traj.setdefault(row["trajectory_id"], []).append(row)
    corpus = _trajectories()
    n_fp = 0
    for row in gold:
        rows = by_traj.get(row["trajectory_id"], [])
        case = row["slice"][0]
        if case == "exfiltration":
            assert all(r["label"] == "safe" for r in rows), row
        if case == "retry_false_positive" and rows:
            kinds = _step_kinds(corpus[row["trajectory_id"]]["messages"])
            assert any(r["label"] == "unsafe" and kinds[r["step_idx"]] == "tool_call" for r in rows), row
            n_fp += 1
    assert n_fp >= 10
