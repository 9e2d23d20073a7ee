"""A run whose canaries come out wrong fails with exit 3 and publishes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

import pipeline.sql
from pipeline.cli import main
from tests.conftest import REPO


@pytest.mark.parametrize("workers, shards", [("1", "1"), ("2", "2")])  # canaries inline / in a driver thread
def test_broken_flow_grader_fails_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str], workers: str, shards: str) -> None:
    original = pipeline.sql.load_sql.__wrapped__

    def broken(name: str) -> str:  # the flow grader silently finds nothing
        text = original(name)
        return f"select * from ({text}) where false" if name == "flows" else text

    monkeypatch.setattr(pipeline.sql, "load_sql", broken)
    out = tmp_path / "run"
    code = main(["score", str(REPO / "data" / "sample" / "corpus"), "--out", str(out), "--workers", workers,
                 "--shards", shards, "--quiet"])
    err = capsys.readouterr().err
    assert code == 3 and "canaries failed" in err and "exfil" in err
    assert not out.exists()


def test_healthy_grader_passes_its_canaries(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["canaries"]) == 0
