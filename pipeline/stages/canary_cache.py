"""A remembered canary pass: a run skips the canaries when this install already passed them.

The canaries (``canaries.py``) test the grader: the code, the SQL, the bundled policy and
the engines that run them, never a user's data or ``--policy``. Their outcome is
therefore a function of the installed files and library versions, and a nightly job
re-scoring them every run spends CPU (about 0.4 s, a dozen SQL stages each planned once)
to learn nothing new. After a pass, a marker named by :func:`install_digest` is written
to the cache folder; a run whose digest has a marker skips them. Any change to a file of
the package, a SQL file, the bundled policy, the canary set or an engine's version gives
a new digest, so the canaries run again. Failures are never remembered.

The folder: ``$LITMUS_GATE_CACHE_DIR``, else ``$XDG_CACHE_HOME/litmus-gate``, else
``~/.cache/litmus-gate``. ``LITMUS_GATE_CACHE_DIR=""`` turns the cache off (canaries on
every run). A folder that cannot be written only costs the saving.
"""

from __future__ import annotations

import hashlib
import os
import platform
import secrets
import threading
from contextlib import suppress
from functools import cache
from importlib import metadata
from pathlib import Path

from pipeline.policy import load_policy
from pipeline.sql import sql_dir

CACHE_ENV = "LITMUS_GATE_CACHE_DIR"
# the libraries whose behaviour the stages depend on (regex engine, JSON, parsers)
ENGINES = ("duckdb", "pyarrow", "tree-sitter", "tree-sitter-bash", "pyyaml")
_SUFFIXES = frozenset({".py", ".sql", ".toml", ".jsonl", ".yaml"})


def cache_dir() -> Path | None:
    """The cache folder (None: the cache is off)."""
    given = os.environ.get(CACHE_ENV)
    if given is not None:
        return Path(given) if given else None
    try:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    except RuntimeError:  # no HOME and a user id without a passwd entry (a container)
        return None
    return Path(base) / "litmus-gate"


def grader_roots() -> tuple[Path, ...]:
    """The folders whose files the grader runs: the package (code, bundled policy,
    canaries) and the SQL."""
    return (Path(__file__).resolve().parents[1], sql_dir())


@cache
def install_digest(policy_sha256: str, roots: tuple[Path, ...] | None = None) -> str:
    """SHA-256 over every file the grader runs (``roots``, default :func:`grader_roots`),
    the bundled policy's hash and the engines' versions: what the canaries' outcome
    depends on."""
    digest = hashlib.sha256()
    for root in roots or grader_roots():
        for path in sorted(p for p in root.rglob("*") if p.suffix in _SUFFIXES and "__pycache__" not in p.parts):
            digest.update(f"{path.relative_to(root)}\0{path.stat().st_size}\0".encode())
            digest.update(path.read_bytes())
    digest.update(f"policy\0{policy_sha256}\0python\0{platform.python_version()}\0".encode())
    for dist in ENGINES:
        try:
            digest.update(f"{dist}\0{metadata.version(dist)}\0".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{dist}\0-\0".encode())
    return digest.hexdigest()


def _marker(policy_sha256: str) -> Path | None:
    folder = cache_dir()
    return None if folder is None else folder / f"canaries-passed-{install_digest(policy_sha256)}"


def passed_before(policy_sha256: str) -> bool:
    """Whether this install (with this bundled policy) has passed its canaries before."""
    marker = _marker(policy_sha256)
    try:
        return marker is not None and marker.is_file()
    except OSError:  # a folder we may not search: as if never passed
        return False


def remember_pass(policy_sha256: str) -> None:
    """Record a pass (written whole; an unwritable folder is ignored)."""
    marker = _marker(policy_sha256)
    if marker is None:
        return
    tmp = marker.with_name(f"{marker.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text("all canaries passed\n", encoding="utf-8")
        os.replace(tmp, marker)
    except OSError:
        with suppress(OSError):  # a read-only folder, or a file where the folder should be
            tmp.unlink(missing_ok=True)


class CanaryCheck(threading.Thread):
    """The bundled canaries, scored in a background thread while other processes score
    the shards (``background``), else when ``failures()`` asks; it waits for them."""

    def __init__(self, background: bool) -> None:
        super().__init__(name="litmus-gate-canaries", daemon=True)
        self._found: list[str] | BaseException = []
        self._policy = load_policy(None)  # here: policy checks share one connection, not thread-safe
        self._background = background
        if background:
            self.start()

    def run(self) -> None:
        from pipeline.stages.canaries import check_canaries

        try:
            if passed_before(self._policy.sha256):
                return  # this install passed them before (canary_cache.py)
            self._found = check_canaries(self._policy)
            if not self._found:
                remember_pass(self._policy.sha256)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the driver's thread
            self._found = exc

    def failures(self) -> list[str]:
        """The canaries' failure lines (re-raises what stopped them)."""
        if self._background:
            self.join()
        else:
            self.run()
        if isinstance(self._found, BaseException):
            raise self._found
        return self._found
