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
- ``dry_run_flags``: a program (and subcommand words) with its no-op flag (``kubectl
  --dry-run=client``, ``git push -n``): a simple command of it that carries that exact word
  changes nothing, so all its words are data;
- ``print_programs``: programs that print their arguments (``echo``, ``printf``) or their
  here-document / here-string (``cat``, ``tee``); what they print is data when it goes to
  the terminal or into files that neither settle (``classifier.settles``: system
  configuration, a home folder's dotfiles: ``>> /etc/ssh/sshd_config`` is the change
  itself) nor run later by itself (``classifier.runs_later``) nor are run by the same
  command, judged on the files the command writes as the shell analyser resolves them
  (after a ``cd``), never when the command makes links (``ln``) or climbs out (``../``).
  Printed into a pipe or a substitution it stays a command. Printed into a pipe, a substitution (``$(cat <<EOF)``), a
  crontab or a script the command runs, it stays a command.

A data program's here-document (``git commit -F - <<EOF``) is data too, and so is an
argument that is only a here-document printed by ``cat`` (``git commit -m "$(cat <<'EOF'
...)"``, the usual way agents write a commit message). Never blanked: a word holding any
other command or process substitution (it runs), a here-document with one, the value of a
data program's option that runs a command (``rg --pre``, ``git grep -O``, ``--pager``),
any part of a command that does not parse. A blanked match is not lost: ``sql/classifier_hits.sql`` keeps it as ``written``,
which counts when a later action runs a file the step wrote (``sql/executed_writes.sql``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import tree_sitter

from pipeline.analysis.shell.heredocs import ends_as_bash_does
from pipeline.analysis.shell.tree import PARSE_CPU_SECONDS, tree, unglued
from pipeline.analysis.shell.inert_syntax import (
    SUBSTITUTIONS, WORD_TYPES, bodies, command_names, feeds_command, git_words, output_target, redefines,
    redirects_of, runs_code, word_text, unwrapped)

__all__ = ["inert_text", "Effects"]

_TERMINAL = {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"}
# options of data programs whose value is a command they run
_RUNNING_OPTIONS = ("--pre", "--hostname-bin", "--open-files-in-pager", "--pager", "-O")
# programs whose stdout may run what it reads (a data program piped into one is read whole)
_RUNNERS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "eval", "source", ".", "xargs", "python", "python3",
                      "perl", "ruby", "node", "php", "parallel", "env", "sudo", "su", "doas", "tee", "crontab", "at"})
Effects = tuple[tuple[str, ...], tuple[str, ...]] | None
"""What a command runs and writes, as the shell analyser resolves them (None: unknown)."""


def inert_text(command: str, data_programs: Sequence[str], print_programs: Sequence[str],
               takes_effect: Callable[[str], bool], effects: Callable[[], Effects],
               is_note: Callable[[str], bool] = lambda path: True, dry_run_flags: Sequence[str] = ()) -> str:
    """``command`` with its data parts blanked (see the module docstring); the command itself
    when nothing is data or it does not parse. ``takes_effect``: a written path where what is
    written counts (``settles`` or ``runs_later``); ``effects``: what the command runs and
    writes, asked only when something is printed into a file; ``is_note``: a file that is a
    document (``classifier.notes``): only into those is printed text data (a YAML manifest,
    a CI workflow, an rc file or a script is run by some tool later); ``dry_run_flags``:
    ``program [subcommand] flag`` entries (see the module docstring)."""
    if "#" not in command and not any(p.split()[0] in command for p in [*data_programs, *print_programs,
                                                                         *dry_run_flags] if p.strip()):
        return command  # no program of the lists, no comment: nothing to parse
    if "/dev/fd/" in command:
        return command
    original, command = command, unglued(command)  # as the analyser parses it (tree.unglued)
    parsed = tree(command)
    if parsed is None or parsed.root_node.has_error or redefines(parsed.root_node, command) \
            or not _bodies_end_as_bash_does(parsed.root_node, command):
        return original
    walk = _Walk(command, [tuple(p.split()) for p in data_programs if p.split()], {p for p in print_programs if p},
                 takes_effect, effects, is_note, [tuple(p.split()) for p in dry_run_flags if len(p.split()) > 1])
    spans: list[tuple[int, int]] = []
    stack = [parsed.root_node]
    while stack:
        node = stack.pop()
        if node.type in SUBSTITUTIONS:
            continue  # what runs inside is read as it is
        if node.type == "comment":
            spans.append((node.start_byte, node.end_byte))
        elif node.type == "command":
            spans.extend(walk.command_spans(node))
            continue
        stack.extend(node.children)
    if not spans:
        return original
    chars = list(command)
    for start, end in spans:
        chars[start:end] = [c if c == "\n" else " " for c in command[start:end]]
    return "".join(chars)


def _bodies_end_as_bash_does(root: tree_sitter.Node, text: str) -> bool:
    """Whether every here-document of the tree ends where bash ends it: where one does not,
    the grammar's next here-document may hold lines bash runs (and blank them)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "heredoc_redirect" and not ends_as_bash_does(node, text):
            return False
        stack.extend(node.children)
    return True


def _is_flag(word: str, flag: str) -> bool:
    """``word`` is ``flag``, or holds a one-letter ``flag`` among a cluster of short options
    (``-nf`` holds ``-n``)."""
    return word == flag or (len(flag) == 2 and flag[0] == "-" and flag[1].isalpha() and len(word) > 2
                            and word[0] == "-" and word[1:].isalpha() and flag[1] in word[1:])


class _Walk:
    """One command's data parts, found command by command."""

    def __init__(self, text: str, programs: list[tuple[str, ...]], printers: set[str],
                 takes_effect: Callable[[str], bool], effects: Callable[[], Effects],
                 is_note: Callable[[str], bool], dry_runs: Sequence[tuple[str, ...]] = ()) -> None:
        self.text, self.programs, self.printers, self.takes_effect = text, programs, printers, takes_effect
        self.dry_runs = dry_runs
        self.is_note = is_note
        self._effects = effects
        self._known: Effects = None
        self._asked = False
        self.deadline = time.thread_time() + PARSE_CPU_SECONDS  # for all of its bodies' own parses

    def effects(self) -> Effects:
        """What the command runs and writes (the analyser, once)."""
        if not self._asked:
            self._known, self._asked = self._effects(), True
        return self._known

    def command_spans(self, node: tree_sitter.Node) -> list[tuple[int, int]]:
        """The data spans of one simple command (its argument words, here-documents)."""
        name = node.child_by_field_name("name")
        if name is None:
            return []
        nodes = [name, *(c for c in node.children if c.type in WORD_TYPES and c.start_byte > name.start_byte)]
        start = unwrapped(nodes, self.text)
        if start is None:
            return []
        args, words = nodes[start + 1:], [word_text(n, self.text) for n in nodes[start:]]
        docs = [r for r in redirects_of(node) if r.type in ("heredoc_redirect", "herestring_redirect")]
        if words[0] == "git":  # `git -C repo commit`, `git --no-pager log`: the subcommand's words
            words = git_words(words)
        # the program's own options end at `--`: after it a word is another command's
        # (`kubectl exec pod -- rm -rf / --dry-run=client` runs rm, not a dry run)
        own = words[:words.index("--")] if "--" in words else words
        if any(own[:len(p) - 1] == list(p[:-1]) and any(_is_flag(w, p[-1]) for w in own[len(p) - 1:])
               for p in self.dry_runs):
            # a dry run changes nothing: its name and words are data (not a word that runs code)
            return [(n.start_byte, n.end_byte) for n in nodes[start:] if not runs_code(n, self.text)]
        if any(words[:len(p)] == list(p) for p in self.programs):
            if any(w == o or w.startswith(o + "=") or (o == "-O" and w.startswith(o)) for w in words[1:]
                   for o in _RUNNING_OPTIONS) or any(w.startswith("--output") for w in words[1:]):
                return []
            # what it prints (a --format, a replacement, a here-document it greps) must not run
            if self._piped_into_runner(node) or not self._prints_to_notes(node, ["grep"], args):
                return []
            return [(a.start_byte, a.end_byte) for a in args if not runs_code(a, self.text)] + bodies(docs, self.text, self.deadline)
        if words[0] not in self.printers or (feeds_command(node) and not self._feeds_note_tees(node)) \
                or not self._prints_to_notes(node, words, args):
            return []
        spans = [(a.start_byte, a.end_byte) for a in args if not runs_code(a, self.text)] \
            if words[0] in ("echo", "printf") else []
        return spans + bodies(docs, self.text, self.deadline)

    def _feeds_note_tees(self, node: tree_sitter.Node) -> bool:
        """True when the command's output goes only through ``tee`` into notes (``echo x |
        tee -a NOTES.md``), the pipeline itself feeding nothing."""
        pipeline = node.parent
        if pipeline is None or pipeline.type != "pipeline" or feeds_command(pipeline):
            return False
        later = [c for c in pipeline.named_children if c.start_byte > node.start_byte]
        for command in later:
            if command.type != "command":
                return False
            words = [word_text(w, self.text) for w in command.children if w.type in WORD_TYPES or w.type == "command_name"]
            files = [w for w in words[1:] if not w.startswith("-")]
            if words[:1] != ["tee"] or not files or any("$" in f or ".." in f.split("/") or not self.is_note(f)
                                                          or self.takes_effect(f) for f in files):
                return False
        return bool(later)

    def _piped_into_runner(self, node: tree_sitter.Node) -> bool:
        """True when a later command of the command's pipeline may run what it prints, or the
        output goes into a substitution."""
        child, cur = node, node.parent
        while cur is not None:
            if cur.type in SUBSTITUTIONS:
                return True
            if cur.type == "pipeline":
                later = [c for c in cur.named_children if c.start_byte > child.start_byte]
                names = [self.text[c.start_byte:c.end_byte].split(maxsplit=1)[:1] for c in later]
                if any(not n or n[0].rsplit("/", 1)[-1] in _RUNNERS or "$" in n[0] for n in names):
                    return True
            child, cur = cur, cur.parent
        return False

    def _prints_to_notes(self, node: tree_sitter.Node, words: list[str], args: list[tree_sitter.Node]) -> bool:
        """True when what the print command prints goes to the terminal or into files where
        it does not take effect (see the module docstring)."""
        redirects = redirects_of(node)
        # tree-sitter-bash keeps the rest of a here-document's first line inside its redirect:
        # `cat <<EOF | sh` pipes the body, `cat <<EOF > f` writes it
        if any(c.type in ("pipeline", "|", "|&") for r in redirects if r.type == "heredoc_redirect"
               for c in r.children):
            return False
        targets = [t for r in redirects if r.type == "file_redirect" and (t := output_target(r, self.text)) != ""]
        if words[0] == "tee":
            targets += [w for w in words[1:] if not w.startswith("-")]
        targets = [t for t in targets if t not in _TERMINAL]
        if any(t is None or ".." in t.split("/") or not self.is_note(t) for t in targets):
            return False
        if not targets:
            return True
        effects = self.effects()
        if effects is None:
            return False
        runs, writes = effects
        if any("*" in r or "{}" in r for r in runs) or self.links() or {r.rsplit("/", 1)[-1] for r in runs} & {
                w.rsplit("/", 1)[-1] for w in writes}:
            return False  # it runs what it finds or a file it wrote (moved, renamed), or a name may be a link
        ran = {r.rsplit("/", 1)[-1] for r in runs}
        return not any(str(t).rsplit("/", 1)[-1] in ran for t in targets) and not any(
            self.takes_effect(w) or w.startswith("../") for w in (*map(str, targets), *writes) if w not in _TERMINAL)

    def links(self) -> bool:
        """True when the command makes links (a written name may then be any file)."""
        return any(c == "ln" or c.endswith("/ln") for c in command_names(self.text))
