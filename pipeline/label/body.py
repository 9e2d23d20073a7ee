"""A response body of ``litmus-gate label`` read within a byte bound, also when it is
compressed.

httpx decompresses each network chunk whole before the reader sees it: 64 KiB of gzip
can be 64 MiB, a zstd frame far more, all in memory before a bound on the decoded size
could be checked. Here only gzip and deflate are asked for (:data:`ACCEPT_ENCODING`), the
raw bytes are read, and they are decompressed at most ``limit`` + 1 bytes at a time
(zlib's ``max_length``). A body in any other Content-Encoding (one not asked for, or
several) is kept as it came, as httpx keeps an encoding it does not know: a reply then
fails to parse as JSON, and the status code still counts.
"""

from __future__ import annotations

import zlib

import httpx

ACCEPT_ENCODING = "gzip, deflate"


class _Inflater:
    """Decompresses a gzip or deflate body chunk by chunk, within a bound."""

    def __init__(self, encoding: str) -> None:
        self._raw_deflate_next = encoding == "deflate"  # zlib-wrapped, else raw deflate (as httpx)
        self._z = zlib.decompressobj(zlib.MAX_WBITS | 16 if encoding != "deflate" else zlib.MAX_WBITS)

    def feed(self, data: bytes, room: int) -> bytes:
        """At most ``room`` + 1 bytes decompressed from ``data`` (more than ``room``: the
        body is over its bound, and the rest of ``data`` is left undecompressed)."""
        try:
            out = self._z.decompress(data, room + 1)
        except zlib.error as exc:
            if self._raw_deflate_next:
                self._raw_deflate_next = False
                self._z = zlib.decompressobj(-zlib.MAX_WBITS)
                return self.feed(data, room)
            raise httpx.DecodingError(f"{exc}") from exc
        self._raw_deflate_next = False
        return out


async def read_body(response: httpx.Response, limit: int) -> bytes | None:
    """The body of ``response`` (a stream), decompressed when gzip or deflate; None once
    it is past ``limit`` bytes, compressed or decompressed (never more is held).
    Raises :class:`httpx.DecodingError` on a corrupt compressed body."""
    encoding = response.headers.get("content-encoding", "").strip().lower()
    inflater = _Inflater(encoding) if encoding in ("gzip", "x-gzip", "deflate") else None
    chunks: list[bytes] = []
    size = received = 0
    async for data in response.aiter_raw():
        received += len(data)
        if inflater is not None:
            data = inflater.feed(data, limit - size)
        size += len(data)
        if size > limit or received > limit:
            return None
        chunks.append(data)
    return b"".join(chunks)
