"""The shell analyser's walk: one :class:`Analyser` per command text and nesting level.

:func:`pipeline.analysis.shell.syntax.parse` flattens the text into pipelines of simple commands;
the analyser binds variables assigned on the way (``X=...``, ``for x in a b``), expands
known ones (each loop value in turn, bounded by ``MAX_PRODUCT``), analyses each
substitution once when first used, passes each stage's stdout flow to the next and
dispatches every simple command to :mod:`pipeline.analysis.shell.commands`. Nested text
(``bash -c``, substitutions) is analysed by a child analyser one level deeper, up to
``MAX_DEPTH``. Program text (``python -c``) goes to the ``code`` function the caller gives.
"""

from __future__ import annotations

import itertools
import math
import posixpath
import time
from collections.abc import Callable, Iterable
from dataclasses import replace

from pipeline.analysis.shell.cmd_shell import printed_text
from pipeline.analysis.shell.cmd_text import catted_file
from pipeline.analysis.shell.commands import KEYWORDS, run_command_words
from pipeline.analysis.shell.engine_words import Words
from pipeline.analysis.shell.redirects import Opened, base_op, stdin_redirect
from pipeline.analysis.shell.ctx import Ctx, mktemp_glob
from pipeline.analysis.shell.budget import STAGE_WORK, TOO_COMPLEX, Budget, TooComplex, budget
from pipeline.analysis.shell.model import (
    ASSIGN_RE, DEV_TCP, MAX_COMMAND_CHARS, MAX_DEPTH, MAX_PRODUCT, VAR_RE, Acc, Flow, ShellAnalysis,
)
from pipeline.analysis.shell.stages import ROOT
from pipeline.analysis.shell.syntax import Stage, parse
from pipeline.analysis.shell.tables import PROXY_VARS
from pipeline.analysis.shell.tree import PARSE_CPU_SECONDS
from pipeline.analysis.shell.words import SUB_RE

__all__ = ["Analyser", "CodeAnalyser", "analyse"]

CodeAnalyser = Callable[[str, bool, int], ShellAnalysis]
"""``code(text, python, depth)``: resources of program text run by a command."""


_STDOUT_OPS = (">", ">>", ">|", "&>", "&>>")  # redirections of stdout (`&>`: with stderr)


def _moves_stdout(op: str, target: str) -> bool:
    """Whether a redirection sends a command's stdout elsewhere than down its pipe
    (`>&2`, `1>&2`, `>&-`, `> /dev/stderr`, `>&3`, `1<&2`, `1<&-`): then what it prints is
    not what the next command reads. Stdin's and other descriptors' redirections (`< f`,
    `2>err`, `2>&1`) leave it."""
    fd = op[:len(op) - len(base_op(op))]
    return fd == "1" or fd == "" and base_op(op) not in ("<", "<<", "<<<", "<&", "<>")


class Analyser(Words):
    """State of one command text at one nesting level (its words' text and what they
    carry: :class:`pipeline.analysis.shell.engine_words.Words`)."""

    def __init__(self, depth: int, parent: "Analyser | None" = None,
                 code: CodeAnalyser | None = None, spend: Budget | None = None) -> None:
        self.acc = Acc()
        self.depth = depth
        self.budget: Budget = parent.budget if parent else spend if spend is not None else Budget()
        found = code if code is not None else parent.code if parent else None
        if found is None:
            raise ValueError("an Analyser needs a code analyser (or a parent that has one)")
        self.code: CodeAnalyser = found
        self.env: dict[str, list[str] | None] = dict(parent.env) if parent else {}
        # variables bound in the command to a fresh temp path (`D=$(mktemp -d)`): its glob
        self.temps: dict[str, str] = dict(parent.temps) if parent else {}
        self.var_sources: dict[str, tuple[str, ...]] = dict(parent.var_sources) if parent else {}
        self.git_remotes: dict[str, str] = parent.git_remotes if parent else {}
        # descriptors a bare `exec` opened (`exec 3<>/dev/tcp/h/80`): redirects.through_opened; a
        # nested text (a substitution, `bash -c`) inherits them but its stdin and stdout are its own
        self.opened: Opened = {k: v for k, v in parent.opened.items() if k not in ("0", "1")} if parent else {}
        self.fds: Opened = {}  # the descriptors of the simple command being analysed (`read -u 3`)
        self.last = True  # the command being analysed ends its pipeline (its stdout is the text's)
        self.alone = True  # ... and is its pipeline's only command
        self.layer_fds: dict[tuple[object, ...], tuple[Opened, tuple[str, str] | None]] = {}  # surroundings()
        self.opened_version = 0  # bumped when a bare `exec` may have changed ``opened``
        self.layer_pipe: dict[int, Flow] = {}  # per compound with a stdin: what was piped into it
        self.layer_names: dict[tuple[int, ...], tuple[list[int], frozenset[str]]] = {}  # layer_words()
        self.subs: list[tuple[str, str]] = []
        self.docs: list[str] = []
        self.doc_subs: list[list[int]] = []
        self.doc_expands: list[bool] = []
        self.sub_flows: dict[int, tuple[str, ...]] = {}
        self.sub_values: dict[int, str] = {}
        self.provenance: dict[str, tuple[str, ...]] = {}
        self.tree_reads: set[str] = set()  # folders read whole (tar c, zip -r, cp -r): Ctx.read_tree
        self.piped = False
        self.in_subshell = False  # the command lies in a subshell only (a `cd` holds to its end)
        self.varied = False  # the stage runs once per value of a word with several (a loop's)
        self.under_subshell = False  # ... in a subshell at all
        self.folders_at: dict[int, tuple[str | None, bool]] = {}  # per open subshell: Acc.cwd, Acc.lost at its start
        self.dirs_at: dict[int, list[tuple[str | None, bool]]] = {}  # ... and Acc.dirs
        self.outputs: list[Flow] = []  # what the text's pipelines write to its own stdout

    def sub(self, text: str, stdin: Flow | None = None) -> ShellAnalysis:
        """Analyse nested command text one level deeper, sharing known variables (``stdin``:
        what its first command reads, e.g. a connection socat hands to the program)."""
        return self.sub_run(text, stdin)[0]

    def sub_run(self, text: str, stdin: Flow | None = None) -> tuple[ShellAnalysis, Flow]:
        """Analyse nested text; its result and what it writes to stdout (every pipeline's
        output: ``$(cat k; echo)`` outputs k too)."""
        if self.depth >= MAX_DEPTH:
            return ShellAnalysis(opaque=True, opaque_reason="commands nested too deeply"), Flow()
        child = Analyser(self.depth + 1, self)
        analysis = child.run(text, stdin)
        return analysis, self.union(child.outputs)

    def assign(self, name: str, raw: str | None) -> None:
        """``NAME=raw``: a literal value is remembered; a computed one is unknown. A proxy
        variable (``http_proxy=http://h:3128 curl localhost``) is where later requests of
        the command go: a send, so a loopback URL after it is no longer local."""
        if name.lower() in PROXY_VARS and raw:
            self.acc.add("sends", self.restore(raw))
        dyn = raw is None or bool(SUB_RE.search(raw) or VAR_RE.search(raw))
        self.env[name] = None if dyn else [raw or ""]
        m = SUB_RE.fullmatch(raw or "")
        temp = mktemp_glob(self.subs[int(m.group(1))][1]) if m and self.subs[int(m.group(1))][0] == "$" else None
        if temp:
            self.temps[name] = temp
        else:
            self.temps.pop(name, None)
        self.var_sources[name] = self.sources(raw) if raw is not None else ()
        self.keep_var(name)

    def keep_var(self, name: str) -> None:
        """A variable set from what the command read (``export T=$(cat ~/.token)``) is
        written as ``env:NAME``: a later call of the same shell session that sends ``$T``
        (read there as ``env:T``) is linked to this one by a resource edge and carries its
        label. A variable only passed on as a request's credential (a header, a URL) is no
        read there, so no edge."""
        if any(not r.startswith("env:") for r in self.var_sources.get(name, ())):
            self.acc.add("writes", f"env:{name}")

    def run(self, text: str, stdin: Flow | None = None) -> ShellAnalysis:
        """Analyse one command text at this level (``stdin``: what its first command reads)."""
        if len(text) > MAX_COMMAND_CHARS:
            return ShellAnalysis(opaque=True, opaque_reason="command too long")
        self.budget.spend(len(text))
        now = time.thread_time()  # one clock reading: this parse's deadline and the budget's start
        parsed = parse(text, min(self.budget.deadline_at(now), now + PARSE_CPU_SECONDS))
        if isinstance(parsed, str):
            return ShellAnalysis(opaque=True, opaque_reason=parsed)
        self.subs, self.docs, self.doc_subs, self.doc_expands = parsed.subs, parsed.docs, parsed.doc_subs, parsed.doc_expands
        collected: dict[int, list[Flow]] = {ROOT: self.outputs}  # what each group's commands wrote
        subshells: tuple[int, ...] = ()  # the subshells open (their groups, outer first)
        for n, pipeline in enumerate(parsed.pipelines):
            flow = stdin if stdin is not None and n == 0 else Flow()
            for k, stage in enumerate(pipeline):
                if k and not set(subshells) <= set(stage.subshells):
                    flow = self.out_of_subshell(flow, subshells, stage.subshells)  # `(cd d && cat x) | c`
                subshells = self.subshells(subshells, stage.subshells)
                self.piped, self.last = k > 0 or flow is stdin, k == len(pipeline) - 1 and stage.out == ROOT
                self.alone = len(pipeline) == 1  # an `exec` in a pipeline runs in a subshell
                # a `cd` alone in a subshell (not in a conditional nor a pipeline) holds to its end
                self.in_subshell = bool(stage.subshells) and not stage.conditional and len(pipeline) == 1
                self.under_subshell = bool(stage.subshells)  # its `cd` never moves the shell's own folder
                stage.scoped = stage.scoped or len(pipeline) > 1  # each part of a pipeline runs in a subshell
                if stage.gathers:  # `(a; b) | c`, `{ a; b; } > f`: a's output arrives too
                    flow = self.union([f for g in stage.gathers for f in collected.pop(g, [])] + [flow])
                if stage.stdin_layer is not None:  # `while read l; do ...; done < f`: the loop's stdin (stage())
                    self.piped = True
                flow = self.stage(stage, flow)
            if pipeline[-1].subshells:  # gathered after the subshell: `(cd d; cat x; cat y) | c`
                flow = self.out_of_subshell(flow, pipeline[-1].subshells, ())
            collected.setdefault(pipeline[-1].out, []).append(flow)
        self.subshells(subshells, ())
        for k in range(len(self.subs)):
            self.substitution(k)
        return self.acc.result()

    def out_of_subshell(self, flow: Flow, inside: tuple[int, ...], outside: tuple[int, ...]) -> Flow:
        """What a subshell writes out of it (from a stage in subshells ``inside`` to one in
        ``outside``): its files named where its `cd` went, since the command after it records
        them where it is, outside: joined under that folder; named where the command started
        when the subshell went back there (`cd -`), and then never joined under the folder
        outside (Acc.resolved)."""
        if self.acc.cwd:
            return replace(flow, resources=tuple(self.acc.under_cwd(r) or r for r in flow.resources))
        left = [g for g in inside if g not in outside]
        if left and left[0] in self.folders_at and self.folders_at[left[0]] != (self.acc.cwd, self.acc.lost):
            self.acc.resolved.update(flow.resources)
        return flow

    def subshells(self, was: tuple[int, ...], now: tuple[int, ...]) -> tuple[int, ...]:
        """From a stage in subshells ``was`` to one in ``now``: the folder a subshell's `cd`
        moved to (Acc.cwd, Acc.lost) is what it was as the subshell opened once it closes
        (the shell's own folder, Acc.folder, never moved: h_cd)."""
        common = 0
        while common < min(len(was), len(now)) and was[common] == now[common]:
            common += 1
        for g in reversed(was[common:]):
            self.acc.cwd, self.acc.lost = self.folders_at.pop(g)
            self.acc.dirs = self.dirs_at.pop(g)
        for g in now[common:]:
            self.folders_at[g] = (self.acc.cwd, self.acc.lost)
            self.dirs_at[g] = list(self.acc.dirs)
        return now

    def substitution(self, k: int) -> None:
        """Analyse substitution ``k`` once, when first used (so earlier assignments apply)."""
        kind, inner = self.subs[k]
        if k in self.sub_flows or kind == "=" or not inner.strip():
            return
        self.sub_flows[k] = ()
        analysis, flow = self.sub_run(inner)
        self.acc.merge(analysis)
        self.sub_flows[k] = flow.resources
        if (flow.literal is not None and not flow.resources and "\n" not in flow.literal.strip()
                and not VAR_RE.search(flow.literal)):  # only known text: `$(cd d; pwd)`, not `$(cat f; echo)`
            self.sub_values[k] = flow.literal.strip()

    def stage(self, stage: Stage, stdin: Flow) -> Flow:
        """Run one simple command once per combination of loop-variable values (those of its
        words, its redirections and the redirections of the compounds around it)."""
        targets = [t for _, t in stage.redirs]
        around_subs, around_names = self.layer_words(stage.inherits)  # the compounds' around it
        for w in stage.words + targets:
            for m in SUB_RE.finditer(w):
                self.substitution(int(m.group(1)))
        for k in [*self.doc_runs(stage.redirs), *around_subs]:
            self.substitution(k)
        names = {m.group(1) or m.group(3) for w in stage.words + targets for m in VAR_RE.finditer(w)} | around_names
        known = [(n, vals) for n in sorted(x for x in names if x) if (vals := self.env.get(n))]
        lists = [v for _, v in known]
        if math.prod(len(v) for v in lists) <= MAX_PRODUCT:
            combos: Iterable[tuple[str, ...]] = itertools.product(*lists)
        else:  # every value of every variable at least once
            combos = (tuple(v[i % len(v)] for v in lists) for i in range(max(len(v) for v in lists)))
        cost = (STAGE_WORK + sum(map(len, stage.words)) + sum(len(t) for _, t in stage.redirs)
                + len(stdin.resources))
        outs: list[Flow] = []
        # a word with several values (a loop's): a `cd` to it goes to one folder per run,
        # which no single folder stands for (the runs are not composed: h_cd)
        self.varied = math.prod(len(v) for v in lists) > 1
        for combo in combos:
            self.budget.spend(cost)
            binding = {n: val for (n, _), val in zip(known, combo)}
            words = [self.expand(w, binding) for w in stage.words]
            redirs, fed = self.redirected(stage, words, binding, stdin, around_names)
            if fed is not stdin and fed.exact is not None:  # a compound's pipe: a command before may read
                fed = replace(fed, exact=None)                # from it (`| { read x; tee f; }`)
            # a bare `exec` writes nothing of its own: what arrives passes on (fail closed)
            keep = stage.takes != ROOT or words == ["exec"]
            outs.append(self.simple(words, redirs, fed, stage.scoped, gathered=keep))
        # a loop's runs write one after another: `for f in a b; do cat $f; done | nc` sends both
        return outs[0] if len(outs) == 1 else self.union(outs)

    def simple(self, words: list[str], redirs: list[tuple[str, str]], stdin: Flow, scoped: bool = False,
               gathered: bool = False) -> Flow:
        """Keywords, assignments, redirections, then the per-command handler. What a
        here-document's or here-string's substitutions and variables carry is on the command's
        stdin when it is the command's stdin (``curl -d @- URL <<EOF`` with a line ``$(cat key)``
        or ``$AWS_SECRET_ACCESS_KEY`` sends it; see :mod:`pipeline.analysis.shell.redirects`)."""
        into = stdin_redirect(redirs)
        # a pipe's data is not read (`cat key | curl -d @- URL < /dev/null`); a compound's own
        # redirection (``gathered``: its stdin is its body's, stages.around) passes on its output
        if into is not None and not gathered:
            # unless a substitution there reads it (`<<< "$(cat)"`, `< <(base64)`, a body's `$(cat)`)
            runs = self.doc_runs([into]) or into[0] != "<<" and SUB_RE.search(into[1])
            stdin = self.union([stdin, self.carried(into)]) if runs else self.carried(into)
        ctx = Ctx(self, stdin, redirs)
        ctx.scoped = scoped or self.piped
        ctx.in_subshell, ctx.under_subshell = self.in_subshell and not self.piped, self.under_subshell
        ctx.varied = self.varied
        while words and words[0] in KEYWORDS:
            kw = words.pop(0)
            if kw in ("for", "select"):
                self.bind_for(words)
                words = []
            elif kw in ("case", "function"):
                words = []
        while words and (m := ASSIGN_RE.match(words[0])):
            self.assign(m.group(1), m.group(3))
            words.pop(0)
        for op, target in redirs:
            if base_op(op) in ("<", "<>") and not DEV_TCP.match(self.restore(target)):
                ctx.read(target)  # opened for the command (`3< f` too: `read -u 3`)
        if words:
            self.dispatch(words, ctx)
        out_redirected = False
        # the file a known text goes to (`cat > x.py <<'EOF'`, `echo TEXT >> x.sh`, `&> x.sh`):
        # the last redirection of stdout, of a command whose output is known (written_text)
        written = self.written_text(words, ctx)
        last_out = max((k for k, (op, _) in enumerate(redirs) if op in _STDOUT_OPS), default=None)
        for k, (op, target) in enumerate(redirs):
            tcp = DEV_TCP.match(self.restore(target))
            if tcp:
                peer = f"{tcp.group(1)}://{tcp.group(2)}:{tcp.group(3)}"
                ctx.send(peer)  # a shell reading its program from it runs it (cmd_exec.h_shell)
                # stdout goes there; not stderr (`2>`); a descriptor opened for the command
                # (`g 3>/dev/tcp/...`: a function or program may write it) counts as stdout would
                fd = op[:len(op) - len(base_op(op))]
                if base_op(op) != "<" and fd != "2" and (not fd or words != ["exec"]):
                    out = ctx.stdout  # what the command writes (`echo $KEY`), else what it read
                    for r in dict.fromkeys(out.resources if out else stdin.resources + tuple(ctx.stage_reads)):
                        if r != peer:  # a reverse shell's output: the peer's own bytes
                            ctx.add_payload(r)
                    if out is not None and out.literal is not None:
                        ctx.payload(out.literal, literal=True)
            elif base_op(op) in ("<", "<<", "<<<", "<&") or (op[:1].isdigit() and op.endswith(">&")
                                                            and (target.isdigit() or target == "-")):
                continue  # input only (`3< f`, `3<<EOF`), or a descriptor joined to another (`2>&1`)
            elif op[:1].isdigit():  # `2>err.log`, `3<> f`: what goes there is no stdout, which still flows on
                ctx.write(target, ())
            elif op in (">", ">>", ">|", "&>", "&>>", "<>") or (op == ">&" and not target.isdigit() and target != "-"):
                src = ctx.stdout.resources if ctx.stdout else tuple(ctx.stage_reads) + stdin.resources
                ctx.write(target, src)
                if k == last_out and written is not None and not ctx.dynamic(target):  # only known text
                    ctx.acc.wrote_text(ctx.text(target), written, op in (">>", "&>>"))
                elif k == last_out and op in (">", ">|", ">>", "&>", "&>>") and not ctx.dynamic(target) \
                        and (original := catted_file(words, ctx)) is not None:
                    ctx.acc.copied(ctx.text(target), original)  # `cat x.txt > run.sh`: a copy (`>>`: added)
                out_redirected = out_redirected or op != "<>"
        if out_redirected:
            return Flow()
        if ctx.stdout is not None:  # what it prints, exactly when known (`echo TEXT | tee x.sh`)
            exact = written is not None and not any(_moves_stdout(op, target) for op, target in redirs)
            return replace(ctx.stdout, exact=written) if exact else ctx.stdout
        res = tuple(dict.fromkeys(stdin.resources + tuple(r for r in ctx.stage_reads if r)))
        # `cat x.sh |`: the pipe carries that file as it is (`| tee y.sh` makes a copy)
        whole = len(res) == 1 and not stdin.transformed and catted_file(words, ctx) is not None
        return Flow(res, transformed=stdin.transformed, whole=whole)

    def bind_for(self, words: list[str]) -> None:
        """``for VAR in WORDS``: VAR takes each literal word (unknown if any is dynamic)."""
        if not words:
            return
        values = words[2:] if len(words) >= 2 and words[1] == "in" else []
        dyn = not values or any(SUB_RE.search(v) or VAR_RE.search(v) for v in values)
        self.env[words[0]] = None if dyn else values
        self.temps.pop(words[0], None)
        self.var_sources[words[0]] = tuple(r for v in values for r in self.sources(v))

    def written_text(self, words: list[str], ctx: Ctx) -> str | None:
        """The text a command writes to its stdout as given, when it is known: ``cat``'s
        stdin (a here-document or here-string; ``cat`` alone), what ``echo`` / ``printf``
        print (cmd_shell.printed_text); after ``command`` / ``builtin``."""
        texts = [ctx.text(w) for w in words]
        while len(texts) > 1 and texts[0] in ("command", "builtin"):
            texts, words = texts[1:], words[1:]
        name = posixpath.basename(texts[0]) if texts else ""
        if name == "cat":
            out = ctx.stdout
            known = out is not None and out.literal is not None and not out.resources and not out.transformed
            return out.literal if known and len(texts) == 1 else None  # type: ignore[union-attr]
        if any(ctx.dynamic(w) for w in words[1:]):
            return None
        return printed_text(name, texts[1:])

    def dispatch(self, words: list[str], ctx: Ctx) -> None:
        run_command_words(words, ctx)



def analyse(cmd: str, code: CodeAnalyser, depth: int = 0) -> ShellAnalysis:
    """Resources of the shell command ``cmd``; program text goes to ``code``."""
    if len(cmd) > MAX_COMMAND_CHARS:
        return ShellAnalysis(opaque=True, opaque_reason="command too long")
    with budget() as spend:
        try:
            return Analyser(depth, code=code, spend=spend).run(cmd)
        except RecursionError:
            return ShellAnalysis(opaque=True, opaque_reason="commands nested too deeply")
        except TooComplex:  # the budget is shared: every enclosing analysis ends here too
            return ShellAnalysis(opaque=True, opaque_reason=TOO_COMPLEX)
