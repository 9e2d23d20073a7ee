"""`litmus-gate label` attacked from outside: hostile replies (deep JSON nesting, control
characters in error bodies), key echoes the redaction missed (log-probability tokens,
JSON \\u escapes), redirects, SIGTERM."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.cli import main
from tests.fake_openai import FakeOpenAI, Reply, completion, step_of
from tests.test_label_server import _local_only, corpus, label_args, labels  # noqa: F401

KEY = "sk-HOSTILE0123456789abcdefghijKLMNOPQRSTUV"


def _pieces(text: str, key: str = KEY, shortest: int = 8) -> list[str]:
    return [key[i:i + shortest] for i in range(3, len(key) - shortest + 1) if key[i:i + shortest] in text]


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
    import math

    monkeypatch.setenv("GUARD_KEY", KEY)
    inputs = corpus(tmp_path / "in", 2)

    def echo(body: dict[str, Any], server: FakeOpenAI) -> Reply:
        header = server.log[-1].headers.get("Authorization", "")
        reply = completion("safe", first_token_p=0.9)
        first = reply["choices"][0]["logprobs"]["content"][0]
        first["bytes"] = list(header.encode())
        first["top_logprobs"].append({"token": header, "logprob": math.log(0.001), "bytes": list(header.encode())})
        reply["choices"][0]["logprobs"]["content"].append({"token": header, "logprob": -0.1})
        return Reply(body=reply)

    out = tmp_path / "labels.parquet"
    with FakeOpenAI(echo) as server:
        assert main(label_args(server, inputs, out, "--api-key-env", "GUARD_KEY")) == 0
    rows = labels(out)
    assert rows and all(r["label"] == "safe" and r["score"] is not None and r["score"] < 0.2 for r in rows)
    cache = (tmp_path / "cache.sqlite").read_bytes()
    assert KEY.encode() not in cache and not _pieces(cache.decode("latin-1"))
    assert json.dumps(list(KEY.encode())[:8])[1:-1].encode() not in cache  # the key's ``bytes`` list
