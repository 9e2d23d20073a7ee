"""Shell analyser: which resources a shell command or code step reads, writes, runs, sends.

Nothing is ever executed. The analyser is layered, each module importing only those
below it:

- :mod:`pipeline.analysis.shell.syntax`: tree-sitter-bash parses the command; pipelines of simple
  commands, substitutions, here-doc bodies, quoting (quoted metacharacters private), with
  :mod:`pipeline.analysis.shell.syntax_command` (one simple command's words and redirections),
  :mod:`pipeline.analysis.shell.syntax_redirected` (where redirections go),
  :mod:`pipeline.analysis.shell.redirects` (which is stdin, where a descriptor leads) and
  :mod:`pipeline.analysis.shell.heredocs` / ``heredoc_bodies`` (here-documents placed and
  expanded by bash's rules);
- :mod:`pipeline.analysis.shell.model`: :class:`ShellAnalysis`, the accumulator, stdout flows;
- :mod:`pipeline.analysis.shell.ctx`: what a per-command handler sees (:class:`Ctx`), with
  :mod:`pipeline.analysis.shell.ctx_written` (written names with computed parts, ``mktemp``
  temps) and :mod:`pipeline.analysis.shell.ctx_provenance` (what a written file was made from);
- :mod:`pipeline.analysis.shell.tables` (data: options that take a value, command families),
  :mod:`pipeline.analysis.shell.args` and the ``shell_cmd_*`` handlers, dispatched by
  :mod:`pipeline.analysis.shell.commands`;
- :mod:`pipeline.analysis.shell.engine`: the walk (variables, loops, substitutions, pipelines),
  with :mod:`pipeline.analysis.shell.engine_words` (what words and here-documents stand for);
- :mod:`pipeline.analysis.shell.code`: python/other code steps (nested shell commands go back to
  the engine);
- this module: the entry points the pipeline calls.

A command is *opaque* only when its resources truly cannot be known: it does not parse,
uses ``eval`` on non-literal text, builds an executed or written target from an
unresolved variable or substitution, or pipes decoded/generated text into an interpreter.
"""

from __future__ import annotations

import time

from pipeline.analysis.shell.code import analyse_code_text
from pipeline.analysis.shell.ctx import Ctx
from pipeline.analysis.shell.engine import analyse
from pipeline.analysis.shell.budget import budget
from pipeline.analysis.shell.model import MAX_COMMAND_CHARS, Acc, ShellAnalysis

__all__ = ["ShellAnalysis", "analyse_command", "analyse_code", "MAX_COMMAND_CHARS", "Acc", "Ctx"]


def analyse_command(cmd: str) -> ShellAnalysis:
    """Resources read, written, executed, sent and deleted by the shell command ``cmd``."""
    if not isinstance(cmd, str):
        return ShellAnalysis(opaque=True, opaque_reason="command is not text")
    return analyse(cmd, analyse_code_text)


def analyse_code(src: str) -> ShellAnalysis:
    """Resources of a python / execute_code step (see :mod:`pipeline.analysis.shell.code`)."""
    if not isinstance(src, str):
        return ShellAnalysis(opaque=True, opaque_reason="code is not text")
    if len(src) > MAX_COMMAND_CHARS:
        return ShellAnalysis(opaque=True, opaque_reason="code too long")
    try:
        with budget() as spend:  # shared by the shell commands the code runs
            spend.deadline_at(time.thread_time())  # the clock counts the code's own parse too
            return analyse_code_text(src, python=True, depth=0)
    except RecursionError:
        return ShellAnalysis(opaque=True, opaque_reason="code nested too deeply")
