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
  client returns (replies, error texts) has the key replaced by ``[redacted]``: as it is
  and as JSON, Python and URLs escape it, replaced in the whole text BEFORE the text is
  cut (a cut must never leave a piece of the key), and so is any run of ``KEY_RUN_CHARS``
  or more of its consecutive characters (a server that echoes the header cut short, or
  spells its first characters as JSON ``\\u`` escapes), also when the run is spelled
  with such escapes (the text is then given with those escapes decoded).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import re
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

import httpx

from pipeline.errors import EndpointError, UsageError
from pipeline.label.body import ACCEPT_ENCODING, read_body
from pipeline.label.cache import CachedReply
from pipeline.label.reply import MAX_REPLY_CHARS

RETRY_STATUSES = frozenset({408, 409, 425, 429})
FATAL_STATUSES = {401: "the endpoint refused the API key", 403: "the endpoint refused the API key",
                  404: "no such endpoint or model"}
LOGPROB_TOKENS = 4  # first reply tokens whose log-probabilities are kept
TOP_LOGPROBS = 20  # alternatives kept per token (the most the OpenAI API returns)
MAX_TOKEN_CHARS = 200  # a token's text kept (a token is a few characters; a hostile one is not)
MAX_RESPONSE_BYTES = 4 * 2**20  # a response body past this (compressed or not) is an error, never held whole
REDACTED = "[redacted]"
# a run of this many consecutive characters of the key, or more, is taken for the key,
# cut (a server's echo cut short, or with its first characters escaped); a shorter key is
# only ever replaced whole. Longer than the public prefixes keys share (`sk-proj-`,
# `sk-ant-api03-`: 8-13 characters), so another key's prefix in a reply stays as it is
KEY_RUN_CHARS = 16
# a JSON escape of a printable ASCII character other than `"` and `\` (`\u0073`, `\/`),
# behind any number of backslashes (an escape escaped again): inside a JSON string the
# character itself means the same
_ASCII_ESCAPE = re.compile(r"\\+(?:u00([2-7][0-9a-fA-F])|(/))")
# how much of an error body or exception text an error message keeps
SNIPPET_CHARS = 200


def key_forms(key: str) -> tuple[str, ...]:
    """The texts a server or a library may show ``key`` as: itself, JSON-escaped (also
    with ``\\/``), as Python's ``repr`` escapes it, percent-encoded; longest first."""
    json_form = json.dumps(key)[1:-1]
    forms = {key, json_form, json_form.replace("/", "\\/"), json.dumps(key, ensure_ascii=False)[1:-1],
             repr(key)[1:-1], repr(key.encode("utf-8", "surrogatepass"))[2:-1], urllib.parse.quote(key, safe="")}
    return tuple(sorted((f for f in forms if f), key=lambda f: (-len(f), f)))


def _runs(text: str, form: str) -> list[tuple[int, int]]:
    """The spans of ``text`` that are runs of ``KEY_RUN_CHARS`` or more consecutive
    characters of ``form``. Each such run holds a whole block ``form[j:j + step]`` (j a
    multiple of ``step``): found with ``str.find``, then grown both ways."""
    step = KEY_RUN_CHARS // 2
    spans: list[tuple[int, int]] = []
    grown: dict[int, int] = {}  # text index - form index of a run: where the last one found ends
    for j in range(0, len(form) - step + 1, step):
        block, start = form[j:j + step], 0
        while (t := text.find(block, start)) >= 0:
            start, d = t + 1, t - j
            if t < grown.get(d, -1):
                continue  # inside a run found already
            a, b = t, t + step
            while a > 0 and a - 1 - d >= 0 and text[a - 1] == form[a - 1 - d]:
                a -= 1
            while b < len(text) and b - d < len(form) and text[b] == form[b - d]:
                b += 1
            grown[d] = b
            if b - a >= KEY_RUN_CHARS:
                spans.append((a, b))
    return spans


def _redacted(text: str, forms: tuple[str, ...]) -> str:
    for form in forms:
        text = text.replace(form, REDACTED)
    for form in forms:
        if len(form) <= KEY_RUN_CHARS:
            continue
        merged: list[list[int]] = []
        for a, b in sorted(_runs(text, form)):
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        pieces, end = [], 0
        for a, b in merged:
            pieces += [text[end:a], REDACTED]
            end = b
        text = "".join(pieces) + text[end:]
    return text


def _unescape(match: re.Match[str]) -> str:
    char = "/" if match[2] else chr(int(match[1], 16))
    return match[0] if char in '"\\\x7f' else char


def redact(text: str, forms: tuple[str, ...], limit: int | None = None) -> str:
    """``text`` without the key (given as :func:`key_forms`), then cut to ``limit``
    characters: every form replaced by ``[redacted]``, and so is every run of
    ``KEY_RUN_CHARS`` or more consecutive characters of a form. When the text with its
    JSON escapes of printable characters decoded (``\\u0073\\u006b-...``) holds the key
    that the text does not, that decoded text is the one returned, redacted."""
    if not forms:
        return text if limit is None else text[:limit]
    text = _redacted(text, forms)
    if "\\" in text and (plain := _ASCII_ESCAPE.sub(_unescape, text)) != text:
        if (cleaned := _redacted(plain, forms)) != plain:
            text = cleaned
    return text if limit is None else text[:limit]


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


def completions_url(endpoint: str) -> str:
    """The chat-completions URL of a base URL (``http://host:8000/v1``) or a full one."""
    base = endpoint.rstrip("/")
    path = httpx.URL(base).path.rstrip("/")
    return base if path.endswith("/chat/completions") else f"{base}/chat/completions"


def is_loopback(host: str) -> bool:
    """Whether ``host`` (as :class:`httpx.URL` gives it) is this machine: ``localhost``
    or a loopback address."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def env_proxies(url: httpx.URL) -> bool:
    """Whether a request to ``url`` may go through the environment's proxy: only over
    https (the proxy sees a CONNECT tunnel, never the key) to another machine."""
    return url.scheme == "https" and not is_loopback(url.host)


def public_url(endpoint: str) -> str:
    """The endpoint as it may be printed: scheme, host, port and path, no query."""
    url = httpx.URL(endpoint)
    return str(url.copy_with(query=None, fragment=None, username=None, password=None))


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

    def _reply(self, response: Answer) -> tuple[CachedReply | None, str | None]:
        try:
            data = json.loads(response.content)
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

        text = self.redact(content, MAX_REPLY_CHARS) if content is not None else None
        return CachedReply(text, self._logprobs(tokens), count("prompt_tokens"), count("completion_tokens")), None

    def _logprobs(self, tokens: Any) -> list[dict[str, Any]] | None:
        """What the cache keeps of the log-probabilities: of the first ``LOGPROB_TOKENS``
        entries only what scoring reads (each token, redacted, and its number; the same of
        at most ``TOP_LOGPROBS`` alternatives). A server's other fields (``bytes``), and a
        key it echoed in a token, never reach the cache."""
        def entry(e: dict[str, Any]) -> dict[str, Any]:
            lp = e.get("logprob")
            number = lp if isinstance(lp, (int, float)) and not isinstance(lp, bool) else None
            # redacted whole, then cut: a key the cut would leave a stub of is gone first
            return {"token": self.redact(str(e.get("token", "")), MAX_TOKEN_CHARS), "logprob": number}

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
                    reply, error = self._reply(response)
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
