"""An argv (a command as a list of words, what exec-style tools take) as the command line a
shell would run: read by the Codex adapter (its ``shell`` tool's ``command`` list) and by
stage ``resources`` (a shell argument given as a list, in any format)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

# shells whose `-c SCRIPT` runs SCRIPT: [bash, -lc, SCRIPT] is SCRIPT itself
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish"})
_SCRIPT_FLAGS = frozenset({"-c", "-lc", "-cl", "-ic"})


def script_of(command: str) -> str:
    """The script of a command LINE that runs a shell script (``bash -lc 'SCRIPT'``, an argv
    printed shell-quoted, as ``codex exec --json`` prints its commands); any other line as
    it is. Only such a line is split (shlex is slow on a long one)."""
    head = command.split(None, 2)
    if len(head) < 3 or head[0].rsplit("/", 1)[-1] not in SHELLS or head[1] not in _SCRIPT_FLAGS:
        return command
    try:
        return argv_command(shlex.split(command))
    except ValueError:  # unbalanced quotes: the line as printed
        return command


def argv_command(argv: Sequence[object]) -> str:
    """``argv`` as one command string: ``[bash, -lc, SCRIPT]`` -> SCRIPT, else its words
    shell-quoted (``["git", "commit", "-m", "two words"]`` -> ``git commit -m 'two words'``)."""
    words = [str(w) for w in argv]
    if len(words) == 3 and words[0].rsplit("/", 1)[-1] in SHELLS and words[1] in _SCRIPT_FLAGS:
        return words[2]
    return shlex.join(words)
