"""Logs that append runs (``claude -p --output-format stream-json``, ``codex exec --json``,
Gemini CLI ``-o stream-json``, ``opencode run --format json``) on hostile input: every record a
file yields ends in exactly one of ``verdicts`` or ``attrition``, whatever the cut; a bad line
in the middle rejects the file as one record; contents do not depend on workers or shards."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
from hypothesis import HealthCheck, given, settings, strategies as st

from pipeline.config import RunConfig
from pipeline.ingest.reader import iter_records
from pipeline.run import score
from tests.conftest import stage_connection, table_contents
from tests.test_adapters_claude_stream import S1 as C1, S2 as C2, exfiltration as claude_run
from tests.test_adapters_codex_exec import T1, T2, command, exfiltration as codex_run, message, run
from tests.test_adapters_gemini_stream import S1 as G1, S2 as G2, backup_run as gemini_run
from tests.test_adapters_opencode import S1 as O1, S2 as O2, run_events as opencode_run


def _logs() -> dict[str, str]:
    """File name -> NDJSON text of two runs each."""
    return {"claude.jsonl": "".join(json.dumps(x) + "\n" for x in claude_run(C1) + claude_run(C2)),
            "codex.jsonl": "".join(json.dumps(x) + "\n" for x in codex_run(T1) + run(
                T2, command("item_1", "bash -lc 'ls'", "a.txt\n"), message("item_2", "Listed."))),
            "gemini.jsonl": "".join(json.dumps(x) + "\n" for x in gemini_run(G1) + gemini_run(G2)),
            "opencode.jsonl": "".join(json.dumps(x) + "\n" for x in opencode_run(O1) + opencode_run(O2))}


def _landed(run_dir: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    con = duckdb.connect()
    for table, col in (("verdicts", "verdict"), ("attrition", "reason")):
        for source, value in con.execute(
                f"select source_file, {col} from read_parquet($p, hive_partitioning = false) order by all",
                {"p": f"{run_dir}/{table}/**/*.parquet"}).fetchall():
            out.setdefault(Path(source).name, []).append(value)
    return out


def test_conservation_and_determinism(tmp_path: Path) -> None:
    root = tmp_path / "in"
    root.mkdir()
    for name, text in _logs().items():
        (root / name).write_text(text)
        lines = text.splitlines(keepends=True)
        (root / f"middle-{name}").write_text("".join(lines[:3] + ["{not json\n"] + lines[3:]))
    a = score(RunConfig(inputs=(root,), out=tmp_path / "a", workers=1, shards=1))
    b = score(RunConfig(inputs=(root,), out=tmp_path / "b", workers=2, shards=4))
    landed = _landed(tmp_path / "a")
    assert a.records_read == b.records_read == sum(len(v) for v in landed.values()) == 12
    expected = {"claude.jsonl": ["unsafe", "unsafe"], "codex.jsonl": ["safe", "unsafe"],
                "gemini.jsonl": ["unsafe", "unsafe"], "opencode.jsonl": ["unsafe", "unsafe"]}
    for name, verdicts in expected.items():
        assert sorted(landed[name]) == verdicts
        assert landed[f"middle-{name}"] == ["malformed_record"]
    assert table_contents(tmp_path / "a") == table_contents(tmp_path / "b")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(min_value=0, max_value=20_000), name=st.sampled_from(sorted(_logs())))
def test_any_truncation_loses_no_record(tmp_path: Path, cut: int, name: str) -> None:
    data = _logs()[name].encode()
    path = tmp_path / name
    path.write_bytes(data[: cut % (len(data) + 1)])
    fmt = {"claude.jsonl": "claude-code", "codex.jsonl": "codex", "gemini.jsonl": "gemini-stream",
           "opencode.jsonl": "opencode"}[name]
    recs = list(iter_records([path], fmt))
    assert 1 <= len(recs) <= 3
    texts = [r.text for r in recs if r.text is not None]
    if texts:  # each converted record scores or is rejected, exactly once
        con = stage_connection(texts)
        [(landed,)] = con.execute(
            "select (select count(*) from verdicts) + (select count(*) from step_rejects)"
            " + (select count(*) from trajectories where reject_reason is not null)").fetchall()
        assert landed == len(texts)
