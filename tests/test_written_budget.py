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


def test_a_piece_written_again_is_not_joined_after_itself(monkeypatch) -> None:
    """A script writes helper.sh (a known text: a piece) and runs it; the agent runs the
    script 40 times. The same piece written again adds nothing: no analysis reads it
    joined after itself (before, the 40th run analysed 40 copies joined, and the work grew
    with the square of the reruns: 300 steps of a script writing 300 files took 17.7 s for
    one trajectory, 5.6 s now); the run still reads what helper.sh reads."""
    import pipeline.analysis.written_file as written_file

    piece = "cat notes/today.txt"
    seen: list[str] = []
    real = written_file.analysed

    def counted(program, found):
        seen.append(program[1])
        return real(program, found)

    monkeypatch.setattr(written_file, "analysed", counted)
    script = f"#!/bin/sh\ncat > helper.sh <<'EOF'\n{piece}\nEOF\nsh helper.sh\n"
    record = written_then_run("again", write("main.sh", script), *[bash("bash main.sh")] * 40)
    con = stage_connection([record], until="flows")
    assert max(text.count(piece) for text in seen) <= 1
    got = rows(con, "select count(distinct step_idx) as n from resources where resource = 'notes/today.txt'")
    assert got[0]["n"] == 40
