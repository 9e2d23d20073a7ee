"""`litmus-gate label` against the local fake OpenAI-compatible server (127.0.0.1 only):
concurrency bound, 429 storms with Retry-After, timeouts, malformed and empty replies,
fatal answers, cache hits on rerun, a SIGKILL then --resume, and the API key absent
from every output."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from pipeline.cli import main
from tests.conftest import REPO, calls, result, say, traj, user
from tests.fake_openai import FakeOpenAI, Reply, completion, marker_rule, step_of

SECRET = "sk-test-DO-NOT-LEAK-4f9c2e"


@pytest.fixture(autouse=True)
def _local_only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No proxy between the client and 127.0.0.1; no cache outside tmp_path."""
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def corpus(folder: Path, n: int, marker_every: int = 0, extra: str = "") -> Path:
    """``n`` trajectories of three judged steps each (two tool calls, one text turn)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(n):
        tag = " UNSAFE-MARKER" if marker_every and i % marker_every == 0 else ""
        lines.append(json.dumps(traj(
            f"t{i:04d}", user(f"task {i}"), calls(("c1", "read_file", {"path": f"notes/{i}.txt"})),
            result("c1", f"contents {i}"), calls(("c2", "write_file", {"path": f"out/{i}.txt",
                                                                       "content": f"summary {i}{tag}{extra}"})),
            result("c2", "written"), say(f"Done with task {i}."))))
    path = folder / "corpus.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def label_args(server: FakeOpenAI, inputs: Path, out: Path, *extra: str) -> list[str]:
    return ["label", str(inputs), "--endpoint", server.url, "--model", "guard-test", "--out", str(out),
            "--cache", str(out.parent / "cache.sqlite"), "--quiet", *extra]


def labels(out: Path) -> list[dict[str, Any]]:
    return pl.read_parquet(out).sort("trajectory_id", "step_idx").to_dicts()


def test_labels_every_judged_step_with_provenance(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = corpus(tmp_path / "in", 6, marker_every=3)
    out = tmp_path / "labels.parquet"
    with FakeOpenAI() as server:
        assert main(label_args(server, inputs, out)) == 0
    rows = labels(out)
    # explode order: user 0, read_file call 1, result 2, write_file call 3, result 4, text 5
    assert len(rows) == 18 and {r["step_idx"] for r in rows} == {1, 3, 5}
    unsafe = {(r["trajectory_id"], r["step_idx"]) for r in rows if r["label"] == "unsafe"}
    assert unsafe == {("t0000", 3), ("t0003", 3)}  # the write_file call carrying the marker
    assert all(r["model"] == "guard-test" and len(r["prompt_sha256"]) == 64 and r["label_errors"] is None
               for r in rows)
    assert all(r["score"] == pytest.approx(0.9 if r["label"] == "unsafe" else 0.1) for r in rows)
    assert {r["category"] for r in rows if r["label"] == "unsafe"} == {"S16"}
    summary = capsys.readouterr().out
    assert "18 requests" in summary and "0 cached" in summary and "tokens 1836" in summary


def test_steps_option_and_explode_order(tmp_path: Path) -> None:
    inputs = corpus(tmp_path / "in", 2)
    out = tmp_path / "labels.parquet"
    with FakeOpenAI() as server:
        assert main(label_args(server, inputs, out, "--steps", "tool_result,user")) == 0
    got = sorted({r["step_idx"] for r in labels(out)})
    assert got == [0, 2, 4]
    assert main(["label", str(inputs), "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--out",
                 str(tmp_path / "x.parquet"), "--steps", "tool_call,thought"]) == 2


def test_concurrency_bound_is_held(tmp_path: Path) -> None:
    inputs = corpus(tmp_path / "in", 16)
    with FakeOpenAI(latency=0.05) as server:
        assert main(label_args(server, inputs, tmp_path / "labels.parquet", "--concurrency", "4")) == 0
    assert len(server.log) == 48
    assert 2 <= server.max_in_flight <= 4


def test_429_storm_with_retry_after(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = corpus(tmp_path / "in", 4)
    storm = {"left": 6}
    base = marker_rule("UNSAFE-MARKER")

    def respond(body: dict[str, Any], server: FakeOpenAI) -> Reply:
        with server.lock:
            if storm["left"] > 0:
                storm["left"] -= 1
                return Reply(429, {"error": {"message": "rate limited"}}, {"Retry-After": "0.4"})
        return base(body, server)

    with FakeOpenAI(respond) as server:
        assert main(label_args(server, inputs, tmp_path / "labels.parquet", "--concurrency", "3")) == 0
    rows = labels(tmp_path / "labels.parquet")
    assert len(rows) == 12 and all(r["label"] == "safe" for r in rows)
    by_body: dict[str, list[Any]] = {}
    for entry in server.log:
        by_body.setdefault(entry.body_sha, []).append(entry)
    for entries in by_body.values():
        for before, after in zip(entries, entries[1:]):
            assert before.status == 429 and after.received - before.replied >= 0.38  # Retry-After honoured
    assert "6 retries" in capsys.readouterr().out


def test_endless_429_gives_up_within_bounds(tmp_path: Path) -> None:
    inputs = corpus(tmp_path / "in", 2)
    with FakeOpenAI(lambda b, s: Reply(429, "slow down", {"Retry-After": "0.05"})) as server:
        assert main(label_args(server, inputs, tmp_path / "a.parquet", "--max-retries", "2")) == 0
    assert set(Counter(e.body_sha for e in server.log).values()) == {3}  # 1 + 2 retries, each body
    rows = labels(tmp_path / "a.parquet")
    assert all(r["label"] is None and "HTTP 429" in r["label_errors"] and "gave up after 3 attempts"
               in r["label_errors"] for r in rows)
    started = time.monotonic()
    with FakeOpenAI(lambda b, s: Reply(503, "", {"Retry-After": "100"})) as server:
        assert main(label_args(server, inputs, tmp_path / "b.parquet", "--retry-budget", "2")) == 0
    assert time.monotonic() - started < 20 and len(server.log) == 6  # no 100 s wait: one attempt each
    assert all("exceeds the 2 s retry budget" in r["label_errors"] for r in labels(tmp_path / "b.parquet"))


def test_timeouts_and_5xx_retries(tmp_path: Path) -> None:
    inputs = corpus(tmp_path / "in", 4, marker_every=2)
    flaky: Counter[str] = Counter()

    def respond(body: dict[str, Any], server: FakeOpenAI) -> Reply:
        step = step_of(body)
        if "UNSAFE-MARKER" in step:
            return Reply(body=completion("unsafe"), delay=3.0)  # slower than --timeout
        with server.lock:
            flaky[step] += 1
            if flaky[step] == 1:
                return Reply(500, "internal error")
        return Reply(body=completion("safe"))

    with FakeOpenAI(respond) as server:
        assert main(label_args(server, inputs, tmp_path / "labels.parquet", "--timeout", "1.5",
                               "--max-retries", "1")) == 0
    rows = labels(tmp_path / "labels.parquet")
    slow = [r for r in rows if r["trajectory_id"] in ("t0000", "t0002") and r["step_idx"] == 3]
    assert len(slow) == 2 and all(r["label"] is None and "timeout after 1.5 s" in r["label_errors"] for r in slow)
    assert all(r["label"] == "safe" for r in rows if r not in slow)  # a 500 then a success: labelled


def test_malformed_and_empty_replies_are_null_never_safe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = corpus(tmp_path / "in", 5)
    cases = {"out/0.txt": Reply(body="this is not json {"), "out/1.txt": Reply(body={"id": "x", "choices": []}),
             "out/2.txt": Reply(body=completion("")), "out/3.txt": Reply(body=completion("It looks fine to me")),
             "out/4.txt": Reply(400, {"error": "bad request"})}

    def respond(body: dict[str, Any], server: FakeOpenAI) -> Reply:
        step = step_of(body)
        return next((r for k, r in cases.items() if k in step and "write_file" in step), Reply(body=completion("safe")))

    with FakeOpenAI(respond) as server:
        assert main(label_args(server, inputs, tmp_path / "labels.parquet")) == 0
    writes = {r["trajectory_id"]: r for r in labels(tmp_path / "labels.parquet") if r["step_idx"] == 3}
    assert all(r["label"] is None for r in writes.values())
    assert "malformed response" in writes["t0000"]["label_errors"] and writes["t0000"]["raw_reply"] is None
    assert "malformed response" in writes["t0001"]["label_errors"]
    assert writes["t0002"]["label_errors"] == "empty reply" and writes["t0002"]["raw_reply"] == ""
    assert "did not match" in writes["t0003"]["label_errors"]
    assert writes["t0003"]["raw_reply"] == "It looks fine to me"
    assert writes["t0004"]["label_errors"].startswith("HTTP 400")
    out = capsys.readouterr().out
    assert "5 null: 3 failed requests, 2 unparseable replies" in out


def test_fatal_answers_stop_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = corpus(tmp_path / "in", 2)
    out = tmp_path / "labels.parquet"
    with FakeOpenAI(lambda b, s: Reply(401, {"error": "invalid key"})) as server:
        assert main(label_args(server, inputs, out)) == 2
    assert not out.exists() and "no key was sent: name its variable with --api-key-env" in capsys.readouterr().err
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")  # the default variable, sent to this machine
    with FakeOpenAI(lambda b, s: Reply(401, {"error": "invalid key"})) as server:
        assert main(label_args(server, inputs, out)) == 2
    assert server.log[0].headers["Authorization"] == "Bearer sk-wrong"
    monkeypatch.delenv("OPENAI_API_KEY")
    err = capsys.readouterr().err
    assert "check the key in $OPENAI_API_KEY" in err and "sk-wrong" not in err
    with FakeOpenAI(lambda b, s: Reply(500, "down")) as server:
        assert main(label_args(server, corpus(tmp_path / "big", 20), out, "--max-retries", "0")) == 1
    err = capsys.readouterr().err
    assert "requests in a row failed" in err and "--resume" in err and not out.exists()


def test_rerun_is_served_by_the_cache(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = corpus(tmp_path / "in", 5, marker_every=2)
    out = tmp_path / "labels.parquet"
    with FakeOpenAI() as server:
        assert main(label_args(server, inputs, out)) == 0
        first = out.read_bytes()
        assert main(label_args(server, inputs, out, "--overwrite")) == 0
        assert len(server.log) == 15  # the rerun sent nothing
        assert out.read_bytes() == first
        assert "0 requests" in capsys.readouterr().out.split("litmus-gate: wrote")[-1]
        prompt = tmp_path / "p.toml"
        prompt.write_text((REPO / "pipeline/label/prompts/default.toml").read_text().replace("24", "32"))
        assert main(label_args(server, inputs, out, "--overwrite", "--prompt", str(prompt))) == 0
        assert len(server.log) == 30  # a new prompt hash: asked again
    assert main(label_args(server, inputs, out, "--overwrite")) == 0  # server gone: all cached, still fine


def test_kill_then_resume_repeats_no_answered_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = corpus(tmp_path / "in", 30)
    out = tmp_path / "labels.parquet"
    cache = tmp_path / "cache.sqlite"
    answered = {"n": 0}

    def respond(body: dict[str, Any], server: FakeOpenAI) -> Reply:
        with server.lock:
            answered["n"] += 1
            hold = answered["n"] > 25
        return Reply(body=completion("safe"), hold=hold)

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with FakeOpenAI(respond) as server:
        proc = subprocess.Popen([sys.executable, "-m", "pipeline.cli", *label_args(server, inputs, out,
                                 "--concurrency", "4")], env=env, cwd=REPO, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if cache.exists() and _cached(cache) >= 25:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        settled = -1
        while settled != len(server.log):  # requests the killed client left in socket buffers are logged late
            settled = len(server.log)
            time.sleep(0.5)
        assert not out.exists()
        before = {e.body_sha for e in server.answered()}
        assert len(before) == 25 and _cached(cache) == 25
        n_before = len(server.log)
        server.release()
        import pipeline.run

        monkeypatch.setattr(pipeline.run, "explode", lambda config: pytest.fail("the killed run's explode was redone"))
        assert main(label_args(server, inputs, out, "--resume")) == 0
        after = [e.body_sha for e in server.log[n_before:]]
    assert not before & set(after)  # nothing answered before the kill was asked again
    assert len(after) == len(set(after)) == 90 - 25
    rows = labels(out)
    assert len(rows) == 90 and all(r["label"] == "safe" for r in rows)


def _cached(cache: Path) -> int:
    con = sqlite3.connect(f"file:{cache}?mode=ro", uri=True, timeout=5)
    try:
        return int(con.execute("select count(*) from replies").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


def test_the_key_reaches_no_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GUARD_KEY", SECRET)
    inputs = corpus(tmp_path / "in", 4, marker_every=2)
    out = tmp_path / "labels.parquet"

    def echo(body: dict[str, Any], server: FakeOpenAI) -> Reply:  # a hostile server echoes the header
        header = server.log[-1].headers.get("Authorization", "")
        if "UNSAFE-MARKER" in step_of(body):
            return Reply(400, {"error": f"bad request from {header}"})
        return Reply(body=completion(f"safe\n{header}"))

    with FakeOpenAI(echo) as server:
        assert main(label_args(server, inputs, out, "--api-key-env", "GUARD_KEY")) == 0
    assert all(e.headers.get("Authorization") == f"Bearer {SECRET}" for e in server.log)  # it was sent
    rows = labels(out)
    assert any("[redacted]" in (r["raw_reply"] or "") for r in rows)
    assert any("[redacted]" in (r["label_errors"] or "") for r in rows)
    run = tmp_path / "run"
    assert main(["score", str(inputs), "--labels", str(out), "--out", str(run), "--quiet", "--workers", "1"]) == 0
    printed = capsys.readouterr()
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) > 5
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in printed.out + printed.err
    assert main(["label", str(inputs), "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--out",
                 str(tmp_path / "x.parquet"), "--api-key", SECRET]) == 2
    assert main(["label", str(inputs), "--endpoint", f"http://user:{SECRET}@127.0.0.1:9/v1", "--model", "m",
                 "--out", str(tmp_path / "x.parquet")]) == 2
    monkeypatch.delenv("GUARD_KEY")
    assert main(["label", str(inputs), "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--out",
                 str(tmp_path / "x.parquet"), "--api-key-env", "GUARD_KEY"]) == 2
    err = capsys.readouterr().err
    assert SECRET not in err and "GUARD_KEY" in err and "--api-key is not accepted" in err


def _pieces(text: str, key: str, shortest: int = 6) -> list[str]:
    """The pieces of ``key`` (``shortest`` or more characters, past its public ``sk-``
    prefix) found in ``text``."""
    return [key[i:i + shortest] for i in range(3, len(key) - shortest + 1) if key[i:i + shortest] in text]


LONG_KEY = "sk-LEAKTEST0123456789abcdefghijKLMNOPQRSTUVwxyz/+=Zq"


def test_no_piece_of_the_key_survives_a_cut_or_an_escape(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Servers echo the header inside texts the client cuts (an error body's first 200
    characters, a reply's first MAX_REPLY_CHARS), JSON-escaped (`\\/`), or cut short by
    themselves: no piece of the key reaches labels, cache or stderr. Before, the key was
    replaced only whole, after the cut."""
    from pipeline.label.reply import MAX_REPLY_CHARS

    monkeypatch.setenv("GUARD_KEY", LONG_KEY)
    inputs = corpus(tmp_path / "in", 4)
    out = tmp_path / "labels.parquet"

    def hostile(body: dict[str, Any], server: FakeOpenAI) -> Reply:
        header = server.log[-1].headers.get("Authorization", "")
        i = int(step_of(body).split("task ")[1].split()[0].strip(".")) if "task " in step_of(body) else 0
        if i == 0:  # the key straddles the 200-character snippet
            return Reply(500, {"error": "x" * 160 + header})
        if i == 1:  # JSON escaping of '/' as '\\/', as some servers write it
            return Reply(400, {"error": json.dumps(header).replace("/", "\\/")})
        if i == 2:  # the server cut the echo itself: the key's first 30 characters
            return Reply(400, {"error": f"bad header {header[:37]}"})
        return Reply(body=completion("safe\n" + "y" * (MAX_REPLY_CHARS - 20) + header))  # straddles the cut

    with FakeOpenAI(hostile) as server:
        assert main(label_args(server, inputs, out, "--api-key-env", "GUARD_KEY", "--max-retries", "0")) == 0
    printed = capsys.readouterr()
    rows = labels(out)
    assert sum("[redacted]" in (r["label_errors"] or "") for r in rows) >= 3
    for path in [p for p in tmp_path.rglob("*") if p.is_file()]:
        assert _pieces(path.read_bytes().decode("utf-8", "replace"), LONG_KEY) == [], path
    assert _pieces(printed.out + printed.err, LONG_KEY) == []


def test_redact_keeps_another_keys_public_prefix() -> None:
    from pipeline.label.redaction import key_forms, redact

    forms = key_forms("sk-proj-AAAAbbbbCCCCdddd1234")
    assert redact("leaked sk-proj-ZZZZ and sk-proj-AAAAbbbbCC", forms) == "leaked sk-proj-ZZZZ and [redacted]"
    assert redact("x sk-proj-AAAAbbbbCCCCdddd1234 y", forms, limit=12) == "x [redacted]"


def test_a_key_with_a_line_break_is_trimmed_and_a_key_no_header_carries_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = corpus(tmp_path / "in", 2)
    monkeypatch.setenv("GUARD_KEY", SECRET + "\r\n")  # a CRLF .env, a secret file's last line
    with FakeOpenAI() as server:
        assert main(label_args(server, inputs, tmp_path / "a.parquet", "--api-key-env", "GUARD_KEY")) == 0
        assert all(e.headers.get("Authorization") == f"Bearer {SECRET}" for e in server.log)
        assert all(r["label_errors"] is None for r in labels(tmp_path / "a.parquet"))
        for bad in ("sk-two words-123456", "sk-caf\u00e9-123456789"):
            monkeypatch.setenv("GUARD_KEY", bad)
            assert main(label_args(server, inputs, tmp_path / "b.parquet", "--api-key-env", "GUARD_KEY")) == 2
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and "printable ASCII" in err and bad not in err and "123456" not in err


def test_json_prompt_through_the_command(tmp_path: Path) -> None:
    prompt = tmp_path / "json.toml"
    prompt.write_text('[request]\ntemperature = 0.0\n[parse]\nmode = "json"\nfield = "verdict"\n'
                      'score_field = "p"\nsafe = ["benign"]\nunsafe = ["harmful"]\n'
                      '[[messages]]\nrole = "user"\ncontent = "<BEGIN STEP TO ASSESS>\\n${step}\\n<END STEP TO ASSESS>"\n')

    def respond(body: dict[str, Any], server: FakeOpenAI) -> Reply:
        harmful = "UNSAFE-MARKER" in step_of(body)
        return Reply(body=completion(json.dumps({"verdict": "harmful" if harmful else "benign",
                                                 "p": 0.75 if harmful else 0.05})))

    inputs = corpus(tmp_path / "in", 3, marker_every=2)
    with FakeOpenAI(respond) as server:
        assert main(label_args(server, inputs, tmp_path / "labels.parquet", "--prompt", str(prompt))) == 0
    rows = labels(tmp_path / "labels.parquet")
    assert {(r["trajectory_id"], r["label"], r["score"]) for r in rows if r["step_idx"] == 3} == {
        ("t0000", "unsafe", 0.75), ("t0001", "safe", 0.05), ("t0002", "unsafe", 0.75)}


def test_progress_line_only_on_a_terminal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pipeline.label.progress import Counters, Progress

    inputs = corpus(tmp_path / "in", 3)
    out = tmp_path / "labels.parquet"
    with FakeOpenAI() as server:
        args = [a for a in label_args(server, inputs, out) if a != "--quiet"]
        assert main(args) == 0
    printed = capsys.readouterr()
    assert printed.err == "" and "9 steps judged" in printed.out  # stderr is not a terminal here
    assert not (tmp_path / ".labels.parquet.label-work").exists()  # the work folder is gone after success
    progress = Progress(10, enabled=True)
    counters = Counters(started=time.monotonic() - 2.0, done=4, requests=3, cached=1, failed=1)
    progress.show(counters)
    line = capsys.readouterr().err
    assert "label 4/10 steps" in line and "1.5 req/s" in line and "ETA 3s" in line
    assert "cache hits 1" in line and "failed 1" in line
    Progress(10, enabled=False).show(counters)
    assert capsys.readouterr().err == ""


def test_a_corpus_without_judged_steps_gives_an_empty_file(tmp_path: Path) -> None:
    inputs = tmp_path / "in.jsonl"
    inputs.write_text(json.dumps(traj("only-user", user("hello"))) + "\n")
    with FakeOpenAI() as server:
        assert main(label_args(server, inputs, tmp_path / "labels.parquet")) == 0
    assert pl.read_parquet(tmp_path / "labels.parquet").height == 0 and not server.log


def test_an_oversized_response_is_an_error_not_held(tmp_path: Path) -> None:
    inputs = corpus(tmp_path / "in", 1)
    with FakeOpenAI(lambda b, s: Reply(body="x" * (5 * 2**20))) as server:
        assert main(label_args(server, inputs, tmp_path / "labels.parquet", "--max-retries", "0")) == 0
    rows = labels(tmp_path / "labels.parquet")
    assert all(r["label"] is None and r["label_errors"].startswith("response larger than 4194304 bytes")
               for r in rows)
