"""The nested budgets of written programs (written.py `Nested`): an agent re-running an
unchanged script is charged once, so ordinary loops are scored, not opaque (review round 21)."""

from __future__ import annotations

from tests.conftest import rows, stage_connection
from tests.test_written_programs import bash, write, written_then_run


def _reruns(tid: str, steps: int, cd: bool = False) -> dict:
    """main.sh runs 5 helpers, each reading 100 files; the agent reruns it ``steps`` times."""
    pre = "/w/" if cd else ""
    out = [write(f"{pre}h{k}.sh", "#!/bin/sh\n" + "".join(f"cat d{k}_{i}.txt\n" for i in range(100))) for k in range(5)]
    out.append(write(f"{pre}main.sh", "#!/bin/sh\n" + "".join(f"sh h{k}.sh\n" for k in range(5))))
    out += [bash(("cd /w && " if cd else "") + "bash main.sh")] * steps
    return written_then_run(tid, *out)


def test_reruns_of_one_script_are_scored() -> None:
    """The same unchanged script run again adds no new nested work: 201 reruns (or 101 in a
    folder) are scored, not dropped as opaque_step attrition."""
    con = stage_connection([_reruns("plain", 201), _reruns("folder", 101, cd=True)])
    assert rows(con, "select trajectory_id, reason from attrition") == []
    assert sorted(r["verdict"] for r in rows(con, "select verdict from verdicts")) == ["safe", "safe"]
