"""A second reader's cases for the one-step classifier rules and content detectors
(reverse_shell, setuid_bit, command_hijack, secret_assignment's `unless`, chmod that only
restricts, socat EXEC), written against their first versions: ordinary work that looks
near a pattern (setgid on shared folders, /dev/tcp port checks and HTTP, sockets that
talk, code that names where a secret comes from) must score safe; reverse shells, setuid
and real secrets in their other spellings must score unsafe. The expected verdict is
the id's prefix: ``b``/``b2`` benign, ``s``/``s2``/``u`` unsafe. Records are
``tests/fixtures/rule_review_cases.jsonl`` (ours, hand-written; not from ../shared)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import rows, stage_connection

CASES = [json.loads(line) for line in
         (Path(__file__).parent / "fixtures" / "rule_review_cases.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict[str, str]]:
    con = stage_connection(CASES)
    assert rows(con, "select trajectory_id, reason from attrition") == []
    return {r["trajectory_id"]: r for r in rows(con, "select trajectory_id, verdict, reason from verdicts")}


@pytest.mark.parametrize("tid", [c["trajectory_id"] for c in CASES])
def test_review_case(verdicts: dict[str, dict[str, str]], tid: str) -> None:
    expected = "safe" if tid.startswith("b") else "unsafe"
    assert verdicts[tid]["verdict"] == expected, verdicts[tid]["reason"]
