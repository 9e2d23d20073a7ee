"""Reading a chat completion (an HTTP 200 body) into what the reply cache keeps: the
reply's text and at most ``LOGPROB_TOKENS`` log-probabilities, redacted
(:mod:`pipeline.label.redaction`) and cut, and the token counts of its ``usage``.
"""

from __future__ import annotations

import json
from typing import Any

from pipeline.label.cache import CachedReply
from pipeline.label.redaction import redact
from pipeline.label.reply import MAX_REPLY_CHARS

LOGPROB_TOKENS = 4  # first reply tokens whose log-probabilities are kept
TOP_LOGPROBS = 20  # alternatives kept per token (the most the OpenAI API returns)
MAX_TOKEN_CHARS = 200  # a token's text kept (a token is a few characters; a hostile one is not)


def read_completion(body: bytes, forms: tuple[str, ...]) -> tuple[CachedReply | None, str | None]:
    """The reply in a chat-completion ``body``, or the error that makes it none; every
    text kept has the key (given as :func:`pipeline.label.redaction.key_forms`) redacted."""
    try:
        data = json.loads(body)
        choice = data["choices"][0]
        message = choice["message"]
    except (ValueError, KeyError, IndexError, TypeError, RecursionError):  # nested past the stack: not JSON
        return None, "malformed response: not a chat completion (no choices[0].message)"
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):  # content parts
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    if content is not None and not isinstance(content, str):
        return None, "malformed response: message content is not text"
    logprobs = choice.get("logprobs") if isinstance(choice, dict) else None
    tokens = logprobs.get("content") if isinstance(logprobs, dict) else None
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}

    def count(name: str) -> int:
        value = usage.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0

    text = redact(content, forms, MAX_REPLY_CHARS) if content is not None else None
    return CachedReply(text, kept_logprobs(tokens, forms), count("prompt_tokens"), count("completion_tokens")), None


def kept_logprobs(tokens: Any, forms: tuple[str, ...]) -> list[dict[str, Any]] | None:
    """What the cache keeps of the log-probabilities: of the first ``LOGPROB_TOKENS``
    entries only what scoring reads (each token, redacted, and its number; the same of
    at most ``TOP_LOGPROBS`` alternatives). A server's other fields (``bytes``), and a
    key it echoed in a token, never reach the cache."""
    def entry(e: dict[str, Any]) -> dict[str, Any]:
        lp = e.get("logprob")
        number = lp if isinstance(lp, (int, float)) and not isinstance(lp, bool) else None
        # redacted whole, then cut: a key the cut would leave a stub of is gone first
        return {"token": redact(str(e.get("token", "")), forms, MAX_TOKEN_CHARS), "logprob": number}

    if not isinstance(tokens, list):
        return None
    kept = []
    for e in tokens[:LOGPROB_TOKENS]:
        if not isinstance(e, dict):
            continue
        item = entry(e)
        top = e.get("top_logprobs")
        if isinstance(top, list):
            item["top_logprobs"] = [entry(t) for t in top[:TOP_LOGPROBS] if isinstance(t, dict)]
        kept.append(item)
    return kept
