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

import re
from collections.abc import Callable, Sequence

import tree_sitter

from pipeline.analysis.shell.tables import WRAPPERS
from pipeline.analysis.shell.tree import tree

__all__ = ["inert_text", "Effects"]

_SUBSTITUTIONS = {"command_substitution", "process_substitution"}
_WORDS = {"word", "string", "raw_string", "concatenation", "ansi_c_string", "number", "simple_expansion",
          "expansion", "translated_string"}
_OUTPUT_REDIRECTS = {">", ">>", "&>", "&>>", ">|"}
_TERMINAL = {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"}
# options of data programs whose value is a command they run
_RUNNING_OPTIONS = ("--pre", "--hostname-bin", "--open-files-in-pager", "--pager", "-O")
# a command that may change what a name or a descriptor means: nothing of it is blanked
# (an alias or function named echo, `hash -p`, a PATH of its own, `exec > >(sh)`, a coproc,
# a process substitution, a /dev/fd/N file, a copy to a descriptor above 2)
_REDEFINERS = frozenset({"alias", "hash", "enable", "shopt", "coproc", "exec", "export", "declare", "typeset",
                         "readonly", "local"})
# programs whose stdout may run what it reads (a data program piped into one is read whole)
_RUNNERS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "eval", "source", ".", "xargs", "python", "python3",
                      "perl", "ruby", "node", "php", "parallel", "env", "sudo", "su", "doas", "tee", "crontab", "at"})
# wrappers the blanking looks behind (the rest run their words in other ways: `sg group CMD`)
_PLAIN_WRAPPERS = frozenset({"sudo", "doas", "nohup", "time", "nice", "ionice", "stdbuf", "timeout", "env", "command"})
# a here-document delimiter bash reads as the grammar does: a plain word or one wholly quoted
_DELIMITER = re.compile(r"[A-Za-z0-9_.-]+|'[^'\\$]*'|\"[^\"\\$`]*\"")
Effects = tuple[tuple[str, ...], tuple[str, ...]] | None
"""What a command runs and writes, as the shell analyser resolves them (None: unknown)."""


def inert_text(command: str, data_programs: Sequence[str], print_programs: Sequence[str],
               takes_effect: Callable[[str], bool], effects: Callable[[], Effects],
               is_note: Callable[[str], bool] = lambda path: True) -> str:
    """``command`` with its data parts blanked (see the module docstring); the command itself
    when nothing is data or it does not parse. ``takes_effect``: a written path where what is
    written counts (``settles`` or ``runs_later``); ``effects``: what the command runs and
    writes, asked only when something is printed into a file; ``is_note``: a file that is a
    document (``classifier.notes``): only into those is printed text data (a YAML manifest,
    a CI workflow, an rc file or a script is run by some tool later)."""
    if "#" not in command and not any(p.split()[0] in command for p in [*data_programs, *print_programs] if p.strip()):
        return command  # no program of the lists, no comment: nothing to parse
    if "/dev/fd/" in command:
        return command
    parsed = tree(command)
    if parsed is None or parsed.root_node.has_error or _redefines(parsed.root_node, command):
        return command
    walk = _Walk(command, [tuple(p.split()) for p in data_programs if p.split()], {p for p in print_programs if p},
                 takes_effect, effects, is_note)
    spans: list[tuple[int, int]] = []
    stack = [parsed.root_node]
    while stack:
        node = stack.pop()
        if node.type in _SUBSTITUTIONS:
            continue  # what runs inside is read as it is
        if node.type == "comment":
            spans.append((node.start_byte, node.end_byte))
        elif node.type == "command":
            spans.extend(walk.command_spans(node))
            continue
        stack.extend(node.children)
    if not spans:
        return command
    chars = list(command)
    for start, end in spans:
        chars[start:end] = [c if c == "\n" else " " for c in command[start:end]]
    return "".join(chars)


class _Walk:
    """One command's data parts, found command by command."""

    def __init__(self, text: str, programs: list[tuple[str, ...]], printers: set[str],
                 takes_effect: Callable[[str], bool], effects: Callable[[], Effects],
                 is_note: Callable[[str], bool]) -> None:
        self.text, self.programs, self.printers, self.takes_effect = text, programs, printers, takes_effect
        self.is_note = is_note
        self._effects = effects
        self._known: Effects = None
        self._asked = False

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
        nodes = [name, *(c for c in node.children if c.type in _WORDS and c.start_byte > name.start_byte)]
        start = _unwrapped(nodes, self.text)
        if start is None:
            return []
        args, words = nodes[start + 1:], [_text(n, self.text) for n in nodes[start:]]
        docs = [r for r in _redirects(node) if r.type in ("heredoc_redirect", "herestring_redirect")]
        if any(words[:len(p)] == list(p) for p in self.programs):
            if any(w == o or w.startswith(o + "=") or (o == "-O" and w.startswith(o)) for w in words[1:]
                   for o in _RUNNING_OPTIONS) or any(w.startswith("--output") for w in words[1:]):
                return []
            # what it prints (a --format, a replacement, a here-document it greps) must not run
            if self._piped_into_runner(node) or not self._prints_to_notes(node, ["grep"], args):
                return []
            return [(a.start_byte, a.end_byte) for a in args if not _runs(a, self.text)] + _bodies(docs, self.text)
        if words[0] not in self.printers or _feeds_command(node) or not self._prints_to_notes(node, words, args):
            return []
        spans = [(a.start_byte, a.end_byte) for a in args if not _runs(a, self.text)] \
            if words[0] in ("echo", "printf") else []
        return spans + _bodies(docs, self.text)

    def _piped_into_runner(self, node: tree_sitter.Node) -> bool:
        """True when a later command of the command's pipeline may run what it prints, or the
        output goes into a substitution."""
        child, cur = node, node.parent
        while cur is not None:
            if cur.type in _SUBSTITUTIONS:
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
        redirects = _redirects(node)
        # tree-sitter-bash keeps the rest of a here-document's first line inside its redirect:
        # `cat <<EOF | sh` pipes the body, `cat <<EOF > f` writes it
        if any(c.type in ("pipeline", "|", "|&") for r in redirects if r.type == "heredoc_redirect"
               for c in r.children):
            return False
        targets = [t for r in redirects if r.type == "file_redirect" and (t := _output_target(r, self.text)) != ""]
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
        return any(c == "ln" or c.endswith("/ln") for c in _command_names(self.text))


def _redefines(root: tree_sitter.Node, text: str) -> bool:
    """True when the command may change what a name or a descriptor means, so nothing of it
    is blanked: an alias, a function, `hash -p`, `enable`, `shopt`, a coproc, `exec` with a
    redirect (`exec > >(sh)`), an assignment to PATH, a process substitution, a copy to a
    descriptor above 2 (`>&3`)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in ("function_definition", "process_substitution"):
            return True
        if node.type in ("command", "declaration_command"):
            first = node.children[0] if node.children else None
            word = text[first.start_byte:first.end_byte] if first is not None else ""
            if word in _REDEFINERS and (word != "exec" or node.parent is not None
                                        and node.parent.type == "redirected_statement"):
                if word not in ("export", "declare", "typeset", "readonly", "local") or "PATH=" in text[
                        node.start_byte:node.end_byte]:
                    return True
        if node.type == "variable_assignment" and text[node.start_byte:node.end_byte].startswith("PATH="):
            return True
        if node.type == "file_redirect" and any(text[c.start_byte:c.end_byte] in ("3", "4", "5", "6", "7", "8", "9")
                                                for c in node.children if c.is_named):
            return True
        stack.extend(node.children)
    return False


def _command_names(text: str) -> list[str]:
    """The first word of every simple command of ``text`` (a cheap word scan)."""
    names, expect = [], True
    for word in text.replace(";", " ; ").replace("&&", " ; ").replace("||", " ; ").replace("|", " ; ").split():
        if expect and word not in WRAPPERS:
            names.append(word)
            expect = False
        if word == ";":
            expect = True
    return names


def _redirects(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    """Every redirect that may apply to a command: its own, and those of each enclosing
    redirected statement (`a && echo x > f` puts `> f` on the whole list), with those the
    grammar nests inside a here-document's redirect."""
    found = [c for c in node.children if c.type.endswith("_redirect")]
    cur = node.parent
    while cur is not None and cur.type not in _SUBSTITUTIONS:
        if cur.type == "redirected_statement":
            found += [c for c in cur.children if c.type.endswith("_redirect")]
        cur = cur.parent
    return found + [c for r in found if r.type == "heredoc_redirect" for c in r.children if c.type == "file_redirect"]


def _bodies(docs: list[tree_sitter.Node], text: str) -> list[tuple[int, int]]:
    """The spans of here-document / here-string bodies that run nothing."""
    spans = []
    for doc in docs:
        body = next((c for c in doc.children if c.type in ("heredoc_body", *_WORDS)), None)
        start = next((c for c in doc.children if c.type == "heredoc_start"), None)
        if start is not None:
            delimiter = text[start.start_byte:start.end_byte]
            plain = delimiter.strip("'\"")
            # bash ends the body at the first line equal to the unquoted delimiter: a
            # delimiter the grammar may read otherwise (E"O"F, $'EOF') keeps the text whole
            if not _DELIMITER.fullmatch(delimiter) or (body is not None and plain in text[
                    body.start_byte:body.end_byte].splitlines()):
                return []
        if body is not None and not _runs(body, text):
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
        if word not in _PLAIN_WRAPPERS:
            return None
        i += 1
        while i < len(nodes) and (option := _text(nodes[i], text)).startswith("-") and option != "-":
            i += 2 if len(option) == 2 and option[1] in spec else 1
        if word == "timeout":
            i += 1  # its duration
        while word == "env" and i < len(nodes) and "=" in _text(nodes[i], text):
            i += 1
    return None


def _text(node: tree_sitter.Node, text: str) -> str:
    """A word's text with plain quotes removed (``"git"`` is git)."""
    raw = text[node.start_byte:node.end_byte]
    return raw[1:-1] if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"" else raw


def _runs(node: tree_sitter.Node, text: str) -> bool:
    """True when the node holds a command or process substitution (it runs), other than one
    that only prints a here-document with ``cat`` (`$(cat <<'EOF' ... EOF)`: text)."""
    stack = [node]
    while stack:
        cur = stack.pop()
        if cur.type in _SUBSTITUTIONS:
            if not _prints_a_document(cur, text):
                return True
            continue
        stack.extend(cur.children)
    return False


def _prints_a_document(sub: tree_sitter.Node, text: str) -> bool:
    """True for `$(cat <<EOF ... EOF)`: one `cat` of a here-document that runs nothing."""
    inner = [c for c in sub.named_children if c.type != "comment"]
    if sub.type != "command_substitution" or len(inner) != 1 or inner[0].type != "redirected_statement":
        return False
    parts = inner[0].named_children
    command, docs = parts[0], parts[1:]
    return (command.type == "command" and len(command.named_children) == 1
            and text[command.start_byte:command.end_byte] == "cat"
            and len(docs) == 1 and docs[0].type == "heredoc_redirect"
            and all(c.type in ("heredoc_start", "heredoc_body", "heredoc_end") for c in docs[0].named_children)
            and not any(_runs(c, text) for c in docs[0].named_children))


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


def _output_target(redirect: tree_sitter.Node, text: str) -> str | None:
    """The file an output redirection writes to ("" for an input redirection or a
    descriptor's copy; None: not a plain word)."""
    if not any(c.type in _OUTPUT_REDIRECTS for c in redirect.children):
        return ""
    if any(c.type == "file_descriptor" and text[c.start_byte:c.end_byte] not in ("1",) for c in redirect.children):
        return "/dev/stderr"  # another descriptor's output (2>err.log): not what is printed
    target = redirect.child_by_field_name("destination")
    word = None if target is None or target.type not in ("word", "string", "raw_string") else _text(target, text)
    return None if word is None or "$" in word else word
