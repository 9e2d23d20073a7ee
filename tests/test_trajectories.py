"""Stage `trajectories`: record-level rejects, in particular the first malformed message.

A quick whole-record test lets well-formed records skip the per-message check; these
cases make sure every kind of malformed message still falls through to it and is
reported with the right message index.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

from tests.conftest import calls, result, rows, traj, user


def _reject(stages: Callable[..., Any], record: dict[str, Any]) -> tuple[str | None, str | None]:
    con = stages([record], until="steps")
    got = rows(con, "select reject_reason, reject_detail from trajectories")
    assert len(got) == 1
    return got[0]["reject_reason"], got[0]["reject_detail"]


GOOD_CALL = calls(("c1", "read_file", {"path": "a.txt"}))


@pytest.mark.parametrize("bad, index", [
    ({"content": "no role"}, 2),                                   # object without a role
    ("a bare string", 2),                                           # not an object
    ([{"role": "user"}], 2),                                        # an array
    ({"role": 7, "content": "x"}, 2),                               # role not a string
    ({"role": "assistant", "tool_calls": {"id": "x"}}, 2),          # tool_calls not a list
    ({"role": "assistant", "tool_calls": [{"id": "x", "function": {"arguments": "{}"}}]}, 2),  # unnamed call
    ({"role": "assistant", "tool_calls": [{"id": "x", "function": {"name": None}}]}, 2),       # null name
])
def test_first_malformed_message_is_reported(stages: Callable[..., Any], bad: Any, index: int) -> None:
    record = traj("t1", user("hi"), GOOD_CALL, bad, result("c1"))
    reason, detail = _reject(stages, record)
    assert reason == "malformed_record"
    assert detail == f"message {index} is not an object with a role and named tool calls"


@pytest.mark.parametrize("message", [
    {"role": "assistant", "tool_calls": [{"id": "c9", "name": "read_file", "arguments": {}}]},  # name at top level
    {"role": "assistant", "content": "x", "tool_calls": None},                                  # null tool_calls
    {"role": "assistant", "content": "x", "tool_calls": []},                                    # empty list
])
def test_well_formed_variants_are_accepted(stages: Callable[..., Any], message: dict[str, Any]) -> None:
    reason, _ = _reject(stages, traj("t1", user("hi"), message))
    assert reason is None


def test_duplicate_ids_keep_the_first_copy(stages: Callable[..., Any]) -> None:
    con = stages([traj("same", user("a")), traj("same", user("b")), traj("other", user("c"))], until="steps")
    got = rows(con, "select record_id, reject_reason from trajectories order by record_id")
    assert [g["reject_reason"] for g in got] == [None, "duplicate_trajectory_id", None]
    assert rows(con, "select content from steps where trajectory_id = 'same'") == [{"content": "a"}]
