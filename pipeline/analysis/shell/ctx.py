"""What a per-command handler of the shell analyser sees: :class:`Ctx`.

One :class:`Ctx` per simple command: helpers that record reads, writes, executions, sends,
payloads and deletes (normalised, with provenance for downloaded files), what arrives on
stdin and what the command writes to stdout (for the next pipeline stage), and recursion
into nested command or program text. The analyser behind it (``Ctx.an``) is
:class:`pipeline.analysis.shell.engine.Analyser`, seen through :class:`AnalyserView`; code is
analysed by the function the entry point passed it (``Analyser.code``), so this module
imports neither the engine nor the code analyser (the protocol is in
:mod:`pipeline.analysis.shell.ctx_view`). Beside it, at its layer:
:mod:`pipeline.analysis.shell.ctx_written` (written names with computed parts, ``mktemp``
temps) and :mod:`pipeline.analysis.shell.ctx_provenance` (what a written file was made from,
the secrets known to lie in a folder); ``known_contents`` and ``mktemp_glob`` are re-exported.
"""

from __future__ import annotations

import posixpath

from pipeline.analysis.shell.ctx_provenance import derived_from, known_contents, names
from pipeline.analysis.shell.ctx_view import AnalyserView
from pipeline.analysis.shell.ctx_written import mktemp_glob, with_temps, written_glob
from pipeline.analysis.shell.model import VAR_RE, Flow, normalise
from pipeline.analysis.shell.redirects import fd_of_path, stdin_redirect
from pipeline.analysis.shell.words import SUB_RE

__all__ = ["Ctx", "AnalyserView", "known_contents", "mktemp_glob"]


class Ctx:
    """What a per-command handler sees: recording helpers, stdin, stdout, recursion."""

    def __init__(self, an: AnalyserView, stdin: Flow, redirs: list[tuple[str, str]]) -> None:
        self.an, self.acc, self.stdin, self.redirs = an, an.acc, stdin, redirs
        self.stdout: Flow | None = None
        self.scoped = False  # in a subshell, pipeline, function, conditional or loop body (syntax.Stage)
        self.in_subshell = False  # in subshells only: a `cd` holds to the subshell's end (Analyser.subshells)
        self.under_subshell = False  # in a subshell at all: a `cd` never moves the shell's own folder
        self.varied = False  # its words take several values (a loop's): run once per value
        self.stage_reads: list[str] = []
        self.stdin_taken = False  # the command it runs gets none of it (xargs) or not all (sudo -S)

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
        n = fd_of_path(self.text(word))
        was = self.an.fds.get(n or "")
        if was is not None and was[0] in ("<", "<>") and fd_of_path(was[1]) is None:
            self.read(was[1])  # `cat /dev/fd/3` after `3< key`: the key
            return
        if n == "0" or n is not None and n not in ("1", "2") and was is None:
            # `cat /dev/stdin`, or a descriptor not known here (a copy of stdin): what arrives
            self.stage_reads.extend(self.stdin.resources)
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
        for name in names(self.acc, text) if not self.dynamic(word) else ():
            self.an.tree_reads.add(name)
            for inside in known_contents(name):
                self.acc.add("reads", inside)

    def write(self, word: str, provenance: tuple[str, ...] = ()) -> None:
        """The command writes this file; ``provenance`` = resources its content came from."""
        m = SUB_RE.fullmatch(word)
        if m and self.an.subs[int(m.group(1))][0] == ">":
            return  # >(cmd): data goes to a command, analysed on its own
        name = written_glob(word, self.an.subs, self.an.temps, self.text) if self.dynamic(word) else self.text(word)
        if name is not None or self._strict(word, "written file"):
            self.acc.add("writes", name or self.text(word))
            for name in names(self.acc, name or self.text(word)) if provenance else ():
                self.an.provenance[name] = self.an.provenance.get(name, ()) + tuple(provenance)
                self.acc.derived_cache.clear()

    def execute(self, word: str, runner: str = "", within: str | None = None) -> None:
        """The command runs this file (and the URLs it was downloaded from in this command),
        with ``runner`` (:attr:`ShellAnalysis.runners`: "" the file itself, `./x`); ``within``:
        the folder the run happens in when not the shell's (`make -C app`: ``app``)."""
        m = SUB_RE.fullmatch(word)
        if m and self.an.subs[int(m.group(1))][0] == "<":
            flow = self.an.sub_flows.get(int(m.group(1)))
            if flow:
                for r in flow:  # `bash <(cat x.sh)`: x.sh runs, as the interpreter reads it
                    self.acc.add("executes", r, runner)
                return
        word = with_temps(word, self.an.temps)  # `T=$(mktemp); ...; bash "$T"`: the fresh file, /tmp/tmp.*
        if self._strict(word, "executed file"):
            self.acc.add("executes", self.text(word), runner, within)
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

    def derived(self, resource: str, leaves_out: frozenset[str] = frozenset()) -> tuple[str, ...]:
        """What ``resource``, a file this command wrote earlier, was made from, transitively
        (:func:`pipeline.analysis.shell.ctx_provenance.derived_from`): sending it sends them too."""
        return derived_from(self.acc, self.an.provenance, resource, leaves_out)

    def add_payload(self, resource: str, leaves_out: frozenset[str] = frozenset()) -> None:
        """Record a resource sent out, and what it was made from in this command (a folder:
        but not the files named ``leaves_out``, which the sender never packs: npm's ``.npmrc``),
        with the secrets known to lie in a folder every machine has (:meth:`_payload_contents`)."""
        self.acc.add("payloads", resource)
        for src in self.derived(resource, leaves_out):
            self.acc.add("payloads", src)
            self._payload_contents(src, read_whole=True)
        self._payload_contents(resource, read_whole=False)

    def _payload_contents(self, resource: str, read_whole: bool) -> None:
        """The secrets known to lie in a folder every machine has (a home folder, ``/``),
        sent with ``resource`` (by each of its names: ``cd ~ && tar czf /tmp/h.tgz .``, ``.`` is
        the home). ``read_whole``: ``resource`` is what the file sent was made from, which then
        counts only for a folder read whole (``tar czf /tmp/h.tgz ~`` then ``curl -T /tmp/h.tgz``
        sends ``~/.ssh``), not for a listing (``find ~ -name '*.py' > f``: names only)."""
        for name in names(self.acc, resource):
            if not read_whole or name in self.an.tree_reads:
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
            self.an.keep_var(name)

    # -- stdin
    def stdin_redirect(self) -> tuple[str, str] | None:
        """The redirection that is stdin (the last on descriptor 0: :mod:`.redirects`), if any;
        then ``stdin`` holds only what a here-document or here-string carries, no pipe's data."""
        return stdin_redirect(self.redirs)

    def stdin_file(self) -> str | None:
        """The file stdin carries as it is, if any: a copy's original (`tee y.sh < x.sh`,
        `cat x.sh | tee y.sh`; a pipe's data may be any part of what the command before it
        read: `grep -v curl x.sh | tee y.sh` is no copy)."""
        into = self.stdin_redirect()
        if into is None:
            return self.stdin.resources[0] if self.stdin.whole and len(self.stdin.resources) == 1 else None
        return self.text(into[1]) if into[0] == "<" and not self.dynamic(into[1]) else None

    def stdin_literal(self) -> str | None:
        """Known text on stdin: a here-doc, here-string or piped literal."""
        into = self.stdin_redirect()
        if into is not None:
            return self.an.redir_text(*into) if into[0] in ("<<", "<<<") else None
        return self.stdin.literal if not self.stdin.transformed else None

    def stdin_payloads(self) -> None:
        """Whatever arrives on stdin is sent out (``curl -d @-``, ``nc host < f``)."""
        into = self.stdin_redirect()
        if into is not None and into[0] in ("<", "<>"):
            self.payload(into[1])
        elif into is not None:
            self.payload(self.an.redir_text(*into), literal=True)
        for r in self.stdin.resources:
            self.add_payload(r)
        if self.stdin.literal is not None:
            self.payload(self.stdin.literal, literal=True)

    def stdin_program(self, lang: str) -> None:
        """The interpreter reads its program from stdin: analyse or execute what comes in."""
        into = self.stdin_redirect()
        if into is not None and into[0] in ("<", "<>"):
            self.execute(into[1], lang)
            return
        if into is not None:
            self.program(self.an.redir_text(*into), lang)
            return
        src = self.stdin
        if not self.an.piped:
            return  # interactive interpreter, nothing to run
        if src.transformed:
            self.acc.fail("decoded or transformed data piped into an interpreter")
        elif src.literal is not None or src.resources:  # a group's output may hold both
            if src.literal is not None:
                self.program(src.literal, lang)
            for r in src.resources:  # `cat x.sh | bash`: x.sh runs, read as the interpreter reads it
                self.acc.add("executes", r, lang)
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

