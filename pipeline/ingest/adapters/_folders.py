"""Readers of formats persisted as a folder of JSON files, one message or event per file
(OpenHands V1 conversations, Strands Agents sessions): list a folder, read one file."""

from __future__ import annotations

from typing import Any

from pipeline.ingest.adapters._common import AdapterError, RecordTooLarge
from pipeline.ingest.adapters._io import Problem, read_document
from pipeline.ingest.adapters._json_text import parse_json
from pipeline.storage import Location, Remote


def read_json_file(path: Location, limit: int) -> tuple[Any, int]:
    """(the parsed JSON file, its size); a file that cannot be read rejects the record."""
    text = read_document(path, limit)
    value = text if isinstance(text, Problem) else parse_json(text, 1)
    if isinstance(value, Problem):
        if value.reason == "record_too_large":
            raise RecordTooLarge(f"{path.name}: {value.detail}")
        raise AdapterError(f"{path.name}: {value.detail}")
    return value, len(text)


def folder_names(folder: Location) -> list[str]:
    """The file names in a local or remote folder."""
    if isinstance(folder, Remote):
        return [e.path.rstrip("/").rsplit("/", 1)[-1] for e in folder.entries()]
    return [p.name for p in folder.iterdir()] if folder.is_dir() else []
