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
