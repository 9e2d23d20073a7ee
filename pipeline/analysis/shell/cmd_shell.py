"""Shell command handlers for the shell's own commands and name calculators: environment
dumps (printenv, export/declare/set with no names), echo/printf, read/mapfile, cd/pushd/popd,
pwd/basename/dirname/realpath, which/type, history. Handler signature as in
:mod:`pipeline.analysis.shell.cmd_text`.
"""

from __future__ import annotations

import posixpath
import re

from pipeline.analysis.shell.args import parse_opts
from pipeline.analysis.shell.ctx import Ctx
from pipeline.analysis.shell.model import MAX_COMMAND_CHARS
from pipeline.analysis.shell.tables import OPTIONS


def h_env_dump(ctx: Ctx, args: list[str], name: str) -> None:
    """printenv [NAME], export/declare/set with no names: environment reads."""
    names = [ctx.text(a) for a in args if not ctx.text(a).startswith(("-", "+"))]
    if name == "printenv":
        res = tuple(f"env:{n}" for n in names) or ("env:",)
        for r in res:
            ctx.read(r)
        ctx.stdout_resources(res)
        return
    if (name == "set" and args) or any("f" in ctx.text(a).lstrip("-+").lower() for a in args if ctx.text(a)[:1] in "-+"):
        return
    if not names:
        ctx.read("env:")
        ctx.stdout_resources(("env:",))
        return
    for a in args:
        m = re.match(r"^([A-Za-z_]\w*)=(.*)$", a, re.S)
        if m:
            ctx.assign(m.group(1), m.group(2))


def h_echo(ctx: Ctx, args: list[str], name: str) -> None:
    """echo/printf: no resources; the text is a literal on stdout (``printf -v`` assigns)."""
    words = list(args)
    if name == "echo":
        while words and re.fullmatch(r"-[neE]+", ctx.text(words[0])):
            words.pop(0)
    elif words and ctx.text(words[0]) == "-v" and len(words) > 1:
        ctx.assign(ctx.text(words[1]), None)
        return
    ctx.stdout_literal(" ".join(w for w in words), items=words)


def h_read(ctx: Ctx, args: list[str], name: str) -> None:
    """read/mapfile VAR: the variables get unknown values, read from stdin (`cat key | while
    read l; do dig $l.x.example; done` sends the key), or from the descriptor ``-u N`` names
    (`read -u 3 l 3< key`)."""
    opts, pos = parse_opts(args, *OPTIONS["read"])
    fd = next((v for k, v in opts if k == "-u" and v), None)
    if fd is not None:
        was = ctx.an.fds.get(fd)
        came_from: tuple[str, ...] = (
            () if was is None else (ctx.text(was[1]),) if was[0] in ("<", "<>")
            else ctx.an.carried(was).resources if was[0] in ("<<", "<<<") else ())  # `3<<EOF` with `$(cat key)`
    else:
        # a listing (find, grep -l: stdin items) gives names, not what the files hold
        piped = ctx.stdin.resources if not ctx.stdin.items else ()
        into = ctx.stdin_redirect()
        came_from = piped + ((ctx.text(into[1]),) if into is not None and into[0] in ("<", "<>") else ())
    for p in pos:
        ctx.assign(ctx.text(p), None, came_from)


def h_cd(ctx: Ctx, args: list[str], name: str) -> None:
    """cd/pushd DIR: later relative paths of the command are under DIR too (Acc.cwd); `cd -`
    and `popd` return to the folder before (the last move's, pushd's) when the command
    knows it; a computed folder (`cd $(mktemp -d)`), a return to a folder from before the
    command, or a `cd` in a pipeline, function, conditional or loop body makes it unknown
    again (in a subshell it holds to the subshell's end: the engine restores the folder).
    Also where the command leaves its shell (Acc.move, for the session's later steps:
    sql/shell_folders.sql), which no `cd` in a subshell moves."""
    _, pos = parse_opts(args, "", ())
    acc = ctx.acc
    acc.track_here()  # names from here on may be elsewhere than where the command started
    holds = (not ctx.scoped or ctx.in_subshell) and not ctx.varied  # the move holds for what follows it
    before = (acc.cwd, acc.lost)
    back = name == "popd" or (name == "cd" and bool(pos) and ctx.text(pos[0]) == "-")
    prior = (acc.oldcwd if name == "cd" else acc.dirs.pop() if acc.dirs else None) if back and holds else None
    if prior is not None:  # back to a folder this command was in
        acc.cwd, acc.lost = prior
        acc.oldcwd = before
        if not ctx.under_subshell:
            if name == "cd":
                acc.move("-")
            else:  # popd: the shell's own folder pushd left
                acc.folder, acc.oldfolder = acc.folders.pop() if acc.folders else None, acc.folder
        return
    if not holds or back or (pos and ctx.dynamic(pos[0])):
        acc.cwd, acc.lost = None, True
        acc.oldcwd = before if holds else None
        if not ctx.under_subshell:  # the shell's own folder: back where it was (`cd -`) or unknown
            acc.move("-" if not ctx.scoped and name == "cd" and back else None)
        return
    if name == "pushd" and not pos:
        if not ctx.under_subshell:
            acc.move(None)  # swaps with the folder before: unknown here
        return
    target = ctx.text(pos[0]) if pos else "~"
    if not ctx.under_subshell:
        if name == "pushd":
            acc.folders.append(acc.folder)
        acc.move(target)
    if name == "pushd":
        acc.dirs.append(before)
    acc.oldcwd = before
    base = acc.cwd
    joined = target if target.startswith(("/", "~")) or base is None else posixpath.join(base, target)
    # a relative first `cd` stays relative: where the command started is not known
    acc.cwd = "~/" + posixpath.normpath(joined[2:]) if joined.startswith("~/") else posixpath.normpath(joined)


def h_pathcalc(ctx: Ctx, args: list[str], name: str) -> None:
    """pwd, basename, dirname, realpath, readlink: computed names, no resource."""
    _, pos = parse_opts(args, *OPTIONS["pathcalc"])
    if name == "pwd":
        ctx.stdout_literal(".")
    elif pos and not any(ctx.dynamic(p) for p in pos):
        t = ctx.text(pos[0])
        if name == "basename":
            out = posixpath.basename(t.rstrip("/"))
            if len(pos) > 1 and out.endswith(ctx.text(pos[1])):
                out = out[: -len(ctx.text(pos[1]))]
        elif name == "dirname":
            out = posixpath.dirname(t.rstrip("/")) or "."
        else:
            out = t
        ctx.stdout_literal(out)


def h_lookup(ctx: Ctx, args: list[str], name: str) -> None:
    """which X / type -P X (-p): print where program X is, so `$(which X) ARGS` runs X (as
    `command -v X`, cmd_exec.h_wrapper); several names, `which -a`, or `type X` (a
    sentence) print something else."""
    opts, pos = parse_opts(args, "", ())
    flags = {k for k, _ in opts}
    if len(pos) != 1 or ctx.dynamic(pos[0]):
        return
    if (name == "which" and not flags) or (name == "type" and flags in ({"-P"}, {"-p"})):
        ctx.stdout_literal(pos[0])


def h_history(ctx: Ctx, args: list[str], name: str) -> None:
    """history: prints the shell history file."""
    ctx.read("~/.bash_history")


# the escapes `echo -e` and printf's format turn into characters (the others stay as written)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "a": "\a", "b": "\b", "f": "\f",
            "v": "\v", "e": "\x1b", "E": "\x1b"}
# an escape: \xHH, an octal \NNN (echo -e: \0NNN), \c (stop), or one character
_ESCAPE_RE = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|0[0-7]{0,3}|[1-7][0-7]{0,2}|.)", re.S)
_PRINTF_PART = re.compile(r"%(.)|%$", re.S)
# a printed text longer than the analyser's own bound on a program is not followed (printf
# repeats its format per argument: a 95 KB command printed a billion characters)
MAX_PRINTED_CHARS = MAX_COMMAND_CHARS


def _unescaped(text: str, echo: bool) -> tuple[str, bool]:
    """``text`` with its backslash escapes turned into characters as ``echo -e`` (``echo``)
    or printf's format does; and whether a ``\\c`` stopped the output there."""
    out: list[str] = []
    pos = 0
    for m in _ESCAPE_RE.finditer(text):
        out.append(text[pos:m.start()])
        pos = m.end()
        code = m.group(1)
        if code == "c":
            return "".join(out), True
        if code[0] == "x":
            out.append(chr(int(code[1:], 16)))
        elif code[0] in "01234567" and (code[0] == "0" or not echo):
            # echo -e: \0 and up to 3 octal digits; printf: 1 to 3 octal digits
            digits = code[1:] if echo else code[:3]
            out.append(chr(int(digits or "0", 8) & 0xFF))
            out.append("" if echo else code[3:])
        else:
            out.append(_ESCAPES.get(code, m.group(0)))
    out.append(text[pos:])
    return "".join(out), False


def printed_text(name: str, args: list[str]) -> str | None:
    """What ``echo`` / ``printf`` with these (known) arguments print, as bash prints it:
    ``echo``'s words (``-e``: escapes turned into characters), ``printf FORMAT ARGS`` with
    the format's escapes and ``%s`` (arguments as they are; the format repeated while
    arguments remain, as bash does); None for another command, another conversion (``%d``,
    ``%b``, ...), ``printf -v`` (no output), or a text over ``MAX_PRINTED_CHARS``."""
    if name == "echo":
        escapes, words = False, list(args)
        while words and re.fullmatch(r"-[neE]+", words[0]):
            flags = words.pop(0)
            escapes = "e" in flags if "E" not in flags else flags.rfind("e") > flags.rfind("E")
        text = " ".join(words)
        text = _unescaped(text, echo=True)[0] if escapes else text
        return text if len(text) <= MAX_PRINTED_CHARS else None
    if name != "printf" or not args or args[0] == "-v":
        return None
    fmt, rest = (args[1], args[2:]) if args[0] == "--" and len(args) > 1 else (args[0], args[1:])
    if any(m.group(1) not in ("s", "%") for m in _PRINTF_PART.finditer(fmt)):
        return None  # another conversion (or a lone `%` at the end): not followed
    fmt, stopped = _unescaped(fmt, echo=False)
    parts = _PRINTF_PART.split(fmt)  # text, conversion, text, conversion, ... text
    out: list[str] = []
    size, k = 0, 0
    while True:
        for i, part in enumerate(parts):
            if part is None:
                continue
            if i % 2 == 0:
                piece = part
            elif part == "%":
                piece = "%"
            else:
                piece = rest[k] if k < len(rest) else ""
                k += 1
            out.append(piece)
            size += len(piece)
            if size > MAX_PRINTED_CHARS:
                return None
        if stopped or k == 0 or k >= len(rest):
            return "".join(out)
