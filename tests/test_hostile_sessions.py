"""Whole-file session readers on hostile input: conservation, limits, determinism."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
from hypothesis import HealthCheck, given, settings, strategies as st

from pipeline.config import RunConfig
from pipeline.ingest.reader import iter_records
from pipeline.run import score
from tests.conftest import parquet_digests, stage_connection, table_contents
from tests.session_fixtures import Claude, Codex, exec_output, use
from tests.test_adapters_sessions import claude_session, codex_rollout


def _otel_line(trace: str, span: str, start: int, call: str, failed: bool = False) -> str:
    attrs = [{"key": k, "value": {"stringValue": v}} for k, v in (
        ("gen_ai.operation.name", "execute_tool"), ("gen_ai.tool.name", "read_file"),
        ("gen_ai.tool.call.id", call), ("gen_ai.tool.call.arguments", '{"path": "a.txt"}'),
        ("gen_ai.tool.call.result", "text"))]
    status = {"code": 2, "message": "No such file"} if failed else {"code": 1}
    return json.dumps({"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": [{
        "traceId": trace, "spanId": span, "name": "execute_tool read_file", "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 1), "attributes": attrs, "status": status}]}]}]})


def _corpus(root: Path) -> dict[str, str]:
    """Session files of every kind, good and broken; returns file name -> expected outcome."""
    good = claude_session().write(root / "proj" / "good.jsonl")
    text = good.read_text()
    lines = text.splitlines(keepends=True)
    (root / "proj" / "truncated.jsonl").write_text("".join(lines[:-1]).replace(
        '"sessionId": "11111111', '"sessionId": "21111111') + lines[-1][: len(lines[-1]) // 2])
    middle = lines[:5] + ["{not json at all\n"] + lines[5:]
    (root / "proj" / "middle.jsonl").write_text("".join(middle).replace('"11111111', '"31111111'))
    big = Claude(session="41111111-2222-4333-8444-555555555555").user("read the dump")
    big.assistant("m1", use("t1", "Read", file_path="/data/dump.bin"))
    big.results(("t1", "x" * (50 * 2**20), False))
    big.write(root / "proj" / "huge.jsonl")
    codex_rollout().write(root / "codex" / "rollout-a.jsonl")
    bad = codex_rollout()
    bad.lines[0]["payload"]["id"] = "other-session"
    path = bad.write(root / "codex" / "rollout-b.jsonl")
    rows = path.read_text().splitlines(keepends=True)
    path.write_text("".join(rows[:3] + ["\x00\n"] + rows[3:]))
    otel = root / "otel" / "export.jsonl"
    otel.parent.mkdir(parents=True)
    otel.write_text("\n".join([_otel_line("aa" * 16, "01" * 8, 1, "c1", failed=True),
                               _otel_line("bb" * 16, "02" * 8, 2, "c9"),
                               _otel_line("aa" * 16, "03" * 8, 3, "c2")]) + "\n")
    return {"good.jsonl": "verdict", "truncated.jsonl": "verdict", "middle.jsonl": "malformed_record",
            "huge.jsonl": "record_too_large", "rollout-a.jsonl": "verdict", "rollout-b.jsonl": "malformed_record",
            "export.jsonl": "verdict"}


def _outcomes(run: Path) -> dict[str, list[str]]:
    con = duckdb.connect()
    out: dict[str, list[str]] = {}
    for table, col in (("verdicts", "'verdict'"), ("attrition", "reason")):
        for source, value in con.execute(
                f"select source_file, {col} from read_parquet('{run}/{table}/**/*.parquet', hive_partitioning = false) "
                "order by all").fetchall():
            out.setdefault(Path(source).name, []).append(value)
    return out


def test_conservation_and_determinism(tmp_path: Path) -> None:
    expected = _corpus(tmp_path / "in")
    a = score(RunConfig(inputs=(tmp_path / "in",), out=tmp_path / "a", workers=1, shards=1))
    b = score(RunConfig(inputs=(tmp_path / "in",), out=tmp_path / "b", workers=2, shards=3))
    outcomes = _outcomes(tmp_path / "a")
    assert a.records_read == b.records_read == sum(len(v) for v in outcomes.values()) == 8
    assert {name: sorted(set(v)) for name, v in outcomes.items()} == {n: [e] for n, e in expected.items()}
    assert len(outcomes["export.jsonl"]) == 2  # two traces in one export
    # SPEC section 6: the same contents whatever the workers and shards; the same bytes
    # for the same settings
    assert table_contents(tmp_path / "a") == table_contents(tmp_path / "b")
    score(RunConfig(inputs=(tmp_path / "in",), out=tmp_path / "c", workers=2, shards=3))
    assert parquet_digests(tmp_path / "b") == parquet_digests(tmp_path / "c")


def test_truncated_last_line_is_dropped_and_noted(tmp_path: Path) -> None:
    path = claude_session().write(tmp_path / "p" / "s.jsonl")
    text = path.read_text()
    path.write_text(text[: len(text) - 40])  # cut inside the last line
    [rec] = iter_records([path])
    doc = json.loads(rec.text)
    assert doc["meta"]["dropped_lines"] == [len(text.splitlines())]


def test_middle_problem_names_the_line(tmp_path: Path) -> None:
    c = codex_rollout()
    path = c.write(tmp_path / "r.jsonl")
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:4] + ['{"type": "response_item", "payload": \n'] + lines[4:]))
    [rec] = iter_records([path])
    assert rec.reject_reason == "malformed_record" and "line 5" in rec.reject_detail


def test_converted_size_is_bounded_while_reading(tmp_path: Path) -> None:
    c = Claude().user("go")
    for i in range(30):
        c.assistant(f"m{i}", use(f"t{i}", "Bash", command="cat big"))
        c.results((f"t{i}", "y" * 50_000, False))
    [rec] = iter_records([c.write(tmp_path / "p" / "s.jsonl")], max_record_bytes=1_000_000)
    assert rec.reject_reason == "record_too_large"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(min_value=0, max_value=10_000), fmt=st.sampled_from(["claude", "codex"]))
def test_any_truncation_gives_exactly_one_record(tmp_path: Path, cut: int, fmt: str) -> None:
    builder: Any = claude_session() if fmt == "claude" else codex_rollout()
    path = builder.write(tmp_path / "p" / f"{fmt}.jsonl")
    data = path.read_bytes()
    path.write_bytes(data[: cut % (len(data) + 1)])
    recs = list(iter_records([path], "claude-code" if fmt == "claude" else "codex"))
    assert len(recs) == 1
    if recs[0].text is not None:  # whatever survives scores or is rejected, never both, never lost
        con = stage_connection([recs[0].text])
        n = con.execute("select (select count(*) from verdicts) + (select count(*) from step_rejects)"
                        " + (select count(*) from trajectories where reject_reason is not null)").fetchall()
        assert n == [(1,)]


def test_write_stdin_without_a_running_session_is_harmless(tmp_path: Path) -> None:
    c = Codex().message("user", "poll")
    c.call("w1", "write_stdin", {"session_id": 9, "chars": ""}).output("w1", exec_output(0, "done"))
    [rec] = iter_records([c.write(tmp_path / "r.jsonl")])
    assert rec.text is not None and json.loads(rec.text)["messages"][-1]["error"] is None


def test_otel_spans_without_a_trace_id_are_not_lost(tmp_path: Path) -> None:
    """A span whose traceId is missing or invalid, and an export with no span at all
    (an empty export, a file cut before its first span), each land in attrition."""
    line = json.loads(_otel_line("aa" * 16, "01" * 8, 1, "c1"))
    line["resourceSpans"][0]["scopeSpans"][0]["spans"].append(
        {**json.loads(_otel_line("", "02" * 8, 2, "c2"))["resourceSpans"][0]["scopeSpans"][0]["spans"][0],
         "traceId": "not-an-id"})
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(json.dumps(line) + "\n")
    recs = list(iter_records([mixed], "otel"))
    assert [r.reject_reason for r in recs] == [None, "missing_trajectory_id"]
    assert "1 span" in (recs[1].reject_detail or "")
    empty, cut = tmp_path / "empty.json", tmp_path / "cut.jsonl"
    empty.write_text('{"resourceSpans": []}')
    cut.write_text(_otel_line("aa" * 16, "01" * 8, 1, "c1")[:40])
    for path in (empty, cut):
        [rec] = iter_records([path], "otel")
        assert rec.text is None and rec.reject_reason == "empty_trajectory"
