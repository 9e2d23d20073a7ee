"""``pipeline.outputs.diff``: verdict flips, appeared/disappeared trajectories, manifest changes, exit codes."""

from __future__ import annotations

import argparse
import csv
import io
from pathlib import Path

import pytest

from pipeline.outputs import diff
from pipeline.errors import RunDirError
from tests.conftest import calls, result, traj, user
from tests.test_query import CORPUS, score, write_corpus

# a classifier rule that flags every executed list_dir call: t-list flips to unsafe
FLAG_LIST_DIR = """
[[classifier.rules]]
name = "no_listing"
tools = ["list_dir"]
argument = "*"
pattern = "."
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("diff")
    corpus = write_corpus(root / "in")
    policy = root / "flag-list-dir.toml"
    policy.write_text(FLAG_LIST_DIR)
    # t-read becomes an unparseable-arguments reject; t-new is new
    changed = [CORPUS[0], traj("t-read", user("read a"), calls(("c1", "read_file", "{not json")), result("c1", "ok")),
               CORPUS[2], traj("t-new", user("hi"), calls(("c1", "list_dir", {"path": "src"})), result("c1", "x.py"))]
    return {
        "base": score(corpus, root / "base"),
        "same": score(corpus, root / "same"),
        "policy": score(corpus, root / "policy", "--policy", str(policy)),
        "corpus": score(write_corpus(root / "in2", changed), root / "corpus"),
    }


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    diff.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_identical_runs_exit_0(runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    res = diff.diff_runs(runs["base"], runs["same"])
    assert (res.n_both, res.flips, res.appeared, res.disappeared, res.manifest_changes) == (3, [], [], [], [])
    assert diff.main_from_args(parse(str(runs["base"]), str(runs["same"]))) == 0
    out = capsys.readouterr().out
    assert "verdict flips: 0" in out and "Nothing: same policy" in out


def test_policy_change_flips_with_both_reasons(runs: dict[str, Path]) -> None:
    res = diff.diff_runs(runs["base"], runs["policy"])
    assert [f.trajectory_id for f in res.flips] == ["t-list"]
    flip = res.flips[0]
    assert (flip.route_a, flip.verdict_a, flip.is_unsafe_a) == ("aggregate", "safe", False)
    assert (flip.route_b, flip.verdict_b, flip.is_unsafe_b) == ("aggregate", "unsafe", True)
    assert flip.reason_a and "list_dir" in flip.reason_b
    assert res.flip_rate == pytest.approx(1 / 3)
    fields = {c.field for c in res.manifest_changes}
    assert {"policy.sha256", "policy.sources"} <= fields
    assert not any(f.startswith("input") for f in fields)


def test_gate_exit_codes(runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    a, b = str(runs["base"]), str(runs["policy"])
    assert diff.main_from_args(parse(a, b)) == 1  # default --max-flips 0: any flip fails
    captured = capsys.readouterr()
    assert "t-list" in captured.out and "policy.sha256" in captured.out
    assert "exceed the threshold" in captured.err
    assert diff.main_from_args(parse(a, b, "--max-flips", "1")) == 0
    assert diff.main_from_args(parse(a, b, "--max-flip-rate", "0.5")) == 0
    assert diff.main_from_args(parse(a, b, "--max-flip-rate", "0.2")) == 1


def test_csv_rows(runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert diff.main_from_args(parse(str(runs["base"]), str(runs["policy"]), "--format", "csv")) == 1
    captured = capsys.readouterr()
    rows = list(csv.DictReader(io.StringIO(captured.out)))
    assert [(r["change"], r["trajectory_id"], r["verdict_a"], r["verdict_b"]) for r in rows] == [
        ("flip", "t-list", "safe", "unsafe")]
    assert "verdict flips: 1" in captured.err


def test_appeared_and_disappeared(runs: dict[str, Path]) -> None:
    res = diff.diff_runs(runs["base"], runs["corpus"])
    assert res.flips == [] and res.n_both == 2
    assert [(p.trajectory_id, p.verdict, p.other) for p in res.appeared] == [("t-new", "safe", "absent")]
    assert [(p.trajectory_id, p.verdict, p.other) for p in res.disappeared] == [
        ("t-read", "safe", "rejected: unparseable_arguments")]
    assert any(c.field.startswith("input ") for c in res.manifest_changes)
    assert not res.exceeds()  # presence changes are reported, never gated


def test_manifest_changes_match_inputs_by_hash() -> None:
    a = {"inputs": [{"path": "/x/c.jsonl", "sha256": "h1"}, {"path": "/x/d.jsonl", "sha256": "h2"}],
         "versions": {"duckdb": "2.0.1"}}
    b = {"inputs": [{"path": "/y/c.jsonl", "sha256": "h1"}, {"path": "/x/d.jsonl", "sha256": "h3"}],
         "versions": {"duckdb": "2.0.2"}}
    got = [(c.field, c.a, c.b) for c in diff.manifest_changes(a, b)]
    assert got == [("versions.duckdb", "2.0.1", "2.0.2"), ("input /x/d.jsonl", "h2", "h3"),
                   ("input moved (same sha256)", "/x/c.jsonl", "/y/c.jsonl")]


def test_not_a_score_run(tmp_path: Path, runs: dict[str, Path]) -> None:
    with pytest.raises(RunDirError):
        diff.diff_runs(tmp_path, runs["base"])
    explode_only = tmp_path / "explode"
    explode_only.mkdir()
    (explode_only / "manifest.json").write_text("{}")
    with pytest.raises(RunDirError, match="no verdicts"):
        diff.diff_runs(runs["base"], explode_only)


def test_data_reaches_the_terminal_inert(runs: dict[str, Path], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Ids, suites and reasons come from transcripts, and a diff is read on terminals and CI
    logs: an ESC sequence (clear screen, window title), a bidi override or Markdown/HTML in
    an id must come out inert, in both formats (it was printed as is)."""
    hostile = "evil\x1b[2J\x1b]0;PWNED\x07\u202eRED<img src=x onerror=alert(1)>\rSAFE-LOOKING"
    run = score(write_corpus(tmp_path / "in", [*CORPUS, traj(hostile, user("hi"), suite="s\x1b[5mblink")]),
                tmp_path / "run")
    for fmt in ("markdown", "csv"):
        diff.main_from_args(parse(str(runs["base"]), str(run), "--format", fmt))
        printed = capsys.readouterr()
        text = printed.out + printed.err
        assert "evil" in text
        for bad in ("\x1b", "\x07", "\u202e", "\r"):
            assert bad not in text, (fmt, bad)
        if fmt == "csv":  # one row per change: a bare CR split it in two for csv readers
            assert len(list(csv.reader(io.StringIO(printed.out)))) == 2
        if fmt == "markdown":  # escaped: Markdown shows it as text
            assert "<img" not in text.replace("\\<img", "")
