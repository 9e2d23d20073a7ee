"""The record contract between input readers/adapters and the SQL stages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class RawRecord:
    """One input record, before parsing.

    ``text`` holds one canonical JSON object (SPEC section 8) as a string, or None when
    the record was rejected before parsing; then ``reject_reason`` says why.
    """

    source_file: str
    source_line: int
    text: str | None
    reject_reason: str | None = None
    reject_detail: str | None = None
    fmt: str = "canonical"


def rejected(source_file: str, source_line: int, reason: str, detail: str, fmt: str) -> RawRecord:
    """A record that never reaches the SQL stages (malformed, too large, ...)."""
    return RawRecord(source_file, source_line, None, reason, detail[:500], fmt)


def canonical_message(role: str, content: Any = None, **extra: Any) -> dict[str, Any]:
    """Build one canonical message dict (helper for adapters)."""
    msg: dict[str, Any] = {"role": role, "content": content}
    msg.update({k: v for k, v in extra.items() if v is not None})
    return msg
