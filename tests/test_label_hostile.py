"""`litmus-gate label` attacked from outside: hostile replies (deep JSON nesting, control
characters in error bodies), key echoes the redaction missed (log-probability tokens,
JSON \\u escapes), redirects, SIGTERM."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pipeline.cli import main
from tests.fake_openai import FakeOpenAI, Reply, completion, step_of
from tests.test_label_server import _local_only, corpus, label_args, labels  # noqa: F401

KEY = "sk-HOSTILE0123456789abcdefghijKLMNOPQRSTUV"


def _pieces(text: str, key: str = KEY, shortest: int = 8) -> list[str]:
    return [key[i:i + shortest] for i in range(3, len(key) - shortest + 1) if key[i:i + shortest] in text]


def _echoing_tokens(text: str, with_bytes: bool = False) -> Reply:
    """A "safe" reply whose log-probabilities echo ``text``: as an alternative of the first
    token and as a token of its own (``with_bytes``: also as the first token's ``bytes``)."""
    import math

    reply = completion("safe", first_token_p=0.9)
    first = reply["choices"][0]["logprobs"]["content"][0]
    alternative: dict[str, Any] = {"token": text, "logprob": math.log(0.001)}
    if with_bytes:
        first["bytes"] = alternative["bytes"] = list(text.encode())
    first["top_logprobs"].append(alternative)
    reply["choices"][0]["logprobs"]["content"].append({"token": text, "logprob": -0.1})
    return Reply(body=reply)


def test_deeply_nested_json_is_a_null_label_not_a_crash(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A response body, or a reply of a JSON-mode prompt, nested deeper than Python's
    recursion limit gives a null label with a reason; before, RecursionError ended the
    run with a traceback (and the cached reply crashed every rerun)."""
    inputs = corpus(tmp_path / "in", 2)
    with FakeOpenAI(lambda b, s: Reply(body="[" * 200_000)) as server:
        assert main(label_args(server, inputs, tmp_path / "a.parquet", "--max-retries", "0")) == 0
    rows = labels(tmp_path / "a.parquet")
    assert rows and all(r["label"] is None and "malformed response" in r["label_errors"] for r in rows)
    prompt = tmp_path / "json.toml"
    prompt.write_text('[parse]\nmode = "json"\nfield = "verdict"\n'
                      '[[messages]]\nrole = "user"\ncontent = "${step}"\n')
    with FakeOpenAI(lambda b, s: Reply(body=completion("[" * 60_000))) as server:
        args = label_args(server, inputs, tmp_path / "b.parquet", "--prompt", str(prompt))
        assert main(args) == 0
        assert main([*args, "--overwrite"]) == 0  # the cached reply too
    rows = labels(tmp_path / "b.parquet")
    assert rows and all(r["label"] is None and r["label_errors"] == "unparseable reply: not JSON" for r in rows)


def test_a_key_echoed_in_log_probability_tokens_never_reaches_the_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reply text was redacted, but the first tokens' log-probabilities went to the
    cache as the server sent them: a server echoing the Authorization header in a token,
    an alternative or their ``bytes`` left the key in cache.sqlite."""
    monkeypatch.setenv("GUARD_KEY", KEY)
    inputs = corpus(tmp_path / "in", 2)

    def echo(body: dict[str, Any], server: FakeOpenAI) -> Reply:
        return _echoing_tokens(server.log[-1].headers.get("Authorization", ""), with_bytes=True)

    out = tmp_path / "labels.parquet"
    with FakeOpenAI(echo) as server:
        assert main(label_args(server, inputs, out, "--api-key-env", "GUARD_KEY")) == 0
    rows = labels(out)
    assert rows and all(r["label"] == "safe" and r["score"] is not None and r["score"] < 0.2 for r in rows)
    cache = (tmp_path / "cache.sqlite").read_bytes()
    assert KEY.encode() not in cache and not _pieces(cache.decode("latin-1"))
    assert json.dumps(list(KEY.encode())[:8])[1:-1].encode() not in cache  # the key's ``bytes`` list


def test_a_key_at_the_end_of_a_long_token_is_redacted_before_the_token_is_cut(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A token is kept to its first 200 characters (``MAX_TOKEN_CHARS``). It was cut
    first, then redacted: a key starting 12 characters before the cut kept those 12, fewer
    than the 16 that make a run of the key, so ``sk-HOSTILE01`` reached the cache."""
    from pipeline.label.completion import MAX_TOKEN_CHARS

    monkeypatch.setenv("GUARD_KEY", KEY)
    inputs = corpus(tmp_path / "in", 2)

    def echo(body: dict[str, Any], server: FakeOpenAI) -> Reply:
        key = server.log[-1].headers.get("Authorization", "").removeprefix("Bearer ")
        return _echoing_tokens("x" * (MAX_TOKEN_CHARS - 12) + key)

    out = tmp_path / "labels.parquet"
    with FakeOpenAI(echo) as server:
        assert main(label_args(server, inputs, out, "--api-key-env", "GUARD_KEY")) == 0
    rows = labels(out)
    assert rows and all(r["label"] == "safe" for r in rows)
    cache = (tmp_path / "cache.sqlite").read_bytes().decode("latin-1")
    assert "x" * 50 in cache  # the tokens were kept (cut), not dropped
    assert KEY[:12] not in cache and not _pieces(cache)


def _escaped(text: str, every: bool = False) -> str:
    """``text`` with its first character (``every``: each character) as a JSON ``\\uXXXX`` escape."""
    return "".join(f"\\u{ord(c):04x}" if every or i == 0 else c for i, c in enumerate(text))


def _unescaped(text: str) -> str:
    """``text`` with its ``\\uXXXX`` escapes decoded, again and again (escaped escapes)."""
    while (decoded := re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m[1], 16)), text)) != text:
        text = decoded
    return text


def test_a_key_spelled_with_json_escapes_in_a_json_reply_is_redacted_once_decoded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A JSON-mode reply that spells the key with ``\\u`` escapes (``"\\u0073k-..."``)
    passed the redaction, which ran on the text before JSON decoding: the decoded key
    reached ``category`` and ``label_errors`` (and, escaped, ``raw_reply``)."""
    monkeypatch.setenv("GUARD_KEY", KEY)
    inputs = corpus(tmp_path / "in", 4)
    prompt = tmp_path / "json.toml"
    prompt.write_text('[parse]\nmode = "json"\nfield = "verdict"\ncategory_field = "category"\n'
                      '[[messages]]\nrole = "user"\ncontent = "<BEGIN STEP TO ASSESS>\\n${step}\\n<END STEP TO ASSESS>"\n')

    def echo(body: dict[str, Any], server: FakeOpenAI) -> Reply:
        key = server.log[-1].headers.get("Authorization", "").removeprefix("Bearer ")
        i = int(step_of(body).split("task ")[1].split()[0].strip(".")) if "task " in step_of(body) else 0
        replies = [  # the JSON text of the reply, as the model wrote it
            f'{{"verdict": "safe", "category": "{_escaped(key)}"}}',
            f'{{"verdict": "{_escaped(key, every=True)}"}}',  # not a label word: named in label_errors
            f'{{"verdict": "unsafe", "category": ["S1", "{_escaped(key, every=True)}"]}}',
            f'{{"verdict": "unsafe", "category": "{_escaped(_escaped(key))}"}}',  # escaped twice
        ]
        return Reply(body=completion(replies[i % len(replies)]))

    out = tmp_path / "labels.parquet"
    with FakeOpenAI(echo) as server:
        assert main(label_args(server, inputs, out, "--api-key-env", "GUARD_KEY", "--prompt", str(prompt))) == 0
    printed = capsys.readouterr()
    rows = labels(out)
    assert {r["label"] for r in rows} == {"safe", "unsafe", None}
    for r in rows:
        for value in (r["category"], r["label_errors"], r["raw_reply"]):
            assert not _pieces(value or "") and not _pieces(_unescaped(value or "")), r
    assert any("[redacted]" in (r["category"] or "") for r in rows)
    assert any("[redacted]" in (r["label_errors"] or "") for r in rows)
    for path in [p for p in tmp_path.rglob("*") if p.is_file()]:
        assert not _pieces(path.read_bytes().decode("utf-8", "replace")), path
    assert not _pieces(printed.out + printed.err)



def test_redact_takes_a_run_from_anywhere_in_the_key_and_escaped_spellings() -> None:
    from pipeline.label.redaction import key_forms, redact

    forms = key_forms(KEY)
    assert redact(f"x {KEY[5:]} y", forms) == "x [redacted] y"  # the key without its first characters
    assert redact(f"{_escaped(KEY)}", forms) == "\\u0073[redacted]"
    assert redact(f'"{_escaped(KEY, every=True)}" \\u0022', forms) == '"[redacted]" \\u0022'
    assert redact(f"{KEY[3:18]} {KEY[20:35]}", forms) == f"{KEY[3:18]} {KEY[20:35]}"  # 15: not the key
    assert redact("keep \\u0041 \\/ as they are", forms) == "keep \\u0041 \\/ as they are"


class _Listener:
    """A TCP listener on 127.0.0.1 that records the first bytes of each connection, then
    hangs up: the proxy the environment names, which must see no plain-http request."""

    def __init__(self) -> None:
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self.got: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    self.got.append(conn.recv(65536))
                except OSError:
                    self.got.append(b"")

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._sock.close()


@pytest.fixture
def proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Listener]:
    """Every proxy variable names a listener on this machine; no NO_PROXY."""
    listener = _Listener()
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.setenv(var, listener.url)
        monkeypatch.setenv(var.lower(), listener.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    yield listener
    listener.close()


def test_a_loopback_endpoint_is_never_reached_through_a_proxy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              proxy: _Listener) -> None:
    """httpx follows HTTP_PROXY / ALL_PROXY: the request for a local endpoint, its
    Authorization header with it, went in clear to whatever proxy the environment named
    (which cannot reach this machine's loopback anyway)."""
    monkeypatch.setenv("GUARD_KEY", KEY)
    inputs = corpus(tmp_path / "in", 2)
    out = tmp_path / "labels.parquet"
    with FakeOpenAI() as server:
        assert main(label_args(server, inputs, out, "--api-key-env", "GUARD_KEY", "--max-retries", "0")) == 0
    assert proxy.got == []
    assert len(server.log) == 6 and all(r["label"] == "safe" for r in labels(out))


def _tried(endpoint: str) -> None:
    from pipeline.label.client import ChatClient, RetryPolicy

    client = ChatClient(endpoint, KEY, 1, RetryPolicy(timeout=1.0, max_retries=0, budget=5.0))

    async def once() -> None:
        try:
            outcome = await client.complete({"model": "m", "messages": []})
            assert outcome.reply is None  # nothing listens there
        finally:
            await client.aclose()

    asyncio.run(once())


def test_only_a_remote_https_endpoint_goes_through_the_proxy_and_no_proxy_is_honoured(
        monkeypatch: pytest.MonkeyPatch, proxy: _Listener) -> None:
    """The rule: plain http (the proxy would read the key and the transcripts) and this
    machine never go through a proxy; a remote https endpoint follows HTTPS_PROXY /
    ALL_PROXY and NO_PROXY (the proxy sees a CONNECT, the key travels inside TLS)."""
    for endpoint in ("http://192.0.2.1:8000/v1", "http://localhost:9/v1", "https://localhost:9/v1",
                     "https://127.0.0.1:9/v1", "https://[::1]:9/v1"):
        _tried(endpoint)
        assert proxy.got == [], endpoint
    _tried("https://192.0.2.1/v1")
    assert len(proxy.got) == 1 and proxy.got[0].startswith(b"CONNECT 192.0.2.1:443 ")
    assert KEY.encode() not in proxy.got[0]
    monkeypatch.setenv("NO_PROXY", "192.0.2.1")
    _tried("https://192.0.2.1/v1")
    assert len(proxy.got) == 1
    from pipeline.errors import UsageError
    from pipeline.label.client import ChatClient, RetryPolicy

    for var in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(var, "socks5://127.0.0.1:9")  # httpx without socksio: an ImportError
    monkeypatch.delenv("NO_PROXY")
    with pytest.raises(UsageError, match="proxy the environment names"):
        ChatClient("https://192.0.2.1/v1", KEY, 1, RetryPolicy())


def test_an_attempt_never_runs_past_the_retry_budget(tmp_path: Path) -> None:
    """--retry-budget is the total time of a request, waits included; each attempt had
    the whole --timeout whatever was left of it (an attempt begun at 299 s of a 300 s
    budget ran until 359 s), and the first attempt outlived a budget below --timeout."""
    import time

    from pipeline.label.client import ChatClient, RetryPolicy

    calls: list[float] = []

    def slow(body: dict[str, Any], server: FakeOpenAI) -> Reply:
        with server.lock:
            calls.append(time.monotonic())
            first = len(calls) == 1
        return Reply(500, "down") if first and body.get("model") == "flaky" else Reply(body=completion("safe"),
                                                                                       delay=8.0)

    with FakeOpenAI(slow) as server:
        for model in ("steady", "flaky"):
            calls.clear()
            client = ChatClient(server.url, None, 1, RetryPolicy(timeout=30.0, max_retries=3, budget=1.5,
                                                                 backoff=0.3))

            async def once() -> Any:
                try:
                    return await client.complete({"model": model, "messages": []})
                finally:
                    await client.aclose()

            started = time.monotonic()
            outcome = asyncio.run(once())
            took = time.monotonic() - started
            assert outcome.reply is None and "no time is left of the 1.5 s retry budget" in (outcome.error or ""), outcome
            assert took < 6.0, (model, took)  # cut near 1.5 s; waiting for the reply takes 8 (margin for a loaded CI)
            assert len(calls) == (2 if model == "flaky" else 1)
    client = ChatClient("http://127.0.0.1:9/v1", None, 1, RetryPolicy(timeout=30.0, budget=1.5))
    client._not_before = time.monotonic() + 60  # another request's Retry-After: 60 s
    started = time.monotonic()
    outcome = asyncio.run(client.complete({"model": "m", "messages": []}))
    assert time.monotonic() - started < 10 and "Retry-After pause exceeds the 1.5 s retry budget" in outcome.error
    asyncio.run(client.aclose())


def _compressed(encoding: str, data: bytes, times: int = 1) -> bytes:
    """``data`` * ``times`` compressed as ``encoding`` (streamed: never held whole)."""
    import zlib

    if encoding == "zstd":
        import zstandard

        return zstandard.ZstdCompressor(level=19).compress(data * times)
    z = zlib.compressobj(9, zlib.DEFLATED, 31 if encoding == "gzip" else 15)
    return b"".join(z.compress(data) for _ in range(times)) + z.flush()


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "zstd"])
def test_a_compressed_response_is_bounded_while_it_is_decompressed(encoding: str) -> None:
    """A compression bomb (256 MiB of zeros in 256 KB of gzip, 8 KB of zstd): httpx
    decompressed each network chunk whole before the 4 MiB bound was checked (64 KiB of
    gzip is 64 MiB, a zstd frame all of it). Memory stays within a few MiB now, and a
    compressed reply within the bound is still read."""
    import tracemalloc

    if encoding == "zstd":
        pytest.importorskip("zstandard")
    from pipeline.label.client import ChatClient, RetryPolicy

    bomb = _compressed(encoding, b"\0" * 2**20, 256)
    reply = _compressed(encoding, json.dumps(completion("unsafe\nS2")).encode()) if encoding != "zstd" else b""

    def respond(body: dict[str, Any], server: FakeOpenAI) -> Reply:
        return Reply(body=reply if body["model"] == "small" else bomb, headers={"Content-Encoding": encoding})

    with FakeOpenAI(respond) as server:
        for model in ("bomb", "small") if reply else ("bomb",):
            client = ChatClient(server.url, None, 1, RetryPolicy(timeout=30.0, max_retries=0))

            async def once() -> Any:
                try:
                    return await client.complete({"model": model, "messages": []})
                finally:
                    await client.aclose()

            tracemalloc.start()
            try:
                outcome = asyncio.run(once())
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            if model == "small":
                assert outcome.reply is not None and outcome.reply.reply == "unsafe\nS2", outcome
            else:
                assert outcome.reply is None and outcome.error, outcome
                assert peak < 16 * 2**20, f"{peak / 2**20:.0f} MiB held for a 4 MiB bound"
    assert all(e.headers.get("Accept-Encoding") == "gzip, deflate" for e in server.log)


def _session(sid: int) -> list[int]:
    """Live processes of session ``sid`` (a process started with start_new_session)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
def test_sigterm_mid_run_stops_label_in_one_line_and_keeps_the_cache(tmp_path: Path) -> None:
    """A scheduler's SIGTERM while `label` waits for a slow endpoint: exit 143 and one
    line (no traceback), the cache a valid SQLite file holding the replies received, no
    labels file (whole or partial) at --out, no process left; --resume then asks only
    what was not answered."""
    import os
    import signal
    import sqlite3
    import subprocess
    import sys
    import time

    from tests.conftest import REPO

    inputs = corpus(tmp_path / "in", 30)
    out = tmp_path / "labels.parquet"
    cache = tmp_path / "cache.sqlite"

    def cached() -> int:
        try:
            con = sqlite3.connect(f"file:{cache}?mode=ro", uri=True, timeout=5)
            try:
                return int(con.execute("select count(*) from replies").fetchone()[0])
            finally:
                con.close()
        except sqlite3.Error:
            return 0

    with FakeOpenAI(latency=0.3) as server:
        proc = subprocess.Popen([sys.executable, "-X", "faulthandler", "-m", "pipeline.cli",
                                 *label_args(server, inputs, out, "--concurrency", "2")],
                                cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and proc.poll() is None and cached() < 4:
                time.sleep(0.05)
            assert proc.poll() is None, proc.communicate()
            proc.send_signal(signal.SIGTERM)
            stdout, stderr = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        assert proc.returncode == 143, stderr
        assert stderr.count("\n") == 1 and "SIGTERM" in stderr and "Traceback" not in stderr, stderr
        assert "--resume" in stderr and stdout == ""
        assert f"{out} was not written" in stderr and "no run was published" not in stderr, stderr
        assert not out.exists() and not list(tmp_path.glob(".labels.parquet.tmp-*"))
        con = sqlite3.connect(cache)
        assert con.execute("pragma integrity_check").fetchall() == [("ok",)]
        answered = int(con.execute("select count(*) from replies").fetchone()[0])
        con.close()
        assert answered >= 4
        time.sleep(0.5)
        assert _session(proc.pid) == []
        before = len(server.log)
        assert main(label_args(server, inputs, out, "--resume")) == 0
        assert len(server.log) - before <= 90 - answered
    assert len(labels(out)) == 90
