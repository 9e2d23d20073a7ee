"""The chat-completions HTTP client of ``litmus-gate label`` (httpx, asyncio).

- **Timeouts**: each attempt is bounded by ``timeout`` seconds in total (connect, send
  and read together), whatever the server trickles back, and by what is left of the
  request's ``budget``.
- **Retries**: HTTP 408, 409, 425, 429 and 5xx, timeouts and connection errors are
  retried with exponential backoff and jitter, at most ``max_retries`` times and within
  ``budget`` seconds per request. A ``Retry-After`` header (seconds or an HTTP date) is
  honoured, and it pauses every request of the client, not only the one that got it,
  so a 429 storm is not hammered from all connections at once. A ``Retry-After`` (or
  another request's pause) past the remaining budget ends the request at once.
- **Fatal answers**: 401, 403 (the key) and 404 (the URL or the model) would fail every
  request: they stop the command with an :class:`EndpointError` instead.
- **Bodies**: a response body past ``MAX_RESPONSE_BYTES``, compressed or decompressed,
  is an error and never held whole (:mod:`pipeline.label.body`).
- **Proxies**: only a remote https endpoint follows the environment's proxy variables
  (``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY``: the proxy sees a CONNECT, the key
  travels inside TLS). A plain-http endpoint is reached directly (a proxy would read the
  key and the transcripts), and so is this machine (a proxy cannot reach its loopback).
- **Secrets**: the key travels only in the ``Authorization`` header; every text the
  client returns (replies, error texts) has the key replaced by ``[redacted]`` before
  the text is cut (:mod:`pipeline.label.redaction`).

The endpoint's URLs are in :mod:`pipeline.label.endpoint`; a 200 answer's body is read
into a cached reply by :mod:`pipeline.label.completion`.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from pipeline.errors import EndpointError, UsageError
from pipeline.label.body import ACCEPT_ENCODING, read_body
from pipeline.label.cache import CachedReply
from pipeline.label.completion import read_completion
from pipeline.label.endpoint import completions_url, env_proxies, public_url
from pipeline.label.redaction import key_forms, redact

RETRY_STATUSES = frozenset({408, 409, 425, 429})
FATAL_STATUSES = {401: "the endpoint refused the API key", 403: "the endpoint refused the API key",
                  404: "no such endpoint or model"}
MAX_RESPONSE_BYTES = 4 * 2**20  # a response body past this (compressed or not) is an error, never held whole
# how much of an error body or exception text an error message keeps
SNIPPET_CHARS = 200


@dataclass(frozen=True)
class Answer:
    """An HTTP response read in full (bounded by MAX_RESPONSE_BYTES)."""

    status_code: int
    headers: httpx.Headers
    content: bytes

    @property
    def text(self) -> str:
        """The body as text (undecodable bytes replaced)."""
        return self.content.decode("utf-8", "replace")


@dataclass(frozen=True)
class RetryPolicy:
    """Per-request limits."""

    timeout: float = 60.0  # seconds per attempt, in total
    max_retries: int = 5  # attempts = 1 + max_retries at most
    budget: float = 300.0  # seconds per request, attempts and waits included
    backoff: float = 0.5  # first backoff in seconds, doubled per retry
    backoff_max: float = 30.0


@dataclass(frozen=True)
class Outcome:
    """One request's result: a reply, or the error that ended it."""

    reply: CachedReply | None
    error: str | None
    attempts: int


@dataclass
class ClientStats:
    """Counters over all requests (for the closing summary)."""

    attempts: int = 0
    retries: int = 0
    by_status: dict[str, int] = field(default_factory=dict)


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """A ``Retry-After`` header in seconds (delta seconds or an HTTP date), or None."""
    if not value:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    return max(0.0, seconds) if seconds == seconds else None


class ChatClient:
    """Sends chat-completions requests with bounded connections, retries and timeouts."""

    def __init__(self, endpoint: str, api_key: str | None, concurrency: int, retry: RetryPolicy,
                 api_key_env: str = "OPENAI_API_KEY") -> None:
        self.url = completions_url(endpoint)
        self.retry = retry
        self.stats = ClientStats()
        self._key = api_key or None
        self._forms = key_forms(self._key) if self._key else ()
        self._key_env = api_key_env
        self._not_before = 0.0
        headers = {"Accept-Encoding": ACCEPT_ENCODING}  # only what read_body decompresses within its bound
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        # one single-connection client per worker slot: httpcore's shared pool costs
        # O(connections) per request, which halved throughput at 32 connections
        try:
            self._http = [httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(retry.timeout),
                                            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
                                            trust_env=env_proxies(httpx.URL(self.url)))
                          for _ in range(concurrency)]
        except (ImportError, ValueError) as exc:  # a socks:// or ftp:// proxy (httpx masks its password)
            raise UsageError(f"the proxy the environment names for {public_url(self.url)} cannot be used: {exc}",
                             "fix HTTPS_PROXY / ALL_PROXY, or exclude the host with NO_PROXY") from exc

    async def aclose(self) -> None:
        """Close every connection."""
        for client in self._http:
            await client.aclose()

    def redact(self, text: str, limit: int | None = None) -> str:
        """``text`` without the API key (a server may echo the header back), cut to
        ``limit`` characters after the key is gone (:func:`redact`)."""
        return redact(text, self._forms, limit)

    def _count(self, what: str) -> None:
        self.stats.by_status[what] = self.stats.by_status.get(what, 0) + 1

    def _backoff(self, retry_no: int) -> float:
        return min(self.retry.backoff_max, self.retry.backoff * 2 ** retry_no) * random.uniform(0.5, 1.0)

    async def _attempt(self, body: dict[str, Any], slot: int, left: float) -> tuple[Answer | None, str | None]:
        """One attempt, within ``timeout`` and the ``left`` seconds of the request's budget."""
        limit = min(self.retry.timeout, left)
        self.stats.attempts += 1
        try:
            async with asyncio.timeout(limit):
                async with self._http[slot].stream("POST", self.url, json=body) as response:
                    content = await read_body(response, MAX_RESPONSE_BYTES)
                    if content is None:
                        self._count("too_large")
                        return None, f"response larger than {MAX_RESPONSE_BYTES} bytes"
                    return Answer(response.status_code, response.headers, content), None
        except (TimeoutError, httpx.TimeoutException):
            self._count("timeout")
            return None, f"timeout after {round(limit, 2):g} s"
        except httpx.HTTPError as exc:
            self._count(type(exc).__name__)
            return None, "connection error: " + self.redact(f"{type(exc).__name__}: {exc}", SNIPPET_CHARS)

    async def complete(self, body: dict[str, Any], slot: int = 0) -> Outcome:
        """One request with retries, on worker slot ``slot`` (0 <= slot < concurrency, one
        request at a time per slot); raises EndpointError on 401/403/404."""
        started = time.monotonic()
        deadline = started + self.retry.budget
        attempts, error = 0, "not sent"

        def spent(why: str) -> Outcome:
            return Outcome(None, f"{error} (gave up after {attempts} attempts: {why} the {self.retry.budget:g} s "
                                 "retry budget)", attempts)

        while True:
            pause = self._not_before - time.monotonic()  # another request's Retry-After
            if pause > 0:
                if time.monotonic() + pause >= deadline:
                    return spent("the endpoint's Retry-After pause exceeds")
                await asyncio.sleep(pause)
            if (left := deadline - time.monotonic()) <= 0:
                return spent("no time is left of")
            attempts += 1
            response, error = await self._attempt(body, slot, left)
            retry_after = None
            if response is not None:
                status = response.status_code
                self._count(str(status))
                if status == 200:
                    reply, error = read_completion(response.content, self._forms)
                    return Outcome(reply, error, attempts)
                snippet = self.redact(response.text, SNIPPET_CHARS).replace("\n", " ").strip()
                if status in FATAL_STATUSES:
                    hint = ((f"check the key in ${self._key_env}" if self._key else
                             "no key was sent: name its variable with --api-key-env") if status in (401, 403)
                            else "check --endpoint (the base URL, e.g. http://host:8000/v1) and --model")
                    raise EndpointError(f"{FATAL_STATUSES[status]}: HTTP {status} from {public_url(self.url)}"
                                        + (f": {snippet}" if snippet else ""), hint)
                error = f"HTTP {status}" + (f": {snippet}" if snippet else "")
                if status not in RETRY_STATUSES and status < 500:
                    return Outcome(None, error, attempts)
                retry_after = retry_after_seconds(response.headers.get("retry-after"))
            elapsed = time.monotonic() - started
            if elapsed >= self.retry.budget:  # the attempt ran until the end of the budget
                return spent("no time is left of")
            if attempts > self.retry.max_retries:
                return Outcome(None, f"{error} (gave up after {attempts} attempts)", attempts)
            wait = retry_after if retry_after is not None else self._backoff(attempts - 1)
            if elapsed + wait > self.retry.budget:
                why = f"Retry-After {retry_after:g} s" if retry_after is not None else "the next backoff"
                return Outcome(None, f"{error} (gave up after {attempts} attempts: {why} exceeds the "
                                     f"{self.retry.budget:g} s retry budget)", attempts)
            if retry_after is not None:
                self._not_before = max(self._not_before, time.monotonic() + retry_after)
            self.stats.retries += 1
            await asyncio.sleep(wait)
