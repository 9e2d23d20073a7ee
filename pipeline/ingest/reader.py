"""Input files of every supported format -> a stream of ``RawRecord``s.

One ``RawRecord`` per input record: ``text`` is ONE canonical JSON object (SPEC section 8)
or the record is rejected (``reject_reason`` ``malformed_record`` / ``record_too_large``
with a detail). Input is hostile: nothing here raises for one bad record or one bad
file; only an unknown ``fmt`` (FormatError) or a missing input (InputNotFoundError)
stop the run.

``source_line`` (lineage into the input):
- NDJSON (``.jsonl``, ``.jsonl.gz``, other non-``.json`` names): the physical 1-based
  line number; blank lines are skipped but counted. A UTF-8 BOM on line 1 and trailing
  ``\\r`` are stripped. canonical/openai lines are passed through as ``text`` unchanged
  (no re-serialisation; the SQL stage validates JSON), except that a record using
  ``NaN`` / ``Infinity`` as a number is rejected ``malformed_record`` here (DuckDB's
  JSON reader would accept it), and a lone UTF-16 surrogate escape (``\\ud83d`` without
  its partner: a log cut in the middle of an emoji) is written as U+FFFD's escape, the
  rest of the text unchanged (DuckDB's reader refuses the record otherwise). Converted
  records get U+FFFD for a lone surrogate too. A record holding an Anthropic ``tool_use``
  block that is not also one of its message's ``tool_calls`` is rejected
  ``malformed_record`` (read as canonical, the call would vanish: ``--format anthropic``),
  so is one whose message ``parts`` hold a Gemini function call or response
  (``--format gemini``). A record holding OpenAI's legacy ``function_call`` messages is re-serialised with them
  as ``tool_calls`` (``adapters/legacy_calls.py``).
- whole-file JSON (``.json``, ``.json.gz``, ``.traj``): for a top-level array of records,
  the 1-based index of the element in the array; for a one-record document, 1 (so is a
  top-level array that the format's ``one_list`` says is one record: a bare LangChain
  message list, an OpenHands event list; an empty array of such a format is one record too). A file
  named as NDJSON whose first non-blank line is ``[`` or ``{`` alone holds pretty-printed
  JSON (an indented array, or indented records one after another) and is read so: its
  records are the array's elements or the values in turn (1-based index), not each line.
- a file that opens with a UTF-16 byte order mark (what Windows PowerShell 5's ``>``
  writes) is one ``malformed_record`` saying so (source_line 1), not one per line.
- Inspect ``.eval`` archives / EvalLog ``.json``: the 1-based sample position.
- a SQLite database not named as a transcript (Goose's ``sessions.db``, OpenCode's
  ``opencode.db``, Cursor's ``state.vscdb``): one record per session, source_line its 1-based position
  (``adapters/sqlite_store.py``).
- session formats (``claude-code``, ``codex``: one FILE is one record, source_line 1;
  ``otel``: one record per trace, source_line = the line of its first span). Their
  bad-line rules are in ``pipeline/ingest/adapters/_session.py``.
- a file read one record per line, or a JSON document, whose records all lack a
  ``trajectory_id`` gets one warning line on stderr naming the format it looks like
  (``_warn.warn_without_ids``).

Which files are read and in which format: `pipeline.ingest.discovery`.

Limits: an NDJSON line over ``max_record_bytes`` is skipped in chunks (never held in
memory) and rejected ``record_too_large``; a whole-file document over
``8 * max_record_bytes`` gets one ``record_too_large`` reject (source_line 1), and so
does one array element / sample / one-record document over ``max_record_bytes``.
Deep nesting (RecursionError) is rejected as ``malformed_record``; in a JSON array only
that element is (reading goes on after its closing bracket, found by counting brackets),
while a syntax error there ends the file (the element boundary is lost). A truncated gzip stream keeps the
records read so far and adds one ``malformed_record`` "truncated gzip stream after
line N" at line N+1.

Remote inputs (URIs such as ``s3://bucket/prefix``, see ``pipeline.storage``) are
streamed through pyarrow filesystems with the same readers, limits and lineage
(``source_file`` is the URI); a remote ``.eval`` archive is copied to a temporary
local file first (zip needs seeks). A prefix is walked like a folder.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from itertools import chain
from pathlib import Path
from typing import Any

from pipeline.ingest.adapters import ADAPTERS, AdapterSpec, Ctx
from pipeline.ingest.adapters._detect_files import pretty_printed, utf16
from pipeline.ingest.adapters._warn import warn_without_ids
from pipeline.ingest.adapters._io import Problem, decode_line, iter_lines, read_document
from pipeline.ingest.adapters._json_text import iter_array, parse_json, skip_ws
from pipeline.ingest.adapters._session import session_records
from pipeline.ingest.adapters.sqlite_store import STORE_ONLY, sqlite_file, store_records
from pipeline.ingest.adapters.inspect_log import iter_samples
from pipeline.errors import FormatError
from pipeline.ingest.discovery import FORMATS, detect_format, discover_inputs
from pipeline.ingest.convert import convert_record, pass_through, problem_record, serialise
from pipeline.ingest.records import RawRecord, rejected
from pipeline.storage import Location, Remote
from pipeline.storage_copy import local_copy

DOCUMENT_SUFFIXES = (".json", ".json.gz", ".traj")
_ARRAY_LINE = re.compile(r"[ \t]*\[")
_VALUES = json.JSONDecoder()


def _ndjson(path: Location, spec: AdapterSpec, max_record_bytes: int,
            span: tuple[int, int | None, int] = (0, None, 1)) -> Iterator[RawRecord]:
    state: dict[str, Any] = {}
    for line, raw in iter_lines(path, max_record_bytes, *span):
        text = raw if isinstance(raw, Problem) else decode_line(raw, line)
        if isinstance(text, Problem):
            yield problem_record(path, text, spec.name)
            continue
        ctx = Ctx(path, line, state)
        if spec.convert is None and not _ARRAY_LINE.match(text):  # an array: maybe a bare message list
            passed = pass_through(text, line)
            yield (problem_record(path, passed, spec.name) if isinstance(passed, Problem)
                   else RawRecord(str(path), line, passed, None, None, spec.name))
            continue
        value = parse_json(text, line)
        if isinstance(value, Problem):
            yield problem_record(path, value, spec.name)
            continue
        record = convert_record(spec, value, text, ctx, max_record_bytes, len(raw))
        if record is not None:
            yield record


def _document(path: Location, spec: AdapterSpec, max_record_bytes: int) -> Iterator[RawRecord]:
    state: dict[str, Any] = {"max_record_bytes": max_record_bytes}
    if spec.layout == "inspect":
        for item in _samples(path, max_record_bytes):
            if isinstance(item, Problem):
                yield problem_record(path, item, spec.name)
                continue
            line, sample, eval_spec, size = item
            state["eval"] = eval_spec
            record = convert_record(spec, sample, None, Ctx(path, line, state), max_record_bytes, size)
            if record is not None:
                yield record
        return
    text = read_document(path, max_record_bytes * 8)
    if isinstance(text, Problem):
        yield problem_record(path, text, spec.name)
        return
    start = skip_ws(text, 0)
    stream = spec.layout == "array" and text.startswith("{", start) and pretty_printed(path)
    items = (iter_values if stream else iter_array)(text, max_record_bytes) \
        if spec.layout == "array" and (text.startswith("[", start) or stream) else None
    if items is not None and spec.one_list is not None and not stream:  # a bare message list?
        first = next(items, None)  # an empty array is one (empty) record: rejected, never nothing
        if first is None and spec.convert is None:
            return  # but an empty array of canonical records holds none
        items = None if first is None or isinstance(first, tuple) and spec.one_list(first[2]) \
            else chain((first,), items)
    if items is not None:
        for item in items:
            if isinstance(item, Problem):
                yield problem_record(path, item, spec.name)
                continue
            index, raw, value = item
            record = convert_record(spec, value, raw, Ctx(path, index, state), max_record_bytes, len(raw))
            if record is not None:
                yield record
        return
    if len(text) > max_record_bytes or len(text.encode("utf-8", "surrogatepass")) > max_record_bytes:
        yield rejected(str(path), 1, "record_too_large",
                       f"single-record document larger than {max_record_bytes} bytes", spec.name)
        return
    value = parse_json(text, 1)
    if isinstance(value, Problem):
        yield problem_record(path, value, spec.name)
        return
    record = convert_record(spec, value, text.strip(), Ctx(path, 1, state), max_record_bytes, len(text))
    if record is not None:
        yield record


def iter_values(text: str, max_record_bytes: int) -> Iterator[tuple[int, str, Any] | Problem]:
    """JSON values one after another (pretty-printed records): ``(1-based index, raw text,
    value)`` as :func:`iter_array` gives elements; a value that cannot be read ends the file
    with one problem (where the next value starts is lost)."""
    index, pos = 0, skip_ws(text, 0)
    while pos < len(text):
        index += 1
        try:
            value, end = _VALUES.raw_decode(text, pos)
        except (ValueError, RecursionError) as exc:
            why = "JSON nested too deeply" if isinstance(exc, RecursionError) else f"invalid JSON: {exc}"
            yield Problem(index, "malformed_record", f"{why}; rest of the file not read")
            return
        raw = text[pos:end]
        too_large = len(raw.encode("utf-8", "surrogatepass")) > max_record_bytes
        yield Problem(index, "record_too_large", f"record larger than {max_record_bytes} bytes") if too_large \
            else (index, raw, value)
        pos = skip_ws(text, end)


def _samples(path: Location, max_record_bytes: int) -> Iterator[tuple[int, Any, dict[str, Any], int] | Problem]:
    """Inspect samples; a remote ``.eval`` archive (a zip: needs seeks) is read from a
    temporary local copy, after the same size check ``iter_samples`` makes."""
    if not (isinstance(path, Remote) and path.name.lower().endswith(".eval")):
        yield from iter_samples(path, max_record_bytes)
        return
    if path.size() > max_record_bytes * 8:
        yield Problem(1, "record_too_large", f"file larger than {max_record_bytes * 8} bytes")
        return
    with local_copy(path) as local:
        yield from iter_samples(local, max_record_bytes)


def _whole_file(path: Location) -> bool:
    """True when ``path`` is read as one JSON document: a whole-file JSON name, or a file
    named as NDJSON that holds pretty-printed JSON (see :func:`pretty_printed`)."""
    return path.name.lower().endswith(DOCUMENT_SUFFIXES) or pretty_printed(path)


def _file_records(path: Location, fmt: str, max_record_bytes: int,
                  suite: str | None = None, bound: int | None = None) -> Iterator[RawRecord]:
    if sqlite_file(path):  # a database: an agent's session store (adapters/sqlite_store.py)
        yield from store_records(path, fmt, max_record_bytes, suite, serialise)
        return
    if fmt in STORE_ONLY:  # read from its database only (Cursor's state.vscdb)
        yield rejected(str(path), 1, "malformed_record",
                       f"--format {fmt} reads an agent's SQLite store, and this file is no SQLite database", fmt)
        return
    encoding = utf16(path)
    if encoding is not None:  # its every line would be a NUL-byte reject of its own
        yield rejected(str(path), 1, "malformed_record",
                       f"the file is {encoding} text (it opens with that byte order mark), not UTF-8: "
                       "convert it first (iconv -f UTF-16 -t UTF-8; PowerShell: Out-File -Encoding utf8)", fmt)
        return
    detected, why = detect_format(path)
    if detected == "skip":
        return  # label/config file: not a transcript (module docstring)
    name = fmt if fmt != "auto" else detected
    spec = ADAPTERS[name]
    if spec.layout == "session":
        yield from session_records(path, spec, max_record_bytes, suite, serialise, bound)
    elif spec.layout == "inspect":
        yield from _document(path, spec, max_record_bytes)
    elif _whole_file(path):  # an array of id-less records warns as NDJSON lines do
        yield from warn_without_ids(path, name, _document(path, spec, max_record_bytes))
    else:
        yield from warn_without_ids(path, name, _ndjson(path, spec, max_record_bytes, (0, bound, 1)))


def read_in_lines(path: Location, fmt: str) -> bool:
    """True when :func:`iter_piece` reads ``path`` line by line from its start (NDJSON, and
    a session format's NDJSON file), so its read stops at a piece's ``bound``; False for a
    file read whole as one document (``.json``, ``.eval``, pretty-printed JSON)."""
    if path.name.lower().endswith(".eval") or _whole_file(path) or utf16(path) is not None or sqlite_file(path):
        return False
    detected, _ = detect_format(path)
    spec = ADAPTERS.get(fmt if fmt != "auto" else detected)
    return spec is not None and spec.layout != "inspect"


def splittable(path: Location, fmt: str) -> bool:
    """True when ``path`` may be read in record-aligned byte ranges: NDJSON (a gzip file's
    ranges are of its uncompressed bytes) whose records pass through unconverted (no
    adapter state spans lines)."""
    if path.name.lower().endswith(".eval") or _whole_file(path) or utf16(path) is not None or sqlite_file(path):
        return False
    name = fmt if fmt != "auto" else detect_format(path)[0]
    spec = ADAPTERS.get(name)
    return spec is not None and spec.convert is None and spec.layout != "inspect"


def iter_piece(path: Location, fmt: str, max_record_bytes: int, start: int = 0, end: int | None = None,
               first_line: int = 1, suite: str | None = None, bound: int | None = None) -> Iterator[RawRecord]:
    """The records of one input file, or of one record-aligned byte range of a
    :func:`splittable` file (``first_line`` = line number at ``start``), as
    :func:`iter_records` reads them (a read failure is one ``malformed_record``).
    The id-less warning of a split file is judged on its first range. ``bound``: of a whole
    file read line by line (:func:`read_in_lines`), the bytes to read at most (what
    planning hashed: a line appended since is not read)."""
    try:
        if start == 0 and end is None:
            yield from _file_records(path, fmt, max_record_bytes, suite, bound)
        else:
            name = fmt if fmt != "auto" else detect_format(path)[0]
            piece = _ndjson(path, ADAPTERS[name], max_record_bytes, (start, end, first_line))
            yield from warn_without_ids(path, name, piece) if start == 0 else piece
    except OSError as exc:
        yield rejected(str(path), first_line, "malformed_record",
                       f"cannot read file: {type(exc).__name__}: {exc}", fmt)


def iter_records(paths: Sequence[Path | str | Remote], fmt: str = "auto",
                 max_record_bytes: int = 32 * 2**20, suite: str | None = None) -> Iterator[RawRecord]:
    """Stream the records of all inputs (files or folders) in a deterministic order.

    Raises FormatError for an unknown ``fmt`` and InputNotFoundError as
    :func:`discover_inputs`. A file that cannot be read at all yields one
    ``malformed_record`` reject (source_line 1). ``suite`` (``--suite``) names the suite
    of the session formats (claude-code, codex, otel), whose files do not name one.
    """
    if fmt not in FORMATS:
        raise FormatError(f"unknown format {fmt!r}", f"choose one of: {', '.join(FORMATS)}")
    if max_record_bytes < 1:
        raise ValueError("max_record_bytes must be positive")
    for path in discover_inputs(paths):
        try:
            yield from _file_records(path, fmt, max_record_bytes, suite)
        except OSError as exc:
            yield rejected(str(path), 1, "malformed_record",
                           f"cannot read file: {type(exc).__name__}: {exc}", fmt)
