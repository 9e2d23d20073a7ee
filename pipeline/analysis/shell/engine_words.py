"""What the words and redirections of a command text stand for, for the shell analyser's walk
(:class:`pipeline.analysis.shell.engine.Analyser`): placeholders back to the text written,
the here-documents' bodies and what they run, and the resources a dynamic word or an
expanded body carries.
"""

from __future__ import annotations

import re

from pipeline.analysis.shell.model import FIXED_VARS, VAR_RE
from pipeline.analysis.shell.redirects import base_op
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
    var_sources: dict[str, tuple[str, ...]]
    env: dict[str, list[str] | None]

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
