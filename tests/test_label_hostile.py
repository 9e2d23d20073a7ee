"""`litmus-gate label` attacked from outside: hostile replies (deep JSON nesting, control
characters in error bodies), key echoes the redaction missed (log-probability tokens,
JSON \\u escapes), redirects, SIGTERM."""

from __future__ import annotations

import json
import re
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
    from pipeline.label.client import key_forms, redact

    forms = key_forms(KEY)
    assert redact(f"x {KEY[5:]} y", forms) == "x [redacted] y"  # the key without its first characters
    assert redact(f"{_escaped(KEY)}", forms) == "\\u0073[redacted]"
    assert redact(f'"{_escaped(KEY, every=True)}" \\u0022', forms) == '"[redacted]" \\u0022'
    assert redact(f"{KEY[3:18]} {KEY[20:35]}", forms) == f"{KEY[3:18]} {KEY[20:35]}"  # 15: not the key
    assert redact("keep \\u0041 \\/ as they are", forms) == "keep \\u0041 \\/ as they are"
