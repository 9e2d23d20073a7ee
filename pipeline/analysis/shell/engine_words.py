"""What the words and redirections of a command text stand for, for the shell analyser's walk
(:class:`pipeline.analysis.shell.engine.Analyser`): placeholders back to the text written,
the here-documents' bodies and what they run, and the resources a dynamic word or an
expanded body carries.
"""

from __future__ import annotations

import re

from pipeline.analysis.shell.budget import Budget
from pipeline.analysis.shell.model import DEV_TCP, FIXED_VARS, VAR_RE, Flow, normalise, union_flows
from pipeline.analysis.shell.redirects import (
    Opened, base_op, exec_defaults, keeps_stdin, stdin_redirect, through_opened, unknown_fd,
)
from pipeline.analysis.shell.stages import Stage
from pipeline.analysis.shell.words import HD_RE, SUB_RE, restore_private

__all__ = ["Words"]

_ESCAPED = re.compile(r"\\.", re.S)  # an escaped character in a here-document body


class Words:
    """The parsed text's substitutions and here-documents, and what variables and
    substitutions are known to carry (set by the analyser as it walks)."""

    subs: list[tuple[str, str]]
    docs: list[str]
    doc_subs: list[list[int]]
    doc_expands: list[bool]
    sub_flows: dict[int, tuple[str, ...]]
    sub_values: dict[int, str]
    budget: Budget
    opened: Opened
    opened_version: int
    layer_fds: dict[tuple[object, ...], tuple[Opened, tuple[str, str] | None]]
    layer_names: dict[tuple[int, ...], tuple[list[int], frozenset[str]]]
    layer_pipe: dict[int, Flow]
    fds: Opened
    piped: bool
    last: bool
    alone: bool
    var_sources: dict[str, tuple[str, ...]]
    env: dict[str, list[str] | None]

    def expand(self, word: str, binding: dict[str, str]) -> str:
        """Substitute known variables and deterministic substitutions ($(pwd), $(echo x))."""
        def var(m: re.Match[str]) -> str:
            name = m.group(1) or m.group(3)
            if name in binding:
                self.budget.spend(len(binding[name]))  # `$X$X$X...` with a long X: bounded
                return binding[name]
            if name in FIXED_VARS and name not in self.env:
                return FIXED_VARS[name]
            return m.group(0)

        def sub(m: re.Match[str]) -> str:
            return self.sub_values.get(int(m.group(1)), m.group(0))
        return SUB_RE.sub(sub, VAR_RE.sub(var, word))

    def restore(self, word: str) -> str:
        """Raw word back to the text the user wrote."""
        def put(m: re.Match[str]) -> str:
            kind, inner = self.subs[int(m.group(1))]
            return {"$": f"$({inner})", "=": "$((...))"}.get(kind, f"{kind}({inner})")
        return restore_private(SUB_RE.sub(put, word))

    def doc_runs(self, redirs: list[tuple[str, str]]) -> list[int]:
        """The substitutions the here-documents among ``redirs`` run (their bodies' ``$(...)``),
        on any descriptor."""
        out: list[int] = []
        for op, target in redirs:
            m = HD_RE.match(target) if base_op(op) == "<<" else None  # `3<<EOF`'s run too
            if m is not None and int(m.group(1)) < len(self.doc_subs):
                out.extend(self.doc_subs[int(m.group(1))])
        return out

    def doc_sources(self, target: str) -> tuple[str, ...]:
        """What the variables of an expanded here-document body carry (``$KEY``: ``env:KEY``);
        an escaped ``\\$`` is text."""
        m = HD_RE.match(target)
        k = int(m.group(1)) if m is not None else -1
        if not 0 <= k < len(self.doc_expands) or not self.doc_expands[k] or "$" not in self.docs[k]:
            return ()
        return tuple(r for r in self.sources(_ESCAPED.sub("", self.docs[k])) if r)

    def redir_text(self, op: str, target: str) -> str:
        """A here-doc's body, or the text of a here-string or redirection target."""
        m = HD_RE.match(target)
        return self.docs[int(m.group(1))] if op == "<<" and m else self.restore(target)

    def sources(self, word: str, env: bool = True) -> tuple[str, ...]:
        """Resources whose content a dynamic word carries ($(cat f), $X set from one); a
        variable the command never sets (nor a loop binds) and that is not HOME/PWD comes
        from the environment: ``$AWS_SECRET_ACCESS_KEY`` carries ``env:AWS_SECRET_ACCESS_KEY``
        (the policy's resource labels say which names are secret), as ``os.environ[...]``
        does in code. ``env=False``: not those (a URL's own credentials, below)."""
        out: list[str] = []
        for m in SUB_RE.finditer(word):
            out.extend(self.sub_flows.get(int(m.group(1)), ()))
        for m in VAR_RE.finditer(word):
            name = m.group(1) or m.group(3) or ""
            if name in self.var_sources:
                out.extend(self.var_sources[name])
            elif env and name and not name[0].isdigit() and name not in self.env and name not in FIXED_VARS:
                out.append(f"env:{name}")
        return tuple(out)

    def carried(self, into: tuple[str, str], whole: bool = False) -> Flow:
        """What a stdin redirection (:func:`pipeline.analysis.shell.redirects.stdin_redirect`)
        carries: a here-document's substitutions' output and the variables its body expands,
        a here-string's, what a ``/dev/tcp`` peer sends. ``whole``: also the text and the file
        (a compound's stdin, whose commands see no redirection of their own); a command's own
        redirection leaves those to its ``Ctx`` (``stdin_literal``, ``read``)."""
        op, target = into
        if op == "<<":
            found = [r for k in self.doc_runs([into]) for r in self.sub_flows.get(k, ())] + list(self.doc_sources(target))
            return Flow(tuple(dict.fromkeys(found)), self.redir_text(op, target) if whole else None)
        if op == "<<<":
            return Flow(tuple(dict.fromkeys(self.sources(target))), self.redir_text(op, target) if whole else None)
        if tcp := DEV_TCP.match(self.restore(target)):  # what the peer sends (`cat <&3 | sh`)
            return Flow((f"{tcp.group(1)}://{tcp.group(2)}:{tcp.group(3)}",))
        name = normalise(self.restore(target)) if whole and not SUB_RE.search(target) else None
        # `< <(cat key)`: what the process substitution outputs
        made = self.sources(target, env=False) if SUB_RE.search(target) else ()
        # a file named by what is not known (`{ sh; } < $f`): its content is unknown, as
        # transformed data is (an interpreter reading it is opaque, as `sh < $f` is)
        unknown = bool(whole and VAR_RE.search(self.restore(target)))
        return Flow(tuple(dict.fromkeys(((name,) if name else ()) + made)), transformed=unknown)

    def layer_words(self, layers: tuple[tuple[tuple[str, str], ...], ...]) -> tuple[list[int], frozenset[str]]:
        """Of the compounds' redirections around a command: the substitutions they run (their
        targets' and here-documents') and the variables their targets name; once per nesting."""
        key = tuple(map(id, layers))
        if key not in self.layer_names:
            redirs = [r for layer in layers for r in layer]
            subs = [int(m.group(1)) for _, t in redirs for m in SUB_RE.finditer(t)] + self.doc_runs(redirs)
            names = frozenset(m.group(1) or m.group(3) or "" for _, t in redirs for m in VAR_RE.finditer(t)) - {""}
            self.layer_names[key] = (subs, names)
        return self.layer_names[key]

    def surroundings(self, layers: tuple[tuple[tuple[str, str], ...], ...],
                     stdin_layer: tuple[tuple[str, str], ...] | None,
                     binding: dict[str, str], names: frozenset[str]) -> tuple[Opened, tuple[str, str] | None]:
        """The descriptors the compounds around a command leave open (``layers``, outer first,
        each resolved against what was open before it: :func:`through_opened`) and, of
        ``stdin_layer``, the stdin it sets (None: stdin as it was). Built once per compound
        nesting, open descriptors and the values of the variables its targets name (a body of
        thousands of commands shares it); ``names``: the variables their targets name."""
        if not layers:
            return self.opened, None
        key = (tuple(map(id, layers)), id(stdin_layer), self.opened_version,
               tuple(binding.get(n, "") for n in sorted(names)))
        if key not in self.layer_fds:
            fds, into = self.opened, None
            for layer in layers:
                resolved, fds = through_opened([], [(op, self.expand(t, binding) if base_op(op) != "<<" else t)
                                                    for op, t in layer], fds)
                if layer is stdin_layer:
                    into = stdin_redirect(resolved)
            self.layer_fds[key] = (fds, into)
        return self.layer_fds[key]

    def union(self, flows: list[Flow]) -> Flow:
        """:func:`union_flows`, paid for from the budget (each flow and resource)."""
        self.budget.spend(len(flows) + sum(len(f.resources) for f in flows))
        return union_flows(flows)

    def redirected(self, stage: Stage, words: list[str], binding: dict[str, str], stdin: Flow,
                   names: frozenset[str]) -> tuple[list[tuple[str, str]], Flow]:
        """A command's redirections with its descriptors followed (:func:`through_opened`,
        what an earlier ``exec`` and the compounds around it opened; ``names``: the variables
        their targets name), and its stdin: what its compound's redirection gives, else what
        was piped into the compound (``stdin`` reached its first command), else ``stdin``."""
        redirs = [(op, self.expand(t, binding) if base_op(op) != "<<" else t) for op, t in stage.redirs]
        inherited, into = self.surroundings(stage.inherits, stage.stdin_layer, binding, names)
        redirs, self.fds = through_opened(words if self.alone else [], redirs, self.opened, inherited)
        self.opened_version += words == ["exec"] and self.alone
        redirs = exec_defaults(redirs, self.opened, not self.piped, self.last)  # after `exec >/dev/tcp/...`
        for layer in stage.inherits:  # what was piped into each compound: its first command's stdin
            self.layer_pipe.setdefault(id(layer), stdin)  # (also when that command is a nested compound's)
        fed = (self.carried(into, whole=True) if into is not None
               else self.layer_pipe.get(id(stage.stdin_layer), stdin) if stage.stdin_layer is not None else stdin)
        if fed is not stdin:  # what the compound hands on is paid for as a pipe's is (stage())
            self.budget.spend(len(fed.resources))
        if into is not None and (keeps_stdin(redirs) or any(unknown_fd(w, self.fds) for w in words)):
            # `<&3`, `cat /dev/fd/3`, of a `3<&0` the compound made: what was piped into it (or
            # into any compound around it: `{ { ...; } < f; } 3<&0`)
            piped = [self.layer_pipe[id(layer)] for layer in stage.inherits if id(layer) in self.layer_pipe]
            fed = self.union([stdin, *piped, fed])
        return redirs, fed
