"""Inspect AI logs (``.eval`` zip archives and ``.json`` EvalLog files) -> canonical records.

Read with the standard library only (no ``inspect_ai`` import). ``.eval`` archives hold
one ``samples/<id>_epoch_<n>.json`` member per sample; members are read in sorted name
order and ``source_line`` is the 1-based position in that order. Inspect writes zstd
members (zip method 93), which ``zipfile`` cannot read in Python 3.11: those are
decompressed with pyarrow's zstd codec, bounded by the declared size and CRC-checked.
For ``.json`` logs ``source_line`` is the 1-based index in ``samples``.

One trajectory per sample: id ``<eval_id or task>:<sample id>:epoch<n>``; suite = task
name. Messages map 1:1 (text blocks joined, reasoning dropped; ``attachment://``
references resolved, at most ``max_record_bytes`` of attachment text per sample: a
short reference repeated thousands of times would otherwise expand a small sample to
gigabytes before its size is checked); assistant ``tool_calls`` ``{id, function, arguments}`` become
canonical calls; a tool message's ``error`` ``{type, message}`` is kept as is (the
policy maps ``approval`` -> blocked, ``parsing``/``permission``/... -> failed).
"""

from __future__ import annotations

import json
import os
import struct
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pipeline.ingest.adapters._common import (
    AdapterError, Ctx, RecordTooLarge, assistant, require_dict, require_list, text_of, tool_call, tool_result,
)
from pipeline.ingest.adapters._io import Problem, decode_line, read_document
from pipeline.ingest.adapters._json_text import parse_json
from pipeline.ingest.adapters._session import text_size
from pipeline.ingest.records import canonical_message
from pipeline.storage import Location

ZSTD = 93
STDLIB_METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}
ATTACHMENT = "attachment://"


def _member(zf: zipfile.ZipFile, path: Path, info: zipfile.ZipInfo, limit: int) -> bytes | str:
    """Bytes of one archive member, or an error text."""
    if info.file_size > limit:
        return f"member {info.filename} larger than {limit} bytes"
    if info.flag_bits & 0x1:
        return f"member {info.filename} is encrypted"
    try:
        if info.compress_type in STDLIB_METHODS:
            with zf.open(info) as fh:
                data = fh.read(limit + 1)
        elif info.compress_type == ZSTD:
            import pyarrow as pa  # project dependency; only needed for zstd members

            with open(path, "rb") as fh:
                fh.seek(info.header_offset)
                header = fh.read(30)
                if len(header) < 30 or header[:4] != b"PK\x03\x04":
                    return f"member {info.filename}: bad local header"
                name_len, extra_len = struct.unpack("<HH", header[26:30])
                fh.seek(info.header_offset + 30 + name_len + extra_len)
                raw = fh.read(info.compress_size)
            data = pa.Codec("zstd").decompress(raw, decompressed_size=info.file_size, asbytes=True)
            if zlib.crc32(data) != info.CRC:
                return f"member {info.filename}: CRC mismatch"
        else:
            return f"member {info.filename}: unsupported zip compression method {info.compress_type}"
    except Exception as exc:  # noqa: BLE001 - any archive/codec failure rejects this member
        return f"member {info.filename}: {type(exc).__name__}: {exc}"
    if len(data) > limit:
        return f"member {info.filename} larger than {limit} bytes"
    return data


def _json_member(zf: zipfile.ZipFile, path: Path, info: zipfile.ZipInfo, limit: int, line: int) -> Any:
    data = _member(zf, path, info, limit)
    if isinstance(data, str):
        reason = "record_too_large" if "larger than" in data else "malformed_record"
        return Problem(line, reason, data)
    text = decode_line(data, line)
    return text if isinstance(text, Problem) else parse_json(text, line)


def _eval_spec(zf: zipfile.ZipFile, path: Path, limit: int) -> dict[str, Any]:
    names = set(zf.namelist())
    for name in ("header.json", "_journal/start.json"):
        if name in names:
            doc = _json_member(zf, path, zf.getinfo(name), limit, 1)
            if isinstance(doc, dict) and isinstance(doc.get("eval"), dict):
                return doc["eval"]
    return {}


def iter_samples(path: Location, max_record_bytes: int) -> Iterator[tuple[int, Any, dict[str, Any], int] | Problem]:
    """``(source_line, sample, eval spec, size of its JSON text)`` per sample of a ``.eval``
    or ``.json`` log.

    A ``.eval`` archive must be a local file (the reader copies remote ones first)."""
    file_limit = max_record_bytes * 8
    if path.name.lower().endswith(".eval"):
        if os.path.getsize(path) > file_limit:
            yield Problem(1, "record_too_large", f"file larger than {file_limit} bytes")
            return
        try:
            zf = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            yield Problem(1, "malformed_record", f"not a readable .eval archive: {exc}")
            return
        with zf:
            spec = _eval_spec(zf, path, max_record_bytes)
            members = sorted((i for i in zf.infolist()
                              if i.filename.startswith("samples/") and i.filename.endswith(".json")),
                             key=lambda i: i.filename)
            for line, info in enumerate(members, start=1):
                sample = _json_member(zf, path, info, max_record_bytes, line)
                yield sample if isinstance(sample, Problem) else (line, sample, spec, info.file_size)
        return
    text = read_document(path, file_limit)
    doc = text if isinstance(text, Problem) else parse_json(text, 1)
    if isinstance(doc, Problem):
        yield doc
        return
    if not isinstance(doc, dict) or not isinstance(doc.get("samples", []), list):
        yield Problem(1, "malformed_record", "Inspect log is not an object with a 'samples' array")
        return
    spec = doc.get("eval") if isinstance(doc.get("eval"), dict) else {}
    for line, sample in enumerate(doc.get("samples") or [], start=1):
        try:
            size = len(json.dumps(sample, ensure_ascii=False).encode("utf-8", "surrogatepass"))
        except (ValueError, RecursionError):
            size = 0  # conversion will reject it with a precise detail
        if size > max_record_bytes:
            yield Problem(line, "record_too_large", f"sample larger than {max_record_bytes} bytes")
        else:
            yield line, sample, spec, size


class _Attachments:
    """A sample's ``attachments``, resolved against a budget of expanded text."""

    def __init__(self, attachments: dict[str, Any], budget: int) -> None:
        self.attachments = attachments
        self.budget = budget
        self.left = budget

    def resolve(self, value: Any) -> Any:
        """``value`` with each ``attachment://`` reference replaced by its attachment."""
        if isinstance(value, str):
            key = value[len(ATTACHMENT):] if value.startswith(ATTACHMENT) else None
            if key is None or key not in self.attachments:
                return value
            self.left -= text_size(self.attachments[key])
            if self.left < 0:
                raise RecordTooLarge(f"attachment references expand the sample past {self.budget} bytes")
            return self.attachments[key]
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        return value


def _message(msg: dict[str, Any], i: int) -> dict[str, Any]:
    role = msg.get("role")
    text = text_of(msg.get("content"))
    if role == "assistant":
        calls = []
        for j, call in enumerate(require_list(msg.get("tool_calls") or [], f"messages[{i}].tool_calls")):
            call = require_dict(call, f"messages[{i}].tool_calls[{j}]")
            fn = call.get("function")
            if isinstance(fn, dict):  # OpenAI-shaped call inside an Inspect log
                calls.append(tool_call(call.get("id"), fn.get("name"), fn.get("arguments")))
            else:
                calls.append(tool_call(call.get("id"), fn, call.get("arguments", {})))
        return assistant(text, calls)
    if role == "tool":
        error = msg.get("error")
        if isinstance(error, dict):
            error = {"type": error.get("type"), "message": error.get("message")}
        return tool_result(msg.get("tool_call_id"), text, error)
    if not isinstance(role, str):
        raise AdapterError(f"messages[{i}] has no role")
    return canonical_message(role, text)


def convert(sample: Any, ctx: Ctx) -> dict[str, Any]:
    """Convert one Inspect sample; ``ctx.state['eval']`` holds the log's eval spec."""
    s = require_dict(sample, "sample")
    spec: dict[str, Any] = ctx.state.get("eval") or {}
    attachments = _Attachments(s.get("attachments") if isinstance(s.get("attachments"), dict) else {},
                               int(ctx.state.get("max_record_bytes", 32 * 2**20)))
    raw = require_list(s.get("messages"), "messages")
    messages = [_message(require_dict(attachments.resolve(m), f"messages[{i}]"), i)
                for i, m in enumerate(raw)]
    epoch = s.get("epoch", 1)
    prefix = spec.get("eval_id") or spec.get("task") or ctx.stem
    scores = s.get("scores") if isinstance(s.get("scores"), dict) else {}
    error = s.get("error")
    meta: dict[str, Any] = {
        "format": "inspect", "eval_id": spec.get("eval_id"), "run_id": spec.get("run_id"),
        "task": spec.get("task"), "task_id": spec.get("task_id"), "model": spec.get("model"),
        "sample_id": s.get("id"), "epoch": epoch,
        "scores": {k: v.get("value") if isinstance(v, dict) else v for k, v in scores.items()},
    }
    if isinstance(s.get("metadata"), dict) and s["metadata"]:
        meta["sample_metadata"] = s["metadata"]
    if error:
        meta["error"] = error.get("message") if isinstance(error, dict) else str(error)
    task = spec.get("task")
    return {"trajectory_id": f"{prefix}:{s.get('id')}:epoch{epoch}",
            "suite": task if isinstance(task, str) and task else "default",
            "meta": meta, "messages": messages}
