"""The rows a run of a written file gets from an analysis of its text (:func:`kept_rows`):
what it reads, runs, deletes and sends, and marked rows that never reach ``resources``:
how it runs the files it executes and where, and which of its relative names it gave
where it started; and those rows for a run in a folder (:func:`in_folders`). Used by
:mod:`pipeline.analysis.written_file`, :mod:`pipeline.analysis.written_tool_file` and
:mod:`pipeline.analysis.written`.
"""

from __future__ import annotations

import posixpath

from pipeline.analysis.analysed import Found
from pipeline.analysis.shell.model import PSEUDO_RE, normalise, relative_path

_WRITTEN_ACCESS = frozenset({"read", "execute", "delete", "send", "payload"})
# the mark of a row that says how the text runs a file it executes (``Found.runners``:
# ``(RUNS_AS + runner, name)``, e.g. ``("runs_as:make:test", "Makefile")``): a written
# program that runs another written file in turn hands the next pass of
# written_programs the runner, as a program step's own runs do (sql/written_runs.sql)
RUNS_AS = "runs_as:"
# likewise the folder a file the text executes under a `cd` of its own runs in
# (``Found.run_folders``: ``(RUN_FOLDER + folder, name)``); and, for a text with a `cd` of
# its own, which relative names it named where it started (``Found.here``: HERE marks) and
# which it did not (ELSEWHERE marks): only the first are read under the folder a run
# happens in (in_folders), as only they are under a folder carried between steps
RUN_FOLDER = "run_folder:"
HERE, ELSEWHERE = "here:", "elsewhere:"
# and a known text the written program writes (``Found.texts``: ``(WROTE + "NNNNNN:" + name,
# text)``, NNNNNN its place among the texts the program writes: :func:`written_name`):
# a file it writes, then runs (`cat > helper.sh <<'EOF' ... EOF` then `sh helper.sh`) is
# followed by the next pass from that text, as a program step's own known texts are
# (``shell_texts``: :func:`pipeline.analysis.written.written_programs`)
WROTE = "wrote:"
# and a copy it makes (``Found.copies``: ``(COPIED + copy, original)``: `cp deploy.sh d2.sh`
# then `sh d2.sh`), followed from the original as a program step's own copies are
# (``shell_copies``)
COPIED = "copied:"
MARKS = (RUNS_AS, RUN_FOLDER, HERE, ELSEWHERE, WROTE, COPIED)
_JOINED_ACCESS = frozenset({"read", "execute", "delete", "payload"})  # a relative name is a path
# the folders a run of one file in one step is read in at most (`cd a1 && bash ../x.sh;
# cd a2 && ...`: each folder reads every relative name of x.sh again)
MAX_RUN_FOLDERS = 16


def kept_rows(found: Found) -> set[tuple[str, str]]:
    """What an analysis of a written text finds that a run of the file does (what it writes
    is the run's own business), how it runs each file it executes (:data:`RUNS_AS` rows),
    where (:data:`RUN_FOLDER` rows), the known texts it writes (:data:`WROTE` rows), and
    which of its relative names are where it started (:data:`HERE` / :data:`ELSEWHERE`);
    marked rows never reach ``resources``."""
    rows = {(a, r) for a, r in found.rows if a in _WRITTEN_ACCESS}
    marks = {(RUNS_AS + runner, name) for name, runner in found.runners} | \
        {(RUN_FOLDER + folder, name) for name, folder in found.run_folders} | \
        {(WROTE + f"{k:06d}:" + name, text) for k, (name, text, _) in enumerate(found.texts)} | \
        {(COPIED + copy, original) for copy, original in found.copies}
    if found.here is not None:  # a `cd` of its own (code: no name is known to be where it started)
        here = set(found.here)
        marks |= {(HERE + a, r) for a, r in here if a in _JOINED_ACCESS}
        marks |= {(ELSEWHERE + a, r) for a, r in rows if a in _JOINED_ACCESS and (a, r) not in here}
        # a text it writes, or a copy it makes, after a `cd` of its own is not where the run
        # started either
        marks |= {(ELSEWHERE + "wrote", name) for name, _, _ in found.texts if ("write", name) not in here}
        marks |= {(ELSEWHERE + "copied", copy) for copy, _ in found.copies if ("write", copy) not in here}
    return rows | marks


def written_name(key: str) -> str:
    """The file's name of a :data:`WROTE` key (``NNNNNN:name``, after the mark: the text's
    place among those the program writes, then the name)."""
    return key.split(":", 1)[1]


def _under(folder: str, name: str) -> str | None:
    """A relative ``name`` under ``folder`` (normalised; None for another name, or one
    that lands above a relative folder)."""
    if name.startswith(("/", "~")) or PSEUDO_RE.match(name):
        return None
    joined = normalise(posixpath.normpath(posixpath.join(folder, name)))
    return None if joined is None or joined == ".." or joined.startswith("../") else joined


def in_folders(got: set[tuple[str, str]], folders: list[str] | None) -> set[tuple[str, str]]:
    """What a run of a file in ``folders`` (a `cd` before it, a folder carried from an
    earlier step: ``sql/written_runs.sql``'s ``folders``; the first :data:`MAX_RUN_FOLDERS`)
    gets: ``got`` (the names its text gives, as the analyser keeps a name also as given)
    and each relative path name it named where it started also under each folder, as the
    files it runs (their runners, and the folders they run in: the folder, or under it the
    one the text's own `cd` names)."""
    if not folders:
        return got
    out = set(got)
    own: dict[str, list[str]] = {}
    elsewhere: set[tuple[str, str]] = set()
    names: set[tuple[str, str]] = set()  # (access, name) read under the folders
    for access, name in got:
        if access.startswith(RUN_FOLDER):
            own.setdefault(name, []).append(access[len(RUN_FOLDER):])
        elif access.startswith(ELSEWHERE):
            elsewhere.add((access[len(ELSEWHERE):], name))
        elif access.startswith(HERE):
            names.add((access[len(HERE):], name))
    names |= {(a, n) for a, n in got if (a in _JOINED_ACCESS or a.startswith(RUNS_AS))
              and ("execute" if a.startswith(RUNS_AS) else a, n) not in elsewhere}
    # the known texts it writes where it started (WROTE + name, text): also under the folder
    texts = [(a[len(WROTE):], text) for a, text in got if a.startswith(WROTE)
             and ("wrote", written_name(a[len(WROTE):])) not in elsewhere]
    copies = [(a[len(COPIED):], original) for a, original in got if a.startswith(COPIED)
              and ("copied", a[len(COPIED):]) not in elsewhere]
    for folder in folders[:MAX_RUN_FOLDERS]:
        if folder == ".":
            continue
        for copy, original in copies:  # a relative original is there too
            joined = _under(folder, copy)
            if joined is not None:
                out.add((COPIED + joined, _under(folder, original) or original))
        for key, text in texts:
            place, name = key.split(":", 1)
            joined = _under(folder, name)
            if joined is not None:
                out.add((WROTE + place + ":" + joined, text))
        for access, name in names:
            joined = _under(folder, name)
            if joined is None:
                continue
            out.add((access, joined))
            if access == "execute":
                for within in own.get(name, ["."]):  # the text's own folder for it, under this one
                    out.add((RUN_FOLDER + (within if within.startswith(("/", "~")) else
                                           _under(folder, within) or folder), joined))
        for name, withins in own.items():  # absolute names the text runs after its own `cd`
            if not relative_path(name):
                out.update((RUN_FOLDER + (w if not relative_path(w) else _under(folder, w) or folder), name)
                           for w in withins)
    return out
