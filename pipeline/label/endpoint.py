"""The endpoint's URLs for the label client: the chat-completions URL of a base URL, the
form that may be printed (no query, no credentials), and whether a request may go
through the environment's proxy (only https to another machine).
"""

from __future__ import annotations

import httpx


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
