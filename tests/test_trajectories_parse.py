"""Golden rows of `trajectories` (and the steps of its accepted records) for one shard
mixing valid records with texts that are not JSON objects (issue #12).

`trajectories` parses each record once: `try(json_transform(...))` gives no doc for a
text that is not JSON, and only records without a doc (not JSON, or the JSON text
`null`) are parsed again by `json_valid`, so there is no separate validity pass over
every record. DuckDB's `try` re-runs a failing vector row by row: the records here share
one vector, so the valid records around the bad ones must keep their full doc (their
steps below), and every bad text must get the reject it got with a `json_valid` pass.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from tests.conftest import rows


def _ok(tid: str, messages: list[dict[str, Any]]) -> str:
    return json.dumps({"trajectory_id": tid, "messages": messages}, ensure_ascii=False)


_HI = [{"role": "user", "content": "hi"}]
NOT_JSON = "not parseable as JSON"

# (record text, trajectory_id, reject_reason, reject_detail), in input order
CASES: list[tuple[str, str | None, str | None, str | None]] = [
    (_ok("ok-1", _HI), "ok-1", None, None),
    ("null", None, "malformed_record", "a record must be a JSON object, got null"),
    ("  null\n", None, "malformed_record", "a record must be a JSON object, got null"),
    ('{"trajectory_id": "cut", "messages": [', None, "malformed_record", NOT_JSON),
    (_ok("ok-2", [{"role": "assistant"}]), "ok-2", None, None),
    ('{"trajectory_id": "tail", "messages": []} x', None, "malformed_record", NOT_JSON),
    ('{"trajectory_id": "two"}{"messages": []}', None, "malformed_record", NOT_JSON),
    ("", None, "malformed_record", NOT_JSON),
    ("{'trajectory_id': 'quotes'}", None, "malformed_record", NOT_JSON),
    ('{"trajectory_id": "lone", "messages": [{"role": "user", "content": "\\ud800"}]}',
     None, "malformed_record", NOT_JSON),
    ("[1, 2]", None, "malformed_record", "a record must be a JSON object, got array"),
    ("7", None, "malformed_record", "a record must be a JSON object, got ubigint"),
    ('"{\\"trajectory_id\\": \\"s\\"}"', None, "malformed_record", "a record must be a JSON object, got varchar"),
    ("true", None, "malformed_record", "a record must be a JSON object, got boolean"),
    ('{"trajectory_id": "nul\\u0000id", "messages": [{"role": "user", "content": "x"}]}', "nul\x00id", None, None),
    (_ok("ok-3", [
        {"role": "user", "content": "héllo ✓ 😀 שלום e\u0301"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "function": {"name": "f_number", "arguments": 5}},
            {"id": "c2", "function": {"name": "f_list", "arguments": [1, "a"]}},
            {"id": "c3", "function": {"name": "f_nested", "arguments": json.dumps({"q": json.dumps({"x": "ü"})})}},
            {"id": "c4", "function": {"name": "f_string", "arguments": "plain words"}},
        ]},
        {"role": "tool", "tool_call_id": "c3", "content": json.dumps({"inner": "{\"deep\": \"\\\"q\\\"\"}"})},
        {"role": "tool", "tool_call_id": "c1"},
    ]), "ok-3", None, None),
    ('{"trajectory_id": "ok-1", "messages": [{"role": "user", "content": "again"}]}',
     "ok-1", "duplicate_trajectory_id", "copy 2 of trajectory_id ok-1"),
    ("{}", None, "missing_trajectory_id", "no trajectory_id field"),
    ('{"trajectory_id": "empty", "messages": []}', "empty", "empty_trajectory", "no messages"),
]

# steps of ok-3: (kind, tool_name, arguments, args_ok, content)
OK3_STEPS = [
    ("user", None, None, None, "héllo ✓ 😀 שלום e\u0301"),
    ("tool_call", "f_number", "5", False, None),
    ("tool_call", "f_list", '[1,"a"]', False, None),
    ("tool_call", "f_nested", json.dumps({"q": json.dumps({"x": "ü"})}, separators=(",", ":"), ensure_ascii=False),
     True, None),
    ("tool_call", "f_string", "plain words", False, None),
    # a result carries the name of the call it answers
    ("tool_result", "f_nested", None, None, json.dumps({"inner": "{\"deep\": \"\\\"q\\\"\"}"})),
    ("tool_result", "f_number", None, None, None),
]


def test_record_rejects_in_one_mixed_shard(stages: Callable[..., Any]) -> None:
    con = stages([c[0] for c in CASES], until="steps")
    got = rows(con, "select trajectory_id, reject_reason, reject_detail from trajectories order by record_id")
    assert got == [{"trajectory_id": tid, "reject_reason": reason, "reject_detail": detail}
                   for _, tid, reason, detail in CASES]


def test_valid_records_beside_bad_ones_keep_every_message(stages: Callable[..., Any]) -> None:
    con = stages([c[0] for c in CASES], until="steps")
    got = rows(con, "select trajectory_id, count(*) as n from steps group by all order by all")
    # ok-2's only message is a blank assistant text: accepted, no step
    assert got == [{"trajectory_id": "nul\x00id", "n": 1}, {"trajectory_id": "ok-1", "n": 1},
                   {"trajectory_id": "ok-3", "n": 7}]
    ok3 = [tuple(r.values()) for r in rows(
        con, "select kind, tool_name, arguments, args_ok, content from steps where trajectory_id = 'ok-3' "
             "order by step_idx")]
    assert ok3 == OK3_STEPS
