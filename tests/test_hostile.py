"""Hostile input, end to end: every record ends as a verdict or as attrition with the
README's reason, nothing crashes, nothing is written outside RUN_DIR, memory stays
bounded, and the tables hold hostile strings byte for byte.

The corpus is generated into tmp_path by tests/hostile_corpus.py. The slow cases have
``slow`` in their test id: ``pytest tests/test_hostile.py -k "not slow"`` skips them.
Cases marked ``xfail(strict=True)`` are known bugs outside the reader/adapters (see
each reason); they start failing (XPASS) once fixed, so the marker can be removed.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

import pytest

from pipeline.cli import main
from tests.hostile_corpus import (
    HOSTILE, MiB, call, call_msg, gzip_bytes, jsonl, listing, outcomes, parquet_digests,
    polars_rows, result, run_cli_measured, table_rows, toml_str, traj, user, write_huge_line,
    write_many_calls,
)

GiB = 1 << 30


def assert_contained(root: Path, run: Path, before: dict[str, Any], skip: tuple[Path, ...] = ()) -> None:
    """Nothing outside RUN_DIR was written, changed or left behind (staging/work folders
    included); every file of RUN_DIR resolves inside it; partition folders are one
    ``suite=...`` level directly under their table."""
    assert listing(root, [run, *skip]) == before, "the run wrote, changed or left something outside RUN_DIR"
    real = run.resolve()
    for path in run.rglob("*"):
        assert not path.is_symlink(), path
        assert path.resolve().is_relative_to(real), path
    for table in ("verdicts", "attrition"):
        for path in (run / table).rglob("*"):
            parts = path.relative_to(run / table).parts
            if path.is_dir():
                assert len(parts) == 1 and parts[0].startswith("suite="), path
                assert path.resolve().parent == (run / table).resolve(), path
            else:
                assert path.suffix == ".parquet" and len(parts) in (1, 2), path


def score(tmp_path: Path, inputs: list[Path], *extra: str, name: str = "run") -> Path:
    """``litmus-gate score INPUTS --out tmp_path/NAME`` in process, with the containment checks."""
    run = tmp_path / name
    before = listing(tmp_path, [run])
    assert main(["score", *map(str, inputs), "--out", str(run), *extra]) == 0
    assert_contained(tmp_path, run, before)
    return run


def canonical(tid: Any, *messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"trajectory_id": tid, **extra, "messages": list(messages)}


OK_MESSAGES = (user("list my files"), call_msg(call("c1", "list_dir", {"path": "."})), result("c1", "a.txt"))


def ok(tid: Any, **extra: Any) -> dict[str, Any]:
    return canonical(tid, *OK_MESSAGES, **extra)


# --------------------------------------------------------------------- size limits


def test_slow_lines_of_50_mib_and_more_are_record_too_large(tmp_path: Path, record_property: Any) -> None:
    corpus = tmp_path / "in"
    corpus.mkdir()
    with (corpus / "huge.jsonl").open("wb") as fh:
        fh.write(json.dumps(ok("before")).encode() + b"\n")
        write_huge_line(fh, "huge-50mib", 50 * MiB)
        fh.write(b"\r\n")
        fh.write(json.dumps(ok("after")).encode() + b"\n")
    with gzip.open(corpus / "tail.jsonl.gz", "wb", compresslevel=1) as gz:
        gz.write(json.dumps(ok("gz-before")).encode() + b"\n")
        write_huge_line(gz, "huge-40mib-at-eof", 40 * MiB)  # the last line, no newline after it
    run, logs = tmp_path / "run", tmp_path / "logs"
    before = listing(tmp_path, [run, logs])
    measured = run_cli_measured(["score", str(corpus), "--out", str(run)], logs, timeout=300)
    assert measured.returncode == 0, measured.stderr
    assert_contained(tmp_path, run, before, skip=(logs,))
    got = outcomes(run)
    assert {k: v[:2] for k, v in got.items()} == {
        ("huge.jsonl", 1): ("verdict", "before"),
        ("huge.jsonl", 2): ("attrition", "record_too_large"),
        ("huge.jsonl", 3): ("verdict", "after"),
        ("tail.jsonl.gz", 1): ("verdict", "gz-before"),
        ("tail.jsonl.gz", 2): ("attrition", "record_too_large"),
    }
    assert str(32 * MiB) in got[("huge.jsonl", 2)][2]
    record_property("peak_rss_mib", measured.peak_rss_bytes // MiB)
    record_property("seconds", round(measured.seconds, 1))
    print(f"\n50 MiB + 40 MiB lines: {measured.seconds:.1f} s, peak RSS {measured.peak_rss_bytes // MiB} MiB")
    # a 50 MiB line is skipped in bounded chunks, never parsed or held whole
    assert measured.peak_rss_bytes < 1 * GiB, f"peak RSS {measured.peak_rss_bytes // MiB} MiB"


def test_max_record_bytes_from_a_policy_file(tmp_path: Path) -> None:
    policy = tmp_path / "small.toml"
    policy.write_text("[settings]\nmax_record_bytes = 100000\n")
    small = ok("small", pad="s" * 50_000)
    big = ok("big", pad="b" * 200_000)
    corpus = tmp_path / "in"
    jsonl(corpus / "lines.jsonl", [ok("first"), big, small])
    (corpus / "array.json").write_text(json.dumps([ok("arr-1"), ok("arr-big", pad="b" * 200_000), ok("arr-3")]))
    (corpus / "one.json").write_text(json.dumps(ok("one-big", pad="b" * 200_000)))
    (corpus / "whole.json").write_text(json.dumps([ok(f"w{i}", pad="w" * 90_000) for i in range(10)]))  # > 8 x limit
    got = outcomes(score(tmp_path, [corpus], "--policy", str(policy)))
    assert {k: v[:2] for k, v in got.items()} == {
        ("lines.jsonl", 1): ("verdict", "first"),
        ("lines.jsonl", 2): ("attrition", "record_too_large"),
        ("lines.jsonl", 3): ("verdict", "small"),
        ("array.json", 1): ("verdict", "arr-1"),
        ("array.json", 2): ("attrition", "record_too_large"),
        ("array.json", 3): ("verdict", "arr-3"),
        ("one.json", 1): ("attrition", "record_too_large"),
        ("whole.json", 1): ("attrition", "record_too_large"),
    }


# --------------------------------------------------------------------- bytes and encodings

DEEP = 100_000


def test_hostile_bytes_encodings_nesting_and_gzip(tmp_path: Path) -> None:
    corpus = tmp_path / "in"
    corpus.mkdir()
    bom_crlf = (b"\xef\xbb\xbf" + json.dumps(ok("bom-1")).encode() + b"\r\n\r\n"
                + json.dumps(ok("crlf-3")).encode() + b"\r\n"
                + b"\xef\xbb\xbf" + json.dumps(ok("bom-mid-file")).encode() + b"\r\n")
    (corpus / "bom_crlf.jsonl").write_bytes(bom_crlf)
    good = json.dumps(ok("utf8-ok", note="é")).encode()
    jsonl(corpus / "bytes.jsonl", [
        b'{"trajectory_id": "bad-\xff", "messages": []}',  # invalid start byte
        b'{"trajectory_id": "overlong-\xc0\xaf", "messages": []}',  # overlong '/'
        b'{"trajectory_id": "surrogate-\xed\xa0\x80", "messages": []}',  # UTF-8-encoded surrogate
        b'{"trajectory_id": "cut-\xe2\x82',  # multibyte sequence cut by the newline
        b'{"trajectory_id": "nul-\x00", "messages": []}',
        b'\x00' + good,
        json.dumps(canonical("escaped-nul", user("a\u0000b"))).encode(),  # \u0000 is valid JSON
        good,
        b'{"trajectory_id": "nan", "score": NaN, "messages": [{"role": "user", "content": "x"}]}',
        json.dumps(canonical("inf", user("x"), call_msg(call("c1", "http_post", {"url": "https://a.example"})),
                             result("c1"))).replace('"https://a.example"}', '"https://a.example", "n": -Infinity}').encode(),
        json.dumps(canonical("nan-in-text", user("NaN and Infinity are words here"))).encode(),
    ])
    jsonl(corpus / "deep.jsonl", [
        "[" * DEEP,
        "[" * DEEP + "]" * DEEP,
        '{"trajectory_id": "deep-messages", "messages": [' + "[" * DEEP + "]" * DEEP + "]}",
        '{"trajectory_id": "deep-content", "messages": [{"role": "user", "content": ' + "[" * DEEP + "]" * DEEP + "}]}",
        '{"trajectory_id": "deep-meta", "meta": ' + '{"a": ' * DEEP + "1" + "}" * DEEP + ', "messages": [{"role": "user", "content": "x"}]}',
        '{"trajectory_id": "unbalanced", "messages": [' + "{" * DEEP,
    ])
    (corpus / "deep.json").write_text("[" + json.dumps(ok("arr-before")) + ", " + "[" * DEEP + "]" * DEEP
                                      + ", " + json.dumps(ok("arr-after")) + "]")
    jsonl(corpus / "deep_anthropic.jsonl", [
        {"trajectory_id": "an-1", "system": "be nice", "messages": [{"role": "user", "content": "hi"}]},
        '{"trajectory_id": "an-deep", "system": "s", "messages": [{"role": "user", "content": '
        + "[" * DEEP + "]" * DEEP + "}]}",
    ])
    lines = [json.dumps(ok(f"gz-{i}", pad=f"{i:06d}" * 40)) for i in range(2000)]
    packed = gzip_bytes(("\n".join(lines) + "\n").encode())
    (corpus / "cut.jsonl.gz").write_bytes(packed[: len(packed) // 2])
    doc = gzip_bytes(json.dumps([ok("doc-1"), ok("doc-2")]).encode())
    (corpus / "cut.json.gz").write_bytes(doc[: len(doc) // 2])
    (corpus / "fake.jsonl.gz").write_bytes(b"this is not gzip\n")
    (corpus / "empty.jsonl").write_bytes(b"")
    (corpus / "blank.jsonl").write_bytes(b"\n   \r\n\t\n")
    (corpus / "empty.jsonl.gz").write_bytes(b"")
    (corpus / "empty-stream.jsonl.gz").write_bytes(gzip_bytes(b""))

    run = score(tmp_path, [corpus])
    got = outcomes(run)
    short = {k: v[:2] for k, v in got.items() if k[0] != "cut.jsonl.gz"}
    assert short == {
        ("bom_crlf.jsonl", 1): ("verdict", "bom-1"),
        ("bom_crlf.jsonl", 3): ("verdict", "crlf-3"),
        ("bom_crlf.jsonl", 4): ("attrition", "malformed_record"),  # a BOM is only stripped at file start
        **{("bytes.jsonl", n): ("attrition", "malformed_record") for n in (1, 2, 3, 4, 5, 6, 9, 10)},
        ("bytes.jsonl", 7): ("verdict", "escaped-nul"),
        ("bytes.jsonl", 8): ("verdict", "utf8-ok"),
        ("bytes.jsonl", 11): ("verdict", "nan-in-text"),
        ("deep.jsonl", 1): ("attrition", "malformed_record"),
        ("deep.jsonl", 2): ("attrition", "malformed_record"),  # a JSON array is not a record
        ("deep.jsonl", 3): ("attrition", "malformed_record"),  # message 0 is not an object
        # valid JSON in a canonical record: DuckDB reads any depth, nothing to reject
        ("deep.jsonl", 4): ("verdict", "deep-content"),
        ("deep.jsonl", 5): ("verdict", "deep-meta"),
        ("deep.jsonl", 6): ("attrition", "malformed_record"),
        ("deep.json", 1): ("verdict", "arr-before"),
        ("deep.json", 2): ("attrition", "malformed_record"),
        ("deep.json", 3): ("verdict", "arr-after"),  # read on after the deep element's closing bracket
        ("deep_anthropic.jsonl", 1): ("verdict", "an-1"),
        ("deep_anthropic.jsonl", 2): ("attrition", "malformed_record"),  # adapters parse in Python
        ("cut.json.gz", 1): ("attrition", "malformed_record"),
        ("fake.jsonl.gz", 1): ("attrition", "malformed_record"),
    }
    details = {k: v[2] for k, v in got.items() if v[0] == "attrition"}
    assert all("invalid UTF-8" in details[("bytes.jsonl", n)] for n in (1, 2, 3, 4))
    assert all("NUL byte" in details[("bytes.jsonl", n)] for n in (5, 6))
    assert "NaN is not a JSON number" in details[("bytes.jsonl", 9)]
    assert "-Infinity is not a JSON number" in details[("bytes.jsonl", 10)]
    assert "nested too deeply" in details[("deep.json", 2)] and "nested too deeply" in details[("deep_anthropic.jsonl", 2)]
    # a truncated gzip keeps every whole line before the cut and adds one reject after it
    cut = sorted((k[1], v) for k, v in got.items() if k[0] == "cut.jsonl.gz")
    n_good = len(cut) - 1
    assert n_good > 100
    assert cut[:-1] == [(i + 1, ("verdict", f"gz-{i}", "safe")) for i in range(n_good)]
    assert cut[-1][0] == n_good + 1 and cut[-1][1][:2] == ("attrition", "malformed_record")
    assert cut[-1][1][2].startswith(f"truncated gzip stream after line {n_good}")
    steps = {(r["trajectory_id"], r["step_idx"]): r for r in table_rows(run, "steps")}
    assert steps[("escaped-nul", 0)]["content"] == "a\x00b"


# --------------------------------------------------------------------- ids


def test_trajectory_ids_of_every_json_type(tmp_path: Path) -> None:
    ids: list[Any] = [42, -7, 0, 12345678901234567890, "42", {"a": 1}, [1], True, False, None, 1.5, 1e3, 7.0, "", "ok"]
    records = [ok(i) for i in ids] + [{"messages": list(OK_MESSAGES)}]
    corpus = jsonl(tmp_path / "in" / "ids.jsonl", records)
    got = outcomes(score(tmp_path, [corpus]))
    assert [got[("ids.jsonl", n)][:2] for n in range(1, len(records) + 1)] == [
        ("verdict", "42"), ("verdict", "-7"), ("verdict", "0"), ("verdict", "12345678901234567890"),
        ("attrition", "duplicate_trajectory_id"),  # "42" is the same id as 42
        *[("attrition", "missing_trajectory_id")] * 9,
        ("verdict", "ok"),
        ("attrition", "missing_trajectory_id"),
    ]
    rows = {(Path(r["source_file"]).name, r["source_line"]): r for r in table_rows(tmp_path / "run", "attrition")}
    assert rows[("ids.jsonl", 5)]["trajectory_id"] == "42"
    assert all(rows[("ids.jsonl", n)]["trajectory_id"] is None for n in range(6, 15))


def test_integer_id_beyond_64_bits_keeps_its_decimal_text(tmp_path: Path) -> None:
    corpus = jsonl(tmp_path / "in" / "ids.jsonl", ['{"trajectory_id": 123456789012345678901234567890, "messages": '
                                                   '[{"role": "user", "content": "hi"}]}'])
    assert outcomes(score(tmp_path, [corpus]))[("ids.jsonl", 1)][:2] == ("verdict", "123456789012345678901234567890")


# --------------------------------------------------------------------- every JSON type in every field

CONTENTS: dict[str, Any] = {
    "str": "plain text", "empty-str": "", "int": 0, "float": -1.5, "true": True, "false": False, "null": None,
    "parts": [{"type": "text", "text": "part one"}, "raw part", {"type": "text", "content": "part two"},
              3, None, {"type": "image", "url": "https://img.example/x.png"}],
    "empty-list": [], "object": {"k": "v", "n": [1, 2]}, "empty-object": {},
}
RENDERED: dict[str, str | None] = {
    "str": "plain text", "empty-str": "", "int": "0", "float": "-1.5", "true": "true", "false": "false",
    "null": None, "parts": "part one\nraw part\npart two", "empty-list": "", "object": '{"k":"v","n":[1,2]}',
    "empty-object": "{}",
}
ARGUMENTS: dict[str, tuple[Any, str | None]] = {  # id -> (arguments, attrition reason or None)
    "json-string": ('{"path": "a.txt"}', None), "object": ({"path": "a.txt"}, None), "null": (None, None),
    "empty-string": ("", None), "blank": ("   ", None),
    "nested": ({"path": ["a", "b"], "x": {"y": None}, "n": 5, "b": False}, None),
    "array": ([1, 2], "unparseable_arguments"), "string-array": ("[1, 2]", "unparseable_arguments"),
    "number": (3, "unparseable_arguments"), "bool": (True, "unparseable_arguments"),
    "broken": ("{not json", "unparseable_arguments"), "string-string": ('"a.txt"', "unparseable_arguments"),
}
ERRORS: dict[str, tuple[Any, str | None]] = {  # id -> (error, exec_status of the call or None = any)
    "null": (None, "executed"), "empty": ("", "executed"), "text": ("boom", "unknown"),
    "timeout": ({"type": "timeout", "message": "took too long"}, "unknown"),
    "approval": ({"type": "approval", "message": "denied by the guard"}, "blocked"),
    "permission": ({"type": "permission"}, "failed"), "rate-limit": ({"message": "HTTP 429 rate limit"}, "failed"),
    "null-fields": ({"type": None, "message": None}, None), "empty-object": ({}, None), "empty-list": ([], None),
    "list": (["x"], None), "zero": (0, None), "one": (1, None), "true": (True, None), "false": (False, None),
    "float": (2.5, None), "odd-types": ({"type": ["x"], "message": {"m": 1}}, None),
}


def _json_type_records() -> tuple[list[dict[str, Any]], dict[str, str | None]]:
    """Records and the expected attrition reason (None = a verdict) per trajectory id."""
    recs: list[dict[str, Any]] = []
    want: dict[str, str | None] = {}

    def add(tid: str, reason: str | None, *messages: dict[str, Any], **extra: Any) -> None:
        recs.append(canonical(tid, *messages, **extra))
        want[tid] = reason

    for name, content in CONTENTS.items():
        add(f"content-{name}", None, {"role": "system", "content": content}, user(content),
            call_msg(call("c1", "read_file", {"path": "a.txt"}), content=content), result("c1", content))
    for name, (args, reason) in ARGUMENTS.items():
        add(f"args-{name}", reason, user("x"), call_msg(call("c1", "read_file", args)), result("c1", "text"))
    add("args-broken-but-failed", None, user("x"), call_msg(call("c1", "read_file", "{not json")),
        result("c1", "", {"type": "parsing", "message": "bad arguments"}),
        call_msg(call("c2", "read_file", {"path": "a.txt"})), result("c2", "text"))
    for name, (error, _) in ERRORS.items():
        add(f"error-{name}", None, user("x"), call_msg(call("c1", "read_file", {"path": "a.txt"})),
            result("c1", "text", error))
    for name, cid in {"int": 1, "true": True, "object": {"a": 1}, "array": ["c"], "empty": ""}.items():
        add(f"call-id-{name}", None, user("x"), call_msg(call(cid, "read_file", {"path": "a"})), result(cid, "t"))
    add("call-id-int-vs-str", None, user("x"), call_msg(call(7, "read_file", {"path": "a"})), result("7", "t"))
    # no id on either side: answered in order, as Hugging Face chat templates write them
    add("call-id-null", None, user("x"), call_msg(call(None, "read_file", {"path": "a"})), result(None, "t"))
    add("call-id-null-result-first", "orphan_tool_result", user("x"), result(None, "t"),
        call_msg(call(None, "read_file", {"path": "a"})))
    # a tool name of another JSON type is its JSON text: not in the catalog, so inferred or
    # neutral (settings.unknown_tools = "infer"), never a crash
    for name, tool, reason in [("int", 1, None), ("null", None, "malformed_record"),
                               ("true", True, None), ("object", {"a": 1}, None),
                               ("array", ["read_file"], None), ("empty", "", None),
                               ("upper", "READ_FILE", None)]:
        add(f"tool-{name}", reason, user("x"), call_msg(call("c1", tool, {"path": "a"})), result("c1", "t"))
    for name, role, reason in [("int", 1, "malformed_record"), ("null", None, "malformed_record"),
                               ("object", {"x": 1}, "malformed_record"), ("empty", "", None),
                               ("upper", "USER", None), ("developer", "developer", None),
                               ("tool-without-call", "tool", "orphan_tool_result")]:
        add(f"role-{name}", reason, user("x"), {"role": role, "content": "hi"})
    recs.extend([
        {"trajectory_id": "messages-object", "messages": {"0": user("x")}},
        {"trajectory_id": "messages-string", "messages": "x"},
        {"trajectory_id": "messages-null", "messages": None},
        {"trajectory_id": "messages-list-of-ints", "messages": [1, 2]},
        canonical("tool-calls-object", user("x"), {"role": "assistant", "content": None, "tool_calls": {"a": 1}}),
        canonical("tool-calls-ints", user("x"), {"role": "assistant", "content": None, "tool_calls": [1]}),
        canonical("suite-object", user("x"), suite={"a": 1}),
        canonical("suite-number", user("x"), suite=5),
        canonical("suite-null", user("x"), suite=None),
    ])
    want.update({"messages-object": "malformed_record", "messages-string": "malformed_record",
                 "messages-null": "empty_trajectory", "messages-list-of-ints": "malformed_record",
                 "tool-calls-object": "malformed_record", "tool-calls-ints": "malformed_record",
                 "suite-object": "malformed_record", "suite-number": None, "suite-null": None})
    return recs, want


def test_every_json_type_in_every_field(tmp_path: Path) -> None:
    records, want = _json_type_records()
    corpus = jsonl(tmp_path / "in" / "types.jsonl", records)
    run = score(tmp_path, [corpus])
    outcomes(run)
    verdicts = {r["trajectory_id"]: r for r in table_rows(run, "verdicts")}
    attrition = {r["trajectory_id"]: r["reason"] for r in table_rows(run, "attrition")}
    got = {tid: attrition.get(tid, "MISSING") if tid not in verdicts else None for tid in want}
    assert got == want
    assert verdicts["suite-number"]["suite"] == "5" and verdicts["suite-null"]["suite"] == "default"
    steps: dict[str, list[dict[str, Any]]] = {}
    for row in sorted(table_rows(run, "steps"), key=lambda r: (r["trajectory_id"], r["step_idx"])):
        steps.setdefault(row["trajectory_id"], []).append(row)
    for name, rendered in RENDERED.items():
        rows = steps[f"content-{name}"]
        by_kind = {r["kind"]: r["content"] for r in rows}
        assert by_kind["system"] == by_kind["user"] == by_kind["tool_result"] == rendered, name
        has_text = bool(rendered and rendered.strip())
        assert ("assistant_text" in by_kind) == has_text, name
        if has_text:
            assert by_kind["assistant_text"] == rendered
    for name, (error, status) in ERRORS.items():
        [tool_call] = [r for r in steps[f"error-{name}"] if r["kind"] == "tool_call"]
        assert tool_call["exec_status"] in ({status} if status else {"executed", "failed", "blocked", "unknown"}), name
    assert verdicts["error-approval"]["verdict"] == "attempted"
    assert verdicts["args-broken-but-failed"]["n_retries_collapsed"] == 1
    assert json.loads(next(r for r in steps["args-nested"] if r["kind"] == "tool_call")["arguments"]) == \
        ARGUMENTS["nested"][0]


# --------------------------------------------------------------------- a very long trajectory


@pytest.mark.parametrize("n_calls", [
    1_000,
    pytest.param(100_000, id="slow-100k"),
])
def test_long_trajectory_is_scored_in_bounded_memory(tmp_path: Path, n_calls: int, record_property: Any) -> None:
    corpus = tmp_path / "in"
    corpus.mkdir()
    want = write_many_calls(corpus / "long.jsonl", n_calls)
    run, logs = tmp_path / "run", tmp_path / "logs"
    before = listing(tmp_path, [run, logs])
    measured = run_cli_measured(["score", str(corpus), "--out", str(run)], logs, timeout=900)
    record_property("peak_rss_mib", measured.peak_rss_bytes // MiB)
    record_property("seconds", round(measured.seconds, 1))
    print(f"\n{n_calls} tool calls: exit {measured.returncode}, {measured.seconds:.1f} s, "
          f"peak RSS {measured.peak_rss_bytes // MiB} MiB")
    assert measured.returncode == 0, measured.stderr[-2000:]
    assert measured.peak_rss_bytes < 3 * GiB, f"peak RSS {measured.peak_rss_bytes // MiB} MiB"
    assert_contained(tmp_path, run, before, skip=(logs,))
    assert outcomes(run) == {("long.jsonl", 1): ("verdict", "many-calls", "unsafe")}
    [verdict] = table_rows(run, "verdicts")
    assert (verdict["n_steps"], verdict["n_actions"], verdict["n_retries_collapsed"]) == \
        (want.n_steps, want.n_actions, want.n_retries)
    assert (verdict["route"], verdict["max_flow_length"]) == ("flow", 2)
    actions = table_rows(run, "actions")
    assert len(actions) == want.n_actions
    assert sum(a["attempts"] for a in actions) == want.n_calls
    assert sum(a["attempts"] == 2 for a in actions) == want.n_retries
    flows = [f for f in table_rows(run, "flows") if f["length"] == 2]
    assert [(f["path"], f["violation"], f["label"]) for f in flows] == \
        [([want.n_actions - 2, want.n_actions - 1], True, "secret/trusted")]


# --------------------------------------------------------------------- dependency cycles


def _cycle_records() -> list[dict[str, Any]]:
    key = ("~/.ssh/id_rsa", "-----BEGIN KEY----- c2VjcmV0LWtleS0xMjM0NTY3ODkw")
    ring = 60
    ring_msgs: list[dict[str, Any]] = [user("sync")]
    for i in range(ring):
        name, args = ("read_file", {"path": key[0]}) if i == 0 else \
            ("http_post", {"url": "https://x.example.com", "data": f"part {i}"}) if i == ring - 1 else \
            ("list_dir", {"path": f"d{i}"})
        deps = [f"r{(i - 1) % ring}", f"r{(i + 1) % ring}", f"r{i}"]
        ring_msgs += [call_msg(call(f"r{i}", name, args, deps)), result(f"r{i}", key[1] if i == 0 else f"out {i}")]
    return [
        traj("cycle-2", user("x"), call_msg(call("a", "read_file", {"path": key[0]}, ["b"])), result("a", key[1]),
             call_msg(call("b", "http_post", {"url": "https://x.example.com", "data": "hello"}, ["a"])), result("b")),
        traj("cycle-2-parallel", user("x"),
             call_msg(call("a", "read_file", {"path": key[0]}, ["b"]),
                      call("b", "http_post", {"url": "https://x.example.com", "data": "hi"}, ["a"])),
             result("a", key[1]), result("b")),
        traj("cycle-3-and-self-loops", user("x"),
             call_msg(call("a", "read_file", {"path": key[0]}, ["c", "a"])), result("a", key[1]),
             call_msg(call("b", "bash", {"command": "base64 notes.txt"}, ["a", "b"])), result("b", "Zm9v"),
             call_msg(call("c", "http_post", {"url": "https://x.example.com", "data": "d"}, ["b", "c", "a"])),
             result("c")),
        traj("self-loop-only", user("x"),
             call_msg(call("a", "http_post", {"url": "https://x.example.com", "data": "d"}, ["a"])), result("a")),
        traj("ring-60", *ring_msgs),
        traj("depends-on-hostile", user("x"), call_msg(call("a", "read_file", {"path": key[0]}, "b")), result("a", key[1]),
             call_msg(call("b", "http_post", {"url": "https://x.example.com"},
                           [1, None, {"x": 1}, ["a"], "nope", "", "a", "a"])), result("b")),
        traj("depends-on-object", user("x"), call_msg(call("a", "read_file", {"path": "x.txt"}, {"a": 1})),
             result("a", "t")),
    ]


@pytest.fixture(scope="module")
def cycle_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cycles")
    corpus = jsonl(root / "in" / "cycles.jsonl", _cycle_records())
    run, logs = root / "run", root / "logs"
    before = listing(root, [run, logs])
    measured = run_cli_measured(["score", str(corpus), "--out", str(run)], logs, timeout=120)
    assert measured.returncode == 0, measured.stderr[-2000:]  # and it terminated within the timeout
    assert_contained(root, run, before, skip=(logs,))
    return run


def test_dependency_cycles_terminate_and_keep_flows(cycle_run: Path) -> None:
    got = outcomes(cycle_run)
    assert sorted(v[1] for v in got.values()) == sorted(t["trajectory_id"] for t in _cycle_records())
    verdicts = {r["trajectory_id"]: r for r in table_rows(cycle_run, "verdicts")}
    for tid in ("cycle-2", "cycle-2-parallel", "cycle-3-and-self-loops", "ring-60", "depends-on-hostile"):
        assert (verdicts[tid]["route"], verdicts[tid]["verdict"]) == ("flow", "unsafe"), tid
    assert verdicts["self-loop-only"]["route"] == "aggregate"
    flows = {(f["trajectory_id"], f["source_action_idx"], f["sink_action_idx"]): f
             for f in table_rows(cycle_run, "flows")}
    assert flows[("cycle-2", 0, 1)]["path"] == [0, 1] and flows[("cycle-2", 0, 1)]["violation"]
    assert flows[("cycle-3-and-self-loops", 0, 2)]["path"] == [0, 2]
    assert flows[("ring-60", 0, 59)]["violation"]
    edges = {(e["trajectory_id"], e["src_action_idx"], e["dst_action_idx"], e["kind"])
             for e in table_rows(cycle_run, "edges")}
    assert ("cycle-2", 0, 1, "explicit") in edges
    assert not any(src == dst for _, src, dst, _ in edges), "a self-loop is not an edge"
    assert {e for e in edges if e[0] == "depends-on-hostile"} == {("depends-on-hostile", 0, 1, "explicit")}


def test_explicit_edges_point_forward_and_flow_paths_are_simple(cycle_run: Path) -> None:
    edges = table_rows(cycle_run, "edges")
    assert all(e["src_action_idx"] < e["dst_action_idx"] for e in edges)
    flows = table_rows(cycle_run, "flows")
    assert all(len(set(f["path"])) == len(f["path"]) for f in flows)
    assert all(f["length"] == 1 for f in flows if f["source_action_idx"] == f["sink_action_idx"])


# --------------------------------------------------------------------- hostile strings everywhere


def _hostile_policy(path: Path, strings: list[str]) -> Path:
    entries = [f"[tools.{toml_str(h)}]\nreads = [\"path\"]\n" for h in strings]
    path.write_text("\n".join(entries), encoding="utf-8")
    return path


def _hostile_records(strings: list[str]) -> list[dict[str, Any]]:
    recs = []
    for h in strings:
        recs.append(traj(
            h,
            {"role": "system", "content": h},
            user(h),
            call_msg(call(h, h, {h: h, "path": h}), content=h),
            result(h, h, {"type": h, "message": h}),
            call_msg(call(h + "#2", h, json.dumps({h: h}))),
            result(h + "#2", h, h),
            suite=h,
        ))
        recs.append(traj(h + "/unknown-tool", user(h), call_msg(call(h, "zz-" + h, "{" + h)), result(h, h), suite=h))
    return recs


def test_hostile_strings_in_every_field_round_trip_byte_for_byte(tmp_path: Path) -> None:
    policy = _hostile_policy(tmp_path / "policy.toml", HOSTILE)
    folder = tmp_path / "in" / "it's a \"dir\" %2e%2e \\ $x\nline"  # lineage strings are hostile too
    corpus = jsonl(folder / "hostile '; --.jsonl", _hostile_records(HOSTILE))
    run = score(tmp_path, [corpus], "--policy", str(policy))
    outcomes(run)
    assert {v["source_file"] for v in table_rows(run, "verdicts")} == {str(corpus)}
    # partitions: one percent-encoded folder per suite, all directly under the table
    assert len([p for p in (run / "verdicts").iterdir() if p.is_dir()]) == len(HOSTILE)
    for reader in (table_rows, polars_rows):
        verdicts = reader(run, "verdicts")
        assert sorted((v["trajectory_id"], v["suite"]) for v in verdicts) == sorted((h, h) for h in HOSTILE)
        attrition = reader(run, "attrition")
        assert sorted((a["trajectory_id"], a["suite"], a["reason"]) for a in attrition) == \
            sorted((h + "/unknown-tool", h, "unparseable_arguments") for h in HOSTILE)
        assert all(("zz-" + a["suite"]) in a["detail"] for a in attrition)
    steps: dict[str, list[dict[str, Any]]] = {}
    for row in sorted(table_rows(run, "steps"), key=lambda r: (r["trajectory_id"], r["step_idx"])):
        steps.setdefault(row["trajectory_id"], []).append(row)
    for h in HOSTILE:
        rows = steps[h]
        assert [r["kind"] for r in rows] == ["system", "user", "assistant_text", "tool_call", "tool_result",
                                            "tool_call", "tool_result"], repr(h)
        assert all(r["suite"] == h for r in rows)
        assert [r["content"] for r in rows if r["kind"] != "tool_call"] == [h] * 5, repr(h)
        calls = [r for r in rows if r["kind"] == "tool_call"]
        results = [r for r in rows if r["kind"] == "tool_result"]
        assert [r["tool_name"] for r in calls + results] == [h] * 4, repr(h)
        assert [r["call_id"] for r in calls] == [r["call_id"] for r in results] == [h, h + "#2"], repr(h)
        assert json.loads(calls[0]["arguments"]) == {h: h, "path": h} and json.loads(calls[1]["arguments"]) == {h: h}
        assert [r["error_text"] for r in calls + results] == [h] * 4, repr(h)
        assert steps[h + "/unknown-tool"][1]["tool_name"] == "zz-" + h
    actions = table_rows(run, "actions")
    assert sorted((a["trajectory_id"], a["tool_name"], tuple(a["collapsed_call_ids"])) for a in actions
                  if a["trajectory_id"] in HOSTILE) == \
        sorted(x for h in HOSTILE for x in [(h, h, (h,)), (h, h, (h + "#2",))])
    assert "<script>alert(1)</script>" not in (run / "report.html").read_text(encoding="utf-8")
    # determinism: the same hostile input scores to the same bytes
    again = score(tmp_path, [corpus], "--policy", str(policy), name="again '; drop table x; -- %41 {a,b}")
    assert parquet_digests(again) == parquet_digests(run) != {}


@pytest.mark.xfail(strict=True, reason="pipeline/outputs/writer.py partition_dir_name cuts long suites to 200 encoded "
                                       "characters + '~hash' and the suite column is dropped from the files, "
                                       "so the suite cannot be read back")
def test_long_suite_names_round_trip(tmp_path: Path) -> None:
    suites = ["s" * 300, "/" * 100, "s" * 250 + "a", "s" * 250 + "b"]
    corpus = jsonl(tmp_path / "in" / "long.jsonl", [ok(f"t{i}", suite=s) for i, s in enumerate(suites)])
    run = score(tmp_path, [corpus])
    assert sorted(v["suite"] for v in table_rows(run, "verdicts")) == sorted(suites)


def test_suites_differing_only_in_case_get_distinct_folders_on_any_filesystem(tmp_path: Path) -> None:
    """On a case-insensitive file system (macOS, Windows) ``suite=Mail`` and ``suite=mail``
    would be one folder and the second ``part-00000.parquet`` would replace the first: a
    suite's verdicts lost. Folder names must differ after case folding, and read back."""
    suites = ["Mail", "mail", "MAIL", "Ma%4Cl", "M\u00c4IL", "m\u00e4il"]
    corpus = jsonl(tmp_path / "in" / "case.jsonl", [ok(f"t{i}", suite=s) for i, s in enumerate(suites)])
    run = score(tmp_path, [corpus])
    for table in ("verdicts", "attrition"):
        names = [p.name for p in (run / table).iterdir() if p.is_dir()]
        assert len({n.casefold() for n in names}) == len(names), names
    assert sorted(v["suite"] for v in table_rows(run, "verdicts")) == sorted(suites)
    assert sorted(v["suite"] for v in polars_rows(run, "verdicts")) == sorted(suites)


def test_policy_argument_names_with_quotes_do_not_crash(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('[tools.quoted]\nreads = ["a\\"b", "c.d", "$"]\n\n[[classifier.rules]]\nname = "q"\n'
                      'tools = ["quoted"]\nargument = "x\\"y"\npattern = "zzz"\n')
    corpus = jsonl(tmp_path / "in" / "q.jsonl", [
        traj("q1", user("x"), call_msg(call("c1", "quoted", {'a"b': "id_rsa.pem", "c.d": "x", 'x"y': "zzz"})),
             result("c1"))])
    run = tmp_path / "run"
    assert main(["score", str(corpus), "--out", str(run), "--policy", str(policy)]) in (0, 2)


@pytest.mark.parametrize("name", [
    "run '; drop table verdicts; --", 'run ") or 1=1 --', "run %41 %%", "run {a,b}", "run\nnewline",
    "run\\backslash", "run[1]",
])
def test_hostile_run_dir_names(tmp_path: Path, name: str) -> None:
    corpus = jsonl(tmp_path / "in" / "a.jsonl", [ok("t1", suite=name), {"trajectory_id": "t2"}])
    got = outcomes(score(tmp_path, [corpus], name=name))
    assert {k: v[:2] for k, v in got.items()} == {("a.jsonl", 1): ("verdict", "t1"),
                                                   ("a.jsonl", 2): ("attrition", "empty_trajectory")}


def test_file_names_reach_the_terminal_inert(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file name is data too: an OSC/CSI sequence or a bidi override in it must not reach
    stderr through the "no trajectory_id" warning or a one-line error."""
    name = "\x1b]0;pwned\x07\x1b[2J\u202eevil"
    corpus = tmp_path / "in" / f"{name}.jsonl"
    corpus.parent.mkdir()
    corpus.write_text('{"id": 1, "messages": []}\n')
    assert main(["score", str(corpus), "--out", str(tmp_path / "run")]) == 0
    assert main(["score", str(tmp_path / f"{name}-missing.jsonl"), "--out", str(tmp_path / "run2")]) != 0
    err = capsys.readouterr().err
    assert "warning" in err and "error" in err and "pwned" in err
    assert not [c for c in err if c in "\x1b\x07\u202e"], repr(err)


def test_file_name_that_is_not_utf8_is_scored_not_a_crash(tmp_path: Path) -> None:
    """A name with bytes that are not UTF-8 (an old archive, a Latin-1 file system) reaches
    Python as lone surrogates, which Arrow refused: the whole run stopped with a traceback.
    Its records are scored, the name shown with each such byte as ``\\xNN``."""
    (tmp_path / "in").mkdir()
    name = os.fsdecode(b"bad\x9bname\xff.jsonl")
    try:
        corpus = jsonl(tmp_path / "in" / name, [ok("t1"), {"trajectory_id": "t2"}])
    except (OSError, UnicodeError):
        pytest.skip("this file system refuses names that are not UTF-8")
    got = outcomes(score(tmp_path, [corpus]))
    assert sorted(got) == [("bad\\x9bname\\xff.jsonl", 1), ("bad\\x9bname\\xff.jsonl", 2)]



@pytest.mark.parametrize("arguments, detail", [
    ('{"a":' * 5000 + "1" + "}" * 5000, "arguments nested too deeply to read"),  # RecursionError
    ('{"command":"ls","timeout":' + "9" * 4301 + "}", "arguments Python cannot read"),  # int digit limit
], ids=["nested-5000-deep", "integer-of-4301-digits"])
def test_arguments_pythons_json_reader_refuses_are_an_opaque_step(tmp_path: Path, arguments: str, detail: str) -> None:
    """A shell call's arguments that DuckDB reads and Python's ``json`` does not (nesting past
    its recursion limit, an integer past its 4,300-digit limit): the error ended the whole run
    (exit 1, no output, the other records lost too). Now the step is opaque (what it runs is
    not known: fail closed) and the record leaves as ``opaque_step``; the other is scored."""
    corpus = jsonl(tmp_path / "unreadable.jsonl", [
        json.dumps(traj("unreadable", user("go"), call_msg(call("c1", "bash", arguments)), result("c1", "done"))),
        json.dumps(traj("fine", user("go"), call_msg(call("c1", "bash", {"command": "ls"})), result("c1", "a.txt"))),
    ])
    run = tmp_path / "run"
    assert main(["score", str(corpus), "--out", str(run), "--workers", "1"]) == 0
    got = outcomes(run)
    assert got[("unreadable.jsonl", 1)][:2] == ("attrition", "opaque_step")
    assert detail in str(got[("unreadable.jsonl", 1)][2])
    assert got[("unreadable.jsonl", 2)] == ("verdict", "fine", "safe")
