"""Two runs into one RUN_DIR: the second fails at once with one line and touches nothing
(the first one's work folder, shards and result stay whole); a killed run's lock never
blocks the next run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.errors import UsageError
from pipeline.execution import workdir
from pipeline.execution.workdir import RunLock, lock_file, private_temp
from tests.conftest import REPO
from tests.test_signals import _corpus, _finished, _ids, _started

SAMPLE = REPO / "data" / "sample" / "corpus"


def test_a_run_into_a_run_dir_another_run_holds_fails_and_touches_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    work = tmp_path / ".run.work"
    work.mkdir()
    (work / "plan.json").write_text('{"plan": "theirs", "token": "t"}')
    with RunLock(out) as other:  # as another run holds it (flock: per open file, also in one process)
        other.acquire()
        assert main(["score", str(SAMPLE), "--out", str(out), "--quiet"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "another litmus-gate run is writing to" in err[0], err
        assert not out.exists() and (work / "plan.json").read_text() == '{"plan": "theirs", "token": "t"}'
        assert main(["score", str(SAMPLE), "--out", str(out), "--overwrite", "--resume", "--quiet"]) == 2
        assert "another litmus-gate run is writing to" in capsys.readouterr().err
    assert main(["score", str(SAMPLE), "--out", str(out), "--quiet"]) == 0  # released with the block
    assert (out / "manifest.json").is_file() and not work.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # the lock's file went with it


def test_a_killed_runs_lock_does_not_block_the_next_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom pathlib import Path\n"
         "from pipeline.execution.workdir import RunLock\n"
         "with RunLock(Path(sys.argv[1])) as lock:\n    lock.acquire()\n    print('held', flush=True)\n"
         "    time.sleep(600)\n", str(out)],
        cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert main(["score", str(SAMPLE), "--out", str(out), "--quiet"]) == 2
        assert "another litmus-gate run is writing to" in capsys.readouterr().err
        holder.send_signal(signal.SIGKILL)
        holder.wait(30)
    finally:
        holder.kill()
    assert lock_file(out).is_file()  # a SIGKILL leaves the file; the kernel dropped the lock
    assert main(["score", str(SAMPLE), "--out", str(out), "--quiet"]) == 0
    assert not lock_file(out).exists()


def test_a_second_run_started_while_the_first_scores_leaves_it_whole(tmp_path: Path) -> None:
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    ids = _corpus(first, "one-", 1600)
    _corpus(second, "two-", 50)
    out = tmp_path / "run"
    proc = _started(["-m", "pipeline.cli", "score", str(first), "--out", str(out), "--workers", "2",
                     "--shards", "8", "--quiet"])
    work = tmp_path / ".run.work" / "out"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and not list(work.glob("shard-*.done")) and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the first run finished before the second started"
    late = subprocess.run([sys.executable, "-m", "pipeline.cli", "score", str(second), "--out", str(out),
                           "--overwrite", "--quiet"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert late.returncode == 2 and "another litmus-gate run" in late.stderr, late.stderr
    _finished(proc, 180, "the first run did not finish")
    assert proc.returncode == 0
    assert _ids(out, "verdicts") == ids  # all of the first run's records, none of the second's


def test_a_lock_file_removed_between_open_and_flock_is_opened_again(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # run A opens the lock file; run B takes the lock, ends and removes the file; A's flock
    # then succeeds on a file nobody looks at: A must open the path's new file and lock that
    out = tmp_path / "run"
    real = workdir.fcntl.flock
    interleaved: list[int] = []

    def flock(handle: object, flags: int) -> None:
        if not interleaved:
            interleaved.append(1)
            with RunLock(out) as b:
                b.acquire()  # B: its own open file, locked, released and removed below
        real(handle, flags)

    monkeypatch.setattr(workdir.fcntl, "flock", flock)
    with RunLock(out) as a:
        a.acquire()
        monkeypatch.setattr(workdir.fcntl, "flock", real)
        assert interleaved and lock_file(out).is_file()
        held = os.fstat(a._handle.fileno())
        assert (held.st_dev, held.st_ino) == (os.stat(lock_file(out)).st_dev, os.stat(lock_file(out)).st_ino)
        with RunLock(out) as c, pytest.raises(UsageError, match="another litmus-gate run"):
            c.acquire()  # a third run sees A's lock
    assert not lock_file(out).exists()


def test_a_release_removes_only_its_own_file(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with RunLock(out) as a:
        a.acquire()
        lock_file(out).unlink()  # removed by hand while held; another run then locks a new file
        with RunLock(out) as b:
            b.acquire()
            a.__exit__(None, None, None)  # A's release must leave B's file alone
            assert lock_file(out).is_file()
    assert not lock_file(out).exists()


def test_a_uri_runs_lock_is_in_this_users_private_temp_folder(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline.storage import location

    monkeypatch.setattr(workdir.tempfile, "gettempdir", lambda: str(tmp_path))
    path = lock_file(location(f"file://{tmp_path}/bucket/nightly"))
    assert path.parent == tmp_path / f"litmus-gate-{os.getuid()}" and path.name.endswith(".lock")
    assert path.parent.stat().st_mode & 0o777 == 0o700
    path.parent.chmod(0o755)  # not private (another user's, or loosened): refused, not used
    with pytest.raises(UsageError, match="not this user's private folder"):
        private_temp()


def test_report_fails_while_another_run_writes_the_run_dir(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    gold = REPO / "data" / "sample" / "gold.jsonl"
    assert main(["score", str(SAMPLE), "--out", str(out), "--quiet"]) == 0
    before = {p.relative_to(out): p.stat().st_mtime_ns for p in out.rglob("*")}
    with RunLock(out) as other:
        other.acquire()  # a score --overwrite into it, or another report
        assert main(["report", str(out), "--gold", str(gold)]) == 2
        assert "another litmus-gate run is writing to" in capsys.readouterr().err
    assert {p.relative_to(out): p.stat().st_mtime_ns for p in out.rglob("*")} == before
    assert main(["report", str(out), "--gold", str(gold)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


@pytest.mark.parametrize("code", ["ENOLCK", "EOPNOTSUPP"])
def test_a_file_system_without_locks_runs_unguarded_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], code: str) -> None:
    import errno

    def no_locks(handle: object, flags: int) -> None:
        raise OSError(getattr(errno, code), os.strerror(getattr(errno, code)))

    monkeypatch.setattr(workdir.fcntl, "flock", no_locks)
    out = tmp_path / "run"
    assert main(["score", str(SAMPLE), "--out", str(out), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "warning: cannot lock" in err and "not guarded" in err, err
    assert (out / "manifest.json").is_file() and sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_any_other_lock_failure_stops_the_run_with_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import errno

    def broken(handle: object, flags: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(workdir.fcntl, "flock", broken)
    out = tmp_path / "run"
    assert main(["score", str(SAMPLE), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot lock" in err[0], err
    assert not out.exists() and not (tmp_path / ".run.work").exists()


def test_report_on_a_folder_that_is_no_run_writes_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "not" / "there" / "run"
    assert main(["report", str(missing)]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no parent folders, no lock file


def test_a_lock_file_replaced_again_and_again_is_an_error_not_a_loop(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "run"
    monkeypatch.setattr(workdir, "_same_file", lambda path, handle: False)  # always replaced
    with RunLock(out) as lock, pytest.raises(UsageError, match="replaced 5 times"):
        lock.acquire()
