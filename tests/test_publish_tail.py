"""What the driver does after the last shard, made cheaper without changing a byte.

On the bundled sample scored end to end (2 shards on 2 worker processes, labels and
gold): every explain page equals the page rendered from that trajectory alone; the
report's summary and hallucination sections equal the queries they replaced (one
subquery per figure; one statement with a semi join on a CTE), also on a copy of the
verdicts with many trajectories marked hallucinated; ``esc``'s plain-text shortcut
equals the full escape; and the pool is joined before ``score`` returns or raises.
"""

from __future__ import annotations

import html
import multiprocessing
import time
from pathlib import Path

import duckdb
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pipeline.execution.driver as driver
from pipeline.execution.pool import WorkerPool
from pipeline.cli import main
from pipeline.outputs.explain import load, neutral
from pipeline.outputs.explain_html import page_name, render_page
from pipeline.outputs.explain_svg import esc
from pipeline.outputs.query import open_runs
from pipeline.outputs.report import summary
from pipeline.outputs.report_explain import FINAL_CHARS, TOP_LISTED, hallucinations
from pipeline.outputs.report_svg import clean

# the statements the report used before (kept here as the reference they must equal)
OLD_SUMMARY = """
    select (select count(*) from verdicts), (select count(*) from verdicts where verdict = 'unsafe'),
        (select count(*) from verdicts where verdict = 'attempted'),
        (select count(*) from verdicts where verdict = 'safe'), (select count(*) from attrition),
        (select count(distinct suite) from (select suite from verdicts union all select suite from attrition)),
        (select count(*) from verdicts where hallucinated_outcome)
"""
OLD_HALLUCINATIONS = """
    with listed as (
        select trajectory_id, suite, verdict, route, reason, count(*) over () as total
        from verdicts where hallucinated_outcome order by verdict = 'unsafe' desc, trajectory_id limit $top
    ),
    final_text as (
        select trajectory_id, arg_max(left(content, $chars + 1), step_idx) as text
        from steps where kind = 'assistant_text' and trajectory_id in (select trajectory_id from listed)
        group by trajectory_id
    )
    select l.trajectory_id, l.suite, l.verdict, l.route, l.reason, f.text, l.total
    from listed l left join final_text f using (trajectory_id)
    order by l.verdict = 'unsafe' desc, l.trajectory_id
"""


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("publish") / "sample"
    assert main(["score", "--out", str(out), "--workers", "2", "--shards", "2", "--quiet"]) == 0
    assert not multiprocessing.active_children()
    return out


def test_every_page_equals_the_page_of_its_trajectory_alone(sample_run: Path) -> None:
    pages = sorted((sample_run / "explain").glob("*.html"))
    assert len(pages) >= 20
    con = open_runs([sample_run])
    by_name = {page_name(tid): tid for (tid,) in con.execute("select trajectory_id from verdicts").fetchall()}
    for page in pages:
        tid = by_name[page.name]
        alone = load(con, [tid])[tid]
        assert page.read_text(encoding="utf-8") == render_page(alone, sample_run.name, "../report.html"), tid


def _hallucinated_copy(con: duckdb.DuckDBPyConnection) -> None:
    """verdicts replaced by a copy with every third trajectory marked hallucinated."""
    con.execute("create temp table marked as select * replace "
                "(hallucinated_outcome or hash(trajectory_id) % 3 = 0 as hallucinated_outcome) from verdicts")
    con.execute("drop view verdicts")
    con.execute("alter table marked rename to verdicts")


@pytest.mark.parametrize("marked", [False, True])
def test_summary_and_hallucinations_equal_the_statements_they_replaced(sample_run: Path, marked: bool) -> None:
    con = open_runs([sample_run])
    if marked:
        _hallucinated_copy(con)
    old = con.execute(OLD_SUMMARY).fetchall()[0]
    rows = dict(summary(con, True).tables[0].rows)
    assert (rows["scored"], rows["verdict unsafe"], rows["verdict attempted"], rows["verdict safe"],
            rows["rejected"], rows["suites"], rows["final text contradicts execution"]) == tuple(str(v) for v in old)
    assert int(rows["rejected"]) > 0  # the sample has attrition rows: both halves of the union count
    listed = con.execute(OLD_HALLUCINATIONS, {"top": TOP_LISTED, "chars": FINAL_CHARS}).fetchall()
    sec = hallucinations(con, False)
    if not marked:
        assert not sec.tables
        return
    assert len(listed) == TOP_LISTED and sec.notes[0].startswith(f"Showing {TOP_LISTED} of {listed[0][6]} ")
    assert [r[:4] for r in sec.tables[0].rows] == [r[:4] for r in listed]
    texts = [r[4] for r in sec.tables[0].rows]
    assert any(texts) and texts == [clean(r[5] or "", FINAL_CHARS) for r in listed]


@given(st.text(alphabet=st.sampled_from("az AZ09_-.,:;#/()=+*@!?%[]{}|~^$&<>\"'\x00\x1b\u202e\u2066\ufffd\u00e9"),
               max_size=40),
       st.one_of(st.none(), st.integers(0, 45)))
def test_esc_equals_the_full_escape(text: str, limit: int | None) -> None:
    assert esc(text, limit) == html.escape(neutral(text, limit), quote=True)


def test_pool_is_joined_before_a_failed_publish_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: object, **kwargs: object) -> None:
        raise RuntimeError("publish failed")

    slow_exit = WorkerPool.__exit__

    def slow(self: WorkerPool, *exc: object) -> None:  # the pool's join, slowed: the run must wait for it
        time.sleep(0.5)
        slow_exit(self, *exc)

    monkeypatch.setattr(driver, "publish_run", fail)
    monkeypatch.setattr(WorkerPool, "__exit__", slow)
    with pytest.raises(RuntimeError, match="publish failed"):
        main(["score", "--out", str(tmp_path / "run"), "--workers", "2", "--shards", "2", "--quiet"])
    assert not multiprocessing.active_children()
    assert not (tmp_path / "run").exists()


# ids a transcript may carry: quotes, NUL, backslashes, list syntax, astral text, long, empty
HOSTILE_IDS = ["it's", 'say "hi"', "a\x00b", "x\\y", "[1, 2]", "{a,b}", "é\U0001f642", "a" * 5000, "NULL", "",
               "'); drop table steps; --", "  padded  "]


def test_hallucinations_list_hostile_ids_as_the_replaced_statement_did() -> None:
    con = duckdb.connect()
    con.execute("create table verdicts (trajectory_id varchar, suite varchar, verdict varchar, route varchar, "
                "reason varchar, hallucinated_outcome boolean)")
    con.execute("create table steps (trajectory_id varchar, step_idx integer, kind varchar, content varchar)")
    for k, tid in enumerate(HOSTILE_IDS):
        con.execute("insert into verdicts values ($1, 's', $2, 'flow', 'claims success', true)",
                    [tid, "unsafe" if k % 2 else "safe"])
        con.execute("insert into steps values ($1, 1, 'assistant_text', $2), ($1, 2, 'assistant_text', $3)",
                    [tid, "first", f"final text of {tid!r}"])
    con.execute("insert into verdicts values ('quiet', 's', 'safe', 'flow', 'r', false)")
    con.execute("insert into steps values ('quiet', 1, 'assistant_text', 'never listed')")
    listed = con.execute(OLD_HALLUCINATIONS, {"top": TOP_LISTED, "chars": FINAL_CHARS}).fetchall()
    sec = hallucinations(con, False)
    assert len(listed) == len(HOSTILE_IDS)
    assert [r[:4] for r in sec.tables[0].rows] == [r[:4] for r in listed]
    texts = [r[4] for r in sec.tables[0].rows]
    assert texts == [clean(r[5] or "", FINAL_CHARS) for r in listed] and all(texts)
    assert con.execute("select count(*) from steps").fetchall()[0][0] == 2 * len(HOSTILE_IDS) + 1


@pytest.mark.parametrize("verdict_rows, attrition_rows", [
    ([], []),  # nothing scored, nothing rejected
    ([], [("a", None), ("b", "s1")]),  # only attrition, a NULL suite among them
    ([("a", None, "unsafe", None), ("b", "s1", "safe", True), ("c", "s1", "attempted", False)], []),
    ([("a", None, "unsafe", True), ("b", "s2", "odd", None)], [("c", None), ("d", "s2"), ("e", "s3")]),
])
def test_summary_equals_the_replaced_statement_on_empty_tables_and_nulls(
        verdict_rows: list[tuple[object, ...]], attrition_rows: list[tuple[object, ...]]) -> None:
    con = duckdb.connect()
    con.execute("create table verdicts (trajectory_id varchar, suite varchar, verdict varchar, "
                "hallucinated_outcome boolean)")
    con.execute("create table attrition (record_id varchar, suite varchar)")
    for row in verdict_rows:
        con.execute("insert into verdicts values (?, ?, ?, ?)", list(row))
    for row in attrition_rows:
        con.execute("insert into attrition values (?, ?)", list(row))
    old = con.execute(OLD_SUMMARY).fetchall()[0]
    rows = dict(summary(con, False).tables[0].rows)
    assert (rows["scored"], rows["verdict unsafe"], rows["verdict attempted"], rows["verdict safe"],
            rows["rejected"], rows["suites"], rows["final text contradicts execution"]) == tuple(str(v) for v in old)


def test_a_sigterm_during_the_pools_join_still_waits_for_the_workers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # SIGTERM while the driver waits for the pool's join (publishing's workers_gone):
    # Python 3.11/3.12's Thread.join, interrupted, marks the thread stopped, so a second
    # join returned at once and the run ended with its workers alive
    import os
    import signal

    slow_exit = WorkerPool.__exit__

    def slow(self: WorkerPool, *exc: object) -> None:
        time.sleep(0.5)  # the driver is in its wait by now
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.5)
        slow_exit(self, *exc)

    monkeypatch.setattr(WorkerPool, "__exit__", slow)
    capsys.readouterr()
    assert main(["score", "--out", str(tmp_path / "run"), "--workers", "2", "--shards", "2", "--quiet"]) == 143
    assert multiprocessing.active_children() == []
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "SIGTERM" in err
    assert not (tmp_path / "run").exists()
