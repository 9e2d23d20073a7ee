"""What crosses the local pool's pipes (``pipeline.execution.pool``): pickles in which the
values every task of a map shares (a run's policy and labels) appear as references to
their files in the pool's spool folder (pickle's persistent ids), each read once per
worker; and a job, result or error too large for a pipe written to a file of that folder,
the pipe carrying its name. Ray tasks (``pipeline.execution.engines``) refer to their
shared values the same way."""

from __future__ import annotations

import io
import pickle
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# A shared value's reference: (the map's number, its file in the spool folder).
SharedRef = tuple[int, str]


class _Pickler(pickle.Pickler):
    """Pickles a shared value (by identity) as its reference."""

    def __init__(self, file: io.BytesIO, shared: dict[int, Any]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._shared = shared

    def persistent_id(self, obj: Any) -> Any:  # noqa: D102 - pickle's hook
        return self._shared.get(id(obj))


def shareable(shared: Sequence[object]) -> dict[int, object]:
    """The values of ``shared`` worth shipping once, each once, keyed by identity (the
    keys :func:`dumps_referring` looks objects up by). Scalars are left out: they are
    small, and an interned one (``None``, a small int) is the same object wherever it
    appears."""
    seen: dict[int, object] = {}
    for value in shared:
        if value is not None and not isinstance(value, (bool, int, float, str, bytes)):
            seen.setdefault(id(value), value)
    return seen


def dumps_referring(value: Any, refs: dict[int, Any]) -> bytes:
    """``value`` pickled, each object whose ``id`` is a key of ``refs`` as that key's
    reference (pickle's persistent ids); :func:`loads_referring` resolves them."""
    buffer = io.BytesIO()
    _Pickler(buffer, refs).dump(value)
    return buffer.getvalue()


class _Resolver(pickle.Unpickler):
    def __init__(self, data: bytes, resolve: Callable[[Any], Any]) -> None:
        super().__init__(io.BytesIO(data))
        self._resolve = resolve

    def persistent_load(self, pid: Any) -> Any:  # noqa: D102 - pickle's hook
        return self._resolve(pid)


def loads_referring(data: bytes, resolve: Callable[[Any], Any]) -> Any:
    """What :func:`dumps_referring` pickled, ``resolve(reference)`` giving each referred value."""
    return _Resolver(data, resolve).load()


# A worker's shared values, of one map at a time: {"map": number, "values": {file: value}}
_loaded: dict[str, Any] = {"map": None, "values": {}}


def load_shared(pid: SharedRef) -> Any:
    """A shared value from its reference: read from its file once per worker and map."""
    number, file = pid
    if _loaded["map"] != number:
        _loaded["map"], _loaded["values"] = number, {}
    values = _loaded["values"]
    if file not in values:
        values[file] = pickle.loads(Path(file).read_bytes())
    return values[file]


def pack(value: Any, limit: int, file: Path, shared: dict[int, SharedRef] | None = None) -> bytes | str:
    """``value`` pickled (``shared`` values as their references), or the name of ``file``
    holding it when over ``limit`` bytes."""
    body = dumps_referring(value, shared or {})
    if len(body) <= limit:
        return body
    file.write_bytes(body)
    return str(file)


def unpack(packed: bytes | str) -> Any:
    """What :func:`pack` packed (a file is read once, then removed). Only our own
    processes write these: the pool would pickle the same values itself."""
    if isinstance(packed, str):
        path = Path(packed)
        packed = path.read_bytes()
        path.unlink()
    return loads_referring(packed, load_shared)
