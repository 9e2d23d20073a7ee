"""What a per-command handler of the shell analyser sees: :class:`Ctx`.

One :class:`Ctx` per simple command: helpers that record reads, writes, executions, sends,
payloads and deletes (normalised, with provenance for downloaded files), what arrives on
stdin and what the command writes to stdout (for the next pipeline stage), and recursion
into nested command or program text. The analyser behind it (``Ctx.an``) is
:class:`pipeline.analysis.shell.engine.Analyser`, seen through :class:`AnalyserView`; code is
analysed by the function the entry point passed it (``Analyser.code``), so this module
imports neither the engine nor the code analyser.
"""

from __future__ import annotations

import posixpath
import re
import shlex

from collections.abc import Callable
from typing import Protocol

from pipeline.analysis.shell.model import VAR_RE, Acc, Flow, ShellAnalysis, normalise
from pipeline.analysis.shell.tables import HOME_FOLDER, HOME_SECRETS, KNOWN_CONTENTS
from pipeline.analysis.shell.words import SUB_RE, restore_private

__all__ = ["Ctx", "AnalyserView", "known_contents", "mktemp_glob"]

_HOME_FOLDER = re.compile(HOME_FOLDER)
_DYNAMIC = re.compile(f"{SUB_RE.pattern}|{VAR_RE.pattern}")
_TMPDIR = re.compile(r"\$(?:TMPDIR\b|\{TMPDIR(?::?-[^}]*)?\})")
# pseudo resources written with a computed part (`docker build -t api:$VERSION`): never a file
_PSEUDO_WRITES = ("image:",)


def mktemp_glob(inner: str) -> str | None:
    """The path ``$(inner)`` names when ``inner`` is a plain ``mktemp`` call: a fresh
    file or folder, as a glob (``/tmp/tmp.*``; a template's ``XXX`` run as ``*``, under
    ``-p DIR``/``--tmpdir[=DIR]``/``-t`` in that folder; ``$TMPDIR`` is taken to be
    ``/tmp``). None for anything else (a computed folder or template, other commands)."""
    try:
        words = shlex.split(_TMPDIR.sub("/tmp", inner))
    except ValueError:
        return None
    if not words or words[0] != "mktemp" or any(c in w for w in words for c in "$`<>|;&()"):
        return None
    folder: str | None = None
    template: str | None = None
    suffix, intmp, i = "", False, 1
    while i < len(words):
        w = words[i]
        if w in ("-p", "--tmpdir") and i + 1 < len(words) and not (w == "--tmpdir"):
            folder, i = words[i + 1], i + 2
            continue
        if w.startswith("--tmpdir"):
            folder = w.partition("=")[2] or "/tmp"
        elif w.startswith("--suffix"):
            if "=" not in w:
                if i + 1 >= len(words):
                    return None
                suffix, i = words[i + 1], i + 2
                continue
            suffix = w.partition("=")[2]
        elif w in ("--directory", "--dry-run", "--quiet"):
            pass
        elif w.startswith("-") and len(w) > 1 and not w.startswith("--"):
            flags = w[1:]
            if "p" in flags:
                at = flags.index("p")
                if set(flags[:at]) - set("dqut"):
                    return None
                intmp = intmp or "t" in flags[:at]
                rest = flags[at + 1:]
                if not rest:
                    if i + 1 >= len(words):
                        return None
                    rest, i = words[i + 1], i + 1
                folder = rest
            elif set(flags) - set("dqut"):
                return None
            else:
                intmp = intmp or "t" in flags
        elif template is None and not w.startswith("-"):
            template = w
        else:
            return None
        i += 1
    if template is None:
        name = "tmp.*"
        folder = folder or "/tmp"
    else:
        name, n = re.subn(r"X{3,}(?!.*X{3})", "*", template)
        if not n or "$" in name:
            return None
        if intmp and folder is None:
            folder = "/tmp"
        if folder is not None:
            name = posixpath.basename(name)
    if folder == "":
        folder = "/tmp"
    path = posixpath.join(folder, name + suffix) if folder is not None else name + suffix
    return path if "*" in path else None


def known_contents(folder: str) -> tuple[str, ...]:
    """The secrets known to lie in ``folder`` (normalised), a folder every machine has: a
    home folder's ``HOME_SECRETS``, ``/``'s and ``/etc``'s (``KNOWN_CONTENTS``); none for any
    other folder, whose contents are not known."""
    inside = HOME_SECRETS if _HOME_FOLDER.fullmatch(folder) else KNOWN_CONTENTS.get(folder, ())
    return tuple(folder.rstrip("/") + "/" + s for s in inside)


class AnalyserView(Protocol):
    """What a :class:`Ctx` uses of the analyser (:class:`pipeline.analysis.shell.engine.Analyser`)."""

    acc: Acc
    depth: int
    piped: bool
    subs: list[tuple[str, str]]
    sub_flows: dict[int, tuple[str, ...]]
    provenance: dict[str, tuple[str, ...]]
    var_sources: dict[str, tuple[str, ...]]
    env: dict[str, list[str] | None]
    temps: dict[str, str]
    code: Callable[[str, bool, int], ShellAnalysis]

    def sub(self, text: str, stdin: Flow | None = None) -> ShellAnalysis: ...
    def restore(self, word: str) -> str: ...
    def redir_text(self, op: str, target: str) -> str: ...
    def sources(self, word: str) -> tuple[str, ...]: ...
    def assign(self, name: str, raw: str | None) -> None: ...
    def dispatch(self, words: list[str], ctx: "Ctx") -> None: ...


class Ctx:
    """What a per-command handler sees: recording helpers, stdin, stdout, recursion."""

    def __init__(self, an: AnalyserView, stdin: Flow, redirs: list[tuple[str, str]]) -> None:
        self.an, self.acc, self.stdin, self.redirs = an, an.acc, stdin, redirs
        self.stdout: Flow | None = None
        self.scoped = False  # in a subshell, pipeline, function, conditional or loop body (syntax.Stage)
        self.stage_reads: list[str] = []

    # -- words
    def text(self, word: str) -> str:
        """The word as written (placeholders and private characters restored)."""
        return self.an.restore(word)

    def dynamic(self, word: str) -> bool:
        """True when the word still holds an unresolved variable or substitution."""
        return bool(SUB_RE.search(word) or VAR_RE.search(word))

    def _sources(self, word: str, env: bool = True) -> tuple[str, ...]:
        return self.an.sources(word, env)

    def _strict(self, word: str, what: str) -> bool:
        if self.dynamic(word):
            self.acc.fail(f"{what} built from a variable or substitution: {self.text(word)[:80]}")
            return False
        return True

    # -- recording
    def read(self, word: str) -> None:
        """The command reads this file/URL."""
        if SUB_RE.fullmatch(word):
            return  # the substitution's own resources are already recorded
        self.acc.add("reads", self.text(word))
        self.stage_reads.append(normalise(self.text(word)) or "")
        if "://" in self.text(word):
            self.credential(word)
            if self._sources(word, env=False):
                self.send(word)  # a GET whose URL carries local data is egress too

    def read_tree(self, word: str) -> None:
        """The command reads this path and, when it names a folder (no suffix, or a dot
        folder: `~/.ssh`, `src/`), everything in it (`tar c`, `zip -r`, `cp -r`): recorded as
        ``DIR/*``, which the folder-contents labels (`*.ssh/*`) see, and in a folder every
        machine has (`~`, `/`) the secrets known to lie there (:func:`known_contents`); `ls
        ~/.ssh` reads names only and stays a read of the folder."""
        self.read(word)
        text = self.text(word)
        base = posixpath.basename(text.rstrip("/"))
        if base and not self.dynamic(word) and (text.endswith("/") or "." not in base.lstrip(".")):
            self.read(text.rstrip("/") + "/*")
        for name in self._names(text) if not self.dynamic(word) else ():
            for inside in known_contents(name):
                self.acc.add("reads", inside)

    def write(self, word: str, provenance: tuple[str, ...] = ()) -> None:
        """The command writes this file; ``provenance`` = resources its content came from."""
        m = SUB_RE.fullmatch(word)
        if m and self.an.subs[int(m.group(1))][0] == ">":
            return  # >(cmd): data goes to a command, analysed on its own
        name = self.written_glob(word) if self.dynamic(word) else self.text(word)
        if name is not None or self._strict(word, "written file"):
            self.acc.add("writes", name or self.text(word))
            for name in self._names(name or self.text(word)) if provenance else ():
                self.an.provenance[name] = self.an.provenance.get(name, ()) + tuple(provenance)
                self.acc.derived_cache.clear()

    def _temps(self, word: str) -> str:
        """``word`` with each variable bound to a fresh ``$(mktemp)`` path replaced by its glob."""
        temps = self.an.temps

        def temp(m: re.Match[str]) -> str:
            var = m.group(4) or (m.group(2) if m.group(0) == "${" + str(m.group(2)) + "}" else None)
            return temps.get(var or "", m.group(0))
        return _DYNAMIC.sub(temp, word) if temps else word

    def written_glob(self, word: str) -> str | None:
        """A written target with a computed part, known up to a glob (``*`` for each computed
        part), or None (opaque). A variable bound in the command to ``$(mktemp ...)`` is that
        fresh path (``"$D/out.json"``: ``/tmp/tmp.*/out.json``). Any other computed part must
        lie in the last path component, after literal text (``backups/app-$(date +%F).db``:
        ``backups/app-*.db``; ``/tmp/out-$$.log``; ``release-${V}.tgz``), and hold no ``/``
        in its own text (``${X:-/etc/x}``, ``$(date +%Y/%m)``): it cannot move the file to
        another folder, so the folder is known. A computed folder (``"$DIR/x"``,
        ``$(cat f)/x``), a component that is computed from its start (``"$LOG"``,
        ``~/$NAME``, ``out/$F``: it may be ``..`` or absolute) stays opaque. A pseudo
        resource (``image:api:$VERSION``) is never a file: ``*`` for each computed part."""
        word = self._temps(word)
        text = self.text(word)
        if text.startswith(_PSEUDO_WRITES):
            scheme = len(text.split(":", 1)[0]) + 1
            if not _DYNAMIC.search(word[:scheme]):
                return restore_private(re.sub(r"\*+", "*", _DYNAMIC.sub("*", word)))
            return None
        spans = list(_DYNAMIC.finditer(word))
        if not spans:
            return restore_private(word)  # only temp paths: known
        last = word.rfind("/")
        if spans[0].start() <= last + 1 or (last < 0 and word.startswith("~")):
            return None
        for m in spans:
            if m.group(1) is not None:
                kind, inner = self.an.subs[int(m.group(1))]
                if kind not in ("$", "=") or "/" in inner:
                    return None
            elif "/" in (m.group(3) or ""):
                return None
        return restore_private(re.sub(r"\*+", "*", _DYNAMIC.sub("*", word)))

    def execute(self, word: str) -> None:
        """The command runs this file (and the URLs it was downloaded from in this command)."""
        m = SUB_RE.fullmatch(word)
        if m and self.an.subs[int(m.group(1))][0] == "<":
            flow = self.an.sub_flows.get(int(m.group(1)))
            if flow:
                for r in flow:
                    self.acc.add("executes", r)
                return
        word = self._temps(word)  # `T=$(mktemp); ...; bash "$T"`: the fresh file, /tmp/tmp.*
        if self._strict(word, "executed file"):
            self.acc.add("executes", self.text(word))
            self._runs_downloads(self.text(word))

    def _runs_downloads(self, program: str) -> None:
        """Running ``program`` runs the URLs it was made from in this command, transitively
        (`curl -o a URL; cp a b; ./b`)."""
        for src in self.derived(program):
            if "://" in src:
                self.acc.add("executes", src)

    def send(self, dest: str) -> None:
        """Network destination (URL, host, tcp://host:port, mailto:...)."""
        self.acc.add("sends", self.text(dest))
        # an environment variable in the destination is how APIs take their own credentials
        # (`?key=$GOOGLE_API_KEY`, `/bot$TELEGRAM_TOKEN/`, `https://x:$TOKEN@host`): not data
        # sent, as a header (`-H "Authorization: Bearer $TOKEN"`) is not
        for r in self._sources(dest, env=False):
            self.acc.add("payloads", r)
        self.credential(dest)

    def credential(self, word: str) -> bool:
        """The environment variables a request word (its URL, a header) carries: credentials
        passed to the destination, recorded apart from payloads (see ``ShellAnalysis``).
        Local data in it (``-H "X: $(cat ~/.ssh/id_rsa)"``) is a payload; True when there
        is some (the request sends it, whatever its method)."""
        local = set(self._sources(word, env=False))
        for r in self._sources(word):
            if r.startswith("env:") and r not in local:
                self.acc.add("credentials", r)
        for r in local:
            self.acc.add("payloads", r)
        return bool(local)

    def _names(self, resource: str) -> tuple[str, ...]:
        """The names ``resource`` goes by in this command: as written and, after a ``cd``,
        under that folder (see ``Acc.add``)."""
        name = normalise(resource)
        if not name:
            return ()
        joined = self.acc.under_cwd(name)
        return (name, joined) if joined else (name,)

    def derived(self, resource: str, leaves_out: frozenset[str] = frozenset()) -> tuple[str, ...]:
        """What ``resource`` (a file this command wrote earlier: ``tar czf a.tgz ~/.ssh``,
        ``base64 key > k.txt``, ``env > e.txt``) was made from, transitively: sending the
        file sends them too. A folder (``.``, ``dist/*``, a build context) also carries what
        the command wrote inside it (``cp key ./creds && npm publish``; not ``../x``, not
        what was written while in another folder). Empty for a file this command did not
        write. Remembered per command until the next write."""
        names = self._names(resource)
        cached = self.acc.derived_cache.get((names, leaves_out))
        if cached is not None:
            return cached
        todo = [n for name in names for n in (name, *self._written_inside(name, leaves_out))]
        seen: dict[str, None] = {}
        folders = 4  # folders expanded beyond the first: an image's build context, a copied folder
        while todo and len(seen) < 256:
            for src in self.an.provenance.get(todo.pop(), ()):
                src_name = normalise(src)
                if src_name and src_name not in seen:
                    seen[src_name] = None
                    todo.append(src_name)
                    if folders > 0 and (inside := self._written_inside(src_name, leaves_out)):
                        folders -= 1
                        todo.extend(inside)
        result = tuple(seen)
        self.acc.derived_cache[(names, leaves_out)] = result
        return result

    def _written_inside(self, folder: str, leaves_out: frozenset[str] = frozenset()) -> list[str]:
        """The files this command wrote inside ``folder``: for ``.``, the relative names
        that stay in it (not ``../x``), or after a ``cd`` the names under that folder; not
        those named ``leaves_out``."""
        if folder == "." and self.acc.cwd:
            folder = self.acc.cwd
        if folder == ".":
            found = [k for k in self.an.provenance
                     if not k.startswith(("/", "~", "../")) and k != ".." and ":" not in k]
        else:
            inside = folder.removesuffix("/*").rstrip("/") + "/"
            found = [k for k in self.an.provenance if k.startswith(inside) and not k[len(inside):].startswith("../")]
        return [k for k in found if posixpath.basename(k) not in leaves_out] if leaves_out else found

    def add_payload(self, resource: str, leaves_out: frozenset[str] = frozenset()) -> None:
        """Record a resource sent out, and what it was made from in this command (a folder:
        but not the files named ``leaves_out``, which the sender never packs: npm's ``.npmrc``),
        and for a folder every machine has (a home folder, ``/``) the secrets known to lie in it."""
        self.acc.add("payloads", resource)
        for src in self.derived(resource, leaves_out):
            self.acc.add("payloads", src)
        for name in self._names(resource):
            for inside in known_contents(name):
                self.acc.add("payloads", inside)

    def payload(self, word: str, literal: bool = False, own: frozenset[str] = frozenset()) -> None:
        """A file (or, with ``literal``, inline data) sent out. ``own``: environment
        resources the data passes as the request's own credentials (see
        :func:`oauth_credentials`), recorded as credentials instead."""
        text = self.text(word)
        for r in self._sources(word):
            self.acc.add("credentials" if r in own else "payloads", r)
        if literal:
            if text.strip():
                self.acc.add("payloads", "data:" + text[:256])
        elif not SUB_RE.fullmatch(word):
            self.add_payload(text)

    def delete(self, word: str) -> None:
        """The command destroys this resource."""
        self.acc.add("deletes", self.text(word))

    def fail(self, reason: str) -> None:
        """The command cannot be analysed."""
        self.acc.fail(reason)

    def assign(self, name: str, raw: str | None, sources: tuple[str, ...] = ()) -> None:
        """Shell variable assignment (``export X=..``, ``read X``): raw value or unknown;
        ``sources``: the resources an unknown value is read from (``read X`` from stdin)."""
        self.an.assign(name, raw)
        if sources:
            self.an.var_sources[name] = sources

    # -- stdin
    def stdin_literal(self) -> str | None:
        """Known text on stdin: a here-doc, here-string or piped literal."""
        for op, target in self.redirs:
            if op in ("<<", "<<<"):
                return self.an.redir_text(op, target)
        return self.stdin.literal if not self.stdin.transformed else None

    def stdin_payloads(self) -> None:
        """Whatever arrives on stdin is sent out (``curl -d @-``, ``nc host < f``)."""
        for op, target in self.redirs:
            if op == "<":
                self.payload(target)
            elif op in ("<<", "<<<"):
                self.payload(self.an.redir_text(op, target), literal=True)
        for r in self.stdin.resources:
            self.add_payload(r)
        if self.stdin.literal is not None:
            self.payload(self.stdin.literal, literal=True)

    def stdin_program(self, lang: str) -> None:
        """The interpreter reads its program from stdin: analyse or execute what comes in."""
        for op, target in self.redirs:
            if op == "<":
                self.execute(target)
                return
            if op in ("<<", "<<<"):
                self.program(self.an.redir_text(op, target), lang)
                return
        src = self.stdin
        if not self.an.piped:
            return  # interactive interpreter, nothing to run
        if src.transformed:
            self.acc.fail("decoded or transformed data piped into an interpreter")
        elif src.literal is not None or src.resources:  # a group's output may hold both
            if src.literal is not None:
                self.program(src.literal, lang)
            for r in src.resources:
                self.acc.add("executes", r)
                self._runs_downloads(r)
        else:
            self.acc.fail("program piped into an interpreter from command output")

    # -- stdout
    def stdout_literal(self, text: str, items: list[str] | None = None) -> None:
        """Stdout is this known text (echo, printf, cat <<EOF)."""
        words = [self.text(w) for w in items] if items is not None else []
        self.stdout = Flow(literal=self.text(text), items=tuple(words))

    def stdout_items(self, items: list[str]) -> None:
        """Stdout lists these names (find, grep -l)."""
        self.stdout = Flow(resources=tuple(self.stage_reads), items=tuple(items))

    def stdout_resources(self, res: tuple[str, ...], transformed: bool = False) -> None:
        """Stdout carries the content of these resources."""
        self.stdout = Flow(resources=tuple(r for r in (normalise(x) for x in res) if r),
                           transformed=transformed)

    def stdout_transformed(self) -> None:
        """Stdout is stdin/file content rewritten (sed, tr, awk)."""
        self.stdout = Flow(resources=tuple(dict.fromkeys(self.stdin.resources + tuple(self.stage_reads))),
                           transformed=True)

    def stdout_passthrough(self) -> None:
        """Stdout is stdin unchanged (tee, cat)."""
        self.stdout = Flow(self.stdin.resources + tuple(self.stage_reads), self.stdin.literal,
                           self.stdin.items, self.stdin.transformed)

    # -- recursion
    def program(self, text: str, lang: str) -> None:
        """Analyse program text given inline (``-c``, here-doc): shell, python or other code."""
        if lang == "shell":
            self.acc.merge(self.an.sub(text))
        else:
            self.acc.merge(self.an.code(text, lang == "python", self.an.depth + 1))

    def run_argv(self, argv: list[str]) -> None:
        """Analyse ``argv`` (raw words) as a simple command of its own (sudo, xargs, -exec)."""
        self.an.dispatch(list(argv), self)

    def run_text(self, word: str) -> None:
        """Analyse a word holding a whole command line (``bash -c``, ``su -c``)."""
        self.acc.merge(self.an.sub(self.text(word)))

    def run_text_literal(self, text: str, stdin: Flow | None = None) -> None:
        """Analyse command text that is already plain text (awk system(), watch); ``stdin``:
        what its first command reads (socat's connection)."""
        self.acc.merge(self.an.sub(text, stdin))

