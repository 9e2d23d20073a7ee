"""The persistent reply cache of ``litmus-gate label`` (one SQLite file).

A reply is keyed by (model, prompt_sha256, content_sha256), where content_sha256 is the
SHA-256 of the rendered request messages (the step, its task and its context), so a
rerun, a ``--resume`` after a kill, or a later run over an overlapping corpus sends no
request whose reply is already stored. Every reply received is committed at once (WAL
journal), so a kill loses at most the requests in flight. Replies are stored whatever
they say (an unparseable reply is the model's answer); a request that failed is not
stored, so the next run asks again. The file holds replies, never the API key.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.errors import UsageError

_SCHEMA = """
create table if not exists replies (
    key text primary key,
    model text not null,
    prompt_sha256 text not null,
    content_sha256 text not null,
    reply text,
    logprobs text,
    prompt_tokens integer not null,
    completion_tokens integer not null
)
"""


@dataclass(frozen=True)
class CachedReply:
    """A stored reply: its text, the first tokens' log-probabilities and token usage."""

    reply: str | None
    logprobs: Any
    prompt_tokens: int
    completion_tokens: int


def default_cache_path() -> Path:
    """``$XDG_CACHE_HOME/litmus-gate/label-cache.sqlite`` (``~/.cache`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "litmus-gate" / "label-cache.sqlite"


def content_sha256(messages: list[dict[str, str]]) -> str:
    """The hash of rendered request messages (canonical JSON)."""
    text = json.dumps(messages, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def cache_key(model: str, prompt_sha: str, content_sha: str) -> str:
    """The cache key of one request."""
    return hashlib.sha256("\0".join((model, prompt_sha, content_sha)).encode("utf-8")).hexdigest()


class ReplyCache:
    """Replies by key, in one SQLite file (created with its folder when missing)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._con = sqlite3.connect(str(path), timeout=30.0, isolation_level=None)
            self._con.execute("pragma journal_mode = wal")
            self._con.execute("pragma synchronous = normal")  # a process kill loses nothing committed
            self._con.execute(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise UsageError(f"label cache {path} cannot be opened: {exc}",
                             "pass another --cache FILE or remove this one") from exc

    def get(self, key: str) -> CachedReply | None:
        """The stored reply of ``key``, or None."""
        row = self._con.execute("select reply, logprobs, prompt_tokens, completion_tokens from replies "
                                "where key = ?", (key,)).fetchone()
        if row is None:
            return None
        return CachedReply(row[0], json.loads(row[1]) if row[1] is not None else None, int(row[2]), int(row[3]))

    def put(self, key: str, model: str, prompt_sha: str, content_sha: str, reply: CachedReply) -> None:
        """Store (or replace) the reply of ``key``, committed before returning."""
        self._con.execute(
            "insert or replace into replies values (?, ?, ?, ?, ?, ?, ?, ?)",
            (key, model, prompt_sha, content_sha, reply.reply,
             json.dumps(reply.logprobs) if reply.logprobs is not None else None,
             reply.prompt_tokens, reply.completion_tokens))

    def count(self) -> int:
        """Number of stored replies."""
        return int(self._con.execute("select count(*) from replies").fetchone()[0])

    def close(self) -> None:
        """Close the file."""
        self._con.close()
