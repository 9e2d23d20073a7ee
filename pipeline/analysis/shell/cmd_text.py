"""Shell command handlers: readers and text filters (cat, sort, grep, sed, awk, jq).

Each handler gets the :class:`pipeline.analysis.shell.ctx.Ctx` of one simple command, its raw
argument words (``argv[1:]``) and its table name, and records resources through the context.
"""

from __future__ import annotations

import posixpath
import re

from pipeline.analysis.shell.args import has_opt, opt_values, parse_opts
from pipeline.analysis.shell.tables import METADATA_READERS, OPTIONS, READERS, TRANSFORMERS
from pipeline.analysis.shell.ctx import Ctx


def h_reader(ctx: Ctx, args: list[str], name: str) -> None:
    """cat, head, ls, diff, ...: every positional is a file read."""
    short, long = READERS.get(name, ("", ()))
    opts, pos = parse_opts(args, short, long)
    for k, v in opts:
        if name in ("sort", "iconv") and k in ("-o", "--output") and v:
            ctx.write(v)
        elif name == "xmllint" and k == "--output" and v:
            ctx.write(v)
    if name == "pdftotext" and len(pos) == 2:
        ctx.read(pos[0])
        ctx.write(pos[1])
        return
    if name == "ls" and not pos:
        pos = ["."]
    for p in pos:
        ctx.read(p)
    if name in ("dos2unix", "unix2dos"):
        for p in pos:
            ctx.write(p)
    if name in METADATA_READERS or (name == "cut" and _keys_only_cut(ctx, opts)):
        ctx.stdout_resources(())  # names, sizes, digests: not the files' content
    elif name == "cat" and not pos:
        lit = ctx.stdin_literal()
        if lit is not None and not ctx.stdin.resources:  # known text and files: both go on
            ctx.stdout_literal(lit)
        else:
            ctx.stdout_passthrough()
    elif name in TRANSFORMERS:
        ctx.stdout_transformed()


_CAT_WRAPPERS = frozenset({"sudo", "doas", "command", "builtin", "nohup", "exec"})


def catted_file(words: list[str], ctx: Ctx) -> str | None:
    """The one file a ``cat`` command prints as it is (``cat x.txt``, ``cat -- x.txt``,
    ``cat < x.txt``, ``sudo cat x.txt``), when that is all it prints (``words``: the whole
    command): its redirection into a file makes a copy of that file
    (:meth:`pipeline.analysis.shell.model.Acc.copied`)."""
    if any(ctx.dynamic(w) for w in words):
        return None
    texts = [ctx.text(w) for w in words]
    at = next((i for i, t in enumerate(texts) if posixpath.basename(t) == "cat"), None)
    # only wrappers and their options before it (`sudo -u root cat`)
    if at is None or not all(posixpath.basename(t) in _CAT_WRAPPERS or t.startswith("-")
                             or (i and texts[i - 1] in ("-u", "-g")) for i, t in enumerate(texts[:at])):
        return None
    files = [t for t in texts[at + 1:] if t != "--"]
    if not files:
        return ctx.stdin_file()  # `cat < x.sh`
    return files[0] if len(files) == 1 and not files[0].startswith("-") and ctx.stdout is None else None


def h_sort(ctx: Ctx, args: list[str], name: str) -> None:
    """sort [-o OUT] FILES."""
    opts, pos = parse_opts(args, *OPTIONS["sort"])
    for v in opt_values(opts, "-o", "--output"):
        ctx.write(v)
    for p in pos:
        ctx.read(p)


def h_uniq(ctx: Ctx, args: list[str], name: str) -> None:
    """uniq [IN [OUT]]."""
    _, pos = parse_opts(args, *OPTIONS["uniq"])
    if pos:
        ctx.read(pos[0])
    if len(pos) > 1:
        ctx.write(pos[1])


def h_grep(ctx: Ctx, args: list[str], name: str) -> None:
    """grep/rg/ag: the pattern is not a file; -f FILE is; default path for -r is '.'."""
    if name in ("rg", "ag"):
        opts, pos = parse_opts(args, *OPTIONS["rg"])
        recursive = True
    else:
        opts, pos = parse_opts(args, *OPTIONS["grep"])
        recursive = has_opt(opts, "-r", "-R", "--recursive", "--dereference-recursive")
    for f in opt_values(opts, "-f", "--file"):
        ctx.read(f)
    if not opt_values(opts, "-e", "--regexp", "-f", "--file") and pos:
        pos = pos[1:]
    if not pos and recursive:
        pos = ["."]
    for p in pos:
        ctx.read(p)
    if has_opt(opts, "-l", "-L", "--files-with-matches", "--files-without-match"):
        ctx.stdout_items([ctx.text(p).rstrip("/") + "/**" if recursive else ctx.text(p) for p in pos])


def h_sed(ctx: Ctx, args: list[str], name: str) -> None:
    """sed [-i[SUF]] [-e S | -f F | SCRIPT] FILES: -i writes the files."""
    inplace, script, files = False, False, []
    scripts: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            files.extend(args[i + 1:])
            break
        if a.startswith("--"):
            inplace |= a.startswith("--in-place")
            if a in ("--expression", "--file", "--line-length") and i + 1 < len(args):
                if a == "--file":
                    ctx.read(args[i + 1])
                    scripts.append("")  # unknown
                elif a == "--expression":
                    scripts.append(args[i + 1])
                script |= a != "--line-length"
                i += 1
            elif a.startswith(("--expression=", "--file=")):
                script = True
                if a.startswith("--file="):
                    ctx.read(a[7:])
                    scripts.append("")  # unknown
                else:
                    scripts.append(a[13:])
        elif a.startswith("-") and len(a) > 1:
            for k, ch in enumerate(a[1:], 1):
                if ch == "i":
                    inplace = True
                    break
                if ch in "efl":
                    val = a[k + 1:]
                    if not val and i + 1 < len(args):
                        i += 1
                        val = args[i]
                    if ch == "f":
                        ctx.read(val)
                        scripts.append("")  # unknown
                    if ch == "e":
                        scripts.append(val)
                    script |= ch in "ef"
                    break
        else:
            files.append(a)
        i += 1
    if not script and files:
        scripts.append(files[0])
        files = files[1:]
    for f in files:
        ctx.read(f)
        if inplace:
            ctx.write(f)
    if not inplace and scripts and all(_VALUES_STRIPPED.fullmatch(ctx.text(x).strip()) for x in scripts):
        ctx.stdout_resources(())  # `sed 's/=.*/=/' .env > .env.example`: the names, no values
    else:
        ctx.stdout_transformed()


# a sed substitution that cuts every line after its first `=` (`s/=.*/=/`, `s/[^=]*=.*/x/`),
# replacing it by nothing that refers back (no `&`, no `\N`): the names are left (an .env's
# keys). Not `s/KEY=.*/KEY=/`, which leaves every other line as it was
_VALUES_STRIPPED = re.compile(r"s([/|#,])\^?(?:\[\^=\]\*)?=\.\*\$?\1[^\\&/|#,]*\1g?")


def _keys_only_cut(ctx: Ctx, opts: list[tuple[str, str]]) -> bool:
    """`cut -d= -f1`: the names before each `=`, not the values."""
    delim = [ctx.text(v) for k, v in opts if k in ("-d", "--delimiter")]
    fields = [ctx.text(v) for k, v in opts if k in ("-f", "--fields")]
    return delim == ["="] and fields == ["1"]


def h_awk(ctx: Ctx, args: list[str], name: str) -> None:
    """awk [-F S] [-v A=B] [-f PROG | 'PROG'] FILES: system()/print > "f" inside PROG too."""
    opts, pos = parse_opts(args, *OPTIONS["awk"])
    progs = opt_values(opts, "-e", "--source")
    for f in opt_values(opts, "-f", "--file"):
        ctx.read(f)
    if not progs and not opt_values(opts, "-f", "--file") and pos:
        progs, pos = [pos[0]], pos[1:]
    for p in pos:
        if not re.match(r"^[A-Za-z_]\w*=", ctx.text(p)):
            ctx.read(p)
    for prog in (ctx.text(p) for p in progs):
        for m in re.finditer(r'system\s*\(\s*"((?:[^"\\]|\\.)*)"\s*\)', prog):
            ctx.run_text_literal(m.group(1).replace('\\"', '"'))
        if re.search(r"system\s*\(\s*[^\s\")]", prog) or re.search(r'\|\s*"(ba|z|da)?sh\b', prog):
            ctx.fail("awk runs a command built at run time")
        for m in re.finditer(r'print[f]?\b[^;{}]*?>>?\s*"([^"]+)"', prog):
            ctx.write(m.group(1))
        for m in re.finditer(r'getline\s*<\s*"([^"]+)"', prog):
            ctx.read(m.group(1))
        for m in re.finditer(r'"([^"]+)"\s*\|\s*getline', prog):
            ctx.run_text_literal(m.group(1))
    ctx.stdout_transformed()


def h_jq(ctx: Ctx, args: list[str], name: str) -> None:
    """jq FILTER FILES (--arg/--argjson take two words, --slurpfile/--rawfile read)."""
    i, pos, has_filter = 0, [], False
    while i < len(args):
        a = args[i]
        if a in ("--arg", "--argjson"):
            i += 3
            continue
        if a in ("--slurpfile", "--rawfile") and i + 2 < len(args):
            ctx.read(args[i + 2])
            i += 3
            continue
        if a in ("-f", "--from-file") and i + 1 < len(args):
            ctx.read(args[i + 1])
            has_filter = True
            i += 2
            continue
        if a in ("--indent", "--tab-size"):
            i += 2
            continue
        if a in ("--args", "--jsonargs"):
            break
        if not a.startswith("-") or a == "-":
            pos.append(a)
        i += 1
    for p in pos[0 if has_filter else 1:]:
        ctx.read(p)
