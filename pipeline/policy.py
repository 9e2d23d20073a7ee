"""The policy file (SPEC section 9): load, layer, validate, hash, and expose as tables.

Bundled files in ``pipeline/policy/`` are merged in name order (``default.toml``
first); a user's ``--policy FILE`` (TOML or YAML) is merged last. Merging: tables
merge key by key, arrays of tables (rule lists) are appended, everything else
replaces. The SQL stages read the policy only through the Arrow tables built by
:meth:`Policy.tables`, never through string formatting.

Reading, parsing and merging the files is :mod:`pipeline.policy_files`; the tables are
built by :mod:`pipeline.policy_tables`.
"""

from __future__ import annotations

import hashlib
import json
import threading
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from pipeline.errors import PolicyError
from pipeline.policy_checks import validate
from pipeline.policy_files import bundled_files, expand_names, merge, parse_file, read_bytes
from pipeline.policy_shape import check_shape
from pipeline.policy_tables import policy_tables


@dataclass(frozen=True)
class Policy:
    """A validated, merged policy. ``data`` is the merged document; ``sha256`` its hash.

    A loaded policy carries its Arrow tables (built once, when it was validated) and is
    what a shard task ships to its worker: the worker scores with exactly the document
    the driver validated and hashed into the plan, and neither reads nor checks the
    policy file again."""

    data: dict[str, Any]
    sha256: str
    sources: tuple[str, ...] = field(default=())
    built: dict[str, pa.Table] | None = field(default=None, compare=False, repr=False)

    @property
    def settings(self) -> dict[str, Any]:
        """The ``[settings]`` table."""
        return dict(self.data.get("settings", {}))

    def setting(self, name: str) -> Any:
        """One setting (all settings have bundled defaults)."""
        return self.data["settings"][name]

    def tool_names(self) -> dict[str, str]:
        """Lower-cased tool name or alias -> catalog name."""
        out: dict[str, str] = {}
        for name, entry in self.data.get("tools", {}).items():
            out[name.lower()] = name
            for alias in entry.get("aliases", []):
                out.setdefault(str(alias).lower(), name)
        return out

    def tables(self) -> dict[str, pa.Table]:
        """The policy as Arrow tables, registered in DuckDB as ``policy_<name>``."""
        return dict(self.built) if self.built is not None else policy_tables(self.data, self.tool_names())


_LOADED: dict[tuple[str | None, str | None], Policy] = {}
_LOADED_LOCK = threading.Lock()


def load_policy(user_file: Path | None = None) -> Policy:
    """Merge the bundled policy files and an optional user file; validate; hash.

    A user file whose ``[settings]`` say ``bundled_catalogs = "default"`` is layered over
    ``default.toml`` alone (generic vocabulary plus role inference, no suite catalogs):
    the out-of-the-box configuration the leave-one-corpus-out evaluation measures.

    Loaded once per process for each (path, contents of the user file): a worker scores
    many shards, and parsing and checking the policy (every regex through RE2) costs
    tens of milliseconds. The returned policy is shared: never mutate its ``data``.
    """
    raw = read_bytes(user_file) if user_file is not None else None
    key = (None if user_file is None else str(user_file), None if raw is None else hashlib.sha256(raw).hexdigest())
    with _LOADED_LOCK:
        found = _LOADED.get(key)
    if found is None:
        found = _load_policy(user_file, raw)
        with _LOADED_LOCK:
            _LOADED[key] = found
    return found


def _load_policy(user_file: Path | None, raw: bytes | None) -> Policy:
    merged: dict[str, Any] = {}
    sources: list[str] = []
    user = parse_file(user_file, raw) if user_file is not None and raw is not None else None
    bundled = (user or {}).get("settings", {}).get("bundled_catalogs", "all")
    if bundled not in ("all", "default"):
        raise PolicyError(f"policy: settings.bundled_catalogs must be 'all' or 'default', got {bundled!r}")
    for name, raw in bundled_files():
        if bundled == "default" and name != "default.toml":
            continue
        try:
            merged = merge(merged, tomllib.loads(raw.decode("utf-8")))
        except tomllib.TOMLDecodeError as exc:  # a packaging bug, not an operator error
            raise PolicyError(f"bundled policy {name} does not parse: {exc}") from exc
        sources.append(f"bundled:{name}")
    if user is not None:
        merged = merge(merged, user)
        sources.append(str(user_file))
    check_shape(merged)
    merged = expand_names(merged)  # `{{list}}` in a classifier rule: a [classifier.names] list
    validate(merged)
    built = policy_tables(merged, Policy(merged, "").tool_names())  # label values checked here
    return Policy(merged, document_sha256(merged), tuple(sources), built)


def document_sha256(data: dict[str, Any]) -> str:
    """A policy's ``sha256``: of its merged document as canonical JSON (about 1 ms)."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
