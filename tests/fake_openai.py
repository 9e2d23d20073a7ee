"""A scriptable OpenAI-compatible chat-completions server on 127.0.0.1 (stdlib
``http.server`` in a thread), for the tests and ``bench/label.py``. No other network.

A *responder* maps each request to a :class:`Reply` (status, body, headers, delay, or
``hold`` until :meth:`FakeOpenAI.release` is called). Every request is logged with its
body hash, arrival and reply times, so tests can check concurrency, retries and that no
request is repeated.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """What the fake server answers to one request."""

    status: int = 200
    body: Any = None  # dict -> JSON, str/bytes -> raw
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    hold: bool = False  # wait for FakeOpenAI.release() before answering


@dataclass
class Logged:
    """One request as the server saw it."""

    body_sha: str
    body: dict[str, Any]
    headers: dict[str, str]
    received: float
    status: int | None = None
    replied: float | None = None  # set once the reply was fully written


def completion(content: str | None, first_token_p: float | None = None, usage: tuple[int, int] = (100, 2)) -> dict:
    """A chat completion whose reply is ``content``; with ``first_token_p``, the first
    token carries log-probabilities (P(content's first word) = first_token_p)."""
    choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": content},
                              "finish_reason": "stop"}
    if first_token_p is not None and content:
        word = content.split()[0]
        other = "safe" if word == "unsafe" else "unsafe"
        choice["logprobs"] = {"content": [{"token": word, "logprob": math.log(first_token_p), "top_logprobs": [
            {"token": word, "logprob": math.log(first_token_p)},
            {"token": other, "logprob": math.log(max(1e-9, 1 - first_token_p))}]}]}
    return {"id": "chatcmpl-fake", "object": "chat.completion", "model": "fake", "choices": [choice],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}}


def step_of(body: dict[str, Any]) -> str:
    """The STEP TO ASSESS section of a request made with the bundled prompt."""
    text = "\n".join(m.get("content", "") for m in body.get("messages", []))
    start, end = text.find("<BEGIN STEP TO ASSESS>"), text.find("<END STEP TO ASSESS>")
    return text[start + len("<BEGIN STEP TO ASSESS>"):end].strip() if start >= 0 <= end else text


def marker_rule(marker: str, p: float = 0.9) -> Callable[[dict[str, Any], "FakeOpenAI"], Reply]:
    """A responder: ``unsafe`` (category S16) when the judged step contains ``marker``."""
    def respond(body: dict[str, Any], server: "FakeOpenAI") -> Reply:
        if marker in step_of(body):
            return Reply(body=completion("unsafe\nS16", p))
        return Reply(body=completion("safe", p))
    return respond


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # a burst of new connections is not dropped
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:  # a client that hung up: not news
        pass


class FakeOpenAI:
    """The server; use as a context manager. ``url`` is the base URL (…/v1)."""

    def __init__(self, responder: Callable[[dict[str, Any], "FakeOpenAI"], Reply] | None = None,
                 latency: float = 0.0, log_bodies: bool = True) -> None:
        self.responder = responder or marker_rule("UNSAFE-MARKER")
        self.latency = latency
        self.log_bodies = log_bodies
        self.log: list[Logged] = []
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self._release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out as separate writes

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                server._handle(self, raw)

        self._httpd = _Server(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def _handle(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        entry = Logged(hashlib.sha256(raw).hexdigest(), body if self.log_bodies else {},
                       dict(handler.headers.items()), time.monotonic())
        with self.lock:
            self.log.append(entry)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            reply = self.responder(body, self)
            if reply.hold:
                self._release.wait(60)
            if reply.delay or self.latency:
                time.sleep(reply.delay or self.latency)
            payload = reply.body
            data = json.dumps(payload).encode() if isinstance(payload, (dict, list)) else \
                payload.encode() if isinstance(payload, str) else (payload or b"")
            handler.send_response(reply.status)
            for name, value in {"Content-Type": "application/json", **reply.headers}.items():
                handler.send_header(name, value)
            handler.send_header("Content-Length", str(len(data)))
            handler.send_header("X-Body-Sha", entry.body_sha)
            handler.end_headers()
            handler.wfile.write(data)
            handler.wfile.flush()
            entry.status = reply.status
            entry.replied = time.monotonic()
        except OSError:  # the client hung up (a timeout, a kill)
            pass
        finally:
            with self.lock:
                self.in_flight -= 1

    def release(self) -> None:
        """Answer every held request (and all later ones at once)."""
        self._release.set()

    def answered(self) -> list[Logged]:
        """Requests whose reply was fully written."""
        with self.lock:
            return [e for e in self.log if e.replied is not None]

    def __enter__(self) -> "FakeOpenAI":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        self._httpd.shutdown()
        self._httpd.server_close()
