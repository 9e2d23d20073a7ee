"""The parts of a shell command that are data, never run: what the built-in classifier's
``argument = "*"`` rules should not read as commands.

A rule such as ``destructive_rm`` reads a shell step's whole text, so a command that only
*mentions* a dangerous command used to be labelled as running it: a SECURITY.md written
from a here-document, a ``grep`` for an indicator, a commit message. :func:`inert_text`
returns the command with those parts blanked (same length, so nothing joins across a
blank). What is data is policy (``[classifier]`` in the policy file):

- ``data_programs``: programs (or program + subcommand words, ``git commit``) whose
  argument words are never run wherever their output goes (a ``grep`` pattern, a commit
  message);
- ``print_programs``: programs that print their arguments (``echo``, ``printf``) or their
  here-document / here-string (``cat``, ``tee``); what they print is data when it goes to
  the terminal or into files of the workspace (a relative path) or the scratch folder
  (``/tmp``) none of which runs later by itself (``classifier.runs_later``) or is run by
  the same command. Printed into a system or home file (``>> /etc/ssh/sshd_config``) it is
  the change itself, and stays read. Printed into a pipe, a substitution (``$(cat <<EOF)``), a
  crontab or a script the command runs, it stays a command.

Never blanked: a word holding a command or process substitution (it runs), a here-document
with one, a program behind a wrapper (``sudo tee``), any part of a command that does not
parse. A blanked match is not lost: ``sql/classifier_hits.sql`` keeps it as ``written``,
which counts when a later action runs a file the step wrote (``sql/executed_writes.sql``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import tree_sitter

from pipeline.analysis.shell.tables import WRAPPERS
from pipeline.analysis.shell.tree import tree

__all__ = ["inert_text"]

_SUBSTITUTIONS = {"command_substitution", "process_substitution"}
_WORDS = {"word", "string", "raw_string", "concatenation", "ansi_c_string", "number", "simple_expansion",
          "expansion", "translated_string"}
_OUTPUT_REDIRECTS = {">", ">>", "&>", "&>>", ">|"}


def inert_text(command: str, data_programs: Sequence[str], print_programs: Sequence[str],
               runs_later: Callable[[str], bool], executed: Callable[[], Sequence[str] | None]) -> str:
    """``command`` with its data parts blanked (see the module docstring); the command itself
    when nothing is data or it does not parse. ``executed``: what the command runs (the
    shell analyser's ``executes``; None: it cannot be known), asked only when something is
    printed into a file, so a file the command writes and then runs is not data."""
    if "#" not in command and not any(p.split()[0] in command for p in [*data_programs, *print_programs] if p.strip()):
        return command  # no program of the lists, no comment: nothing to parse
    parsed = tree(command)
    if parsed is None or parsed.root_node.has_error:
        return command
    programs = [tuple(p.split()) for p in data_programs if p.split()]
    printers = {p for p in print_programs if p}
    ran = _Ran(executed)
    spans: list[tuple[int, int]] = []
    stack = [parsed.root_node]
    while stack:
        node = stack.pop()
        if node.type in _SUBSTITUTIONS:
            continue  # what runs inside is read as it is
        if node.type == "comment":
            spans.append((node.start_byte, node.end_byte))
        elif node.type == "command":
            spans.extend(_command_spans(node, command, programs, printers, runs_later, ran))
            continue
        stack.extend(node.children)
    if not spans:
        return command
    chars = list(command)
    for start, end in spans:
        chars[start:end] = [c if c == "\n" else " " for c in command[start:end]]
    return "".join(chars)


class _Ran:
    """The names of the files a command runs, analysed once and only when asked."""

    def __init__(self, executed: Callable[[], Sequence[str] | None]) -> None:
        self._executed = executed
        self._names: set[str] | None = None
        self._known = True

    def runs(self, path: str) -> bool:
        """True when the command may run ``path`` (always, when its runs cannot be known)."""
        if self._names is None:
            found = self._executed()
            self._known = found is not None
            self._names = {e.rsplit("/", 1)[-1] for e in found or ()}
        return not self._known or path.rsplit("/", 1)[-1] in self._names


def _command_spans(node: tree_sitter.Node, text: str, programs: list[tuple[str, ...]], printers: set[str],
                   runs_later: Callable[[str], bool], ran: _Ran) -> list[tuple[int, int]]:
    """The data spans of one simple command (its argument words, here-documents)."""
    name = node.child_by_field_name("name")
    if name is None:
        return []
    nodes = [name, *(c for c in node.children if c.type in _WORDS and c.start_byte > name.start_byte)]
    start = _unwrapped(nodes, text)
    if start is None:
        return []
    args, words = nodes[start + 1:], [_text(n, text) for n in nodes[start:]]
    if any(words[:len(p)] == list(p) for p in programs):
        return [(a.start_byte, a.end_byte) for a in args if not _runs(a)]
    if words[0] not in printers or _feeds_command(node):
        return []
    statement = node.parent if node.parent is not None and node.parent.type == "redirected_statement" else None
    redirects = [*node.children, *(statement.children if statement is not None else [])]
    docs = [r for r in redirects if r.type in ("heredoc_redirect", "herestring_redirect")]
    # tree-sitter-bash keeps the rest of a here-document's first line inside its redirect:
    # `cat <<EOF | sh` pipes the body, `cat <<EOF > f` writes it
    if any(c.type in ("pipeline", "|", "|&") for d in docs for c in d.children):
        return []
    outputs = [r for r in redirects if r.type == "file_redirect"]
    outputs += [c for d in docs for c in d.children if c.type == "file_redirect"]
    targets = _output_targets(outputs, text)
    if words[0] == "tee":
        targets += [_text(a, text) for a in args if not _text(a, text).startswith("-")]
    if any(t is None or _settles(t) or runs_later(t) or ran.runs(t) for t in targets):
        return []
    spans = [(a.start_byte, a.end_byte) for a in args if not _runs(a)] if words[0] in ("echo", "printf") else []
    for doc in docs:
        body = next((c for c in doc.children if c.type in ("heredoc_body", *_WORDS)), None)
        if body is not None and not _runs(body):
            spans.append((body.start_byte, body.end_byte))
    return spans


def _unwrapped(nodes: list[tree_sitter.Node], text: str) -> int | None:
    """The index of the program behind wrappers (``sudo -u ci grep``, ``timeout 5 rg``,
    ``env A=1 echo``: the shell analyser's ``WRAPPERS``, their options that take a value
    skipped with it), None when no program is left or a word is not plain."""
    i = 0
    while i < len(nodes):
        word = _text(nodes[i], text)
        if "$" in word:
            return None
        spec = WRAPPERS.get(word)
        if spec is None:
            return i
        i += 1
        while i < len(nodes) and (option := _text(nodes[i], text)).startswith("-") and option != "-":
            i += 2 if len(option) == 2 and option[1] in spec else 1
        if word == "timeout":
            i += 1  # its duration
        while word == "env" and i < len(nodes) and "=" in _text(nodes[i], text):
            i += 1
    return None


_TERMINAL = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty")


def _settles(target: str) -> bool:
    """True for a file outside the workspace and the scratch folder: what is printed into
    ``/etc/ssh/sshd_config``, ``/etc/selinux/config`` or ``~/.gitconfig`` is the change
    itself (``PermitRootLogin yes``), not a note about it."""
    if target in _TERMINAL or target.startswith(("/tmp/", "/var/tmp/")):
        return False
    return target.startswith(("/", "~"))


def _text(node: tree_sitter.Node, text: str) -> str:
    """A word's text with plain quotes removed (``"git"`` is git)."""
    raw = text[node.start_byte:node.end_byte]
    return raw[1:-1] if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"" else raw


def _runs(node: tree_sitter.Node) -> bool:
    """True when the node holds a command or process substitution (it runs)."""
    stack = [node]
    while stack:
        cur = stack.pop()
        if cur.type in _SUBSTITUTIONS:
            return True
        stack.extend(cur.children)
    return False


def _feeds_command(node: tree_sitter.Node) -> bool:
    """True when the command's output goes into another command: a pipe (unless it is the
    pipeline's last command) or a substitution, at any depth."""
    child, cur = node, node.parent
    while cur is not None:
        if cur.type in _SUBSTITUTIONS:
            return True
        if cur.type == "pipeline" and cur.named_children and cur.named_children[-1] != child:
            return True
        child, cur = cur, cur.parent
    return False


def _output_targets(redirects: list[tree_sitter.Node], text: str) -> list[str | None]:
    """The files output redirections write to (None: not a plain word)."""
    targets: list[str | None] = []
    for redirect in redirects:
        if not any(c.type in _OUTPUT_REDIRECTS for c in redirect.children):
            continue
        target = redirect.child_by_field_name("destination")
        word = None if target is None or target.type not in ("word", "string", "raw_string") else _text(target, text)
        targets.append(None if word is None or "$" in word else word)
    return targets
