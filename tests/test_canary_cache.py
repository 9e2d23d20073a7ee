"""A canary pass is remembered per install digest; failures never are (canary_cache.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import pipeline.sql
import pipeline.stages.canaries as canaries
from pipeline.cli import main
from pipeline.policy import load_policy
from pipeline.stages.canary_cache import CACHE_ENV, grader_roots, install_digest, passed_before
from tests.conftest import REPO

CORPUS = REPO / "data" / "sample" / "corpus"


def _count_canary_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    original = canaries.check_canaries

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(canaries, "check_canaries", counted)
    return calls


def _score(out: Path) -> int:
    return main(["score", str(CORPUS), "--out", str(out), "--workers", "1", "--shards", "1", "--quiet"])


def test_a_pass_is_remembered_and_skipped_next_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_canary_runs(monkeypatch)
    assert not passed_before(load_policy(None).sha256)
    assert _score(tmp_path / "a") == 0
    assert passed_before(load_policy(None).sha256) and len(calls) == 1
    assert _score(tmp_path / "b") == 0
    assert len(calls) == 1  # the second run did not score them again


def test_cache_off_scores_them_every_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, "")
    calls = _count_canary_runs(monkeypatch)
    assert _score(tmp_path / "a") == 0 and _score(tmp_path / "b") == 0
    assert len(calls) == 2


def test_a_failure_is_never_remembered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    original = pipeline.sql.load_sql.__wrapped__

    def broken(name: str) -> str:  # the flow grader silently finds nothing
        text = original(name)
        return f"select * from ({text}) where false" if name == "flows" else text

    monkeypatch.setattr(pipeline.sql, "load_sql", broken)
    assert _score(tmp_path / "a") == 3
    assert not passed_before(load_policy(None).sha256)
    assert _score(tmp_path / "b") == 3  # scored (and failed) again
    assert "canaries failed" in capsys.readouterr().err


def test_digest_follows_every_file_of_the_grader(tmp_path: Path) -> None:
    copies = []
    for i, root in enumerate(grader_roots()):
        copy = tmp_path / f"root{i}"
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns("__pycache__"))
        copies.append(copy)
    roots = tuple(copies)
    sha = load_policy(None).sha256
    before = install_digest(sha, roots)
    assert install_digest(sha, tuple(grader_roots())) == install_digest(sha)
    sql_file = sorted(copies[1].glob("*.sql"))[0]
    sql_file.write_text(sql_file.read_text(encoding="utf-8") + "\n-- edited\n", encoding="utf-8")
    install_digest.cache_clear()
    after_sql = install_digest(sha, roots)
    assert after_sql != before  # an edited SQL file: the canaries run again
    canary_set = copies[0] / "canaries" / "reference.jsonl"
    canary_set.write_text(canary_set.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    install_digest.cache_clear()
    assert install_digest(sha, roots) not in (before, after_sql)
    assert install_digest("another bundled policy", roots) != install_digest(sha, roots)


def test_a_file_where_the_cache_folder_should_be_only_costs_the_saving(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("", encoding="utf-8")
    for folder in (blocker, blocker / "below"):
        monkeypatch.setenv(CACHE_ENV, str(folder))
        calls = _count_canary_runs(monkeypatch)
        assert _score(tmp_path / f"run-{folder.name}") == 0
        assert len(calls) == 1 and not passed_before(load_policy(None).sha256)


def test_no_home_folder_turns_the_cache_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.delenv(CACHE_ENV)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    calls = _count_canary_runs(monkeypatch)
    assert _score(tmp_path / "a") == 0 and _score(tmp_path / "b") == 0
    assert len(calls) == 2


@pytest.fixture(scope="module")
def cache_seen_by_a_module_fixture() -> Path | None:
    from pipeline.stages.canary_cache import cache_dir

    return cache_dir()  # module fixtures (a sample run scored once) come before a test's own


def test_module_fixtures_never_read_the_users_cache(cache_seen_by_a_module_fixture: Path | None) -> None:
    assert cache_seen_by_a_module_fixture is None  # off: their canaries are scored every time
