"""Fixed costs of a run (docs/design.md "Fixed costs of a run, and shard counts"):
per-rule SQL as one statement, workers scoring with the driver's validated policy, and
the worker pool started before planning and stopped before publishing."""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

import duckdb
import pytest

import pipeline.execution.driver as driver
import pipeline.sql as sql
from pipeline.config import RunConfig
from pipeline.errors import PolicyError
from pipeline.execution.pool import WorkerPool
from pipeline.run import score
from pipeline.stages import tables as stage_tables
from tests.conftest import REPO, stage_connection

SAMPLE = REPO / "data" / "sample" / "corpus"
OUTPUTS = ("steps", "actions", "edges", "flows", "verdicts", "attrition")


def _one_statement_per_rule(con: duckdb.DuckDBPyConnection, name: str, rules: list[dict[str, Any]]) -> None:
    """What materialize_per_rule did before: a statement with a rule that matches
    nothing, then one insert per rule."""
    text = sql.load_sql(name)
    names = [k for k in sql._RULE_PARAMS if f"${k}" in text]
    con.execute(f"create or replace temp table {name} as {text}", {k: sql._SENTINEL[k] for k in names})
    for rule in rules:
        con.execute(f"insert into {name} {text}", {k: rule[k] for k in names})


def _stage_rows(monkeypatch: pytest.MonkeyPatch, per_rule: Any) -> dict[str, Any]:
    """Every per-rule table (rows and column types) and every output table of the sample corpus."""
    seen: dict[str, Any] = {}

    def recording(con: duckdb.DuckDBPyConnection, name: str, rules: list[dict[str, Any]]) -> None:
        per_rule(con, name, rules)
        seen[name] = (con.execute(f"describe {name}").fetchall(),
                      sorted(con.execute(f"select * from {name}").fetchall(), key=repr), len(rules))

    monkeypatch.setattr(stage_tables, "materialize_per_rule", recording)
    records = [line for f in sorted(SAMPLE.glob("*.jsonl")) for line in f.read_text().splitlines() if line.strip()]
    con = stage_connection(records)
    for table in OUTPUTS:
        seen[table] = sorted(con.execute(f"select * from {table}").fetchall(), key=repr)
    monkeypatch.undo()
    return seen


def test_per_rule_union_gives_the_rows_of_one_statement_per_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    reference = _stage_rows(monkeypatch, _one_statement_per_rule)
    assert {"classifier_hits", "content_spans", "sent_secrets", "injection_spans", "final_claims"} <= set(reference)
    assert any(rows for _, rows, _ in (reference[n] for n in ("classifier_hits", "content_spans", "injection_spans")))
    assert reference == _stage_rows(monkeypatch, sql.materialize_per_rule)
    # a rule list longer than one statement takes: create, then inserts of the later batches
    monkeypatch.setattr(sql, "RULES_PER_STATEMENT", 2)
    assert reference == _stage_rows(monkeypatch, sql.materialize_per_rule)


def test_per_rule_without_rules_still_makes_the_table() -> None:
    con = stage_connection([])
    sql.materialize_per_rule(con, "final_claims", [])
    assert con.execute("select count(*) from final_claims").fetchall() == [(0,)]
    assert [c[0] for c in con.execute("describe final_claims").fetchall()]  # it has its columns


def _policy_file(tmp_path: Path) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text('[settings]\nexplain_pages = 1\nattempted_is_unsafe = false\n', encoding="utf-8")
    return path


def test_workers_score_with_the_policy_the_driver_validated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The policy file is broken once the driver has validated it: a worker (or the
    report) that read it again would fail; they use the driver's document instead."""
    policy_file = _policy_file(tmp_path)
    reference = score(RunConfig(inputs=(SAMPLE,), out=tmp_path / "ref", policy=policy_file, shards=2))
    opened = driver.open_work

    def break_policy_then_open(*args: Any, **kwargs: Any) -> Any:
        policy_file.write_text("[settings\nnot toml", encoding="utf-8")
        return opened(*args, **kwargs)

    monkeypatch.setattr(driver, "open_work", break_policy_then_open)
    result = score(RunConfig(inputs=(SAMPLE,), out=tmp_path / "run", policy=policy_file, workers=2, shards=2))
    assert result.manifest["policy"] == reference.manifest["policy"]
    for table in OUTPUTS:
        con = duckdb.connect()
        rows = [sorted(con.execute("select * from read_parquet(?, union_by_name = true)",
                                   [sorted(str(p) for p in (r.out / table).rglob("*.parquet"))]).fetchall(), key=repr)
                for r in (reference, result)]
        assert rows[0] == rows[1], table
    with pytest.raises(PolicyError):  # and the broken file itself is refused by a new run
        score(RunConfig(inputs=(SAMPLE,), out=tmp_path / "again", policy=policy_file, workers=2, shards=2))


def test_the_pool_is_stopped_before_the_publishing_queries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pool's join overlaps publishing's file moves (execution/closing.py); no worker
    is alive once the metrics' and the report's queries start."""
    import pipeline.outputs.report as report
    import pipeline.stages.tables as stage_tables

    alive: list[int] = []
    started: list[int] = []
    publish, load = report.render_report, driver.load_policy
    metrics = stage_tables.metrics

    def metrics_watching(*args: Any, **kwargs: Any) -> Any:
        alive.append(len(multiprocessing.active_children()))
        return metrics(*args, **kwargs)

    def load_watching(*args: Any, **kwargs: Any) -> Any:  # planning: the workers are already starting
        started.append(len(multiprocessing.active_children()))
        return load(*args, **kwargs)

    def publish_watching(*args: Any, **kwargs: Any) -> Any:
        alive.append(len(multiprocessing.active_children()))
        return publish(*args, **kwargs)

    monkeypatch.setattr(driver, "load_policy", load_watching)
    monkeypatch.setattr(report, "render_report", publish_watching)
    monkeypatch.setattr(stage_tables, "metrics", metrics_watching)
    score(RunConfig(inputs=(SAMPLE,), out=tmp_path / "run", workers=2, shards=2, gold=SAMPLE.parent / "gold.jsonl"))
    assert started and started[0] >= 2  # the pool was started before the policy was loaded
    assert alive == [0, 0]
    assert multiprocessing.active_children() == []


def test_a_planning_error_leaves_no_worker(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[settings]\nstepwise_threshold = 'high'\n", encoding="utf-8")
    with pytest.raises(PolicyError):
        score(RunConfig(inputs=(SAMPLE,), out=tmp_path / "run", policy=bad, workers=2, shards=2))
    assert multiprocessing.active_children() == []


def _boom(x: int) -> int:
    if x == 1:
        raise ValueError("shard failed")
    return x


def test_worker_pool_maps_in_task_order_and_terminates_on_error() -> None:
    with WorkerPool(2) as pool:
        assert pool.map(abs, [-3, 2, -1], lambda n: None) == [3, 2, 1]
        assert pool.map(abs, [-5], lambda n: None) == [5]  # a second pass on the same workers
    assert multiprocessing.active_children() == []
    with pytest.raises(ValueError, match="shard failed"), WorkerPool(2) as pool:
        pool.map(_boom, [0, 1, 2], lambda n: None)
    assert multiprocessing.active_children() == []


BAD_PATTERNS = ["a(", "(?P<x", "[z-a]", "x{2,1}", "\\", "(?<=a)b", "\\Qopen"]


def test_batch_compile_agrees_with_one_query_per_pattern() -> None:
    from pipeline import policy_checks
    from pipeline.policy import load_policy

    data = load_policy().data
    patterns = [r["pattern"] for r in data["classifier"]["rules"]] + data["injection"]["markers"]
    patterns += BAD_PATTERNS + ["(?i)ok", "\\d+", "(?:\\Qopen)", "caf\u00e9"]
    one_by_one = {p: policy_checks._re2_message.__wrapped__(p) is None for p in patterns}
    assert not any(one_by_one[p] for p in BAD_PATTERNS[:-1]) and one_by_one["\\d+"]
    saved = set(policy_checks._COMPILED)
    policy_checks._COMPILED.clear()
    try:
        policy_checks.prime_re2(patterns)
        assert {p: p in policy_checks._COMPILED for p in patterns} == one_by_one
    finally:
        policy_checks._COMPILED.update(saved)


def test_validate_reports_the_first_error_in_field_order() -> None:
    import copy

    from pipeline.policy import load_policy
    from pipeline.policy_checks import validate

    base = load_policy().data
    bad_regex_first = copy.deepcopy(base)
    bad_regex_first["exec_status"]["rules"][0]["pattern"] = "a("
    bad_regex_first["classifier"]["rules"][0]["name"] = ""
    with pytest.raises(PolicyError, match=r"exec_status\.rules\[0\]\.pattern is not a valid RE2 regex"):
        validate(bad_regex_first)
    bad_setting_first = copy.deepcopy(bad_regex_first)
    bad_setting_first["settings"]["unknown_tools"] = "maybe"
    with pytest.raises(PolicyError, match="settings.unknown_tools"):
        validate(bad_setting_first)
    unclosed = copy.deepcopy(base)
    unclosed["hallucination"]["refusal"] = ["\\Qopen"]
    with pytest.raises(PolicyError, match=r"hallucination\.refusal\[0\] does not compile inside a group"):
        validate(unclosed)
    validate(base)


def test_a_shard_refuses_a_policy_changed_after_validation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import copy
    import dataclasses

    from pipeline.policy import load_policy

    def altered(user_file: Path | None = None) -> Any:
        policy = load_policy(user_file)
        data = copy.deepcopy(policy.data)
        data["settings"]["stepwise_threshold"] = 0.01  # not what policy.sha256 was computed from
        return dataclasses.replace(policy, data=data)

    monkeypatch.setattr(driver, "load_policy", altered)
    with pytest.raises(PolicyError, match="differs from the one this run validated"):
        score(RunConfig(inputs=(SAMPLE,), out=tmp_path / "run"))
    assert not (tmp_path / "run").exists()


def test_validate_raises_as_one_pass_did_on_a_malformed_document() -> None:
    """A bad regex before a malformed entry: the regex error, as a single pass gave
    (the first pass, which skips compiling, stumbles on the malformed entry instead)."""
    import copy

    from pipeline.policy import load_policy
    from pipeline.policy_checks import validate

    data = copy.deepcopy(load_policy().data)
    data["exec_status"]["rules"][:1] = [{"name": "x", "status": "failed", "pattern": "a("}, "not a table"]
    with pytest.raises(PolicyError, match=r"exec_status\.rules\[0\]\.pattern is not a valid RE2 regex"):
        validate(data)


def test_a_shard_compiles_no_pattern_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every prefilter alternation (the classifier's too) is compiled where the policy is
    validated and shipped with it: a worker's stages never open RE2's connection."""
    import pickle

    from pipeline import policy_checks
    from pipeline.policy import load_policy
    from pipeline.policy_tables import any_of

    policy = load_policy()
    rows = policy.tables()["classifier"].to_pylist()  # the rules the stages run, one row per tool
    wide = sorted({r["pattern"] for r in rows if r["argument"] == "*"})
    assert policy.tables()["classifier_any"].column("pattern").to_pylist() == [any_of(wide)]
    shipped = pickle.loads(pickle.dumps(policy))  # as a worker receives it

    def no_connection() -> Any:
        raise AssertionError("a shard's stages compiled a pattern in Python")

    monkeypatch.setattr(policy_checks, "_re2_connection", no_connection)
    monkeypatch.setattr(policy_checks, "_COMPILED", set())
    policy_checks._re2_message.cache_clear()  # (it only caches messages: later checks redo theirs)
    con = stage_connection([{"trajectory_id": "t1", "messages": [
        {"role": "user", "content": "clean up"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "name": "bash", "arguments": {"command": "rm -rf /tmp/x"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "done"}]}], policy=shipped)
    assert con.execute("select count(*) from verdicts").fetchall()[0][0] == 1


def test_a_classifier_rule_for_no_tool_stays_out_of_the_prefilter(tmp_path: Path) -> None:
    """The prefilter is the alternation of the rules the stages run: a rule with
    ``tools = []`` has no row in ``policy_classifier``, so its pattern is not in it."""
    from pipeline.policy import load_policy

    user = tmp_path / "policy.toml"
    user.write_text('[[classifier.rules]]\nname = "for_no_tool"\ntools = []\nargument = "*"\n'
                    "pattern = 'zz_for_no_tool_zz'\n"
                    '[[classifier.rules]]\nname = "for_bash"\ntools = ["bash"]\nargument = "*"\n'
                    "pattern = 'zz_for_bash_zz'\n", encoding="utf-8")
    tables = load_policy(user).tables()
    assert "for_no_tool" not in tables["classifier"].column("name").to_pylist()
    prefilter = tables["classifier_any"].column("pattern").to_pylist()[0]
    assert "zz_for_bash_zz" in prefilter and "zz_for_no_tool_zz" not in prefilter
