"""Keeping the API key out of every text the label client returns (replies, tokens, error
texts): the key is replaced by ``[redacted]`` as it is and as JSON, Python and URLs
escape it, in the whole text BEFORE the text is cut (a cut must never leave a piece of
the key), and so is any run of ``KEY_RUN_CHARS`` or more of its consecutive characters
(a server that echoes the header cut short, or spells its first characters as JSON
``\\u`` escapes), also when the run is spelled with such escapes (the text is then given
with those escapes decoded).
"""

from __future__ import annotations

import json
import re
import urllib.parse

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
