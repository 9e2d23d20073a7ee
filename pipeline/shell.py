"""Shell analyser: which resources a shell command or code step reads, writes, runs, sends.

Nothing is ever executed. A command is tokenized with :mod:`shlex` (POSIX mode,
``punctuation_chars``) after a small pre-pass that removes what ``shlex`` cannot see:
comments, line continuations, here-document bodies and ``$(...)``/backtick/process
substitutions (each analysed on its own and replaced by a placeholder word). Quoted or
escaped operator characters are swapped for private code points before tokenizing so a
quoted ``';'`` stays a word. Tokens are then split into simple commands (``;``, ``&&``,
``||``, ``|``, ``&``, newlines), redirections are peeled off, variables assigned in the
same command (``X=...``, ``for x in a b``) are expanded, and each simple command goes
through the per-command table in :mod:`pipeline.shell_commands`.

A command is *opaque* only when its resources truly cannot be known: it does not
tokenize, uses ``eval`` on non-literal text, builds an executed or written target from
an unresolved variable or substitution, or pipes decoded/generated text into an
interpreter. ``analyse_code`` lives in :mod:`pipeline.shell_code`.
"""

from __future__ import annotations

import itertools
import math
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["ShellAnalysis", "analyse_command", "analyse_code", "MAX_COMMAND_CHARS"]

MAX_COMMAND_CHARS = 100_000
_MAX_DEPTH = 6
_MAX_PRODUCT = 256  # loop-variable combinations tried exhaustively; beyond, each value once
_PUNCT = "();<>|&\n"
# Quoted/escaped metacharacters travel through shlex as private-use code points.
_PRIV = {c: chr(0xE000 + i) for i, c in enumerate(_PUNCT + "$`")}
_UNPRIV = str.maketrans({v: k for k, v in _PRIV.items()})
_SUB_L, _SUB_R = "\ue020", "\ue021"  # $(...) / `...` / <(...) placeholder: _SUB_L + index + _SUB_R
_HD_L, _HD_R = "\ue022", "\ue023"  # here-document body placeholder
_SUB_RE = re.compile(f"{_SUB_L}(\\d+){_SUB_R}")
_HD_RE = re.compile(f"^{_HD_L}(\\d+){_HD_R}$")
_OPS = ("&>>", "<<<", "&&", "||", ";;", "|&", ">>", "<<", "<>", ">&", "<&", "&>", ">|",
        ";", "&", "|", "<", ">", "(", ")", "\n")
_REDIRS = {"&>>", "<<<", ">>", "<<", "<>", ">&", "<&", "&>", ">|", "<", ">"}
_VAR_RE = re.compile(r"\$(?:\{[#!]?([A-Za-z_]\w*|\d+|[@*#?$!-])([^}]*)\}|([A-Za-z_]\w*)|([0-9@*#?$!-]))")
_ASSIGN_RE = re.compile(r"^([A-Za-z_]\w*)(\[[^\]]*\])?\+?=(.*)$", re.S)
_NOT_RESOURCES = {"", "-", "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty"}
_PSEUDO_RE = re.compile(r"^[a-z][a-z0-9+.-]*:")
_FIXED_VARS = {"HOME": "~", "PWD": "."}
_DEV_TCP = re.compile(r"^/dev/(tcp|udp)/([^/]+)/(\d+)$")


@dataclass(frozen=True)
class ShellAnalysis:
    """Resources one shell command (or code step) touches. Tuples keep first-seen order."""

    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    executes: tuple[str, ...] = ()
    sends: tuple[str, ...] = ()
    payloads: tuple[str, ...] = ()
    deletes: tuple[str, ...] = ()
    opaque: bool = False
    opaque_reason: str | None = None


FIELDS = ("reads", "writes", "executes", "sends", "payloads", "deletes")


def normalise(resource: str) -> str | None:
    """Canonical resource name, or None when it is not a resource (``-``, /dev/null...)."""
    r = resource.translate(_UNPRIV).strip()
    if r in _NOT_RESOURCES or r.startswith("/dev/fd/") or r.startswith("/proc/self/fd/"):
        return None
    if "://" in r or _PSEUDO_RE.match(r):
        return r
    r = re.sub(r"/{2,}", "/", r)
    while r.startswith("./"):
        r = r[2:]
    if len(r) > 1 and r.endswith("/"):
        r = r.rstrip("/") or "/"
    return r or "."


class Acc:
    """Mutable accumulator behind one ShellAnalysis."""

    def __init__(self) -> None:
        self.lists: dict[str, list[str]] = {f: [] for f in FIELDS}
        self.reason: str | None = None

    def add(self, kind: str, resource: str) -> None:
        """Record ``resource`` under field ``kind`` (normalised, deduplicated)."""
        r = normalise(resource)
        if r is not None and r not in self.lists[kind]:
            self.lists[kind].append(r)

    def fail(self, reason: str) -> None:
        """Mark opaque; the first reason wins."""
        if self.reason is None:
            self.reason = reason

    def merge(self, other: ShellAnalysis) -> None:
        """Fold a nested analysis into this one."""
        for f in FIELDS:
            for r in getattr(other, f):
                self.add(f, r)
        if other.opaque:
            self.fail(other.opaque_reason or "nested command cannot be analysed")

    def result(self) -> ShellAnalysis:
        """Freeze into a ShellAnalysis."""
        return ShellAnalysis(*(tuple(self.lists[f]) for f in FIELDS),
                             opaque=self.reason is not None, opaque_reason=self.reason)


@dataclass
class Flow:
    """What a command writes to stdout, as far as the next pipeline stage cares.

    ``resources``: files/URLs whose content flows on; ``literal``: known text (echo,
    here-doc); ``items``: names it lists (find, grep -l) for xargs; ``transformed``: the
    data was decoded or rewritten (base64 -d, tr, sed). All empty: output of a program
    we cannot follow."""

    resources: tuple[str, ...] = ()
    literal: str | None = None
    items: tuple[str, ...] = ()
    transformed: bool = False


class Ctx:
    """What a per-command handler sees: recording helpers, stdin, stdout, recursion."""

    def __init__(self, an: "_Analyser", stdin: Flow, redirs: list[tuple[str, str]]) -> None:
        self.an, self.acc, self.stdin, self.redirs = an, an.acc, stdin, redirs
        self.stdout: Flow | None = None
        self.stage_reads: list[str] = []

    # -- words
    def text(self, word: str) -> str:
        """The word as written (placeholders and private characters restored)."""
        return self.an.restore(word)

    def dynamic(self, word: str) -> bool:
        """True when the word still holds an unresolved variable or substitution."""
        return bool(_SUB_RE.search(word) or _VAR_RE.search(word))

    def _sources(self, word: str) -> tuple[str, ...]:
        return self.an.sources(word)

    def _strict(self, word: str, what: str) -> bool:
        if self.dynamic(word):
            self.acc.fail(f"{what} built from a variable or substitution: {self.text(word)[:80]}")
            return False
        return True

    # -- recording
    def read(self, word: str) -> None:
        """The command reads this file/URL."""
        if _SUB_RE.fullmatch(word):
            return  # the substitution's own resources are already recorded
        self.acc.add("reads", self.text(word))
        self.stage_reads.append(normalise(self.text(word)) or "")
        if "://" in self.text(word) and self._sources(word):
            self.send(word)  # a GET whose URL carries local data is egress too

    def write(self, word: str, provenance: tuple[str, ...] = ()) -> None:
        """The command writes this file; ``provenance`` = resources its content came from."""
        m = _SUB_RE.fullmatch(word)
        if m and self.an.subs[int(m.group(1))][0] == ">":
            return  # >(cmd): data goes to a command, analysed on its own
        if self._strict(word, "written file"):
            name = normalise(self.text(word))
            self.acc.add("writes", self.text(word))
            if name and provenance:
                self.an.provenance[name] = self.an.provenance.get(name, ()) + tuple(provenance)

    def execute(self, word: str) -> None:
        """The command runs this file (and the URLs it was downloaded from in this command)."""
        m = _SUB_RE.fullmatch(word)
        if m and self.an.subs[int(m.group(1))][0] == "<":
            flow = self.an.sub_flows.get(int(m.group(1)))
            if flow:
                for r in flow:
                    self.acc.add("executes", r)
                return
        if self._strict(word, "executed file"):
            self.acc.add("executes", self.text(word))
            for src in self.an.provenance.get(normalise(self.text(word)) or "", ()):
                if "://" in src:
                    self.acc.add("executes", src)

    def send(self, dest: str) -> None:
        """Network destination (URL, host, tcp://host:port, mailto:...)."""
        self.acc.add("sends", self.text(dest))
        for r in self._sources(dest):
            self.acc.add("payloads", r)

    def payload(self, word: str, literal: bool = False) -> None:
        """A file (or, with ``literal``, inline data) sent out."""
        text = self.text(word)
        for r in self._sources(word):
            self.acc.add("payloads", r)
        if literal:
            if text.strip():
                self.acc.add("payloads", "data:" + text[:256])
        elif not _SUB_RE.fullmatch(word):
            self.acc.add("payloads", text)

    def delete(self, word: str) -> None:
        """The command destroys this resource."""
        self.acc.add("deletes", self.text(word))

    def fail(self, reason: str) -> None:
        """The command cannot be analysed."""
        self.acc.fail(reason)

    def assign(self, name: str, raw: str | None) -> None:
        """Shell variable assignment (``export X=..``, ``read X``): raw value or unknown."""
        self.an.assign(name, raw)

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
            self.acc.add("payloads", r)
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
        elif src.literal is not None:
            self.program(src.literal, lang)
        elif src.resources:
            for r in src.resources:
                self.acc.add("executes", r)
                for p in self.an.provenance.get(r, ()):
                    if "://" in p:
                        self.acc.add("executes", p)
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
            from pipeline.shell_code import analyse_code_text

            self.acc.merge(analyse_code_text(text, python=lang == "python", depth=self.an.depth + 1))

    def run_argv(self, argv: list[str]) -> None:
        """Analyse ``argv`` (raw words) as a simple command of its own (sudo, xargs, -exec)."""
        self.an.dispatch(list(argv), self)

    def run_text(self, word: str) -> None:
        """Analyse a word holding a whole command line (``bash -c``, ``su -c``)."""
        self.acc.merge(self.an.sub(self.text(word)))

    def run_text_literal(self, text: str) -> None:
        """Analyse command text that is already plain text (awk system(), watch)."""
        self.acc.merge(self.an.sub(text))


@dataclass
class Stage:
    """One simple command: raw words and redirections (operator, raw target)."""

    words: list[str] = field(default_factory=list)
    redirs: list[tuple[str, str]] = field(default_factory=list)


_Prepared = tuple[str, list[tuple[str, str]], list[str]]


def _prepass(s: str) -> _Prepared | str:
    """Hide comments, substitutions and here-doc bodies from shlex; protect quoted
    metacharacters. Returns (text, substitutions as (kind, inner), here-doc bodies), or an
    error text when the command is malformed."""
    out: list[str] = []
    subs: list[tuple[str, str]] = []  # kind: "$" command, "<"/">" process, "=" arithmetic
    docs: list[str] = []
    pending: list[tuple[int, str, bool]] = []
    i, n, state = 0, len(s), ""

    def word_start() -> bool:
        return not out or out[-1][-1:] in (" ", "\t", "\r", "\n", ";", "&", "|", "(", ")", "<", ">")

    def placeholder(kind: str, inner: str) -> None:
        subs.append((kind, inner))
        out.append(f"{_SUB_L}{len(subs) - 1}{_SUB_R}")

    while i < n:
        c = s[i]
        if state == "'":
            state = "" if c == "'" else state
            out.append(c if c == "'" else _PRIV.get(c, c))
            i += 1
            continue
        if c == "\\":
            nxt = s[i + 1: i + 2]
            if nxt == "\n":
                i += 2
            elif not nxt:
                i += 1
            elif state == '"':
                out.append(_PRIV[nxt] if nxt in "$`" else (c + nxt if nxt in '"\\' else c))
                i += 2 if nxt in '$`"\\' else 1
            elif nxt in _PRIV:
                out.append(_PRIV[nxt])
                i += 2
            else:
                out.append(c + nxt)
                i += 2
            continue
        if s.startswith("$((", i) or ((c == "$" or (c in "<>" and not state)) and s[i + 1: i + 2] == "("):
            j = _find_close(s, i + 2)
            if j < 0:
                return "unbalanced substitution"
            arith = s.startswith("$((", i)
            placeholder("=" if arith else ("$" if c == "$" else c), "" if arith else s[i + 2: j])
            i = j + 1
            continue
        if c == "`":
            j = i + 1
            while j < n and s[j] != "`":
                j += 2 if s[j] == "\\" else 1
            if j >= n:
                return "unbalanced backtick"
            placeholder("$", re.sub(r"\\([`\\$])", r"\1", s[i + 1: j]))
            i = j + 1
            continue
        if state == '"':
            state = "" if c == '"' else state
            out.append(c if c in '"$' else _PRIV.get(c, c))
            i += 1
            continue
        if c in "'\"":
            state = c
            out.append(c)
        elif c == "#" and word_start():
            while i < n and s[i] != "\n":
                i += 1
            continue
        elif s.startswith("((", i) and word_start():
            j = _find_close(s, i + 1)
            if j < 0:
                return "unbalanced arithmetic"
            out.append(" : ")
            i = j + 2 if s[j + 1: j + 2] == ")" else j + 1
            continue
        elif s.startswith("<<<", i):
            out.append("<<<")
            i += 3
            continue
        elif s.startswith("<<", i):
            m = re.match(r"<<(-?)[ \t]*(\\?'[^'\n]*'|\"[^\"\n]*\"|\\?[^\s;&|()<>]+)", s[i:])
            if not m:
                out.append("<<")
                i += 2
                continue
            pending.append((len(docs), re.sub(r"[\\'\"]", "", m.group(2)), bool(m.group(1))))
            docs.append("")
            out.append(f"<< {_HD_L}{len(docs) - 1}{_HD_R} ")
            i += m.end()
            continue
        elif c == "\n" and pending:
            out.append(c)
            i += 1
            for idx, delim, tabs in pending:
                docs[idx], i = _heredoc_body(s, i, delim, tabs)
            pending = []
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out), subs, docs


def _heredoc_body(s: str, i: int, delim: str, tabs: bool) -> tuple[str, int]:
    """Body of a here-document starting at ``i`` and the index after its delimiter line.
    An indented delimiter is accepted when no exact one exists (agents often indent)."""
    for exact in (True, False):
        pos = i
        while pos <= len(s):
            end = s.find("\n", pos)
            end = len(s) if end < 0 else end
            line = s[pos:end].lstrip("\t") if tabs else s[pos:end]
            if (line.rstrip("\r") if exact else line.strip()) == delim:
                return s[i:max(i, pos - 1)], end + 1
            pos = end + 1
    return s[i:], len(s)


def _find_close(s: str, i: int) -> int:
    """Index of the ``)`` closing the group whose body starts at ``i``; -1 if none."""
    depth, state, n = 1, "", len(s)
    while i < n:
        c = s[i]
        if state == "'":
            state = "" if c == "'" else state
        elif c == "\\":
            i += 1
        elif state == '"':
            if c == '"':
                state = ""
            elif s.startswith("$(", i):
                j = _find_close(s, i + 2)
                if j < 0:
                    return -1
                i = j
        elif c in "'\"":
            state = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _split_ops(tok: str) -> list[str]:
    """Split a run of operator characters (shlex glues them) into shell operators."""
    ops, i = [], 0
    while i < len(tok):
        op = next(o for o in _OPS if tok.startswith(o, i))
        ops.append(op)
        i += len(op)
    return ops


def _parse(tokens: list[str]) -> list[list[Stage]]:
    """Group tokens into pipelines of simple commands with their redirections."""
    pipelines: list[list[Stage]] = [[Stage()]]
    pending: str | None = None
    case_depth, closed = 0, False
    for tok in tokens:
        if tok and all(ch in _PUNCT for ch in tok):
            for op in _split_ops(tok):
                cur = pipelines[-1][-1]
                if op in _REDIRS:
                    if len(cur.words) > 1 and len(cur.words[-1]) == 1 and cur.words[-1].isdigit():
                        cur.words.pop()  # fd number: 2>file
                    pending = op
                    continue
                if op == ")" and case_depth and cur.words:
                    cur.words.clear()  # a case pattern
                elif op in ("|", "|&"):
                    if (closed and not cur.words or cur.words == ["}"]) and not cur.redirs:
                        # `( ... ) | cmd`, `{ ...; } | cmd`: the group's last pipeline feeds cmd
                        cur.words.clear()
                        while len(pipelines) > 1 and not any(st.words or st.redirs for st in pipelines[-1]):
                            pipelines.pop()
                    pipelines[-1].append(Stage())
                else:
                    pipelines.append([Stage()])
                pending, closed = None, op == ")"
            continue
        closed = False
        cur = pipelines[-1][-1]
        if pending:
            cur.redirs.append((pending, tok))
            pending = None
            continue
        if not cur.words and tok == "case":
            case_depth += 1
        elif not cur.words and tok == "esac":
            case_depth = max(0, case_depth - 1)
        cur.words.append(tok)
    return [[st for st in p if st.words or st.redirs] for p in pipelines if any(st.words or st.redirs for st in p)]


class _Analyser:
    """State of one command text at one nesting level."""

    def __init__(self, depth: int, parent: "_Analyser | None" = None) -> None:
        self.acc = Acc()
        self.depth = depth
        self.env: dict[str, list[str] | None] = dict(parent.env) if parent else {}
        self.var_sources: dict[str, tuple[str, ...]] = dict(parent.var_sources) if parent else {}
        self.git_remotes: dict[str, str] = parent.git_remotes if parent else {}
        self.subs: list[tuple[str, str]] = []
        self.docs: list[str] = []
        self.sub_flows: dict[int, tuple[str, ...]] = {}
        self.sub_values: dict[int, str] = {}
        self.provenance: dict[str, tuple[str, ...]] = {}
        self.piped = False
        self.last_flow = Flow()

    def sub(self, text: str) -> ShellAnalysis:
        """Analyse nested command text one level deeper, sharing known variables."""
        return self.sub_run(text)[0]

    def sub_run(self, text: str) -> tuple[ShellAnalysis, Flow]:
        if self.depth >= _MAX_DEPTH:
            return ShellAnalysis(opaque=True, opaque_reason="commands nested too deeply"), Flow()
        child = _Analyser(self.depth + 1, self)
        return child.run(text), child.last_flow

    def restore(self, word: str) -> str:
        """Raw word back to the text the user wrote."""
        def put(m: re.Match[str]) -> str:
            kind, inner = self.subs[int(m.group(1))]
            return {"$": f"$({inner})", "=": "$((...))"}.get(kind, f"{kind}({inner})")
        return _SUB_RE.sub(put, word).translate(_UNPRIV)

    def redir_text(self, op: str, target: str) -> str:
        m = _HD_RE.match(target)
        return self.docs[int(m.group(1))] if op == "<<" and m else self.restore(target)

    def sources(self, word: str) -> tuple[str, ...]:
        """Resources whose content a dynamic word carries ($(cat f), $X set from one)."""
        out: list[str] = []
        for m in _SUB_RE.finditer(word):
            out.extend(self.sub_flows.get(int(m.group(1)), ()))
        for m in _VAR_RE.finditer(word):
            out.extend(self.var_sources.get(m.group(1) or m.group(3) or "", ()))
        return tuple(out)

    def assign(self, name: str, raw: str | None) -> None:
        """``NAME=raw``: a literal value is remembered; a computed one is unknown."""
        dyn = raw is None or bool(_SUB_RE.search(raw) or _VAR_RE.search(raw))
        self.env[name] = None if dyn else [raw or ""]
        self.var_sources[name] = self.sources(raw) if raw is not None else ()

    def run(self, text: str) -> ShellAnalysis:
        if len(text) > MAX_COMMAND_CHARS:
            return ShellAnalysis(opaque=True, opaque_reason="command too long")
        pre = _prepass(text)
        if isinstance(pre, str):
            return ShellAnalysis(opaque=True, opaque_reason=pre)
        prepared, self.subs, self.docs = pre
        try:
            lex = shlex.shlex(prepared, posix=True, punctuation_chars=_PUNCT)
            lex.whitespace, lex.whitespace_split, lex.commenters = " \t\r", True, ""
            tokens = list(lex)
        except ValueError as exc:
            return ShellAnalysis(opaque=True, opaque_reason=f"cannot tokenize: {str(exc).lower()}")
        for pipeline in _parse(tokens):
            flow = Flow()
            for k, stage in enumerate(pipeline):
                self.piped = k > 0
                flow = self.stage(stage, flow)
            self.last_flow = flow
        for k in range(len(self.subs)):
            self.substitution(k)
        return self.acc.result()

    def substitution(self, k: int) -> None:
        """Analyse substitution ``k`` once, when first used (so earlier assignments apply)."""
        kind, inner = self.subs[k]
        if k in self.sub_flows or kind == "=" or not inner.strip():
            return
        self.sub_flows[k] = ()
        analysis, flow = self.sub_run(inner)
        self.acc.merge(analysis)
        self.sub_flows[k] = flow.resources
        if flow.literal is not None and "\n" not in flow.literal.strip() and not _VAR_RE.search(flow.literal):
            self.sub_values[k] = flow.literal.strip()

    def expand(self, word: str, binding: dict[str, str]) -> str:
        """Substitute known variables and deterministic substitutions ($(pwd), $(echo x))."""
        def var(m: re.Match[str]) -> str:
            name = m.group(1) or m.group(3)
            if name in binding:
                return binding[name]
            if name in _FIXED_VARS and name not in self.env:
                return _FIXED_VARS[name]
            return m.group(0)

        def sub(m: re.Match[str]) -> str:
            return self.sub_values.get(int(m.group(1)), m.group(0))
        return _SUB_RE.sub(sub, _VAR_RE.sub(var, word))

    def stage(self, stage: Stage, stdin: Flow) -> Flow:
        """Run one simple command once per combination of loop-variable values."""
        for w in stage.words + [t for _, t in stage.redirs]:
            for m in _SUB_RE.finditer(w):
                self.substitution(int(m.group(1)))
        names = {m.group(1) or m.group(3) for w in stage.words + [t for _, t in stage.redirs]
                 for m in _VAR_RE.finditer(w)}
        known = [(n, vals) for n in sorted(x for x in names if x) if (vals := self.env.get(n))]
        lists = [v for _, v in known]
        if math.prod(len(v) for v in lists) <= _MAX_PRODUCT:
            combos: Iterable[tuple[str, ...]] = itertools.product(*lists)
        else:  # every value of every variable at least once
            combos = (tuple(v[i % len(v)] for v in lists) for i in range(max(len(v) for v in lists)))
        out = Flow()
        for combo in combos:
            binding = {n: val for (n, _), val in zip(known, combo)}
            words = [self.expand(w, binding) for w in stage.words]
            redirs = [(op, self.expand(t, binding) if op != "<<" else t) for op, t in stage.redirs]
            out = self.simple(words, redirs, stdin)
        return out

    def simple(self, words: list[str], redirs: list[tuple[str, str]], stdin: Flow) -> Flow:
        """Keywords, assignments, redirections, then the per-command handler."""
        from pipeline.shell_commands import KEYWORDS

        ctx = Ctx(self, stdin, redirs)
        while words and words[0] in KEYWORDS:
            kw = words.pop(0)
            if kw in ("for", "select"):
                self.bind_for(words)
                words = []
            elif kw in ("case", "function"):
                words = []
        while words and (m := _ASSIGN_RE.match(words[0])):
            self.assign(m.group(1), m.group(3))
            words.pop(0)
        for op, target in redirs:
            if op in ("<", "<>") and not _DEV_TCP.match(self.restore(target)):
                ctx.read(target)
        if words:
            self.dispatch(words, ctx)
        out_redirected = False
        for op, target in redirs:
            tcp = _DEV_TCP.match(self.restore(target))
            if tcp:
                ctx.send(f"{tcp.group(1)}://{tcp.group(2)}:{tcp.group(3)}")
                if op != "<":
                    for r in list(dict.fromkeys(stdin.resources + tuple(ctx.stage_reads))):
                        self.acc.add("payloads", r)
            elif op in (">", ">>", ">|", "&>", "&>>", "<>") or (op == ">&" and not target.isdigit() and target != "-"):
                src = ctx.stdout.resources if ctx.stdout else tuple(ctx.stage_reads) + stdin.resources
                ctx.write(target, src)
                out_redirected = out_redirected or op != "<>"
        if out_redirected:
            return Flow()
        if ctx.stdout is not None:
            return ctx.stdout
        res = tuple(dict.fromkeys(stdin.resources + tuple(r for r in ctx.stage_reads if r)))
        return Flow(res, transformed=stdin.transformed)

    def bind_for(self, words: list[str]) -> None:
        """``for VAR in WORDS``: VAR takes each literal word (unknown if any is dynamic)."""
        if not words:
            return
        values = words[2:] if len(words) >= 2 and words[1] == "in" else []
        dyn = not values or any(_SUB_RE.search(v) or _VAR_RE.search(v) for v in values)
        self.env[words[0]] = None if dyn else values
        self.var_sources[words[0]] = tuple(r for v in values for r in self.sources(v))

    def dispatch(self, words: list[str], ctx: Ctx) -> None:
        from pipeline.shell_commands import run_command_words

        run_command_words(words, ctx)


def analyse_command(cmd: str) -> ShellAnalysis:
    """Resources read, written, executed, sent and deleted by the shell command ``cmd``."""
    if not isinstance(cmd, str):
        return ShellAnalysis(opaque=True, opaque_reason="command is not text")
    if len(cmd) > MAX_COMMAND_CHARS:
        return ShellAnalysis(opaque=True, opaque_reason="command too long")
    try:
        return _Analyser(0).run(cmd)
    except RecursionError:
        return ShellAnalysis(opaque=True, opaque_reason="commands nested too deeply")


def analyse_code(src: str) -> ShellAnalysis:
    """Resources of a python / execute_code step (see :mod:`pipeline.shell_code`)."""
    from pipeline.shell_code import analyse_code_text

    if not isinstance(src, str):
        return ShellAnalysis(opaque=True, opaque_reason="code is not text")
    if len(src) > MAX_COMMAND_CHARS:
        return ShellAnalysis(opaque=True, opaque_reason="code too long")
    try:
        return analyse_code_text(src, python=True, depth=0)
    except RecursionError:
        return ShellAnalysis(opaque=True, opaque_reason="code nested too deeply")
