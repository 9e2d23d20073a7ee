"""CLI end to end into tmp_path: conservation, explode, determinism, operator errors."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from pipeline.cli import main
from tests.conftest import calls, result, say, traj, user, parquet_digests

GOOD = [
    traj("ok-1", user("list files"), calls(("c1", "list_dir", {"path": "."})), result("c1", "a.txt\nb.txt"), say("done")),
    traj("ok-2", user("read a"), calls(("c1", "read_file", {"path": "a.txt"})), result("c1", "alpha 12345678"),
         suite="other/suite'; drop table verdicts; --"),
]
BAD_LINES = [
    "this is not json",
    "[1, 2, 3]",
    json.dumps({"messages": [{"role": "user", "content": "hi"}]}),
    json.dumps(GOOD[0]),  # duplicate id
    json.dumps({"trajectory_id": "empty", "messages": []}),
    json.dumps(traj("orphan", user("x"), result("nope", "hi"))),
    json.dumps(traj("unknown-tool", user("x"), calls(("c1", "quantum_teleport", {"to": "mars"})), result("c1", "ok"))),
    json.dumps(traj("missing-result", user("x"), calls(("c1", "read_file", {"path": "a"})), say("done"))),
    json.dumps({"trajectory_id": {"nested": 1}, "messages": []}),
    json.dumps(traj("bad-args", user("x"), calls(("c1", "read_file", "{not json")), result("c1", "content"))),
]


def write_corpus(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "mixed.jsonl"
    path.write_text("\n".join([json.dumps(t) for t in GOOD] + BAD_LINES) + "\n")
    with gzip.open(folder / "more.jsonl.gz", "wt") as fh:
        fh.write(json.dumps(traj("gz-1", user("hi"), say("hello"))) + "\n")
    return folder


def table(run: Path, name: str) -> list[tuple]:
    return duckdb.sql(f"select * from read_parquet('{run}/{name}/**/*.parquet', hive_partitioning = true)").fetchall()


def test_every_record_lands_exactly_once(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "in")
    run = tmp_path / "run"
    assert main(["score", str(corpus), "--out", str(run)]) == 0
    manifest = json.loads((run / "manifest.json").read_text())
    verdicts = duckdb.sql(f"select trajectory_id, suite, source_file, source_line from read_parquet('{run}/verdicts/**/*.parquet', hive_partitioning = true)").fetchall()
    attrition = duckdb.sql(f"select reason, trajectory_id, source_line from read_parquet('{run}/attrition/**/*.parquet', hive_partitioning = true) order by source_line").fetchall()
    assert manifest["records_read"] == 13 == len(verdicts) + len(attrition)
    reasons = sorted(r[0] for r in attrition)
    assert reasons == sorted(["malformed_record", "malformed_record", "missing_trajectory_id", "duplicate_trajectory_id",
                              "empty_trajectory", "orphan_tool_result", "missing_tool_result",
                              "missing_trajectory_id", "unparseable_arguments"])
    lines = {(Path(v[2]).name, v[3]) for v in verdicts}
    assert ("mixed.jsonl", 1) in lines and ("more.jsonl.gz", 1) in lines
    # a tool nothing places is a neutral action, not a reject (settings.unknown_tools = "infer")
    assert ("mixed.jsonl", 9) in lines
    # a hostile suite name is a value, never SQL, never a path outside RUN_DIR
    assert {v[1] for v in verdicts} == {"t", "other/suite'; drop table verdicts; --"}
    assert all(p.resolve().is_relative_to(run.resolve()) for p in run.rglob("*"))
    assert (run / "report.html").is_file() and (run / "report.md").is_file()


def test_explode_writes_only_steps(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "in")
    run = tmp_path / "steps-run"
    assert main(["explode", str(corpus), "--out", str(run)]) == 0
    assert sorted(p.name for p in run.iterdir()) == ["manifest.json", "steps"]
    assert len(table(run, "steps")) > 0




def test_same_inputs_give_identical_parquet_bytes(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "in")
    assert main(["score", str(corpus), "--out", str(tmp_path / "a")]) == 0
    assert main(["score", str(corpus), "--out", str(tmp_path / "b")]) == 0
    assert parquet_digests(tmp_path / "a") == parquet_digests(tmp_path / "b") != {}


@pytest.mark.parametrize("argv, needle", [
    (["score", "does/not/exist.jsonl", "--out", "{tmp}/r"], "does/not/exist.jsonl"),
    (["score", "{corpus}", "--out", "{tmp}/r", "--policy", "{tmp}/nope.toml"], "policy"),
    (["score", "{corpus}", "--out", "{tmp}/r", "--policy", "{tmp}/bad.toml"], "policy"),
    (["score", "{corpus}", "--out", "{tmp}/r", "--labels", "{tmp}/labels.jsonl"], "not in the input"),
    (["score", "{corpus}", "--out", "{tmp}/existing"], "already exists"),
    (["score", "{corpus}", "--out", "{tmp}/labels.jsonl/run"], "not a folder"),
    (["score", "{corpus}", "--out", "{tmp}/labels.jsonl", "--overwrite"], "is not a folder"),
    (["score", "{corpus}", "--out", "{tmp}/r", "--shards", "100000000"], "at most 100000"),  # was: 5 GB and growing
    (["synth", "--trajectories", "-5", "--out", "{tmp}/s.jsonl"], "at least 1"),  # was: exit 0, empty files
    # the gold file is read before any work (it was read after scoring: exit 1, a work folder left)
    (["score", "{corpus}", "--out", "{tmp}/r", "--gold", "{tmp}/nope.jsonl"], "does not exist"),
    (["score", "{corpus}", "--out", "{tmp}/r", "--gold", "{tmp}/gold_drift.jsonl"], "gold file"),
    # a step_idx of 1.5 was rounded to step 2 and flipped that trajectory's verdict
    (["score", "{corpus}", "--out", "{tmp}/r", "--labels", "{tmp}/labels_frac.jsonl"], "valid step_idx"),
    (["score", "{corpus}", "--out", "{tmp}/r", "--labels", "{tmp}/labels_score.jsonl"], "no number"),
])
def test_operator_errors_exit_2_and_write_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 argv: list[str], needle: str) -> None:
    corpus = write_corpus(tmp_path / "in")
    (tmp_path / "bad.toml").write_text("[settings\nbroken = ")
    (tmp_path / "labels.jsonl").write_text(json.dumps({"trajectory_id": "ghost", "step_idx": 0, "label": "unsafe"}) + "\n")
    (tmp_path / "labels_frac.jsonl").write_text(json.dumps({"trajectory_id": "t-read", "step_idx": 1.5,
                                                            "label": "unsafe"}) + "\n")
    (tmp_path / "labels_score.jsonl").write_text(json.dumps({"trajectory_id": "t-read", "step_idx": 1,
                                                             "label": "unsafe", "score": "high"}) + "\n")
    # a column whose type changes past DuckDB's sample of the file
    (tmp_path / "gold_drift.jsonl").write_text("".join(json.dumps({"trajectory_id": f"g{i}", "gold": "safe",
                                                                   "slice": ["a"]}) + "\n" for i in range(30_000))
                                               + json.dumps({"trajectory_id": "x", "gold": "safe", "slice": {"a": 1}})
                                               + "\n")
    (tmp_path / "existing").mkdir()
    (tmp_path / "existing" / "keep.txt").write_text("mine")
    before = sorted(p.name for p in tmp_path.iterdir())
    args = [a.format(tmp=tmp_path, corpus=corpus) for a in argv]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert (tmp_path / "existing" / "keep.txt").read_text() == "mine"


def test_unknown_format_is_refused(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "pipeline.cli", "score", str(write_corpus(tmp_path / "in")),
                           "--out", str(tmp_path / "r"), "--format", "klingon"], capture_output=True, text=True)
    assert proc.returncode == 2 and "klingon" in proc.stderr and not (tmp_path / "r").exists()


@pytest.mark.parametrize("command", [[], ["score"], ["explode"], ["report"], ["policy", "suggest"]])
def test_help_ends_with_an_example(command: list[str]) -> None:
    proc = subprocess.run([sys.executable, "-m", "pipeline.cli", *command, "--help"], capture_output=True, text=True)
    assert proc.returncode == 0
    tail = proc.stdout.strip().splitlines()
    assert tail[-2].strip() == "example:" and tail[-1].strip().startswith("litmus-gate ")


def test_policy_suggest_drafts_unknown_tools(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["policy", "suggest", str(write_corpus(tmp_path / "in"))]) == 0
    out = capsys.readouterr().out
    assert "[tools.quantum_teleport]" in out and "1 call(s)" in out


def test_report_rebuilds_metrics_with_gold(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "in")
    run = tmp_path / "run"
    assert main(["score", str(corpus), "--out", str(run)]) == 0
    gold = tmp_path / "gold.jsonl"
    gold.write_text("\n".join(json.dumps({"trajectory_id": t, "gold": g, "slice": ["x"]})
                              for t, g in [("ok-1", "safe"), ("ok-2", "unsafe"), ("orphan", "unsafe")]) + "\n")
    assert main(["report", str(run), "--gold", str(gold)]) == 0
    got = duckdb.sql(f"select tp, fp, fn, tn, n_unscored, precision, recall, f1 from read_parquet('{run}/metrics/*.parquet') "
                     "where scorer = 'flow_aware' and suite = '*' and slice = '*'").fetchall()
    # ok-2 is unsafe in gold but scored safe (fn); ok-1 safe (tn); orphan was rejected (unscored)
    assert got == [(0, 0, 1, 1, 1, None, 0.0, 0.0)]


def test_report_records_its_gold_and_leaves_a_damaged_run_as_it_was(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import hashlib
    import shutil

    run = tmp_path / "run"
    assert main(["score", str(write_corpus(tmp_path / "in")), "--out", str(run)]) == 0
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"trajectory_id": "ok-1", "gold": "safe"}) + "\n")
    assert main(["report", str(run), "--gold", str(gold)]) == 0
    manifest = json.loads((run / "manifest.json").read_text())
    # the manifest names the gold the metrics hold (diff compares manifests: it saw no change)
    assert manifest["gold"] == {"path": str(gold), "sha256": hashlib.sha256(gold.read_bytes()).hexdigest()}
    assert manifest["row_counts"]["metrics"] == duckdb.sql(
        f"select count(*) from read_parquet('{run}/metrics/*.parquet')").fetchall()[0][0]
    capsys.readouterr()

    def files(folder: Path) -> dict[str, bytes]:
        return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}

    broken = tmp_path / "broken"
    shutil.copytree(run, broken)
    (broken / "manifest.json").write_bytes((run / "manifest.json").read_bytes()[:10])  # cut
    parquet = tmp_path / "bad-parquet"
    shutil.copytree(run, parquet)
    victim = next((parquet / "steps").glob("*.parquet"))
    victim.write_bytes(victim.read_bytes()[:40])
    for damaged, needle in ((broken, "cannot be read as JSON"), (parquet, "cannot be read")):
        before = files(damaged)
        # was: a traceback (exit 1), with the new metrics already swapped in beside the old pages
        assert main(["report", str(damaged), "--gold", str(gold)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and needle in err
        assert files(damaged) == before
    assert main(["show", str(parquet), "ok-1"]) == 2  # was: DuckDB's traceback, exit 1
    assert "cannot be read" in capsys.readouterr().err


@pytest.mark.skipif(not Path("/proc/self/task").is_dir() or len(os.sched_getaffinity(0)) < 2,
                    reason="threads counted from /proc; OpenBLAS starts at most one per CPU")
@pytest.mark.parametrize(("given", "expected"), [(None, "1 1"), ("2", "2 2")])
def test_openblas_runs_one_thread_unless_the_user_says_otherwise(given: str | None, expected: str) -> None:
    # NumPy's OpenBLAS threads busy-wait (~0.1 CPU s a process); the setting must be in the
    # environment before NumPy loads (its threads are started then), in the driver and in
    # the workers it spawns (they inherit it). OpenBLAS' threads keep the interpreter's name;
    # the user's "2" shows the count can tell (on two or more CPUs)
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    probe = ("import os, sys, pipeline.cli; assert 'numpy' in sys.modules; "
             "names = [open(f'/proc/self/task/{t}/comm').read().strip() for t in os.listdir('/proc/self/task')]; "
             "print(os.environ['OPENBLAS_NUM_THREADS'], names.count(open('/proc/self/comm').read().strip()))")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env,
                          cwd=Path(__file__).parents[1])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == expected


@pytest.mark.skipif(not Path("/proc/self/smaps").is_file(), reason="mappings read from /proc")
@pytest.mark.parametrize(("given", "expected"), [(None, "0 0"), ("1", "1 1")])
def test_arrow_arenas_ask_no_huge_pages_unless_the_user_says_otherwise(given: str | None, expected: str) -> None:
    # PyArrow's mimalloc madvises its 1 GiB arenas MADV_HUGEPAGE, and the kernel's compaction
    # on their first touch cost up to 0.7 s of system time per shard; the setting must be in
    # the environment before PyArrow loads, in the driver and the workers it spawns. The
    # user's "1" shows the probe can tell (smaps' VmFlags "hg" marks an madvised mapping)
    env = {k: v for k, v in os.environ.items() if k != "MIMALLOC_ALLOW_THP"}
    if given is not None:
        env["MIMALLOC_ALLOW_THP"] = given
    probe = ("import os, pipeline.cli, pyarrow as pa; pa.array(['x' * 1000] * 1000); "
             "big = huge = 0\n"
             "for line in open('/proc/self/smaps'):\n"
             "    if '-' in line.split(' ')[0]:\n"
             "        lo, hi = (int(x, 16) for x in line.split(' ')[0].split('-')); big = hi - lo >= 1 << 30\n"
             "    elif line.startswith('VmFlags') and big and ' hg' in line: huge += 1\n"
             "print(int(os.environ['MIMALLOC_ALLOW_THP'] != '0'), huge)")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env,
                          cwd=Path(__file__).parents[1])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == expected


def test_report_survives_a_policy_file_that_no_longer_loads(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    # report reads the run's policy file for explain_pages alone: one edited since the run
    # (or refused by newer checks) made report exit 2 on a whole run
    policy = tmp_path / "p.toml"
    policy.write_text("[settings]\nexplain_pages = 5\n")
    run = tmp_path / "run"
    assert main(["score", str(write_corpus(tmp_path / "in")), "--policy", str(policy), "--out", str(run)]) == 0
    policy.write_text("[setings]\nexplain_pages = 5\n")
    capsys.readouterr()
    assert main(["report", str(run)]) == 0
    assert "no longer loads" in capsys.readouterr().err


def test_label_rows_for_steps_a_trajectory_does_not_have_are_named(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # they were dropped silently: a labels file from an explode of another version of the
    # corpus labelled nothing, and the verdicts came from the rule classifier alone
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"trajectory_id": "ok-1", "step_idx": 999, "label": "unsafe"}) + "\n"
                      + json.dumps({"trajectory_id": "ok-1", "step_idx": 1, "label": "safe"}) + "\n")
    for workers in ("1", "2"):
        run = tmp_path / f"run{workers}"
        assert main(["score", str(write_corpus(tmp_path / "in")), "--labels", str(labels), "--out", str(run),
                     "--workers", workers, "--shards", "2", "--quiet"]) == 0
        err = capsys.readouterr().err
        assert "warning: 1 row(s) of labels file" in err and "'ok-1' step 999" in err


@pytest.mark.parametrize("argv", [
    ["score", "{corpus}", "--out", "{tmp}/r", "--format", "klingon"],  # unknown --format
    ["score", "{corpus}"],  # no --out
    ["score", "{corpus}", "--out", "{tmp}/r", "--workers", "two"],
    ["explode", "--out", "{tmp}/r"],  # explode has no sample to fall back on
    ["frobnicate"],
])
def test_usage_errors_are_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              argv: list[str]) -> None:
    """SPEC section 7: non-zero with a one-line reason; README: operator errors (missing
    input, unknown --format) exit 2, one line on stderr. argparse printed its usage block
    first (9 lines), and explode without INPUT exited 1."""
    corpus = write_corpus(tmp_path / "in")
    args = [a.format(tmp=tmp_path, corpus=corpus) for a in argv]
    try:
        code = main(args)
    except SystemExit as exc:  # argparse's own exit
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("litmus-gate: error: ")
    assert not (tmp_path / "r").exists()
