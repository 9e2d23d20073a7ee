"""Which files a run reads, and in which format: folders walked, URIs listed, each
file's format detected (``pipeline/ingest/adapters/_detect.py``).

Discovery: folders are walked recursively (sorted, symlinked folders not followed,
hidden entries skipped) for ``.jsonl .jsonl.gz .json .json.gz .eval .traj`` and for ``.db``
files that are an agent's SQLite session store (``adapters/sqlite_store.py``); files that
detection classifies as label files (OpenAgentSafety ``eval_*.json``,
``*_safety_eval_results.json``, task ``scenarios.json``) are left out of folder walks.
Given explicitly, such a file yields no records.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from pipeline.errors import InputNotFoundError
from pipeline.ingest.adapters._detect import detect
from pipeline.ingest.adapters.sqlite_store import sqlite_file
from pipeline.storage import Location, Remote, guard, location
from pipeline.storage_copy import walk_files

FORMATS = ("auto", "canonical", "openai", "anthropic", "inspect", "agentdojo", "openhands",
           "tau-bench", "tau2-bench", "r-judge", "swe-agent", "claude-code", "codex", "otel", "openai-responses",
           "gemini", "gemini-stream", "langchain", "smolagents", "ai-sdk", "autogen", "pydantic-ai", "sharegpt",
           "bedrock", "litellm", "mcp", "goose", "opencode", "atif", "copilot", "react", "cursor")
SUFFIXES = (".jsonl", ".jsonl.gz", ".json", ".json.gz", ".eval", ".traj")
STORE_SUFFIXES = (".db", ".vscdb")  # walked when an agent's session store (``sessions.db``, ``opencode.db``,
# Cursor's ``state.vscdb``)


def discover_inputs(paths: Sequence[Path | str | Remote]) -> list[Location]:
    """Input files: given files as is, folders walked recursively (see module docstring).

    A path may be a URI (``s3://bucket/prefix``): a prefix is walked like a folder
    (same filters, same order), files are read through pyarrow filesystems.
    Order: inputs in the order given, each folder's files sorted by relative path;
    duplicates (same resolved file) are kept once. Raises InputNotFoundError when a
    path does not exist or nothing is found (or a URI cannot be reached).
    """
    found: list[Location] = []
    seen: set[Path | str] = set()

    def add(path: Location) -> None:
        key = path.resolve() if isinstance(path, Path) else str(path)
        if key not in seen:
            seen.add(key)
            found.append(path)

    for raw in paths:
        path = location(raw)
        if isinstance(path, Remote):
            for child in _remote_inputs(path):
                add(child)
        elif path.is_file():
            add(path)
        elif path.is_dir():
            for root, dirs, files in os.walk(path, followlinks=False):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    child = Path(root) / name
                    if _walked(child):
                        add(child)
        else:
            raise InputNotFoundError(f"input not found: {path}", "give existing files or folders")
    if not found:
        raise InputNotFoundError(
            f"no transcript files found in: {', '.join(str(p) for p in paths) or '(no input)'}",
            f"expected {' '.join(SUFFIXES)} or an agent's session store (sessions.db, opencode.db, state.vscdb)")
    return found


def _walked(child: Location) -> bool:
    """Folder-walk filter: a transcript file (:func:`_transcript_name`, not a label file), or
    a ``.db`` file that is an agent's SQLite session store (other databases are left out)."""
    def is_file() -> bool:
        return not isinstance(child, Path) or child.is_file()

    if child.name.lower().endswith(STORE_SUFFIXES) and not child.name.startswith("."):
        return is_file() and sqlite_file(child) and detect(child)[0] != "skip"
    return _transcript_name(child.name) and is_file() and not _label_file(child)


def _transcript_name(name: str) -> bool:
    """Folder-walk filter on names: transcript suffixes, no hidden files."""
    return not name.startswith(".") and name.lower().endswith(SUFFIXES)


def _label_file(child: Location) -> bool:
    """Folder-walk filter on content: a JSON document that detection calls a label file."""
    return child.name.lower().endswith((".json", ".json.gz")) and detect(child)[0] == "skip"


def _remote_inputs(path: Remote) -> list[Remote]:
    """The input files at a URI: the object itself, or the prefix walked like a folder."""
    import pyarrow.fs as pafs  # a URI's only: a local run never imports it (pipeline.storage)

    if path.known_file:
        return [path]
    with guard(f"cannot read input {path}", InputNotFoundError, "check the URI, credentials and endpoint"):
        kind = path.info().type
        if kind == pafs.FileType.File:
            return [replace(path, known_file=True)]
        if kind != pafs.FileType.Directory:
            raise InputNotFoundError(f"input not found: {path}", "give existing files or prefixes")
        return [c for c in walk_files(path) if _walked(c)]


def detect_format(path: Location) -> tuple[str, str]:
    """(format, why) by extension and the first bytes/record; ``skip`` = label file."""
    try:
        return detect(path)
    except OSError as exc:
        return "canonical", f"unreadable ({exc}); treated as canonical"
