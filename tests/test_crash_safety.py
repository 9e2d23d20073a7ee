"""kill -9 at several points of a run: RUN_DIR is absent or whole, never partial;
a rerun then equals a clean run's tables byte for byte."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import calls, result, say, traj, user, parquet_digests


def _corpus(path: Path, n: int = 400) -> None:
    with path.open("w") as fh:
        for i in range(n):
            t = traj(f"t{i}", user(f"task {i}"),
                     calls((f"a{i}", "read_file", {"path": f"notes-{i}.txt"})),
                     result(f"a{i}", f"note {i} ref-{i:08d}"),
                     calls((f"b{i}", "http_post", {"url": "https://api.example.com/x", "data": f"ref-{i:08d}"})),
                     result(f"b{i}", "ok"), say("done"), suite=f"s{i % 3}")
            fh.write(json.dumps(t) + "\n")




def _is_whole(run: Path) -> bool:
    manifest = json.loads((run / "manifest.json").read_text())
    return all((run / name).is_dir() for name in manifest["row_counts"]) and (run / "report.html").is_file()


def test_kill_9_never_leaves_a_partial_run(tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    _corpus(corpus)
    clean = tmp_path / "clean"
    cmd = [sys.executable, "-m", "pipeline.cli", "score", str(corpus)]
    subprocess.run([*cmd, "--out", str(clean)], check=True, capture_output=True)
    started = time.monotonic()
    subprocess.run([*cmd, "--out", str(tmp_path / "timing")], check=True, capture_output=True)
    duration = time.monotonic() - started
    for i, fraction in enumerate((0.1, 0.3, 0.5, 0.7, 0.85, 0.95)):
        out = tmp_path / f"killed-{i}"
        proc = subprocess.Popen([*cmd, "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(duration * fraction)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert not out.exists() or _is_whole(out), f"partial run visible after kill at {fraction:.0%}"
        subprocess.run([*cmd, "--out", str(out), "--overwrite"], check=True, capture_output=True)
        assert parquet_digests(out) == parquet_digests(clean)
    assert not list(tmp_path.glob(".killed-*.staging-*")), "stale staging folders are cleaned by the next run"


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(proc.stdout)


def _score(corpus: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pipeline.cli", "score", str(corpus), "--out", str(out),
                           "--workers", "1", "--quiet", *extra], capture_output=True, text=True, timeout=300)


def test_a_run_killed_between_its_overwrites_renames_is_mended_by_the_next(tmp_path: Path) -> None:
    # kill -9 between an --overwrite's two renames leaves no RUN_DIR: the old run aside
    # (.run.old-PID), the new one staged. The next run under the lock puts the old run back
    # (the killed one never finished), so RUN_DIR is never lost; a finished swap's leftover
    # old run is removed. Before, the old run stayed aside for good and RUN_DIR was missing
    corpus = tmp_path / "c.jsonl"
    _corpus(corpus, 20)
    out = tmp_path / "run"
    assert _score(corpus, out).returncode == 0
    before = parquet_digests(out)
    dead = _dead_pid()
    aside, staged = tmp_path / f".run.old-{dead}", tmp_path / f".run.staging-{dead}"
    os.rename(out, aside)  # the first rename done, the second never made
    staged.mkdir()
    refused = _score(corpus, out)  # no --overwrite: the old run is back, and it refuses to replace it
    assert refused.returncode == 2 and "already exists" in refused.stderr, refused.stderr
    assert "put" in refused.stderr and f".run.old-{dead}" in refused.stderr
    assert parquet_digests(out) == before and not aside.exists() and not staged.exists()
    os.rename(out, aside)
    assert _score(corpus, out, "--overwrite").returncode == 0
    assert parquet_digests(out) == before and not aside.exists()
    leftover = tmp_path / f".run.old-{_dead_pid()}"  # a finished swap killed before removing the old run
    leftover.mkdir()
    (leftover / "manifest.json").write_text("{}")
    assert _score(corpus, out, "--overwrite").returncode == 0
    assert not leftover.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl", "run"]
    # what is not a killed run's is left alone: a user's backup named like a date, another
    # RUN_DIR's leftovers, a folder without a manifest, a pid no system has
    foreign = [tmp_path / ".run.old-20240101", tmp_path / f".run.old-x.old-{_dead_pid()}",
               tmp_path / f".run.old-{_dead_pid()}-copy", tmp_path / f".run.old-{_dead_pid()}"]
    for folder in foreign[:3]:
        folder.mkdir()
        (folder / "manifest.json").write_text("{}")
    foreign[3].mkdir()  # no manifest: not a run this program moved aside
    assert _score(corpus, out, "--overwrite").returncode == 0
    assert all(f.exists() for f in foreign)


# `litmus-gate report` that SIGKILLs itself right after its k-th rename of something aside
# (a ".<name>.old-<pid>" destination): a scheduler's kill landing between the two renames
# of a swap
_KILLED_REPORT = """
import os, signal, sys
target = int(sys.argv.pop(1))
real, seen = os.rename, []
def rename(src, dst, *args, **kwargs):
    real(src, dst, *args, **kwargs)
    if ".old-" in os.path.basename(str(dst)):
        seen.append(dst)
        if len(seen) == target:
            os.kill(os.getpid(), signal.SIGKILL)
os.rename = rename
from pipeline.cli import main
sys.exit(main())
"""


@pytest.mark.parametrize("kth", [1, 2])
def test_a_report_killed_mid_swap_leaves_the_old_run_or_the_new_one_whole(tmp_path: Path, kth: int) -> None:
    # report swapped its explain pages, then its metrics table, each by two renames (old one
    # aside, new one in); a kill between them left a run without its metrics table for good
    # (a report after it rebuilt the report without metrics) and metrics beside a manifest
    # naming another gold. Now the rebuilt run is staged and swapped in whole, as a score
    # --overwrite is, and the next report (or score) mends a swap that was cut
    corpus = tmp_path / "c.jsonl"
    _corpus(corpus, 30)
    gold_a, gold_b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    gold_a.write_text("".join(json.dumps({"trajectory_id": f"t{i}", "gold": "unsafe"}) + "\n" for i in range(30)))
    gold_b.write_text("".join(json.dumps({"trajectory_id": f"t{i}", "gold": "safe"}) + "\n" for i in range(20)))
    out = tmp_path / "run"
    assert _score(corpus, out, "--gold", str(gold_a)).returncode == 0
    old_metrics = parquet_digests(out / "metrics")
    old_manifest = json.loads((out / "manifest.json").read_text())
    killed = subprocess.run([sys.executable, "-c", _KILLED_REPORT, str(kth), "report", str(out), "--gold", str(gold_b)],
                            capture_output=True, text=True, timeout=300)
    assert killed.returncode in (0, -signal.SIGKILL), killed.stderr
    mended = subprocess.run([sys.executable, "-m", "pipeline.cli", "report", str(out)], capture_output=True,
                            text=True, timeout=300)
    assert mended.returncode == 0, mended.stderr
    assert _is_whole(out) and (out / "metrics").is_dir() and (out / "explain").is_dir()
    manifest = json.loads((out / "manifest.json").read_text())
    if manifest["gold"] == old_manifest["gold"]:  # the old run stands
        assert parquet_digests(out / "metrics") == old_metrics
    else:  # the new one, whole: metrics of the gold the manifest names
        assert manifest["gold"]["path"] == str(gold_b) and parquet_digests(out / "metrics") != old_metrics
    assert manifest["row_counts"]["metrics"] == sum(1 for _ in _rows(out / "metrics"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "b.jsonl", "c.jsonl", "run"]
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]


def _rows(table: Path) -> list[tuple[object, ...]]:
    import duckdb

    return duckdb.sql(f"select * from read_parquet({[str(p) for p in sorted(table.rglob('*.parquet'))]})").fetchall()
