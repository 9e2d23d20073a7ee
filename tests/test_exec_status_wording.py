"""Guard wording in error texts: a call a policy or guard stopped is `blocked` (it never
ran: the trajectory is `attempted`, not `unsafe`), whatever adjective the guard puts before
"policy"; wording that names no guard is no block."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import calls, result, rows, stage_connection, traj, user


@pytest.mark.parametrize(("error", "status"), [
    ("Blocked by security policy.", "blocked"),  # AgentDojo defences' wording
    ("blocked by the security policy", "blocked"),
    ("Request blocked by content policy", "blocked"),
    ("Blocked by organisational policy: external transfers need approval", "blocked"),
    ("blocked by guardrail", "blocked"),
    ("ValueError: amount must be positive", "failed"),
    ("the recipient blocked by mistake was unblocked", "unknown"),
])
def test_guard_wording_makes_a_call_blocked(error: str, status: str) -> None:
    record: dict[str, Any] = traj("t", user("pay the bill"),
                                  calls(("c1", "send_money", {"recipient": "US1330", "amount": 50})),
                                  result("c1", "", error))
    con = stage_connection([record], until="steps")
    [step] = rows(con, "select exec_status from steps where kind = 'tool_call'")
    assert step["exec_status"] == status
