"""Result and accumulator types of the shell analyser, and resource-name normalisation.

:class:`ShellAnalysis` is what the analyser returns for one command or code step;
:class:`Acc` collects it; :class:`Flow` is what one pipeline stage hands the next. The
regular expressions that recognise variables and assignments in raw words live here too,
beside the limits on a command's size and nesting (the work it may cost: :mod:`.budget`).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from pipeline.analysis.shell.flow import Flow, union_flows
from pipeline.analysis.shell.words import restore_private

__all__ = ["ShellAnalysis", "FIELDS", "Acc", "Flow", "union_flows", "normalise", "MAX_COMMAND_CHARS", "MAX_DEPTH",
           "MAX_PRODUCT", "VAR_RE", "ASSIGN_RE", "FIXED_VARS", "DEV_TCP", "PSEUDO_RE", "relative_path"]

MAX_COMMAND_CHARS = 100_000
MAX_DEPTH = 6
MAX_PRODUCT = 256  # loop-variable combinations tried exhaustively; beyond, each value once
VAR_RE = re.compile(r"\$(?:\{[#!]?([A-Za-z_]\w*|\d+|[@*#?$!-])([^}]*)\}|([A-Za-z_]\w*)|([0-9@*#?$!-]))")
ASSIGN_RE = re.compile(r"^([A-Za-z_]\w*)(\[[^\]]*\])?\+?=(.*)$", re.S)
_NOT_RESOURCES = {"", "-", "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty"}
PSEUDO_RE = re.compile(r"^[a-z][a-z0-9+.-]*:")  # a URL or pseudo resource (env:X): no path
_PATH_FIELDS = frozenset({"reads", "writes", "executes", "deletes", "payloads"})
_PATH_ORDER = ("reads", "writes", "executes", "deletes", "payloads")  # _PATH_FIELDS in FIELDS' order
FIXED_VARS = {"HOME": "~", "PWD": "."}
DEV_TCP = re.compile(r"^/dev/(tcp|udp)/([^/]+)/(\d+)$")


@dataclass(frozen=True)
class ShellAnalysis:
    """Resources one shell command (or code step) touches. Tuples keep first-seen order."""

    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    executes: tuple[str, ...] = ()
    sends: tuple[str, ...] = ()
    payloads: tuple[str, ...] = ()
    deletes: tuple[str, ...] = ()
    # environment variables a request passes in its URL or a header: how a service takes
    # its own credentials, so not payload; the policy's `labels.never_sent` names the
    # secrets no service takes that way (sql/self_sends.sql)
    credentials: tuple[str, ...] = ()
    opaque: bool = False
    opaque_reason: str | None = None
    # where the command leaves its shell, relative to where it started: "." (no `cd`, or
    # only scoped ones that cannot move it), a folder ("/etc", "~/.ssh", "sub", ".."), or
    # None (unknown: a computed folder, `cd -` to before the command, a `cd` in a
    # subshell, pipeline, function, conditional or loop body). sql/shell_folders.sql carries
    # it to the session's later steps.
    folder: str | None = "."
    # the (field, name) of the relative paths named where the command started, or under
    # it (`cd sub && cat x`: `sub/x`): the names a folder carried from an earlier step
    # applies to. None: every relative path recorded (the command has no `cd`).
    here: tuple[tuple[str, str], ...] | None = None
    # the files the command writes a known text into, in order: (name, text, appended) of
    # `cat > x.py <<'EOF' ...`, `echo ... >> x.sh` (pipeline/analysis/written.py follows
    # the text into a later run of the file, reading each as a piece, appended or not)
    written_texts: tuple[tuple[str, str, bool], ...] = ()
    # how the command runs each file it executes: (name, runner), runner "shell" (`bash x`,
    # `source x`), "python" (`python3 x`), "other" (`node x`, `java -jar x`) or "" (the
    # file itself: `./x`, its `#!` line decides; also every execute no handler names a
    # runner for); pipeline/analysis/written.py reads a written file's text in the
    # language its run names
    runners: tuple[tuple[str, str], ...] = ()
    # the files the command makes a copy of another file, in order: (copy, original) of
    # `cp x.sh y`, `mv notes.txt run.sh`, `install x /usr/local/bin/y`, `ln -s x.sh y`, `cat
    # x > y` (pipeline/analysis/written.py follows what is known of the original's text
    # into a later run of the copy)
    copies: tuple[tuple[str, str], ...] = ()
    # the folder each file the command executes under a `cd` of its own runs in: (name,
    # folder) of `cd sub && bash x.sh` ("sub/x.sh", "sub"); a file executed where the
    # command started has none. pipeline/analysis/written.py joins the relative names a
    # written file it runs names under that folder (the script's `cat data.txt` reads
    # sub/data.txt)
    run_folders: tuple[tuple[str, str], ...] = ()


FIELDS = ("reads", "writes", "executes", "sends", "payloads", "deletes", "credentials")


def normalise(resource: str) -> str | None:
    """Canonical resource name, or None when it is not a resource (``-``, /dev/null...)."""
    r = restore_private(resource).strip()
    if r in _NOT_RESOURCES or r.startswith("/dev/fd/") or r.startswith("/proc/self/fd/"):
        return None
    if "://" in r or PSEUDO_RE.match(r):
        return r
    r = re.sub(r"/{2,}", "/", r)
    while r.startswith("./"):
        r = r[2:]
    if len(r) > 1 and r.endswith("/"):
        r = r.rstrip("/") or "/"
    return r or "."


def relative_path(name: str) -> bool:
    """A relative path (not ``/...``, ``~...``, nor a URL or pseudo resource such as ``env:X``)."""
    return not name.startswith(("/", "~")) and not PSEUDO_RE.match(name)


class Acc:
    """Mutable accumulator behind one ShellAnalysis."""

    def __init__(self) -> None:
        self.lists: dict[str, dict[str, None]] = {f: {} for f in FIELDS}  # ordered sets: O(1) dedup
        self.reason: str | None = None
        # the folder a `cd` in this command moved to (None: where the command started, or unknown)
        self.cwd: str | None = None
        # Ctx.derived's answers, per name, until the next write with provenance
        self.derived_cache: dict[tuple[tuple[str, ...], frozenset[str]], tuple[str, ...]] = {}
        # relative paths named where the command started (ShellAnalysis.here), kept from its
        # first `cd` on (None before: every relative path recorded); `lost`: since a `cd`
        # to an unknown folder no name is known relative to the start
        self.here: dict[tuple[str, str], None] | None = None
        self.lost = False
        # the folders a `cd -` (the last one) or `popd` (pushd's, in order) returns to:
        # (Acc.cwd, Acc.lost) before each move
        self.dirs: list[tuple[str | None, bool]] = []
        self.oldcwd: tuple[str | None, bool] | None = None
        self.folders: list[str | None] = []  # the shell's own folders pushd left (Acc.folder), for popd
        # names that came out of a subshell named where the command started (its `cd -`):
        # never joined under a later `cd`'s folder
        self.resolved: set[str] = set()
        # where the shell is left (ShellAnalysis.folder) and, for `cd -`, where it was before
        # the last move (None: unknown, before the command)
        self.folder: str | None = "."
        self.oldfolder: str | None = None
        self.texts: list[tuple[str, str, bool]] = []  # ShellAnalysis.written_texts
        self.runners: dict[tuple[str, str], None] = {}  # ShellAnalysis.runners (an ordered set)
        self.copies: list[tuple[str, str]] = []  # ShellAnalysis.copies, in order (a copy made again counts again)
        self.run_folders: dict[tuple[str, str], None] = {}  # ShellAnalysis.run_folders (an ordered set)

    def add(self, kind: str, resource: str, runner: str = "", within: str | None = None) -> None:
        """Record ``resource`` under field ``kind`` (normalised, deduplicated). After a
        ``cd DIR`` in the command a relative path is also recorded under DIR (``cd ~/.ssh &&
        curl -F f=@id_rsa``: ``id_rsa`` and ``~/.ssh/id_rsa``): the joined name is what the
        labels see; the relative one still meets the same name in a later step, whose
        shell may well have kept that folder. An executed file is recorded with its
        ``runner`` (:attr:`ShellAnalysis.runners`; "": it runs as itself), under both names,
        and the folder it runs in when not where the command started (:attr:`run_folders`:
        after a `cd`, or ``within`` a folder of its own: `make -C app`)."""
        r = normalise(resource)
        if r is None:
            return
        self.lists[kind].setdefault(r)
        joined = self.under_cwd(r) if kind in _PATH_FIELDS else None
        if joined:
            self.lists[kind].setdefault(joined)
        if kind == "executes":
            for name in (r, joined) if joined else (r,):
                self.runners.setdefault((name, runner))
            self._run_folder(r, joined, within)
        if self.here is not None and kind in _PATH_FIELDS:
            self.mark_here(kind, r)

    def _run_folder(self, name: str, joined: str | None, within: str | None) -> None:
        """Record the folder a file executed as ``name`` (``joined``: under the command's
        `cd`) runs in: ``within`` (relative to the shell's folder) or the `cd`'s folder."""
        def folder(*parts: str) -> str:
            return normalise(posixpath.normpath(posixpath.join(*parts))) or "."

        if within is not None:
            self.run_folders.setdefault((name, folder(within)))
            if joined and self.cwd:
                self.run_folders.setdefault((joined, folder(self.cwd, within)))
        elif self.cwd and (joined or not relative_path(name)):  # an absolute name runs in the `cd`'s folder too
            self.run_folders.setdefault((joined or name, folder(self.cwd)))

    def wrote_text(self, resource: str, text: str, appended: bool) -> None:
        """Record that the command writes ``text`` into ``resource`` (at its end when
        ``appended``), under the names :meth:`add` records it by."""
        r = normalise(resource)
        if r is not None and len(text) <= MAX_COMMAND_CHARS:  # longer: opaque as a program anyway
            joined = self.under_cwd(r)
            for entry in ((n, text, appended) for n in (r, joined) if n):
                self._text(entry)

    def copied(self, copy: str, original: str) -> None:
        """Record that the command makes ``copy`` a copy of ``original`` (both as written in
        the command), under the names :meth:`add` records them by: as given, and joined
        under the folder of its last ``cd`` when either is relative."""
        c, o = normalise(copy), normalise(original)
        if c is None or o is None or c == o or PSEUDO_RE.match(c) or PSEUDO_RE.match(o):
            return
        joined_c, joined_o = self.under_cwd(c), self.under_cwd(o)
        for entry in [(c, o)] + ([(joined_c or c, joined_o or o)] if joined_c or joined_o else []):
            if not self.copies or self.copies[-1] != entry:  # the same copy at once: one
                self.copies.append(entry)

    def _text(self, entry: tuple[str, str, bool]) -> None:
        if not self.texts or self.texts[-1] != entry:  # `echo T >> f` repeated at once: one piece
            self.texts.append(entry)

    def track_here(self) -> None:
        """From now on keep ``here`` explicitly (at a ``cd``, or a nested analysis that had
        one): every relative path recorded so far was named where the command started."""
        if self.here is None:
            self.here = {(k, r): None for k in _PATH_ORDER for r in self.lists[k] if relative_path(r)}

    def mark_here(self, kind: str, name: str) -> None:
        """Record that relative path ``name`` (normalised) was named in the folder the
        command is in now: kept, joined to it, when that folder is known relative to where
        the command started (not after ``cd /abs``, nor after a ``cd`` to an unknown folder)."""
        if self.here is None or not relative_path(name):
            return
        if name in self.resolved:  # out of a subshell back where the command started (its `cd -`)
            self.here.setdefault((kind, name))
            return
        if self.lost:
            return
        if self.cwd is None:
            self.here.setdefault((kind, name))
        elif not self.cwd.startswith(("/", "~")):
            joined = normalise(posixpath.normpath(posixpath.join(self.cwd, name)))
            if joined:
                self.here.setdefault((kind, joined))
                if kind == "executes":  # `cd .. && bash x.sh`: ../x.sh runs in ..
                    self.run_folders.setdefault((joined, normalise(posixpath.normpath(self.cwd)) or "."))

    def move(self, target: str | None) -> None:
        """The shell's folder after an unscoped ``cd target`` (None: to an unknown folder;
        ``-``: back to where it was before the last move, unknown when that was before the
        command). ``target`` is absolute, ``~``-based or relative to the current folder."""
        old = self.folder
        if target == "-":
            new = self.oldfolder
        elif target is None or (old is None and not target.startswith(("/", "~"))):
            new = None
        else:
            joined = target if target.startswith(("/", "~")) else posixpath.join(old or ".", target)
            rest = posixpath.normpath(joined[2:]) if joined.startswith("~/") else None
            new = posixpath.normpath(joined) if rest is None else "~" if rest == "." else "~/" + rest
        self.folder, self.oldfolder = new, old

    def under_cwd(self, name: str) -> str | None:
        """``name`` (normalised) under the folder of the command's last ``cd``, when there is
        one and the name is a relative path (not ``../x`` above it, not a pseudo resource)."""
        if not self.cwd or name.startswith(("/", "~")) or PSEUDO_RE.match(name) or name in self.resolved:
            return None
        joined = normalise(posixpath.normpath(posixpath.join(self.cwd, name)))
        return joined if joined and joined != name and not joined.startswith("..") else None

    def fail(self, reason: str) -> None:
        """Mark opaque; the first reason wins."""
        if self.reason is None:
            self.reason = reason

    def merge(self, other: ShellAnalysis) -> None:
        """Fold a nested analysis into this one (run where this command is now: its names
        named where it started are named here)."""
        if other.here is not None:
            self.track_here()
        here, self.here = self.here, None
        runners: dict[str, list[str]] = {}  # each executed file's runners ("": as itself)
        for name, runner in other.runners:
            runners.setdefault(name, []).append(runner)
        folders = dict(self.run_folders)  # add() records this command's folder: set below instead
        for f in FIELDS:
            for r in getattr(other, f):
                for runner in runners.get(r, [""]) if f == "executes" else ("",):
                    self.add(f, r, runner)
        self.run_folders = folders
        self._merge_run_folders(other)
        self.here = here
        if here is not None:
            for f, r in other.here if other.here is not None else (
                    (f, r) for f in _PATH_ORDER for r in getattr(other, f) if relative_path(r)):
                self.mark_here(f, r)
        for entry in other.written_texts:
            self._text(entry)
        for copy, original in other.copies:
            self.copied(copy, original)
        if other.opaque:
            self.fail(other.opaque_reason or "nested command cannot be analysed")

    def _merge_run_folders(self, other: ShellAnalysis) -> None:
        """The folders the files a nested analysis executes run in, here: each under its own
        `cd` (``other.run_folders``) or where it started, which is this command's folder now."""
        own: dict[str, list[str]] = {}
        for name, folder in other.run_folders:
            own.setdefault(name, []).append(folder)
        for name in (normalise(r) for r in other.executes):
            if name is None:
                continue
            for folder in own.get(name, []):
                self.run_folders.setdefault((name, folder))
            joined = self.under_cwd(name)
            if joined and self.cwd:
                for folder in own.get(name, ["."]):
                    within = normalise(posixpath.normpath(posixpath.join(self.cwd, folder)))
                    if within:
                        self.run_folders.setdefault((joined, within))

    def result(self) -> ShellAnalysis:
        """Freeze into a ShellAnalysis."""
        return ShellAnalysis(*(tuple(self.lists[f]) for f in FIELDS),
                             opaque=self.reason is not None, opaque_reason=self.reason, folder=self.folder,
                             here=None if self.here is None else tuple(self.here), written_texts=tuple(self.texts),
                             runners=tuple(self.runners), copies=tuple(self.copies),
                             run_folders=tuple(self.run_folders))
