"""What a per-command :class:`pipeline.analysis.shell.ctx.Ctx` uses of the shell analyser
(:class:`pipeline.analysis.shell.engine.Analyser`), as a protocol: the context imports
neither the engine nor the code analyser."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from pipeline.analysis.shell.model import Acc, Flow, ShellAnalysis

if TYPE_CHECKING:
    from pipeline.analysis.shell.ctx import Ctx

__all__ = ["AnalyserView"]


class AnalyserView(Protocol):
    """What a :class:`Ctx` uses of the analyser (:class:`pipeline.analysis.shell.engine.Analyser`)."""

    acc: Acc
    depth: int
    piped: bool
    subs: list[tuple[str, str]]
    sub_flows: dict[int, tuple[str, ...]]
    provenance: dict[str, tuple[str, ...]]
    tree_reads: set[str]
    var_sources: dict[str, tuple[str, ...]]
    fds: dict[str, tuple[str, str]]  # the command's descriptors (redirects.through_opened)
    env: dict[str, list[str] | None]
    temps: dict[str, str]
    code: Callable[[str, bool, int], ShellAnalysis]

    def sub(self, text: str, stdin: Flow | None = None) -> ShellAnalysis: ...
    def restore(self, word: str) -> str: ...
    def redir_text(self, op: str, target: str) -> str: ...
    def carried(self, into: tuple[str, str], whole: bool = False) -> Flow: ...
    def sources(self, word: str) -> tuple[str, ...]: ...
    def assign(self, name: str, raw: str | None) -> None: ...
    def keep_var(self, name: str) -> None: ...
    def dispatch(self, words: list[str], ctx: "Ctx") -> None: ...
