"""The ``[inference]`` lexicon of role inference (:mod:`pipeline.analysis.inference`): tool and
argument names split into tokens, and the policy's word lists and sink/source rules parsed.

Mechanism only: which words are verbs, nouns, sources and sinks is policy data
(``[inference]`` in ``pipeline/policy/default.toml``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pipeline.analysis.inference_values import ValueRule

__all__ = ["Lexicon", "SinkRule", "SourceRule", "lexicon", "tokenise", "forms", "joined", "has"]

_CAMEL_LOWER = re.compile(r"([a-z0-9])([A-Z])")
_CAMEL_ACRONYM = re.compile(r"([A-Z]+)([A-Z][a-z])")
_SPLIT = re.compile(r"[^a-z0-9]+")
MAX_NAME_CHARS = 256  # names are data: bound the work per name


def tokenise(name: str) -> tuple[str, ...]:
    """Lower-case tokens of a tool or argument name.

    ``GmailSendEmail`` -> gmail, send, email; ``HTTPRequest`` -> http, request;
    ``mcp__github__create_issue`` -> mcp, github, create, issue; ``fs.read-file`` ->
    fs, read, file.
    """
    text = _CAMEL_LOWER.sub(r"\1 \2", _CAMEL_ACRONYM.sub(r"\1 \2", name[:MAX_NAME_CHARS]))
    return tuple(t for t in _SPLIT.split(text.lower()) if t)


def forms(token: str) -> tuple[str, ...]:
    """The token and its singular guesses (emails -> email, addresses -> address)."""
    out = [token]
    if len(token) > 3 and token.endswith("es"):
        out.append(token[:-2])
    if len(token) > 3 and token.endswith("s"):
        out.append(token[:-1])
    return tuple(out)


def joined(tokens: Iterable[str]) -> tuple[str, ...]:
    """The tokens and each adjacent pair written as one word: a word of the lexicon that
    the name spells in two cased parts still counts (``YouTubeSearch`` -> youtube,
    ``GitHubGetUserDetails`` -> github, ``get_user_name`` -> username)."""
    toks = tuple(tokens)
    return toks + tuple(a + b for a, b in zip(toks, toks[1:]))


def has(tokens: Iterable[str], words: frozenset[str], join: bool = True) -> bool:
    return any(f in words for t in (joined(tokens) if join else tokens) for f in forms(t))


@dataclass(frozen=True)
class SinkRule:
    """A sink kind chosen by a verb, optionally only together with one of some nouns in the
    name or (``arg_nouns``) in an argument's name; ``integrity``: what its output carries."""

    sink: str
    verbs: frozenset[str]
    nouns: frozenset[str]
    arg_nouns: frozenset[str] = frozenset()
    integrity: str | None = None


@dataclass(frozen=True)
class SourceRule:
    """A label brought in by a token; ``weak`` rules count only when no other rule matched."""

    tokens: frozenset[str]
    conf: str | None
    integ: str | None
    weak: bool


@dataclass(frozen=True)
class Lexicon:
    """The ``[inference]`` policy section, parsed."""

    read_verbs: frozenset[str]
    noun_verbs: frozenset[str]
    write_verbs: frozenset[str]
    exec_verbs: frozenset[str]
    shell_tokens: frozenset[str]
    code_tokens: frozenset[str]
    process_tokens: frozenset[str]
    shell_args: tuple[str, ...]
    code_args: tuple[str, ...]
    resource_args: frozenset[str]
    destination_args: frozenset[str]
    control_args: frozenset[str]
    sinks: tuple[SinkRule, ...]
    sources: tuple[SourceRule, ...]
    values: tuple[ValueRule, ...] = ()
    content_args: frozenset[str] = frozenset()
    read_write_tokens: frozenset[str] = frozenset()
    publish_destination_args: frozenset[str] = frozenset()

    @property
    def verbs(self) -> frozenset[str]:
        """Every token that can be a tool's verb."""
        sink_verbs = frozenset(v for r in self.sinks for v in r.verbs)
        return self.read_verbs | self.write_verbs | self.exec_verbs | sink_verbs


def _words(data: dict[str, Any], key: str) -> frozenset[str]:
    return frozenset(str(w).lower() for w in data.get(key, []))


def lexicon(data: dict[str, Any]) -> Lexicon:
    """Parse the ``[inference]`` table (already validated by the policy loader)."""
    return Lexicon(
        read_verbs=_words(data, "read_verbs"), noun_verbs=_words(data, "noun_verbs"), write_verbs=_words(data, "write_verbs"),
        exec_verbs=_words(data, "exec_verbs"), shell_tokens=_words(data, "shell_tokens"),
        code_tokens=_words(data, "code_tokens"), process_tokens=_words(data, "process_tokens"),
        shell_args=tuple(str(a) for a in data.get("shell_args", [])),
        code_args=tuple(str(a) for a in data.get("code_args", [])),
        resource_args=_words(data, "resource_args"), destination_args=_words(data, "destination_args"),
        control_args=_words(data, "control_args") | _words(data, "destination_args"),
        sinks=tuple(SinkRule(str(r["sink"]), _words(r, "verbs"), _words(r, "nouns"), _words(r, "arg_nouns"),
                             r.get("integrity")) for r in data.get("sinks", [])),
        sources=tuple(SourceRule(_words(r, "tokens"), r.get("confidentiality"), r.get("integrity"),
                                 bool(r.get("weak", False))) for r in data.get("sources", [])),
        values=tuple(ValueRule(str(r["name"]), str(r["pattern"]), _words(r, "roles"), r.get("sink"))
                     for r in data.get("values", [])),
        content_args=_words(data, "content_args"),
        read_write_tokens=_words(data, "read_write_tokens"),
        publish_destination_args=_words(data, "publish_destination_args"),
    )
