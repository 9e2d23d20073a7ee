"""Locations: local paths, or URIs read and written through pyarrow filesystems.

A location is either a local path (a ``pathlib.Path``, handled with plain file I/O
exactly as before) or a URI with a scheme (``s3://bucket/key``, ``gs://bucket/key``,
``file:///abs/path``, anything ``pyarrow.fs.FileSystem.from_uri`` accepts), held as a
:class:`Remote`. The filesystem is built from the URI: credentials, region and endpoint
come from the standard environment (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_DEFAULT_REGION``, ``AWS_ENDPOINT_URL``, ``GOOGLE_APPLICATION_CREDENTIALS``) or
from a query string (``s3://bucket/key?endpoint_override=host:9000&scheme=http``).
The query string is never shown: ``str(remote)`` is the URI without it.

Every filesystem call that can fail on the operator's side (bad URI, unreachable
endpoint, missing bucket or object) runs inside :func:`guard`, which turns the
pyarrow/OS error into one of our one-line errors (exit 2).
"""

from __future__ import annotations

import gzip
import io
import re
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Union

import pyarrow as pa

from pipeline.errors import LitmusError, UsageError

# pyarrow.fs (with its S3, GCS and TLS modules, about 25 ms) is imported where a URI
# location needs it, never by a local run: every process of a run imports this module
if TYPE_CHECKING:
    import pyarrow.fs as pafs

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]+://")
BUFFER_BYTES = 1 << 20  # reads and copies of remote files, in blocks of this size
_STORAGE_ERRORS = (OSError, ValueError, pa.ArrowException)
URI_HINT = "expected s3://bucket/key, gs://bucket/key or file:///path; see README 'Shared storage'"


def is_uri(value: object) -> bool:
    """True for a string with a scheme (``s3://...``); local paths never match."""
    return isinstance(value, str) and _SCHEME.match(value) is not None


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]


@contextmanager
def guard(what: str, error: type[LitmusError] = UsageError, hint: str | None = None) -> Iterator[None]:
    """Turn a storage failure inside the block into ``error("what: reason", hint)``."""
    try:
        yield
    except LitmusError:
        raise
    except _STORAGE_ERRORS as exc:
        raise error(f"{what}: {_short(exc)}", hint) from exc


@dataclass(frozen=True)
class Remote:
    """A file or folder (prefix) on a pyarrow filesystem: path-like for the readers.

    ``path`` is the filesystem path (``bucket/key`` on S3/GCS), ``uri`` what users see
    (scheme and path, no query string). Picklable (Ray tasks and worker processes
    rebuild the filesystem; credentials come from each node's environment).
    """

    fs: pafs.FileSystem = field(compare=False, repr=False)
    path: str
    uri: str
    known_file: bool = field(default=False, compare=False, repr=False)

    def __str__(self) -> str:
        return self.uri

    def __truediv__(self, name: str) -> Remote:
        return Remote(self.fs, _join(self.path.rstrip("/") or "/", name), _join(_strip_slash(self.uri), name))

    @property
    def name(self) -> str:
        """Last path component (like ``Path.name``)."""
        return self.path.rstrip("/").rsplit("/", 1)[-1]

    @property
    def stem(self) -> str:
        """The name without its last suffix (like ``Path.stem``)."""
        name = self.name
        return name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name

    @property
    def parent(self) -> Remote:
        """The enclosing folder (prefix); a bucket or root is its own parent."""
        path = self.path.rstrip("/")
        if "/" not in path.strip("/"):
            return self
        cut = len(self.name) + 1
        return Remote(self.fs, path[:-cut] or "/", _strip_slash(self.uri)[:-cut])

    def absolute(self) -> Remote:
        """Itself: a URI is always absolute (adapters call ``path.absolute().parent``)."""
        return self

    def info(self) -> pafs.FileInfo:
        """The filesystem's entry for this location (type NotFound when absent)."""
        return self.fs.get_file_info(self.path)

    def is_file(self) -> bool:
        """True when an object/file exists at exactly this path."""
        import pyarrow.fs as pafs  # a URI's only (see the imports)

        return self.known_file or self.info().type == pafs.FileType.File

    def is_dir(self) -> bool:
        """True when this path is a folder / a non-empty prefix."""
        import pyarrow.fs as pafs  # a URI's only (see the imports)

        return self.info().type == pafs.FileType.Directory

    def size(self) -> int:
        """Size in bytes of the file."""
        return int(self.info().size or 0)

    def open_binary(self) -> IO[bytes]:
        """A buffered binary reader of the raw bytes (no transparent decompression)."""
        return io.BufferedReader(self.fs.open_input_stream(self.path, compression=None),  # type: ignore[arg-type]
                                 buffer_size=BUFFER_BYTES)

    def read_text(self) -> str:
        """The whole file as UTF-8 text (small files only: markers, plans)."""
        with self.open_binary() as fh:
            return fh.read().decode("utf-8")

    def write_bytes(self, data: bytes) -> None:
        """Create or replace the file with ``data`` (one object PUT on object stores)."""
        with self.fs.open_output_stream(self.path, compression=None) as fh:
            fh.write(data)

    def write_text(self, text: str) -> None:
        """Create or replace the file with UTF-8 ``text``."""
        self.write_bytes(text.encode("utf-8"))

    def entries(self, recursive: bool = False) -> list[pafs.FileInfo]:
        """Entries under this folder (empty when it does not exist)."""
        import pyarrow.fs as pafs  # a URI's only (see the imports)

        return list(self.fs.get_file_info(pafs.FileSelector(self.path, allow_not_found=True,
                                                            recursive=recursive)))

    def delete_contents(self) -> None:
        """Remove everything under this folder (nothing when it does not exist)."""
        self.fs.delete_dir_contents(self.path, missing_dir_ok=True)

    def delete(self) -> None:
        """Remove this folder and everything under it (nothing when absent)."""
        self.delete_contents()
        with suppress(OSError):
            self.fs.delete_dir(self.path)


Location = Union[Path, Remote]


def cli_location(value: str) -> Path | str:
    """argparse ``type``: a local ``Path``, or the URI string kept intact (``Path``
    would collapse ``s3://`` into ``s3:/``)."""
    return value if is_uri(value) else Path(value)


def location(value: str | Path | Remote) -> Location:
    """A local path or a :class:`Remote` (UsageError for a URI pyarrow cannot open)."""
    if isinstance(value, (Path, Remote)):
        return value
    if not is_uri(value):
        return Path(value)
    if "@" in value.split("://", 1)[1].split("/", 1)[0]:  # s3://KEY:SECRET@bucket/...
        raise UsageError("credentials in a URI are refused: they would be written into the run's tables",
                         "use the environment (AWS_ACCESS_KEY_ID, ...) or an instance role")
    with guard(f"cannot open {value.split('?', 1)[0]}", UsageError, URI_HINT):
        import pyarrow.fs as pafs  # a URI's only (see the imports)

        fs, path = pafs.FileSystem.from_uri(value)
    return Remote(fs, path.rstrip("/") or path, _strip_slash(value.split("?", 1)[0]))


def _join(base: str, name: str) -> str:
    return base + name if base.endswith("/") else f"{base}/{name}"


def _strip_slash(uri: str) -> str:
    """``uri`` without trailing slashes, but ``file:///`` stays whole."""
    head, _, rest = uri.partition("://")
    return f"{head}://{rest.rstrip('/') or rest[:1]}"


def open_raw(loc: Location) -> IO[bytes]:
    """Binary reader of a location's raw bytes (local: a plain ``open``)."""
    return loc.open_binary() if isinstance(loc, Remote) else open(loc, "rb")


def open_at(loc: Location, offset: int) -> IO[bytes]:
    """Binary reader of a location's raw bytes from ``offset`` (a random-access open)."""
    if isinstance(loc, Remote):
        handle = loc.fs.open_input_file(loc.path)
        handle.seek(offset)
        return io.BufferedReader(handle, buffer_size=BUFFER_BYTES)  # type: ignore[arg-type]
    fh = open(loc, "rb")
    fh.seek(offset)
    return fh


def size(loc: Location) -> int:
    """File size in bytes."""
    return loc.size() if isinstance(loc, Remote) else loc.stat().st_size


# a file's (size, modification time in ns; None where a filesystem keeps none)
Stamp = tuple[int, int | None]


def stamp(loc: Location) -> Stamp:
    """The file's :data:`Stamp`: a change of either says its bytes may have changed."""
    if isinstance(loc, Remote):
        info = loc.info()
        return int(info.size or 0), info.mtime_ns
    st = loc.stat()
    return st.st_size, st.st_mtime_ns


class _OwningGzip(gzip.GzipFile):
    """A gzip reader that also closes the stream it decompresses."""

    def __init__(self, raw: IO[bytes]) -> None:
        super().__init__(fileobj=raw, mode="rb")
        self._raw = raw

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._raw.close()


def open_gunzip(loc: Remote) -> IO[bytes]:
    """A Python ``gzip`` reader over a remote file (same error behaviour as local)."""
    return _OwningGzip(loc.open_binary())
