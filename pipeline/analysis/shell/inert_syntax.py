"""Syntax helpers of :mod:`pipeline.analysis.shell.inert`: reading tree-sitter-bash's tree
for what a command's words, redirects and here-documents are, and what may redefine them.
Split from ``inert.py`` (same layer)."""

from __future__ import annotations

import tree_sitter

from pipeline.analysis.shell.tables import WRAPPERS
from pipeline.analysis.shell.heredoc_bodies import spans_run
from pipeline.analysis.shell.heredocs import ends_as_bash_does, word_of

__all__ = ["OUTPUT_REDIRECTS", "PLAIN_WRAPPERS", "REDEFINERS", "SUBSTITUTIONS", "WORD_TYPES", "bodies",
           "command_names", "feeds_command", "git_words", "output_target", "prints_a_document", "redefines",
           "redirects_of", "runs_code", "unwrapped", "word_text"]

SUBSTITUTIONS = {"command_substitution", "process_substitution"}
WORD_TYPES = {"word", "string", "raw_string", "concatenation", "ansi_c_string", "number", "simple_expansion",
              "expansion", "translated_string"}
OUTPUT_REDIRECTS = {">", ">>", "&>", "&>>", ">|"}
# a command that may change what a name or a descriptor means: nothing of it is blanked
# (an alias or function named echo, `hash -p`, a PATH of its own, `exec > >(sh)`, a coproc,
# a process substitution, a /dev/fd/N file, a copy to a descriptor above 2)
REDEFINERS = frozenset({"alias", "hash", "enable", "shopt", "coproc", "exec", "export", "declare", "typeset",
                         "readonly", "local"})
# wrappers the blanking looks behind (the rest run their words in other ways: `sg group CMD`)
PLAIN_WRAPPERS = frozenset({"sudo", "doas", "nohup", "time", "nice", "ionice", "stdbuf", "timeout", "env", "command"})


def git_words(words: list[str]) -> list[str]:
    """``git``'s words with the global options that only choose a repository or the pager
    dropped (``-C DIR``, ``--no-pager``, ``--git-dir=``, ``--work-tree=``); any other global
    option (``-c core.pager=CMD`` runs a command) keeps them, so nothing is blanked."""
    rest, i = ["git"], 1
    while i < len(words) and words[i].startswith("-"):
        if words[i] == "-C" and i + 1 < len(words):
            i += 2
        elif words[i] in ("--no-pager", "-P") or words[i].startswith(("--git-dir=", "--work-tree=")):
            i += 1
        else:
            return words
    return rest + words[i:]


def redefines(root: tree_sitter.Node, text: str) -> bool:
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
            if word in REDEFINERS and (word != "exec" or node.parent is not None
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


def command_names(text: str) -> list[str]:
    """The first word of every simple command of ``text`` (a cheap word scan)."""
    names, expect = [], True
    for word in text.replace(";", " ; ").replace("&&", " ; ").replace("||", " ; ").replace("|", " ; ").split():
        if expect and word not in WRAPPERS:
            names.append(word)
            expect = False
        if word == ";":
            expect = True
    return names


def redirects_of(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    """Every redirect that may apply to a command: its own, and those of each enclosing
    redirected statement (`a && echo x > f` puts `> f` on the whole list), with those the
    grammar nests inside a here-document's redirect."""
    found = [c for c in node.children if c.type.endswith("_redirect")]
    cur = node.parent
    while cur is not None and cur.type not in SUBSTITUTIONS:
        if cur.type == "redirected_statement":
            found += [c for c in cur.children if c.type.endswith("_redirect")]
        cur = cur.parent
    return found + [c for r in found if r.type == "heredoc_redirect" for c in r.children if c.type == "file_redirect"]


def bodies(docs: list[tree_sitter.Node], text: str, deadline: float | None = None) -> list[tuple[int, int]]:
    """The spans of here-document / here-string bodies that run nothing: a body but the
    substitutions bash runs in it. Nothing when the grammar may have ended a body elsewhere
    than bash (:func:`ends_as_bash_does`); a body whose own parse runs past ``deadline``, or
    whose substitutions cannot be placed, is not blanked."""
    spans = []
    for doc in docs:
        body = next((c for c in doc.children if c.type in ("heredoc_body", *WORD_TYPES)), None)
        start = next((c for c in doc.children if c.type == "heredoc_start"), None)
        delimiter = word_of(start, text) if start is not None else "''"
        if start is not None and not ends_as_bash_does(doc, text):
            return []
        if body is None:
            continue
        if start is None:  # a here-string: a word, whole unless it runs something
            if not runs_code(body, text):
                spans.append((body.start_byte, body.end_byte))
            continue
        runs = spans_run(text[body.start_byte:body.end_byte], delimiter, deadline)
        if runs is None:
            continue  # a body whose substitutions cannot be placed: read whole
        pos = body.start_byte  # the body but what runs in it (backticks too: the grammar leaves them as text)
        for lo, hi in runs:
            spans.append((pos, body.start_byte + lo))
            pos = body.start_byte + hi
        spans.append((pos, body.end_byte))
    return spans


def unwrapped(nodes: list[tree_sitter.Node], text: str) -> int | None:
    """The index of the program behind wrappers (``sudo -u ci grep``, ``timeout 5 rg``,
    ``env A=1 echo``: the shell analyser's ``WRAPPERS``, their options that take a value
    skipped with it), None when no program is left or a word is not plain."""
    i = 0
    while i < len(nodes):
        word = word_text(nodes[i], text)
        if "$" in word:
            return None
        spec = WRAPPERS.get(word)
        if spec is None:
            return i
        if word not in PLAIN_WRAPPERS:
            return None
        i += 1
        while i < len(nodes) and (option := word_text(nodes[i], text)).startswith("-") and option != "-":
            i += 2 if len(option) == 2 and option[1] in spec else 1
        if word == "timeout":
            i += 1  # its duration
        while word == "env" and i < len(nodes) and "=" in word_text(nodes[i], text):
            i += 1
    return None


def word_text(node: tree_sitter.Node, text: str) -> str:
    """A word's text with plain quotes removed (``"git"`` is git)."""
    raw = text[node.start_byte:node.end_byte]
    return raw[1:-1] if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"" else raw


def runs_code(node: tree_sitter.Node, text: str) -> bool:
    """True when the node holds a command or process substitution (it runs), other than one
    that only prints a here-document with ``cat`` (`$(cat <<'EOF' ... EOF)`: text)."""
    stack = [node]
    while stack:
        cur = stack.pop()
        if cur.type in SUBSTITUTIONS:
            if not prints_a_document(cur, text):
                return True
            continue
        stack.extend(cur.children)
    return False


def prints_a_document(sub: tree_sitter.Node, text: str) -> bool:
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
            and not any(runs_code(c, text) for c in docs[0].named_children))


def feeds_command(node: tree_sitter.Node) -> bool:
    """True when the command's output goes into another command: a pipe (unless it is the
    pipeline's last command) or a substitution, at any depth."""
    child, cur = node, node.parent
    while cur is not None:
        if cur.type in SUBSTITUTIONS:
            return True
        if cur.type == "pipeline" and cur.named_children and cur.named_children[-1] != child:
            return True
        child, cur = cur, cur.parent
    return False


def output_target(redirect: tree_sitter.Node, text: str) -> str | None:
    """The file an output redirection writes to ("" for an input redirection or a
    descriptor's copy; None: not a plain word)."""
    if not any(c.type in OUTPUT_REDIRECTS for c in redirect.children):
        return ""
    if any(c.type == "file_descriptor" and text[c.start_byte:c.end_byte] not in ("1",) for c in redirect.children):
        return "/dev/stderr"  # another descriptor's output (2>err.log): not what is printed
    target = redirect.child_by_field_name("destination")
    word = None if target is None or target.type not in ("word", "string", "raw_string") else word_text(target, text)
    return None if word is None or "$" in word else word
