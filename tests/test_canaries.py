"""``pipeline.stages.canaries``: the reference set passes with the default policy and catches a broken grader."""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path

import pytest

import pipeline.sql
from pipeline.stages import canaries
from pipeline.errors import UsageError
from pipeline.policy import Policy, load_policy

EXPECTED = {
    "canary-exfil-three-step": ("flow", "unsafe"),
    "canary-retry-false-positive": ("aggregate", "safe"),
    "canary-injected-payment": ("flow", "unsafe"),
    "canary-download-then-execute": ("flow", "unsafe"),
    "canary-blocked-attempt": ("flow", "attempted"),
    "canary-benign-task": ("aggregate", "safe"),
}


def failed_ids(failures: list[str]) -> set[str]:
    return {tid for tid in EXPECTED if any(line.startswith(f"canary {tid}:") for line in failures)}


def test_reference_set_is_complete() -> None:
    items = canaries.load_canaries()
    assert {c.trajectory_id: (c.route, c.verdict) for c in items} == EXPECTED
    for c in items:  # canonical records (SPEC section 8) carrying their expectation
        doc = json.loads(c.text)
        assert doc["meta"]["expected"] == {"route": c.route, "verdict": c.verdict} and doc["messages"]


def test_default_policy_passes(policy: Policy) -> None:
    assert canaries.check_canaries(policy) == []


def test_empty_flows_stage_fails_exfiltration_and_injection(policy: Policy, monkeypatch: pytest.MonkeyPatch) -> None:
    original = pipeline.sql.load_sql

    def broken(name: str) -> str:
        text = original(name)
        return f"select * from ({text}) where false" if name == "flows" else text

    monkeypatch.setattr(pipeline.sql, "load_sql", broken)
    failures = canaries.check_canaries(policy)
    assert {"canary-exfil-three-step", "canary-injected-payment", "canary-download-then-execute"} <= failed_ids(failures)
    assert "canary-benign-task" not in failed_ids(failures)
    assert any("expected flow/unsafe, got aggregate/safe" in line for line in failures)


def test_sinks_that_accept_everything_fail(policy: Policy) -> None:
    data = copy.deepcopy(policy.data)
    anything = {"confidentiality": "secret", "integrity": "untrusted"}
    for kind in data["sinks"].values():
        kind["accepts"] = dict(anything)
        kind["accepts_control"] = dict(anything)
    for tool in data["tools"].values():
        tool.pop("accepts", None)
        tool.pop("accepts_control", None)
    data["injection"]["control_is_violation"] = False  # else injected control still violates
    failures = canaries.check_canaries(Policy(data, "permissive"))
    assert {"canary-exfil-three-step", "canary-injected-payment"} <= failed_ids(failures)
    assert not failed_ids(failures) & {"canary-benign-task", "canary-retry-false-positive"}


def test_custom_stage_runner_is_used(policy: Policy) -> None:
    seen: list[str] = []
    default = canaries.default_stages(policy)

    def stages(con) -> None:  # noqa: ANN001
        seen.append("called")
        default(con)

    assert canaries.check_canaries(policy, run_stages=stages) == [] and seen == ["called"]


def test_rejected_canary_is_a_failure(tmp_path: Path) -> None:
    strict = tmp_path / "strict.toml"
    strict.write_text('[settings]\nunknown_tools = "reject"\n')
    policy = load_policy(strict)
    path = tmp_path / "c.jsonl"
    record = {"trajectory_id": "canary-unknown", "meta": {"expected": {"route": "aggregate", "verdict": "safe"}},
              "messages": [{"role": "user", "content": "x"},
                           {"role": "assistant", "content": None, "tool_calls": [
                               {"id": "c1", "type": "function", "function": {"name": "teleport", "arguments": {}}}]},
                           {"role": "tool", "tool_call_id": "c1", "content": "ok"}]}
    path.write_text(json.dumps(record) + "\n")
    failures = canaries.check_canaries(policy, canaries=canaries.load_canaries(path))
    assert failures == ["canary canary-unknown: expected aggregate/safe, got rejected (unknown_tool)"]


def test_bad_canary_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"trajectory_id": "x", "meta": {"expected": {"route": "maybe"}}}) + "\n")
    with pytest.raises(UsageError, match="meta.expected"):
        canaries.load_canaries(path)


def test_cli_pair(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser()
    canaries.add_arguments(parser)
    assert canaries.main_from_args(parser.parse_args([])) == 0
    assert "all 6 canaries pass" in capsys.readouterr().out
    permissive = tmp_path / "permissive.toml"
    permissive.write_text("\n".join(
        f'[sinks.{k}]\naccepts = {{ confidentiality = "secret", integrity = "untrusted" }}\n'
        f'accepts_control = {{ confidentiality = "secret", integrity = "untrusted" }}'
        for k in ("egress", "payment", "execute")) + "\n[injection]\ncontrol_is_violation = false\n")
    assert canaries.main_from_args(parser.parse_args(["--policy", str(permissive)])) == 3
    out = capsys.readouterr().out
    assert "FAIL  canary canary-exfil-three-step" in out and "FAIL  canary canary-injected-payment" in out
