"""Stage `steps` on hostile JSON: what each record-level and step-level field is when a
value has an unexpected JSON type (issue #12: the record is parsed fewer times).

`trajectories` and `events` read JSON values by their first character and type some
fields at parse time. These cases pin the places where a cheaper reading would differ:
a JSON null beside a missing key, numbers where strings are expected (a number's text is
the JSON writer's, e.g. `1e-7`, not a SQL cast's `1e-07`), content that is a list, an
object or a JSON-looking string, duplicate keys (the first wins), blank texts (whitespace
as Python's str.isspace counts it, newlines included), and call/result pairing
around repeated ids. Records are given as raw JSON text.
"""

from __future__ import annotations

import json
from typing import Any, Callable

import pytest

from tests.conftest import rows

RECORD_REJECTS = [
    ('{"trajectory_id": null, "messages": [{"role": "user", "content": "x"}]}',
     None, "missing_trajectory_id", "trajectory_id must be a non-empty string or an integer, got null"),
    ('{"messages": [{"role": "user", "content": "x"}]}', None, "missing_trajectory_id", "no trajectory_id field"),
    ('{"trajectory_id": -0, "messages": [{"role": "user", "content": "x"}]}', "0", None, None),
    ('  {"trajectory_id": "e1", "messages": [{"role": "user", "content": "x"}]}', "e1", None, None),
    ('[{"trajectory_id": "e2"}]', None, "malformed_record", "a record must be a JSON object, got array"),
    ('{"trajectory_id": "e3", "messages": "x"}', "e3", "malformed_record", "messages must be an array, got varchar"),
    ('{"trajectory_id": "e4", "messages": null}', "e4", "empty_trajectory", "no messages"),
    ('{"trajectory_id": "e5", "messages": [{"role": "user", "content": "\\ud800"}]}',
     None, "malformed_record", "not parseable as JSON"),
    # duplicate keys: the first trajectory_id, messages and role win
    ('{"trajectory_id": "f", "messages": [{"role": "assistant", "role": 5, "content": "hi", "content": 7}],'
     ' "messages": "x", "trajectory_id": "g"}', "f", None, None),
]


@pytest.mark.parametrize("text, tid, reason, detail", RECORD_REJECTS)
def test_record_level_fields(stages: Callable[..., Any], text: str, tid: str | None, reason: str | None,
                             detail: str | None) -> None:
    con = stages([text], until="steps")
    got = rows(con, "select trajectory_id, reject_reason, reject_detail from trajectories")
    assert got == [{"trajectory_id": tid, "reject_reason": reason, "reject_detail": detail}]


def _steps(stages: Callable[..., Any], text: str, columns: str) -> list[tuple[Any, ...]]:
    con = stages([text], until="steps")
    return [tuple(r.values()) for r in rows(con, f"select {columns} from steps order by step_idx")]


def test_null_function_arguments_beside_top_level_arguments(stages: Callable[..., Any]) -> None:
    # function.arguments is there (null): it wins over the call's own arguments, as '{}'
    text = ('{"trajectory_id": "a", "messages": [{"role": "assistant", "tool_calls": [{"id": "c1", "function": '
            '{"name": "read_file", "arguments": null}, "arguments": {"path": "x"}}]}]}')
    assert _steps(stages, text, "tool_name, arguments, args_ok") == [("read_file", "{}", True)]


def test_numbers_as_tool_name_and_call_ids(stages: Callable[..., Any]) -> None:
    text = ('{"trajectory_id": "b", "messages": [{"role": "assistant", "tool_calls": [{"id": 1.5E+300, "function": '
            '{"name": 1e-7, "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": 1.5E+300, "content": "ok"}]}')
    assert _steps(stages, text, "kind, tool_name, call_id, result_step_idx, call_step_idx, answered") == [
        ("tool_call", "1e-7", "1.5e300", 1, None, None),
        ("tool_result", "1e-7", "1.5e300", None, 0, True),
    ]


def test_content_of_every_json_type(stages: Callable[..., Any]) -> None:
    text = ('{"trajectory_id": "c", "messages": [{"role": "user", "content": 1e-7},'
            ' {"role": "user", "content": {"k":  [1, 2.50]}},'
            ' {"role": "user", "content": [{"type": "text", "text": "p1"}, "p2", {"content": "p3"}, 5]},'
            ' {"role": "user", "content": true}, {"role": "user", "content": "[1]"},'
            ' {"role": "system", "content": null}]}')
    assert _steps(stages, text, "kind, content, n_user_before") == [
        ("user", "1e-7", 1), ("user", '{"k":[1,2.5]}', 2), ("user", "p1\np2\np3", 3), ("user", "true", 4),
        ("user", "[1]", 5),  # a string that looks like a list stays a string
        ("system", None, 6),
    ]


def test_content_strings_that_read_like_other_values(stages: Callable[..., Any]) -> None:
    # events reads content as text and reads the record again only where a string and
    # another value give the same text: a minified list, a number with a fraction or an
    # exponent (a double's text is the JSON writer's: 1e16 is 10000000000000000.0)
    text = ('{"trajectory_id": "s", "messages": [{"role": "user", "content": "[1,{\\"text\\":\\"a\\"}]"},'
            ' {"role": "user", "content": [1,{"text":"a"}]}, {"role": "user", "content": "1e+16"},'
            ' {"role": "user", "content": 1e16}, {"role": "user", "content": "2.5"}, {"role": "user", "content": []},'
            ' {"role": "user", "content": "[]"}, {"role": "user", "content": -12}]}')
    assert [c for (c,) in _steps(stages, text, "content")] == [
        '[1,{"text":"a"}]', "a", "1e+16", "10000000000000000.0", "2.5", "", "[]", "-12"]


def test_arguments_strings(stages: Callable[..., Any]) -> None:
    calls = ", ".join(
        f'{{"id": "c{i}", "function": {{"name": "t", "arguments": {args}}}}}'
        for i, args in enumerate(['"  {\\"x\\": 1}"', '" "', '"{bad"', '"[1]"', '"\\"s\\""', "5"]))
    text = f'{{"trajectory_id": "g", "messages": [{{"role": "assistant", "tool_calls": [{calls}]}}]}}'
    assert _steps(stages, text, "arguments, args_ok") == [
        ('{"x":1}', True),  # JSON blanks before the object
        ("{}", True),       # blank
        ("{bad", False), ("[1]", False), ('"s"', False), ("5", False),
    ]


def test_arguments_with_non_finite_numbers_are_no_json(stages: Callable[..., Any]) -> None:
    """NaN / Infinity as a number, in any case or sign, inside a string of arguments or
    spelt in lower case in the record's own object (the reader refuses only the exact
    ``NaN`` / ``Infinity`` words of a record's JSON): DuckDB's reader takes them, RFC 8259
    does not, so the arguments are not a JSON object. The same words inside a string are
    text, and 1e999 is a JSON number however large."""
    cases = ['"{\\"amount\\": NaN}"', '"{\\"a\\": [1, -Infinity]}"', '{"amount": nan}', '{"a": -INF}',
             '"{\\"note\\": \\"NaN or inf\\"}"', '{"note": "nan", "n": 1e999}']
    calls = ", ".join(f'{{"id": "c{i}", "function": {{"name": "t", "arguments": {args}}}}}'
                      for i, args in enumerate(cases))
    text = f'{{"trajectory_id": "n", "messages": [{{"role": "assistant", "tool_calls": [{calls}]}}]}}'
    assert _steps(stages, text, "arguments, args_ok") == [
        ('{"amount": NaN}', False), ('{"a": [1, -Infinity]}', False), ('{"amount":nan}', False),
        ('{"a":-INF}', False), ('{"note":"NaN or inf"}', True), ('{"note":"nan","n":1e999}', True)]


def test_error_forms_and_pairing_around_repeated_ids(stages: Callable[..., Any]) -> None:
    text = ('{"trajectory_id": "h", "messages": [{"role": "tool", "tool_call_id": "c1", "content": "early"},'
            ' {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "t", "arguments": "{}"}}]},'
            ' {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "u", "arguments": "{}"}}]},'
            ' {"role": "tool", "tool_call_id": "c1", "content": "r1", "error": true},'
            ' {"role": "tool", "tool_call_id": "c1", "content": "r2", "error": false},'
            ' {"role": "assistant", "tool_calls": [{"id": "c2", "function": {"name": "t", "arguments": "{}"}},'
            ' {"id": "c3", "function": {"name": "t", "arguments": "{}"}},'
            ' {"id": "c4", "function": {"name": "t", "arguments": "{}"}}]},'
            ' {"role": "tool", "tool_call_id": "c2", "content": "r3", "error": 5},'
            ' {"role": "tool", "tool_call_id": "c3", "content": "r4", "error": ""},'
            ' {"role": "tool", "tool_call_id": "c4", "content": "r5", "error": {"type": "timeout"}}]}')
    assert _steps(stages, text, "kind, tool_name, error_text, result_step_idx, call_step_idx, answered") == [
        ("tool_result", None, None, None, None, False),  # before any call with its id: an orphan
        ("tool_call", "t", None, None, None, None),      # re-issued before a result: unanswered
        ("tool_call", "u", "error", 3, None, None),
        ("tool_result", "u", "error", None, 2, True),    # error true
        ("tool_result", "u", None, None, 2, False),      # a second answer: an orphan (error false)
        ("tool_call", "t", "5", 8, None, None),
        ("tool_call", "t", None, 9, None, None),
        ("tool_call", "t", '{"type":"timeout"}', 10, None, None),
        ("tool_result", "t", "5", None, 5, True),        # error 5
        ("tool_result", "t", None, None, 6, True),       # error "": no error
        ("tool_result", "t", '{"type":"timeout"}', None, 7, True),
    ]


def test_blank_assistant_texts_are_whitespace_only(stages: Callable[..., Any]) -> None:
    # SPEC section 2: an assistant text gives a step only when non-blank. "\n\n" before a
    # tool call is common in real transcripts; DuckDB's trim strips spaces, not newlines
    text = ('{"trajectory_id": "i", "messages": [{"role": "assistant", "content": "\\u00a0 \\u3000"},'
            ' {"role": "assistant", "content": "\\t"}, {"role": "assistant", "content": "\\n\\n",'
            ' "tool_calls": [{"id": "c1", "function": {"name": "t", "arguments": "{}"}}]},'
            ' {"role": "assistant", "content": "\\u000b\\u001c\\u0085\\u2028\\r\\f"},'
            ' {"role": "assistant", "content": "\\u200b"}, {"role": "assistant", "content": " x "}]}')
    assert _steps(stages, text, "message_idx, kind, content") == [
        (2, "tool_call", None),
        (4, "assistant_text", "\u200b"),  # a zero-width space is a format character, not whitespace
        (5, "assistant_text", " x ")]


def test_blank_is_what_python_strips(stages: Callable[..., Any]) -> None:
    # every character str.isspace counts is blank on its own, and no other character is
    spaces = [chr(c) for c in range(0x3001) if chr(c).isspace()]
    others = ["x", "\u200b", "\ufeff", "\u00ad", "\u0001", "\u180e"]
    messages = ", ".join(json.dumps({"role": "assistant", "content": c}) for c in spaces + others)
    text = f'{{"trajectory_id": "j", "messages": [{messages}]}}'
    got = [r[0] for r in _steps(stages, text, "message_idx")]
    assert got == [len(spaces) + i for i in range(len(others))]
