"""The record contract between input readers/adapters and the SQL stages."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

# a key written as `.key` in a field path; any other key is written quoted: `["a key"]`
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# a key longer than this is cut in a path (attrition details are cut at 500 characters)
_PATH_KEY_CHARS = 40


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


def non_finite_path(record: Any) -> str | None:
    """The path (``$.messages[2].tool_calls[0]...``) of the first value of ``record``, in
    document order, that is a float JSON cannot write (NaN, +-Infinity: a source number
    out of a double's range, such as ``1e999``, parses as infinity); None when there is none.
    Iterative: a record nested as deep as the parser allows is walked without recursion."""
    stack: list[tuple[str, Any]] = [("$", record)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            return path
        if isinstance(value, dict):
            items = [(f"{path}{_path_key(key)}", item) for key, item in value.items()]
        elif isinstance(value, (list, tuple)):
            items = [(f"{path}[{i}]", item) for i, item in enumerate(value)]
        else:
            continue
        stack.extend(reversed(items))
    return None


def _path_key(key: Any) -> str:
    text = str(key)
    if _PLAIN_KEY.fullmatch(text):
        return f".{text[:_PATH_KEY_CHARS]}"
    return f"[{json.dumps(text[:_PATH_KEY_CHARS], ensure_ascii=False)}]"
