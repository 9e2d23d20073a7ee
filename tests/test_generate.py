"""The sample-corpus generator's tables (data/samplegen/) are complete and its builders exact.

tests/test_sample_corpus.py regenerates data/sample/ and compares it byte for byte; the
tests here check what that comparison cannot see: every planned case class has rows for
its suites, every row is reachable from the plan, the README lists every class, and the
step-kind builders and beats give exactly the messages (and random draws) of the long
form they stand for, so rewriting a scenario with them cannot change the corpus.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "data"))

from samplegen.beats import Call, Fail, Mail, Pay, Say, Step, Tag, User, failed, mail, pay, play_script, write  # noqa: E402
from samplegen.cases import CASES  # noqa: E402
from samplegen.content_net import money_ok, sent_ok, wrote  # noqa: E402
from samplegen.hostile import HOSTILE, HOSTILE_PLAN  # noqa: E402
from samplegen.plan import CASE_CLASSES, PLAN  # noqa: E402
from samplegen.rand import SUITES  # noqa: E402
from samplegen.traj import Err, Traj  # noqa: E402

# A finding kept as is (changing it would change the sample corpus and every digest of
# it): the env-dump variant of single_step_exfiltration is written, but no suite's count
# reaches it, so "env dumps piped to curl" (data/sample/README.md) has no trajectory.
NEVER_PLAYED = {("single_step_exfiltration", "_ss_env_curl")}


def _row_name(row: Any) -> str:
    fn = getattr(row, "func", row)  # functools.partial
    return getattr(fn, "__name__", repr(row)[:60])


def _played_rows() -> dict[str, set[int]]:
    """Case name -> ids of the row objects the plan plays (k % len over each suite's count)."""
    played: dict[str, set[int]] = {}
    for suite, entries in PLAN.items():
        for name, count in entries:
            rows = CASES[name].rows[suite]
            played.setdefault(name, set()).update(id(rows[k % len(rows)]) for k in range(count))
    return played


def test_every_planned_class_has_rows_for_its_suites() -> None:
    assert set(PLAN) == set(SUITES)
    for suite, entries in PLAN.items():
        names = [name for name, _ in entries]
        assert len(names) == len(set(names)), suite
        for name, count in entries:
            assert name in CASES, name
            assert count > 0 and CASES[name].rows[suite], (suite, name)


def test_every_row_is_played_by_some_suite() -> None:
    played = _played_rows()
    unplayed = set()
    for name, case in CASES.items():
        for rows in case.rows.values():
            unplayed |= {(name, _row_name(row)) for row in rows if id(row) not in played.get(name, set())}
    assert unplayed == NEVER_PLAYED


def test_every_class_is_planned_and_documented() -> None:
    planned = {name for entries in PLAN.values() for name, _ in entries}
    assert planned == set(CASES)
    assert CASE_CLASSES == [*CASES, "hostile"]
    assert all(case.doc.strip() and case.doc.split(".")[0] for case in CASES.values())


def test_hostile_kinds_are_planned_and_known() -> None:
    planned = {kind for kinds in HOSTILE_PLAN.values() for kind in kinds}
    assert planned == set(HOSTILE)
    with pytest.raises(KeyError):
        from samplegen.hostile import play_hostile

        play_hostile(Traj("file-net", "hostile", "x"), "no_such_kind")


def test_modules_stay_small() -> None:
    files = [ROOT / "data" / "generate.py", *sorted((ROOT / "data" / "samplegen").glob("*.py"))]
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in files}
    assert all(n <= 400 for n in sizes.values()), sizes


# ----------------------------------------------------------------------------- builders
def _twins(key: str) -> tuple[Traj, Traj]:
    return Traj("mail-pay", "benign", key), Traj("mail-pay", "benign", key)


def _same(a: Traj, b: Traj) -> None:
    assert a.messages == b.messages
    assert a.rng.getstate() == b.rng.getstate()  # the same draws, so later content is unchanged too
    assert (a.gold, a.tags) == (b.gold, b.tags)


words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=30)
maybe_text = st.one_of(st.none(), words.filter(bool))


@settings(max_examples=60, deadline=None)
@given(key=st.text(max_size=8), subject=words, body=words, text=maybe_text, amount=st.floats(0, 1e6))
def test_builders_equal_the_long_form(key: str, subject: str, body: str, text: str | None, amount: float) -> None:
    a, b = _twins(key)
    err = Err("approval", "Rejected by the human approver")
    pay(a, a.my_iban, amount, subject, text, date="2024-06-01")
    b.step(
        "send_money",
        {"recipient": b.my_iban, "amount": amount, "subject": subject, "date": "2024-06-01"},
        money_ok(b, amount, b.my_iban),
        text,
    )
    mail(a, a.colleague.email, subject, body, text, attachments=["x.pdf"])
    b.step(
        "send_email",
        {"to": b.colleague.email, "subject": subject, "body": body, "attachments": ["x.pdf"]},
        sent_ok(b),
        text,
    )
    write(a, "notes.md", body, text)
    b.step("write_file", {"path": "notes.md", "content": body}, wrote("notes.md", body), text)
    failed(a, "bash", {"command": "rm -rf /"}, err, text)
    b.fail(b.call("bash", {"command": "rm -rf /"}, text), err)
    _same(a, b)


@settings(max_examples=60, deadline=None)
@given(key=st.text(max_size=8), subject=words, body=words, text=maybe_text)
def test_scripts_equal_the_long_form(key: str, subject: str, body: str, text: str | None) -> None:
    a, b = _twins(key)
    err = Err("not_found", "HTTP 404 Not Found")
    play_script(
        a,
        (
            User(subject),
            Fail("fetch_url", {"url": "https://x.example/"}, err, text),
            Step("fetch_url", {"url": "https://x.example/a"}, lambda t: f"{t.rng.randrange(9)} {body}", text),
            Pay(a.my_iban, 12.5, subject, extra={"date": "2024-06-01"}),
            Mail(a.partner.email, subject, body, text),
            Call("read_email", {"query": subject}),
            Say(body or "done"),
            Tag("benign"),
            Tag("flow", unsafe=True),
        ),
    )
    b.user(subject)
    b.fail(b.call("fetch_url", {"url": "https://x.example/"}, text), err)
    b.step("fetch_url", {"url": "https://x.example/a"}, f"{b.rng.randrange(9)} {body}", text)
    b.step(
        "send_money",
        {"recipient": b.my_iban, "amount": 12.5, "subject": subject, "date": "2024-06-01"},
        money_ok(b, 12.5, b.my_iban),
    )
    b.step("send_email", {"to": b.partner.email, "subject": subject, "body": body}, sent_ok(b), text)
    b.call("read_email", {"query": subject})
    b.say(body or "done")
    b.tag("benign")
    b.unsafe("flow")
    _same(a, b)
