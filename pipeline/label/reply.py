"""Parsing a guard model's reply into a label, a category and a score.

Two modes (``[parse] mode`` of the prompt file):

- ``regex``: ``pattern`` is searched in the reply text; its group ``label`` (or its
  first group) must be one of the ``safe`` / ``unsafe`` words (case-insensitive); a
  group ``category`` is kept when present (the Llama Guard convention: ``unsafe``, then a
  line such as ``S2,S16``). The score is P(unsafe) from the log-probabilities of the
  reply's first token when the endpoint returned them.
- ``json``: the reply (optionally inside a Markdown code fence) is a JSON object; the
  dotted path ``field`` holds the label word, ``score_field`` an optional probability
  unsafe and ``category_field`` an optional category.

A reply that does not fit gives no label and an error text: never a silent ``safe``.
Every string decoded from a JSON reply goes through the caller's ``redact`` before it
reaches the category or the error text: JSON escapes (``\\u0073k-...``) can spell the
API key so that only the decoded string shows it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pipeline.label.prompt import ParseSpec

MAX_REPLY_CHARS = 65_536  # replies are parsed and stored up to this length
_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)


@dataclass(frozen=True)
class Parsed:
    """What one reply says. ``label`` is None exactly when ``error`` is set."""

    label: str | None
    category: str | None
    score: float | None
    error: str | None


def _fail(error: str) -> Parsed:
    return Parsed(None, None, None, error)


def _word(value: str, spec: ParseSpec) -> str | None:
    word = value.strip().lower()
    if word in spec.unsafe:
        return "unsafe"
    if word in spec.safe:
        return "safe"
    return None


def _path(data: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[part]
    return data


def _probability(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if 0.0 <= value <= 1.0 else None


def score_from_logprobs(logprobs: Any, spec: ParseSpec) -> float | None:
    """P(unsafe) from the first non-blank token's log-probabilities, or None.

    Tokens that are a prefix of an unsafe word (``uns``, ``unsafe``) count for unsafe,
    prefixes of a safe word (``s``, ``safe``) for safe; P(unsafe) is normalised over
    both. Without ``top_logprobs`` the chosen token's own probability is used.
    """
    if not isinstance(logprobs, list):
        return None
    first = next((t for t in logprobs if isinstance(t, dict) and str(t.get("token", "")).strip()), None)
    if first is None:
        return None

    def side(token: Any) -> str | None:
        word = str(token).strip().lower()
        is_unsafe = bool(word) and any(u.startswith(word) for u in spec.unsafe)
        is_safe = bool(word) and any(s.startswith(word) for s in spec.safe)
        return "unsafe" if is_unsafe and not is_safe else "safe" if is_safe and not is_unsafe else None

    def prob(entry: dict[str, Any]) -> float | None:
        lp = entry.get("logprob")
        if isinstance(lp, bool) or not isinstance(lp, (int, float)) or math.isnan(lp) or lp > 0:
            return None
        return math.exp(lp)

    top = first.get("top_logprobs")
    if isinstance(top, list) and top:
        mass = {"safe": 0.0, "unsafe": 0.0}
        for entry in top:
            if isinstance(entry, dict) and (s := side(entry.get("token"))) and (p := prob(entry)) is not None:
                mass[s] += p
        total = mass["safe"] + mass["unsafe"]
        return min(1.0, max(0.0, mass["unsafe"] / total)) if total > 0 else None
    chosen, p = side(first.get("token")), prob(first)
    if chosen is None or p is None:
        return None
    return p if chosen == "unsafe" else 1.0 - p


def _regex(text: str, logprobs: Any, spec: ParseSpec) -> Parsed:
    compiled = re.compile(spec.pattern)
    match = compiled.search(text)
    if match is None:
        return _fail("unparseable reply: the [parse] pattern did not match")
    raw = match.group("label") if "label" in compiled.groupindex else match.group(1)
    label = _word(raw or "", spec)
    if label is None:
        return _fail(f"unparseable reply: {str(raw)[:40]!r} is neither a safe nor an unsafe word")
    category = match.group("category") if "category" in compiled.groupindex else None
    return Parsed(label, category.strip() if category else None, score_from_logprobs(logprobs, spec), None)


def _json(text: str, spec: ParseSpec, redact: Callable[[str], str]) -> Parsed:
    fenced = _FENCE.match(text)
    try:
        data = json.loads(fenced.group(1) if fenced else text)
    except (ValueError, RecursionError):  # RecursionError: arrays nested deeper than the stack
        return _fail("unparseable reply: not JSON")
    value = _path(data, spec.field)
    if not isinstance(value, str):
        return _fail(f"unparseable reply: JSON field {spec.field!r} is missing or not a string")
    label = _word(value, spec)
    if label is None:
        return _fail(f"unparseable reply: {redact(value)[:40]!r} is neither a safe nor an unsafe word")
    score = _probability(_path(data, spec.score_field)) if spec.score_field else None
    category = _path(data, spec.category_field) if spec.category_field else None
    if isinstance(category, list):
        category = ",".join(str(c) for c in category)
    return Parsed(label, redact(str(category)) if category is not None else None, score, None)


def parse_reply(content: str | None, logprobs: Any, spec: ParseSpec,
                redact: Callable[[str], str] = lambda text: text) -> Parsed:
    """The label a reply gives, or an error text when it gives none; ``redact`` takes
    the API key out of a string decoded from a JSON reply."""
    if content is None or not content.strip():
        return _fail("empty reply")
    text = content[:MAX_REPLY_CHARS]
    return _regex(text, logprobs, spec) if spec.mode == "regex" else _json(text, spec, redact)
