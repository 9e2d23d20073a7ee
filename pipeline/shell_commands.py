"""Per-command table of the shell analyser: what each command's arguments mean.

Each handler gets the :class:`pipeline.shell.Ctx` of one simple command and its raw
argument words (``argv[1:]``) and records reads, writes, executes, sends, payloads and
deletes through the context. Commands not in the table are not opaque: their
path-looking arguments count as reads (most programs read the files they are given).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pipeline.shell import Ctx

Handler = Callable[["Ctx", list[str], str], None]

KEYWORDS = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for",
                      "case", "esac", "{", "}", "!", "function", "select", "coproc"})
_EXTS = frozenset((
    "txt csv tsv json jsonl yaml yml toml xml html htm md rst py sh bash zsh js mjs ts php rb pl "
    "c h cc cpp hpp go rs java kt sql db sqlite sqlite3 log conf cfg ini env pem key crt cer pub "
    "p12 pfx gpg asc zip tar gz tgz bz2 xz zst 7z rar pdf doc docx xls xlsx ppt pptx odt ods png "
    "jpg jpeg gif svg webp bmp ico mp3 mp4 avi mpeg m4v mov wav bin exe so dll whl deb rpm iso "
    "img bak old orig tmp out lock cookie cookies kdbx ovpn service desktop plist ipynb parquet "
    "pkl pickle npy h5 crx apk jar war").split())
_PATHY = re.compile(r"^(?:/|~|\.{1,2}/|\.[A-Za-z0-9_])|/")
_REMOTE = re.compile(r"^(?:(?P<user>[^@/:\s]+)@)?(?P<host>\[[^\]]+\]|[A-Za-z0-9][A-Za-z0-9.-]*):(?!//)(?P<path>.*)$")
_MODE = re.compile(r"^(?:[0-7]{3,4}|[ugoa]*(?:[-+=][rwxXstugo]*)+(?:,[ugoa]*(?:[-+=][rwxXstugo]*)+)*)$")
_SQL_DESTROY = re.compile(r"(?i)\b(drop\s+(table|database|schema)|delete\s+from|truncate)\b")
_SQL_WRITE = re.compile(r"(?i)\b(insert\s+into|update\s+\w+\s+set|create\s+table|alter\s+table|replace\s+into)\b")
_SEND_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


def looks_like_path(text: str) -> bool:
    """A word that names a file: has a slash, starts with ~ . /, or ends in a known extension."""
    if not text or text.startswith("-") or "=" in text or "://" in text or "\n" in text:
        return False
    if re.search(r"[(){}]| / ", text):
        return False  # code or prose, not a file name
    if _PATHY.search(text):
        return True
    ext = text.rsplit(".", 1)[-1].lower() if "." in text else ""
    return ext in _EXTS


def parse_opts(args: list[str], short: str = "", long: tuple[str, ...] = (),
               stop: bool = False) -> tuple[list[tuple[str, str | None]], list[str]]:
    """Split ``args`` into (option, value) pairs and positionals.

    ``short``: letters whose option takes a value (attached or next word); ``long``: long
    option names (without ``--``) taking a value; ``stop``: options end at the first
    positional (wrappers and interpreters)."""
    opts: list[tuple[str, str | None]] = []
    pos: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            pos.extend(args[i + 1:])
            break
        if a.startswith("--") and len(a) > 2:
            key, eq, val = a.partition("=")
            if eq:
                opts.append((key, val))
            elif key[2:] in long and i + 1 < len(args):
                opts.append((key, args[i + 1]))
                i += 1
            else:
                opts.append((key, None))
        elif a.startswith("-") and len(a) > 1:
            for j in range(1, len(a)):
                if a[j] in short:
                    val = a[j + 1:]
                    if not val and i + 1 < len(args):
                        val = args[i + 1]
                        i += 1
                    opts.append(("-" + a[j], val))
                    break
                opts.append(("-" + a[j], None))
        else:
            if stop:
                pos.extend(args[i:])
                break
            pos.append(a)
        i += 1
    return opts, pos


def _vals(opts: list[tuple[str, str | None]], *names: str) -> list[str]:
    return [v for k, v in opts if k in names and v is not None]


def _has(opts: list[tuple[str, str | None]], *names: str) -> bool:
    return any(k in names for k, _ in opts)


def _join(d: str, name: str) -> str:
    return name if d in ("", ".") else d.rstrip("/") + "/" + name


def _url_basename(url: str) -> str:
    path = re.sub(r"^[a-z]+://[^/]*", "", url).split("?")[0].split("#")[0]
    return posixpath.basename(path) or "index.html"


def _sql(ctx: Ctx, sql: str, resource: str) -> None:
    if _SQL_DESTROY.search(sql):
        ctx.delete(resource)
    if _SQL_WRITE.search(sql):
        ctx.write(resource)


# --------------------------------------------------------------------------- files

_READERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "cat": ("", ()), "tac": ("s", ()), "nl": ("bdfhilnsvw", ()), "head": ("nc", ("lines", "bytes")),
    "tail": ("ncs", ("lines", "bytes", "pid", "sleep-interval")), "less": ("bhjkoOpPtTxyz", ()),
    "more": ("n", ()), "wc": ("", ()), "md5sum": ("", ()), "sha1sum": ("", ()), "sha256sum": ("", ()),
    "sha512sum": ("", ()), "shasum": ("a", ()), "cksum": ("", ()), "b2sum": ("l", ()), "sum": ("", ()),
    "strings": ("nt", ()), "od": ("AjNtw", ()), "hexdump": ("nsef", ()), "hd": ("nsef", ()),
    "file": ("mfFeP", ()), "stat": ("c", ("format", "printf")), "du": ("dBt", ("max-depth", "exclude", "block-size")),
    "ls": ("ITw", ("ignore", "hide", "width", "time-style", "format", "sort", "color", "block-size")),
    "tree": ("LPIo", ()), "column": ("tscoNRlEHW", ()), "fold": ("w", ()), "fmt": ("w", ()),
    "paste": ("d", ()), "join": ("jto12ae", ()), "comm": ("", ()), "cmp": ("inI", ()),
    "diff": ("CUxXILF", ("label", "exclude", "exclude-from", "ignore-matching-lines", "context", "unified")),
    "zcat": ("", ()), "bzcat": ("", ()), "xzcat": ("", ()), "zless": ("", ()), "expand": ("t", ()),
    "unexpand": ("t", ()), "rev": ("", ()), "cut": ("dfcb", ("delimiter", "fields", "characters", "bytes")),
    "pr": ("hlwNo", ()), "identify": ("", ()), "exiftool": ("", ()), "pdftotext": ("fl", ()),
    "pdfinfo": ("", ()), "readelf": ("", ()), "objdump": ("jM", ()), "nm": ("", ()), "ldd": ("", ()),
    "xmllint": ("", ("xpath", "output")), "yamllint": ("cdf", ()), "json_pp": ("", ()), "lsattr": ("", ()),
    "getfacl": ("", ()), "look": ("t", ()), "iconv": ("ftc", ("from-code", "to-code")), "dos2unix": ("", ()),
    "unix2dos": ("", ()), "csvlook": ("", ()), "bat": ("lm", ()), "view": ("", ()), "vi": ("", ()),
    "vim": ("", ()), "nano": ("", ()), "emacs": ("", ()), "gdb": ("", ()), "source-highlight": ("", ()),
}
_TRANSFORMERS = {"rev", "tr", "awk", "gawk", "mawk", "sed", "perl", "iconv", "uudecode"}


def h_reader(ctx: Ctx, args: list[str], name: str) -> None:
    """cat, head, ls, diff, ...: every positional is a file read."""
    short, long = _READERS.get(name, ("", ()))
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
    if name == "cat" and not pos:
        lit = ctx.stdin_literal()
        if lit is not None:
            ctx.stdout_literal(lit)
        else:
            ctx.stdout_passthrough()
    elif name in _TRANSFORMERS:
        ctx.stdout_transformed()


def h_sort(ctx: Ctx, args: list[str], name: str) -> None:
    """sort [-o OUT] FILES."""
    opts, pos = parse_opts(args, "ktoST", ("key", "field-separator", "output", "buffer-size",
                                          "temporary-directory", "parallel", "files0-from"))
    for v in _vals(opts, "-o", "--output"):
        ctx.write(v)
    for p in pos:
        ctx.read(p)


def h_uniq(ctx: Ctx, args: list[str], name: str) -> None:
    """uniq [IN [OUT]]."""
    _, pos = parse_opts(args, "fsw", ("skip-fields", "skip-chars", "check-chars"))
    if pos:
        ctx.read(pos[0])
    if len(pos) > 1:
        ctx.write(pos[1])


def h_grep(ctx: Ctx, args: list[str], name: str) -> None:
    """grep/rg/ag: the pattern is not a file; -f FILE is; default path for -r is '.'."""
    if name in ("rg", "ag"):
        opts, pos = parse_opts(args, "efgtTmABCjMrE", ("regexp", "file", "glob", "iglob", "type", "type-not",
                                                      "max-count", "replace", "context", "after-context",
                                                      "before-context", "threads", "max-columns", "encoding"))
        recursive = True
    else:
        opts, pos = parse_opts(args, "efmABCdD", ("regexp", "file", "max-count", "after-context",
                                                  "before-context", "context", "include", "exclude",
                                                  "exclude-dir", "exclude-from", "label", "binary-files",
                                                  "devices", "directories", "group-separator"))
        recursive = _has(opts, "-r", "-R", "--recursive", "--dereference-recursive")
    for f in _vals(opts, "-f", "--file"):
        ctx.read(f)
    if not _vals(opts, "-e", "--regexp", "-f", "--file") and pos:
        pos = pos[1:]
    if not pos and recursive:
        pos = ["."]
    for p in pos:
        ctx.read(p)
    if _has(opts, "-l", "-L", "--files-with-matches", "--files-without-match"):
        ctx.stdout_items([ctx.text(p).rstrip("/") + "/**" if recursive else ctx.text(p) for p in pos])


def h_sed(ctx: Ctx, args: list[str], name: str) -> None:
    """sed [-i[SUF]] [-e S | -f F | SCRIPT] FILES: -i writes the files."""
    inplace, script, files = False, False, []
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
                script |= a != "--line-length"
                i += 1
            elif a.startswith(("--expression=", "--file=")):
                script = True
                if a.startswith("--file="):
                    ctx.read(a[7:])
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
                    script |= ch in "ef"
                    break
        else:
            files.append(a)
        i += 1
    if not script and files:
        files = files[1:]
    for f in files:
        ctx.read(f)
        if inplace:
            ctx.write(f)
    ctx.stdout_transformed()


def h_awk(ctx: Ctx, args: list[str], name: str) -> None:
    """awk [-F S] [-v A=B] [-f PROG | 'PROG'] FILES: system()/print > "f" inside PROG too."""
    opts, pos = parse_opts(args, "Fvfei", ("field-separator", "assign", "file", "source", "include"))
    progs = _vals(opts, "-e", "--source")
    for f in _vals(opts, "-f", "--file"):
        ctx.read(f)
    if not progs and not _vals(opts, "-f", "--file") and pos:
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


def h_copy(ctx: Ctx, args: list[str], name: str) -> None:
    """cp/mv/install SRC... DEST (-t DIR): sources read, destination (and DEST/basename) written."""
    opts, pos = parse_opts(args, "tSmogZ" if name == "install" else "tS",
                           ("target-directory", "suffix", "backup", "mode", "owner", "group"))
    target = _vals(opts, "-t", "--target-directory")
    if target:
        dest, srcs, is_dir = target[0], pos, True
    elif len(pos) >= 2:
        dest, srcs = pos[-1], pos[:-1]
        is_dir = len(srcs) > 1 or ctx.text(dest).endswith("/") or ctx.text(dest) in (".", "..", "~")
    else:
        for p in pos:
            ctx.write(p) if name == "install" else ctx.read(p)
        return
    for s in srcs:
        ctx.read(s)
    ctx.write(dest, tuple(ctx.text(s) for s in srcs))
    if is_dir:
        for s in srcs:
            base = posixpath.basename(ctx.text(s).rstrip("/"))
            if base and not ctx.dynamic(s):
                ctx.write(_join(ctx.text(dest), base), (ctx.text(s),))


def h_ln(ctx: Ctx, args: list[str], name: str) -> None:
    """ln [-s] TARGET LINK: the link is written."""
    _, pos = parse_opts(args, "tS", ("target-directory", "suffix"))
    if len(pos) >= 2:
        ctx.write(pos[-1])
    elif pos:
        ctx.write(posixpath.basename(ctx.text(pos[0])))


def h_write_all(ctx: Ctx, args: list[str], name: str) -> None:
    """tee, touch, mkdir: every positional is written."""
    opts, pos = parse_opts(args, {"touch": "drt", "mkdir": "m", "tee": ""}.get(name, ""),
                           ("reference", "date", "mode", "context"))
    for r in _vals(opts, "-r", "--reference") if name == "touch" else []:
        ctx.read(r)
    for p in pos:
        ctx.write(p, ctx.stdin.resources if name == "tee" else ())
    if name == "tee":
        ctx.stdout_passthrough()


def h_delete(ctx: Ctx, args: list[str], name: str) -> None:
    """rm, rmdir, shred, unlink, truncate, wipe: every positional is destroyed."""
    opts, pos = parse_opts(args, {"shred": "ns", "truncate": "sr"}.get(name, ""),
                           ("iterations", "size", "reference", "random-source"))
    for r in _vals(opts, "-r", "--reference") if name == "truncate" else []:
        ctx.read(r)
    for p in pos:
        ctx.delete(p)


def h_dd(ctx: Ctx, args: list[str], name: str) -> None:
    """dd if=IN of=OUT: OUT is written and destroyed."""
    for a in args:
        t = ctx.text(a)
        if t.startswith("if="):
            ctx.read(a[3:])
        elif t.startswith("of="):
            ctx.write(a[3:])
            ctx.delete(a[3:])


def h_mkfs(ctx: Ctx, args: list[str], name: str) -> None:
    """mkfs*, wipefs, mkswap: the device is destroyed."""
    _, pos = parse_opts(args, "tLbcnNIoOUEeCgGmrJ")
    for p in pos:
        if looks_like_path(ctx.text(p)):
            ctx.delete(p)
            ctx.write(p)


def h_chmod(ctx: Ctx, args: list[str], name: str) -> None:
    """chmod/chown/chgrp MODE FILES: metadata writes of the files."""
    rest, mode_seen = [], False
    for a in args:
        t = ctx.text(a)
        if t.startswith("--reference="):
            ctx.read(a[12:])
            mode_seen = True
        elif not mode_seen and (name != "chmod" or _MODE.match(t)) and not (name != "chmod" and t.startswith("-")):
            mode_seen = True
        elif t.startswith("-") and not _MODE.match(t):
            continue
        else:
            rest.append(a)
    for p in rest:
        ctx.write(p)


def h_find(ctx: Ctx, args: list[str], name: str) -> None:
    """find PATHS EXPR: paths read; -delete deletes matches; -exec runs on matches ({})."""
    i, paths = 0, []
    while i < len(args) and not ctx.text(args[i]).startswith(("-", "(", "!", ")")):
        paths.append(args[i])
        i += 1
    paths = paths or ["."]
    expr = args[i:]
    names = [expr[k + 1] for k, a in enumerate(expr[:-1]) if a in ("-name", "-iname")]
    texts = [ctx.text(p) for p in paths]
    matches = [_join(p, "**/" + ctx.text(n)) for p in texts for n in names[:1]] or texts
    for p in paths:
        ctx.read(p)
    k = 0
    while k < len(expr):
        a = expr[k]
        if a in ("-exec", "-execdir", "-ok", "-okdir"):
            end = k + 1
            while end < len(expr) and ctx.text(expr[end]) not in (";", "+"):
                end += 1
            cmd = expr[k + 1:end]
            if cmd:
                for m in matches[:8]:
                    ctx.run_argv([m if ctx.text(w) == "{}" else w.replace("{}", m) for w in cmd])
            k = end + 1
            continue
        if a == "-delete":
            for m in matches:
                ctx.delete(m)
        elif a in ("-fprint", "-fprint0", "-fprintf", "-fls") and k + 1 < len(expr):
            ctx.write(expr[k + 1])
        elif a in ("-newer", "-samefile", "-files0-from") and k + 1 < len(expr):
            ctx.read(expr[k + 1])
        k += 1
    ctx.stdout_items(matches)


# --------------------------------------------------------------------------- archives, encoders

def h_tar(ctx: Ctx, args: list[str], name: str) -> None:
    """tar c/x/t/r/u [-f ARCHIVE] [-C DIR] MEMBERS."""
    args = list(args)
    if args and not ctx.text(args[0]).startswith("-"):
        letters, rest, expanded = args[0], args[1:], []
        for ch in letters:
            expanded.append("-" + ch)
            if ch in "fCTXbHKNVLg" and rest:
                expanded.append(rest.pop(0))
        args = expanded + rest
    opts, pos = parse_opts(args, "fCTXbHKNVLgI", ("file", "directory", "files-from", "exclude-from",
                                                   "use-compress-program", "transform", "exclude",
                                                   "owner", "group", "mode", "format", "newer"))
    mode = next((k for k, _ in opts if k in ("-c", "-x", "-t", "-r", "-u", "--create", "--extract",
                                              "--get", "--list", "--append", "--update", "--delete")), "-t")
    archives = _vals(opts, "-f", "--file")
    cdir = (_vals(opts, "-C", "--directory") or [""])[-1]
    for f in _vals(opts, "-T", "--files-from", "-X", "--exclude-from"):
        ctx.read(f)
    creating = mode in ("-c", "--create", "-r", "-u", "--append", "--update")
    if creating:
        members = [_join(cdir, ctx.text(p)) if cdir and not ctx.text(p).startswith(("/", "~")) else p
                   for p in pos]
        for p in members:
            ctx.read(p)
        for a in archives:
            ctx.write(a, tuple(ctx.text(p) for p in members))
        if not archives or ctx.text(archives[0]) == "-":
            ctx.stdout_resources(tuple(ctx.text(p) for p in members))
        if _has(opts, "--remove-files"):
            for p in members:
                ctx.delete(p)
        return
    for a in archives:
        ctx.read(a)
    if mode in ("-x", "--extract", "--get"):
        if cdir:
            ctx.write(cdir)
        for p in pos:
            ctx.write(_join(cdir, ctx.text(p)))
    elif mode == "--delete":
        for a in archives:
            ctx.write(a)


def h_zip(ctx: Ctx, args: list[str], name: str) -> None:
    """zip [-r] OUT.zip FILES (-m deletes inputs); 7z a/x."""
    if name in ("7z", "7za", "7zr"):
        sub, rest = (ctx.text(args[0]), args[1:]) if args else ("", [])
        opts = [ctx.text(a) for a in rest if ctx.text(a).startswith("-")]
        pos = [a for a in rest if not ctx.text(a).startswith("-")]
        if sub in ("a", "u") and pos:
            ctx.write(pos[0], tuple(ctx.text(p) for p in pos[1:]))
            for p in pos[1:]:
                ctx.read(p)
        elif pos:
            ctx.read(pos[0])
            for o in opts:
                if o.startswith("-o") and len(o) > 2:
                    ctx.write(o[2:])
        return
    cleaned, skip_list = [], False
    for a in args:
        t = ctx.text(a)
        if t in ("-x", "-i", "--exclude", "--include"):
            skip_list = True
            continue
        if skip_list and not t.startswith("-"):
            continue
        skip_list = False
        cleaned.append(a)
    opts, pos = parse_opts(cleaned, "PbntO", ("password", "temp-path", "suffixes", "output-file"))
    if not pos:
        return
    out, members = pos[0], pos[1:]
    for m in members:
        ctx.read(m)
    if ctx.text(out) == "-":
        ctx.stdout_resources(tuple(ctx.text(m) for m in members))
    else:
        ctx.write(out, tuple(ctx.text(m) for m in members))
    for o in _vals(opts, "-O", "--output-file"):
        ctx.write(o)
    if _has(opts, "-m", "--move"):
        for m in members:
            ctx.delete(m)


def h_unzip(ctx: Ctx, args: list[str], name: str) -> None:
    """unzip [-d DIR] FILE.zip [MEMBERS]."""
    cleaned, skip = [], False
    for a in args:
        if ctx.text(a) == "-x":
            skip = True
            continue
        if skip and not ctx.text(a).startswith("-"):
            continue
        skip = False
        cleaned.append(a)
    opts, pos = parse_opts(cleaned, "dPIO")
    if pos:
        ctx.read(pos[0])
    dest = (_vals(opts, "-d") or [""])[-1]
    if _has(opts, "-p", "-c"):
        ctx.stdout_resources(tuple(ctx.text(p) for p in pos[:1]))
        return
    if _has(opts, "-l", "-t", "-v", "-Z"):
        return
    if dest:
        ctx.write(dest)
    for m in pos[1:]:
        ctx.write(_join(ctx.text(dest), ctx.text(m)))


_COMPRESS_SUFFIX = {"gzip": ".gz", "bzip2": ".bz2", "xz": ".xz", "zstd": ".zst", "lz4": ".lz4",
                    "compress": ".Z", "pigz": ".gz", "lzma": ".lzma"}
_DECOMPRESSORS = {"gunzip": "gzip", "bunzip2": "bzip2", "unxz": "xz", "unzstd": "zstd", "unlzma": "lzma"}


def h_compress(ctx: Ctx, args: list[str], name: str) -> None:
    """gzip/bzip2/xz/zstd (and un*): FILE -> FILE.gz or back; -c to stdout."""
    opts, pos = parse_opts(args, "SobLpT", ("suffix", "output", "threads"))
    base = _DECOMPRESSORS.get(name, name)
    decompress = name in _DECOMPRESSORS or _has(opts, "-d", "--decompress", "--uncompress")
    suffix = (_vals(opts, "-S", "--suffix") or [_COMPRESS_SUFFIX.get(base, ".gz")])[-1]
    for p in pos:
        ctx.read(p)
    outs = _vals(opts, "-o", "--output")
    if _has(opts, "-c", "--stdout", "--to-stdout") or (not pos and not outs):
        ctx.stdout_resources(tuple(ctx.text(p) for p in pos) + ctx.stdin.resources, transformed=decompress)
        return
    for o in outs:
        ctx.write(o, tuple(ctx.text(p) for p in pos))
    if not outs:
        for p in pos:
            t = ctx.text(p)
            ctx.write(t[: -len(suffix)] if decompress and t.endswith(suffix) else t + ("" if decompress else suffix),
                      (t,))


def h_base64(ctx: Ctx, args: list[str], name: str) -> None:
    """base64/base32/basenc [-d] [FILE]; xxd [-r] [IN [OUT]]; uudecode; od."""
    if name == "xxd":
        opts, pos = parse_opts(args, "cglsoCn", ("cols", "groupsize", "len", "seek", "name"))
        decode = _has(opts, "-r", "--revert")
        if pos:
            ctx.read(pos[0])
        if len(pos) > 1:
            ctx.write(pos[1], (ctx.text(pos[0]),))
            return
    else:
        opts, pos = parse_opts(args, "wo", ("wrap", "output"))
        decode = _has(opts, "-d", "-D", "--decode")
        for p in pos[:1]:
            ctx.read(p)
        for o in _vals(opts, "-o", "--output"):
            ctx.write(o, tuple(ctx.text(p) for p in pos))
            return
    ctx.stdout_resources(ctx.stdin.resources + tuple(ctx.text(p) for p in pos[:1]),
                         transformed=decode or ctx.stdin.transformed)


_OPENSSL_ARG = {"in", "out", "inkey", "key", "keyfile", "keyout", "pass", "passin", "passout", "CAfile",
                "CApath", "cert", "certfile", "signkey", "subj", "days", "newkey", "config", "extensions",
                "name", "connect", "servername", "md", "iter", "salt", "S", "K", "iv", "sigfile", "signature",
                "k", "kfile", "recip", "from", "to", "subject", "nameopt", "set_serial", "CA", "CAkey",
                "CAserial", "extfile", "reqexts", "outform", "inform", "keyform", "num", "rand", "peerkey"}


def h_openssl(ctx: Ctx, args: list[str], name: str) -> None:
    """openssl SUBCMD -in F -out F -inkey F -pass file:F; s_client -connect HOST:PORT."""
    sub = ctx.text(args[0]) if args else ""
    i, decode = 1, False
    while i < len(args):
        t = ctx.text(args[i])
        key = t[1:]
        if t in ("-d", "-decrypt"):
            decode = True
        if key in _OPENSSL_ARG and i + 1 < len(args):
            val = args[i + 1]
            vt = ctx.text(val)
            if key in ("in", "inkey", "key", "keyfile", "CAfile", "cert", "certfile", "signkey", "kfile",
                       "sigfile", "signature", "recip", "CA", "CAkey", "extfile", "peerkey"):
                ctx.read(val)
            elif key in ("out", "keyout"):
                ctx.write(val)
            elif key in ("pass", "passin", "passout") and vt.startswith("file:"):
                ctx.read(vt[5:])
            elif key == "connect":
                host, _, port = vt.rpartition(":")
                ctx.send(f"tcp://{host}:{port}" if host else vt)
                ctx.stdin_payloads()
            i += 2
            continue
        if not t.startswith("-") and sub not in ("rand", "prime", "passwd", "s_client"):
            ctx.read(args[i])
        i += 1
    ctx.stdout_resources(ctx.stdin.resources, transformed=True if decode or sub in ("enc", "base64") else
                         ctx.stdin.transformed)


def h_gpg(ctx: Ctx, args: list[str], name: str) -> None:
    """gpg [-o OUT] [--import|-d|-e] FILE."""
    opts, pos = parse_opts(args, "orRuf", ("output", "recipient", "local-user", "passphrase-file", "passphrase",
                                           "homedir", "default-key", "trust-model", "cipher-algo", "keyserver",
                                           "recv-keys", "send-keys", "export-options", "import-options"))
    for o in _vals(opts, "-o", "--output"):
        ctx.write(o, tuple(ctx.text(p) for p in pos))
    for f in _vals(opts, "--passphrase-file"):
        ctx.read(f)
    for p in pos:
        ctx.read(p)
    ctx.stdout_resources(ctx.stdin.resources + tuple(ctx.text(p) for p in pos), transformed=True)


# --------------------------------------------------------------------------- network

_CURL_ARG_SHORT = "bcCdDeEFHKmoPQrtTuUwxXyYzA"
_CURL_ARG_LONG = ("data", "data-raw", "data-binary", "data-ascii", "data-urlencode", "json", "form",
                  "form-string", "upload-file", "output", "header", "user", "request", "url", "config", "cookie",
                  "cookie-jar", "user-agent", "referer", "cert", "key", "cacert", "capath", "max-time",
                  "connect-timeout", "retry", "retry-delay", "retry-max-time", "proxy", "proxy-user", "range",
                  "write-out", "dump-header", "trace", "trace-ascii", "output-dir", "interface", "resolve",
                  "limit-rate", "max-filesize", "speed-limit", "speed-time", "time-cond", "oauth2-bearer",
                  "variable", "continue-at", "quote", "telnet-option", "stderr", "netrc-file", "pass",
                  "key-type", "cert-type", "ciphers", "connect-to", "dns-servers", "local-port", "max-redirs",
                  "mail-from", "mail-rcpt", "aws-sigv4", "hostpubmd5", "pubkey", "socks5", "socks5-hostname",
                  "unix-socket", "abstract-unix-socket", "expect100-timeout", "happy-eyeballs-timeout-ms")
_CURL_DATA = ("-d", "--data", "--data-binary", "--data-ascii", "--json")


def h_curl(ctx: Ctx, args: list[str], name: str) -> None:
    """curl: GET URL = read; -d/-F/-T/POST/PUT = send (payloads from @file, -T file, stdin)."""
    opts, pos = parse_opts(args, _CURL_ARG_SHORT, _CURL_ARG_LONG)
    urls = pos + _vals(opts, "--url")
    sending = False
    for k, v in opts:
        if v is None:
            continue
        t = ctx.text(v)
        if k in _CURL_DATA or k in ("--data-raw", "--data-urlencode", "-F", "--form", "--form-string"):
            sending = True
            ref = None
            if k in _CURL_DATA and t.startswith("@"):
                ref = t[1:]
            elif k == "--data-urlencode" and re.match(r"^[^=]*@", t):
                ref = t.split("@", 1)[1]
            elif k in ("-F", "--form") and re.match(r"^[^=]+=[@<]", t):
                ref = t.split("=", 1)[1][1:].split(";")[0]
            if ref == "-":
                ctx.stdin_payloads()
            elif ref:
                ctx.read(ref)
                ctx.payload(ref)
            else:
                ctx.payload(v, literal=True)
        elif k in ("-T", "--upload-file"):
            sending = True
            if t in ("-", "."):
                ctx.stdin_payloads()
            else:
                ctx.read(v)
                ctx.payload(v)
        elif k in ("-X", "--request"):
            if t.upper() in _SEND_METHODS:
                sending = True
            if t.upper() in ("DELETE", "PUT", "PATCH"):  # remote mutation: a destructive sink
                for u in urls:
                    ctx.delete(u)
        elif k in ("-K", "--config", "--netrc-file", "-E", "--cert", "--key"):
            ctx.read(v)
        elif k in ("-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--stderr"):
            ctx.write(v)
    if _has(opts, "-G", "--get"):
        sending = False
    for u in urls:
        (ctx.send if sending else ctx.read)(u)
    outdir = (_vals(opts, "--output-dir") or [""])[-1]
    outs = [o for o in _vals(opts, "-o", "--output") if ctx.text(o) != "-"]
    url_texts = tuple(ctx.text(u) for u in urls)
    for o in outs:
        ctx.write(_join(ctx.text(outdir), ctx.text(o)) if outdir else o, url_texts)
    if _has(opts, "-O", "--remote-name", "--remote-name-all"):
        for u in url_texts:
            ctx.write(_join(ctx.text(outdir), _url_basename(u)), (u,))
    elif not outs:
        ctx.stdout_resources(url_texts)


def h_wget(ctx: Ctx, args: list[str], name: str) -> None:
    """wget URL [-O FILE|-O-] [--post-data|--post-file]."""
    opts, pos = parse_opts(args, "OoaPiUteTwlARDXIBQY", (
        "output-document", "output-file", "append-output", "directory-prefix", "input-file", "user-agent",
        "tries", "timeout", "wait", "level", "accept", "reject", "domains", "exclude-domains", "post-data",
        "post-file", "body-data", "body-file", "method", "header", "user", "password", "http-user",
        "http-password", "load-cookies", "save-cookies", "referer", "ca-certificate", "certificate",
        "private-key", "execute", "quota", "limit-rate", "base", "config", "bind-address"))
    sending = False
    for k, v in opts:
        if v is None:
            continue
        if k in ("--post-data", "--body-data"):
            sending = True
            ctx.payload(v, literal=True)
        elif k in ("--post-file", "--body-file"):
            sending = True
            ctx.read(v)
            ctx.payload(v)
        elif k == "--method" and ctx.text(v).upper() in _SEND_METHODS:
            sending = True
        elif k in ("-i", "--input-file", "--load-cookies", "--config", "--certificate", "--private-key"):
            ctx.read(v)
        elif k in ("-o", "-a", "--output-file", "--append-output", "--save-cookies"):
            ctx.write(v)
    url_texts = tuple(ctx.text(u) for u in pos)
    for u in pos:
        (ctx.send if sending else ctx.read)(u)
    outs = _vals(opts, "-O", "--output-document")
    prefix = ctx.text((_vals(opts, "-P", "--directory-prefix") or [""])[-1])
    if outs and ctx.text(outs[-1]) == "-":
        ctx.stdout_resources(url_texts)
    elif outs:
        ctx.write(outs[-1], url_texts)
    elif not _has(opts, "-r", "--recursive", "-m", "--mirror", "--spider"):
        for u in url_texts:
            ctx.write(_join(prefix, _url_basename(u)), (u,))


def _remote(text: str) -> tuple[str, str] | None:
    if text.startswith(("/", "./", "../", "~")):
        return None
    m = re.match(r"^(?:scp|sftp|rsync|ssh)://(?:[^@/]+@)?([^/:]+)(?::\d+)?(/.*)?$", text)
    if m:
        return m.group(1), m.group(2) or ""
    m = _REMOTE.match(text)
    if m:
        return m.group("host").strip("[]"), m.group("path").lstrip(":")
    return None


def h_scp(ctx: Ctx, args: list[str], name: str) -> None:
    """scp/rsync SRC... DEST: to a remote = send host + payload sources; from a remote = read."""
    if name == "rsync":
        opts, pos = parse_opts(args, "efBTM", ("rsh", "filter", "exclude", "include", "exclude-from",
                                                "include-from", "files-from", "rsync-path", "password-file",
                                                "log-file", "backup-dir", "temp-dir", "chmod", "chown",
                                                "timeout", "port", "bwlimit", "link-dest", "compare-dest",
                                                "copy-dest", "partial-dir", "suffix", "max-size", "min-size",
                                                "out-format", "usermap", "groupmap", "info", "debug"))
    else:
        opts, pos = parse_opts(args, "cFiJloPSDX")
    for f in _vals(opts, "-i", "--password-file", "--exclude-from", "--include-from", "--files-from", "-F"):
        ctx.read(f)
    for f in _vals(opts, "--log-file"):
        ctx.write(f)
    if len(pos) < 2:
        for p in pos:
            r = _remote(ctx.text(p))
            ctx.send(r[0]) if r else ctx.read(p)
        return
    dest, srcs = pos[-1], pos[:-1]
    rdest = _remote(ctx.text(dest))
    for s in srcs:
        rs = _remote(ctx.text(s))
        if rs:
            ctx.send(rs[0])
            ctx.read(f"scp://{rs[0]}/{rs[1].lstrip('/')}")
        else:
            ctx.read(s)
            if rdest:
                ctx.payload(s)
    if rdest:
        ctx.send(rdest[0])
    else:
        ctx.write(dest, tuple(ctx.text(s) for s in srcs))
    if any(k.startswith("--delete") for k, _ in opts):
        ctx.delete(dest)


def h_ssh(ctx: Ctx, args: list[str], name: str) -> None:
    """ssh [opts] [user@]HOST [remote command]: send host; stdin is a payload."""
    opts, pos = parse_opts(args, "BbcDEeFIiJLlmOopQRSWw", stop=True)
    for f in _vals(opts, "-i", "-F"):
        ctx.read(f)
    if not pos:
        return
    dest = ctx.text(pos[0])
    m = re.match(r"^(?:ssh://)?(?:[^@]+@)?([^:/]+)", dest)
    ctx.send(m.group(1) if m else dest)
    ctx.stdin_payloads()


def h_ssh_copy_id(ctx: Ctx, args: list[str], name: str) -> None:
    """ssh-copy-id [-i KEY] HOST: the public key is sent to the host."""
    opts, pos = parse_opts(args, "ipoF")
    keys = _vals(opts, "-i") or ["~/.ssh/id_rsa.pub"]
    for k in keys:
        ctx.read(k)
        ctx.payload(k)
    for p in pos[:1]:
        ctx.send(re.sub(r"^[^@]+@", "", ctx.text(p)))


def h_ssh_keygen(ctx: Ctx, args: list[str], name: str) -> None:
    """ssh-keygen -f FILE: generates (writes FILE, FILE.pub) unless it only inspects a key."""
    opts, _ = parse_opts(args, "fNCtbPmEFRZaOnIVzrs")
    inspect = _has(opts, "-y", "-l", "-e", "-i", "-p", "-c", "-B")
    for f in _vals(opts, "-f"):
        if inspect:
            ctx.read(f)
        else:
            ctx.write(f)
            ctx.write(ctx.text(f) + ".pub")
    if _vals(opts, "-R"):
        ctx.write("~/.ssh/known_hosts")


def h_nc(ctx: Ctx, args: list[str], name: str) -> None:
    """nc/ncat/netcat/telnet HOST PORT: send tcp://host:port; stdin is the payload."""
    opts, pos = parse_opts(args, "psweicIOqTxXgGm" if name != "telnet" else "bleEkKlnSX")
    for prog in _vals(opts, "-e"):
        ctx.execute(prog)
    for cmd in _vals(opts, "-c"):
        ctx.run_text(cmd)
    if _has(opts, "-l", "--listen"):
        return
    if pos:
        host = ctx.text(pos[0])
        ctx.send(f"tcp://{host}:{ctx.text(pos[1])}" if len(pos) > 1 else host)
        ctx.stdin_payloads()


def h_socat(ctx: Ctx, args: list[str], name: str) -> None:
    """socat ADDR ADDR: TCP:host:port sends, EXEC:/SYSTEM: run, FILE:/OPEN: read, CREATE: write."""
    addrs = [ctx.text(a) for a in args if not ctx.text(a).startswith("-") or ctx.text(a) == "-"]
    remote = False
    for a in addrs:
        kind, _, rest = a.partition(":")
        kind = kind.upper()
        if kind in ("TCP", "TCP4", "TCP6", "TCP-CONNECT", "UDP", "UDP4", "UDP-SENDTO", "OPENSSL", "SSL",
                    "UDP-CONNECT", "OPENSSL-CONNECT", "SOCKS4", "SOCKS4A", "PROXY"):
            hp = rest.split(",")[0]
            ctx.send(f"tcp://{hp}")
            remote = True
    for a in addrs:
        kind, _, rest = a.partition(":")
        kind, target = kind.upper(), rest.split(",")[0]
        if kind in ("EXEC", "SYSTEM"):
            ctx.run_text_literal(target)
        elif kind in ("FILE", "OPEN", "GOPEN"):
            ctx.read(target)
            if remote:
                ctx.payload(target)
        elif kind == "CREATE":
            ctx.write(target)
        elif a in ("-", "STDIO", "STDIN") and remote:
            ctx.stdin_payloads()


def h_ftp(ctx: Ctx, args: list[str], name: str) -> None:
    """ftp/sftp/lftp HOST: send host; `put FILE` lines of the batch are payloads."""
    opts, pos = parse_opts(args, "bBcDFiJlopPRSsuef" if name != "ftp" else "P")
    batches = [ctx.text(b) for b in _vals(opts, "-e")]
    for b in _vals(opts, "-b", "-f"):
        ctx.read(b)
    for f in _vals(opts, "-i"):
        ctx.read(f)
    for p in pos:
        t = ctx.text(p)
        m = re.match(r"^(?:[a-z]+://)?(?:[^@/]+@)?([^:/\s]+)", t)
        if m and not re.fullmatch(r"\d+", t):
            ctx.send(m.group(1))
    lit = ctx.stdin_literal()
    for text in batches + ([lit] if lit else []):
        for m in re.finditer(r"(?m)(?:^|;)\s*m?put\s+(?:-\S+\s+)*(\S+)", text):
            ctx.read(m.group(1))
            ctx.payload(m.group(1))


def h_mail(ctx: Ctx, args: list[str], name: str) -> None:
    """mail/mailx/mutt/sendmail RCPT...: send mailto:RCPT; -a FILE and stdin are payloads."""
    opts, pos = parse_opts(args, "sacbrfFiEeCoOqRSuTx" if name != "sendmail" else "fFBCNOopqRrVXhL")
    for f in _vals(opts, "-a", "-A"):
        ctx.read(f)
        ctx.payload(f)
    for r in pos + _vals(opts, "-c", "-b"):
        t = ctx.text(r)
        if "@" in t or not t.startswith("-"):
            ctx.send("mailto:" + t.strip("<>"))
    ctx.stdin_payloads()


def h_dns(ctx: Ctx, args: list[str], name: str) -> None:
    """ping/dig/host/nslookup/traceroute/whois HOST: the name leaves the machine."""
    _, pos = parse_opts(args, "cinstwWIlmpQSTfqxkbyM")
    for p in pos:
        t = ctx.text(p)
        if re.fullmatch(r"[A-Za-z0-9@][\w.@:-]*\.[\w.-]+|\d+\.\d+\.\d+\.\d+", t) or ctx.dynamic(p):
            ctx.send(t.lstrip("@"))
            if ctx.dynamic(p):
                ctx.payload(p, literal=True)


GIT_COMMITS = "git-commits:"  # pseudo resource: the local commits a push sends


def h_git(ctx: Ctx, args: list[str], name: str) -> None:
    """git clone URL (read) / push REMOTE (send) / pull, fetch (read) / rm, clean (delete)."""
    _, rest = parse_opts(args, "Cc", ("git-dir", "work-tree", "namespace", "exec-path"), stop=True)
    if not rest:
        return
    sub, rest = ctx.text(rest[0]), rest[1:]
    o, pos = parse_opts(rest, "o" if sub in ("push", "pull", "fetch") else "bocju", ("branch", "origin", "depth", "reference", "config", "template",
                                        "separate-git-dir", "jobs", "filter", "shallow-since", "repo",
                                        "push-option", "receive-pack", "upload-pack", "exec", "message",
                                        "file", "output", "prefix", "format", "author", "date"))
    remotes = ctx.an.git_remotes

    def remote_name(r: str) -> str:
        t = ctx.text(r)
        if "://" in t or _remote(t) or t.startswith(("/", "~", ".")):
            return t
        return remotes.get(t, f"git-remote:{t}")

    if sub == "clone" and pos:
        ctx.read(remote_name(pos[0]))
        dest = pos[1] if len(pos) > 1 else re.sub(r"\.git$", "", posixpath.basename(ctx.text(pos[0]).rstrip("/")))
        ctx.write(dest, (ctx.text(pos[0]),))
    elif sub == "push":
        repo = _vals(o, "--repo")
        ctx.send(remote_name(repo[0] if repo else pos[0] if pos else "origin"))
        # what is pushed: the commits, linked by a resource edge from `git add`/`git commit`
        ctx.read(GIT_COMMITS)
        ctx.payload(GIT_COMMITS)
    elif sub in ("add", "commit", "stage"):
        # staged files are read into the commits that a later push sends
        for p in pos if sub != "commit" else [v for k, v in o if k in ("-F", "--file") and v]:
            ctx.read(p)
        ctx.write(GIT_COMMITS)
    elif sub in ("pull", "fetch", "ls-remote"):
        ctx.read(remote_name(pos[0] if pos else "origin"))
    elif sub == "remote" and len(pos) >= 3 and ctx.text(pos[0]) in ("add", "set-url"):
        remotes[ctx.text(pos[1])] = ctx.text(pos[2])
    elif sub == "rm" and not _has(o, "--cached"):
        for p in pos:
            ctx.delete(p)
    elif sub == "clean" and any(k in ("-f", "--force") for k, _ in o):
        for p in pos or ["."]:
            ctx.delete(p)
    elif sub == "show":
        for p in pos:
            if ":" in ctx.text(p) and not ctx.text(p).endswith(":"):
                ctx.read(ctx.text(p).split(":", 1)[1])
    elif sub in ("apply", "am"):
        for p in pos:
            ctx.read(p)
    elif sub == "archive":
        for f in _vals(o, "-o", "--output"):
            ctx.write(f)
    elif sub == "submodule" and len(pos) >= 2 and ctx.text(pos[0]) == "add":
        ctx.read(remote_name(pos[1]))


def h_cloud_copy(ctx: Ctx, args: list[str], name: str) -> None:
    """aws s3 cp|mv|sync|rm, gsutil cp|rsync|rm, rclone copy|sync|move|delete: remote URLs."""
    words = [ctx.text(a) for a in args]
    if _publishes(words):  # e.g. `aws s3api put-bucket-acl --acl public-read`, `gsutil iam ch allUsers:...`
        h_publish(ctx, args, name)
    if name == "aws":
        if len(words) < 2 or words[0] != "s3":
            return
        words = words[1:]
    if not words:
        return
    sub = words[0]
    _, pos = parse_opts(args[len(args) - len(words) + 1:], "", ("exclude", "include", "profile", "region",
                                                                 "acl", "storage-class", "endpoint-url"))
    remote = [p for p in pos if "://" in ctx.text(p) or (name == "rclone" and _REMOTE.match(ctx.text(p)))]
    if sub in ("rm", "delete", "purge", "rb", "deletefile"):
        for p in pos:
            ctx.delete(p)
        return
    if sub not in ("cp", "mv", "sync", "rsync", "copy", "move", "copyto", "moveto"):
        return
    if len(pos) < 2:
        return
    dest, srcs = pos[-1], pos[:-1]
    for s in srcs:
        ctx.read(s)
        if dest in remote and s not in remote:
            ctx.payload(s)
    # an upload also writes the remote object: a later read or ACL change of it links back
    ctx.write(dest, tuple(ctx.text(s) for s in srcs))
    if dest in remote:
        ctx.send(dest)


_PUBLIC_WORDS = re.compile(r"(?i)^(?:--acl=?)?public-read(?:-write)?$|^allusers(?::\w+)?$|^allauthenticatedusers|"
                           r"^--visibility=?public$|^public$|^--public-access=?(?:blob|container)$")


def _publishes(words: list[str]) -> bool:
    """Whether a cloud/git-hosting command grants public access (ACL, IAM, visibility)."""
    return any(_PUBLIC_WORDS.match(w) for w in words)


def h_publish(ctx: Ctx, args: list[str], name: str) -> None:
    """aws s3api put-*-acl/put-bucket-policy, gsutil acl/iam ch allUsers, gh repo edit --visibility public,
    az ... --public-access: making a resource public is egress of that resource."""
    words = [ctx.text(a) for a in args]
    if not _publishes(words):
        return
    flag = {w: words[i + 1] for i, w in enumerate(words[:-1]) if w.startswith("-")}
    if name == "aws" and "--bucket" in flag:  # s3api: the object (or bucket) as an s3:// URL
        targets = [f"s3://{flag['--bucket']}" + (f"/{flag['--key']}" if "--key" in flag else "")]
    else:
        targets = [w for w in words if "://" in w] or [
            flag[k] for k in ("--name", "-n", "--repo", "--container-name") if k in flag]
    targets += [w for w in words if re.fullmatch(r"[\w.-]+/[\w.-]+", w) and name == "gh"]
    ctx.send("public:" + (targets[0] if targets else name))
    for t in targets:
        ctx.read(t)
        ctx.payload(t)


def h_gh(ctx: Ctx, args: list[str], name: str) -> None:
    """gh gist create FILES: files sent to GitHub; gh repo edit/create --visibility public: made public."""
    words = [ctx.text(a) for a in args]
    if words[:1] == ["repo"] and _publishes(words):
        h_publish(ctx, args, name)
        return
    if words[:2] == ["gist", "create"]:
        _, pos = parse_opts(args[2:], "df", ("desc", "filename"))
        ctx.send("https://gist.github.com")
        for p in pos:
            ctx.read(p)
            ctx.payload(p)


# --------------------------------------------------------------------------- programs, wrappers

def h_shell(ctx: Ctx, args: list[str], name: str) -> None:
    """bash/sh/zsh [-c STRING | SCRIPT args | -s (stdin)]."""
    has_c, stdin_mode, i = False, False, 0
    while i < len(args):
        t = ctx.text(args[i])
        if t == "--":
            i += 1
            break
        if t in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 2
            continue
        if not t.startswith(("-", "+")) or t in ("-", "+"):
            break
        if t.startswith("-") and not t.startswith("--"):
            has_c |= "c" in t[1:]
            stdin_mode |= "s" in t[1:]
        i += 1
    pos = args[i:]
    if has_c:
        if pos:
            ctx.run_text(pos[0])
        return
    if pos and not stdin_mode and ctx.text(pos[0]) != "-":
        ctx.execute(pos[0])
        for p in pos[1:]:
            if looks_like_path(ctx.text(p)):
                ctx.read(p)
        return
    ctx.stdin_program("shell")


_PY_ARG = "WXQ"


def h_python(ctx: Ctx, args: list[str], name: str) -> None:
    """python [-c CODE | -m MODULE | SCRIPT | -] args."""
    i = 0
    while i < len(args):
        t = ctx.text(args[i])
        if t == "-" or not t.startswith("-"):
            break
        if t == "--":
            i += 1
            break
        letters = t[1:]
        if t.startswith("--") or letters[0] in _PY_ARG:
            i += 2 if letters in tuple(_PY_ARG) else 1  # -W arg / -Warg / --version
            continue
        cut = min((k for k in (letters.find("c"), letters.find("m")) if k >= 0), default=-1)
        if cut >= 0:
            val = letters[cut + 1:]
            if not val and i + 1 < len(args):
                i += 1
                val = ctx.text(args[i])
            if letters[cut] == "c":
                ctx.program(val, "python")
            else:
                for p in args[i + 1:]:
                    if looks_like_path(ctx.text(p)):
                        ctx.read(p)
            return
        i += 1
    pos = args[i:]
    if pos and ctx.text(pos[0]) != "-":
        ctx.execute(pos[0])
        for p in pos[1:]:
            if looks_like_path(ctx.text(p)):
                ctx.read(p)
        return
    ctx.stdin_program("python")


_CODE_FLAGS = {"node": ("-e", "--eval", "-p", "--print"), "perl": ("-e", "-E"), "ruby": ("-e",),
               "php": ("-r",), "lua": ("-e",), "Rscript": ("-e",), "osascript": ("-e",), "deno": ("eval",),
               "bun": ("-e", "--eval"), "tsx": ("-e", "--eval"), "ts-node": ("-e", "--eval")}


def h_interp(ctx: Ctx, args: list[str], name: str) -> None:
    """node/perl/ruby/php/...: -e CODE (analysed as code), SCRIPT (executed), or stdin."""
    flags = _CODE_FLAGS.get(name, ("-e",))
    inplace, code_seen, pos, i = False, False, [], 0
    while i < len(args):
        t = ctx.text(args[i])
        if pos:
            pos.append(args[i])
        elif t in flags and i + 1 < len(args):
            ctx.program(ctx.text(args[i + 1]), "other")
            code_seen = True
            i += 1
        elif name == "perl" and t.startswith("-") and len(t) > 1 and not t.startswith("--"):
            letters = t[1:]
            for k, ch in enumerate(letters):
                if ch in "eE":
                    code = letters[k + 1:] or (ctx.text(args[i + 1]) if i + 1 < len(args) else "")
                    if not letters[k + 1:]:
                        i += 1
                    ctx.program(code, "other")
                    code_seen = True
                    break
                if ch == "i":
                    inplace = True
                    break
                if ch in "IMmxdCD" or (ch in "l0" and letters[k + 1:].isdigit()):
                    break  # option with an attached value
        elif name in ("php", "java") and t in ("-f", "-jar") and i + 1 < len(args):
            ctx.execute(args[i + 1])
            code_seen = True
            i += 1
        elif t in ("-r", "--require", "-I", "-cp", "-classpath") and i + 1 < len(args):
            i += 1
        elif not t.startswith("-") or t == "-":
            pos.append(args[i])
        i += 1
    if code_seen:
        for p in pos:
            ctx.read(p)
            if inplace:
                ctx.write(p)
        return
    if name == "deno" and pos and ctx.text(pos[0]) == "run":
        pos = pos[1:]
    if pos and ctx.text(pos[0]) != "-":
        ctx.execute(pos[0])
        for p in pos[1:]:
            if looks_like_path(ctx.text(p)):
                ctx.read(p)
        return
    if name not in ("java",):
        ctx.stdin_program("other")


def h_source(ctx: Ctx, args: list[str], name: str) -> None:
    """source FILE / . FILE: executes FILE in the current shell."""
    if args:
        ctx.execute(args[0])


def h_wrapper(ctx: Ctx, args: list[str], name: str) -> None:
    """sudo, nohup, time, nice, timeout, stdbuf, xargs, env, ...: analyse the wrapped command."""
    spec = _WRAPPERS[name]
    opts, rest = parse_opts(args, spec, ("user", "group", "signal", "kill-after", "chdir", "unset",
                                         "arg-file", "delimiter", "max-args", "max-procs", "max-lines",
                                         "replace", "eof", "max-chars", "output", "adjustment", "split-string",
                                         "close-from", "prompt", "host", "role", "type", "other-user"), stop=True)
    if name == "command" and _has(opts, "-v", "-V"):
        return
    if name == "timeout" and rest:
        rest = rest[1:]
    elif name in ("chroot", "taskset", "flock") and rest:
        if name == "flock" and _vals(opts, "-c", "--command"):
            ctx.run_text(_vals(opts, "-c", "--command")[0])
            return
        rest = rest[1:]
    elif name == "sudo" and _has(opts, "-e", "--edit"):
        for p in rest:
            ctx.write(p)
        return
    elif name == "su":
        for cmd in _vals(opts, "-c", "--command"):
            ctx.run_text(cmd)
        return
    elif name == "env":
        for s in _vals(opts, "-S", "--split-string"):
            ctx.run_text(s)
            return
        while rest and re.match(r"^[A-Za-z_]\w*=", ctx.text(rest[0])):
            rest = rest[1:]
        if not rest:
            ctx.read("env:")
            ctx.stdout_resources(("env:",))
            return
    elif name == "strace":
        for o in _vals(opts, "-o"):
            ctx.write(o)
    elif name == "xargs":
        for f in _vals(opts, "-a", "--arg-file"):
            ctx.read(f)
        rest = rest or ["echo"]
        items = list(ctx.stdin.items) or ["$XARGS_INPUT"]
        repl = (_vals(opts, "-I", "--replace", "-i") or [None])[-1]
        if repl is None and _has(opts, "-i", "--replace"):
            repl = "{}"
        if repl:
            for it in items[:8]:
                ctx.run_argv([w.replace(repl, it) for w in rest])
        else:
            ctx.run_argv(rest + items[:8])
        return
    if rest:
        ctx.run_argv(rest)
    elif name == "sudo" and _has(opts, "-i", "-s", "--login", "--shell"):
        ctx.stdin_program("shell")


_WRAPPERS = {"sudo": "ugpCUrtThDR", "doas": "uC", "nohup": "", "time": "fo", "nice": "n", "ionice": "cnp",
             "stdbuf": "ioe", "timeout": "sk", "setsid": "", "unbuffer": "", "command": "", "builtin": "",
             "exec": "a", "chroot": "", "taskset": "", "strace": "oepsuSEaI", "ltrace": "oepsuSEaIn",
             "xargs": "adEeIiLlnPs", "env": "uCS", "su": "cgGsw", "runuser": "ugcGw", "flock": "cwEn",
             "caffeinate": "tw", "proxychains": "f", "proxychains4": "f", "torsocks": "aPu", "firejail": "",
             "valgrind": "", "catchsegv": "", "systemd-run": "upEM", "doppler": "", "dotenv": "e",
             "sg": "", "chronic": "", "ts": "", "faketime": "f", "nsenter": "tSGw", "unshare": "S"}


def h_watch(ctx: Ctx, args: list[str], name: str) -> None:
    """watch [-n N] CMD...: the command runs repeatedly."""
    _, rest = parse_opts(args, "nqd", ("interval",), stop=True)
    if rest:
        ctx.run_text_literal(" ".join(ctx.text(w) for w in rest))


def h_tmux(ctx: Ctx, args: list[str], name: str) -> None:
    """tmux new -d 'CMD' / send-keys 'CMD' Enter; screen -dm CMD."""
    words = [ctx.text(a) for a in args]
    if name == "screen":
        _, rest = parse_opts(args, "SscpLlT", stop=True)
        if rest:
            ctx.run_argv(rest)
        return
    if words and words[0] in ("new", "new-session", "new-window", "neww", "send-keys", "send", "split-window"):
        _, pos = parse_opts(args[1:], "stcnFxyfeLlTB")
        keys = [ctx.text(p) for p in pos if ctx.text(p) not in ("Enter", "C-m", "KPEnter")]
        if keys:
            ctx.run_text_literal(" ".join(keys))


def h_eval(ctx: Ctx, args: list[str], name: str) -> None:
    """eval WORDS: analysable only when every word is literal."""
    if any(ctx.dynamic(a) for a in args):
        ctx.fail("eval of text built at run time")
    elif args:
        ctx.run_text_literal(" ".join(ctx.text(a) for a in args))


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
    """read/mapfile VAR: the variables get unknown values."""
    _, pos = parse_opts(args, "adinNptuC")
    for p in pos:
        ctx.assign(ctx.text(p), None)


def h_crontab(ctx: Ctx, args: list[str], name: str) -> None:
    """crontab FILE|- (install: write crontab:), -l (read), -r (delete), -e (write)."""
    opts, pos = parse_opts(args, "u")
    if _has(opts, "-l"):
        ctx.read("crontab:")
        ctx.stdout_resources(("crontab:",))
    elif _has(opts, "-r"):
        ctx.delete("crontab:")
    else:
        for p in pos:
            if ctx.text(p) != "-":
                ctx.read(p)
        ctx.write("crontab:", tuple(ctx.text(p) for p in pos) + ctx.stdin.resources)
        for line in (ctx.stdin_literal() or "").splitlines():  # scheduled commands run later
            m = re.match(r"^\s*(?:@\w+|(?:\S+\s+){5})(.+)$", line)
            if m and not line.lstrip().startswith("#") and not re.match(r"^\s*\w+=", line):
                ctx.run_text_literal(m.group(1))


def h_at(ctx: Ctx, args: list[str], name: str) -> None:
    """at/batch: schedules the shell program from stdin (or -f FILE)."""
    opts, _ = parse_opts(args, "fqMmt")
    for f in _vals(opts, "-f"):
        ctx.execute(f)
        return
    ctx.write("at:")
    ctx.stdin_program("shell")


def h_db(ctx: Ctx, args: list[str], name: str) -> None:
    """mysql/psql/sqlite3: the database is read; SQL that drops/deletes/inserts too."""
    sql: list[str] = []
    if name == "sqlite3":
        i, pos = 0, []
        while i < len(args):
            t = ctx.text(args[i])
            if t in ("-cmd", "-init", "-separator", "-newline", "-nullvalue", "-vfs"):
                if t == "-init" and i + 1 < len(args):
                    ctx.read(args[i + 1])
                if t == "-cmd" and i + 1 < len(args):
                    sql.append(ctx.text(args[i + 1]))
                i += 2
                continue
            if not t.startswith("-"):
                pos.append(args[i])
            i += 1
        db = ctx.text(pos[0]) if pos else ""
        if pos:
            ctx.read(pos[0])
        sql += [ctx.text(p) for p in pos[1:]]
    elif name in ("psql", "pg_dump"):
        opts, pos = parse_opts(args, "dcfhpUoLvTFnNtS", ("dbname", "command", "file", "host", "port", "username",
                                                        "output", "log-file", "set", "variable"))
        db = "postgres:" + ctx.text((_vals(opts, "-d", "--dbname") or pos or [""])[0])
        sql += [ctx.text(c) for c in _vals(opts, "-c", "--command")]
        for f in _vals(opts, "-f", "--file") if name == "psql" else []:
            ctx.read(f)
        for f in _vals(opts, "-o", "--output", "-L", "--log-file") + (_vals(opts, "-f", "--file") if name == "pg_dump" else []):
            ctx.write(f)
        ctx.read(db)
    else:
        args = [a for a in args if not (a.startswith("-p") and not a.startswith("--"))]  # -pPASSWORD
        opts, pos = parse_opts(args, "uhPDeSA", ("user", "host", "port", "database", "execute", "socket",
                                                 "defaults-file", "result-file"))
        db = "mysql:" + ctx.text((_vals(opts, "-D", "--database") or pos or [""])[0])
        sql += [ctx.text(c) for c in _vals(opts, "-e", "--execute")]
        for f in _vals(opts, "--defaults-file"):
            ctx.read(f)
        for f in _vals(opts, "--result-file"):
            ctx.write(f)
        ctx.read(db)
    lit = ctx.stdin_literal()
    if lit:
        sql.append(lit)
    for text in sql:
        _sql(ctx, text, db)
        for m in re.finditer(r"(?m)^\s*\.(?:import|read)\s+(\S+)", text):
            ctx.read(m.group(1))
        for m in re.finditer(r"(?m)^\s*\.(?:output|once|backup|save)\s+(\S+)", text):
            ctx.write(m.group(1))
        for m in re.finditer(r"(?m)^\s*\.(?:shell|system)\s+(.+)$", text):
            ctx.run_text_literal(m.group(1))


def h_docker(ctx: Ctx, args: list[str], name: str) -> None:
    """docker/podman run IMAGE (executes image:IMAGE), cp, build, pull, push, save, load, rm."""
    _, rest = parse_opts(args, "cHl", ("config", "context", "host", "log-level"), stop=True)
    if not rest:
        return
    sub, rest = ctx.text(rest[0]), rest[1:]
    if sub in ("container", "image") and rest:
        sub, rest = ctx.text(rest[0]), rest[1:]
    if sub in ("run", "create"):
        opts, pos = parse_opts(rest, "aceEhlLmpPuvwt", (
            "name", "env", "env-file", "volume", "publish", "user", "workdir", "entrypoint", "network", "mount",
            "label", "cpus", "memory", "hostname", "add-host", "device", "cap-add", "cap-drop", "restart",
            "platform", "pull", "log-driver", "log-opt", "tmpfs", "shm-size", "ulimit", "dns", "gpus",
            "security-opt", "runtime", "ipc", "pid", "cidfile", "expose", "health-cmd", "link", "volumes-from",
            "stop-signal", "attach", "annotation", "group-add", "isolation", "memory-swap", "network-alias"),
            stop=True)
        for f in _vals(opts, "--env-file"):
            ctx.read(f)
        for v in _vals(opts, "-v", "--volume"):
            host = ctx.text(v).split(":")[0]
            if host.startswith(("/", "~", ".")):
                ctx.read(host)
        if pos:
            ctx.execute("image:" + ctx.text(pos[0]))
    elif sub == "exec":
        _, pos = parse_opts(rest, "eouw", ("env", "user", "workdir", "env-file"), stop=True)
        if pos:
            ctx.execute("container:" + ctx.text(pos[0]))
    elif sub == "cp" and len(rest) >= 2:
        _, pos = parse_opts(rest)
        if len(pos) >= 2:
            ctx.read(pos[0])
            ctx.write(pos[1], (ctx.text(pos[0]),))
    elif sub in ("build", "buildx"):
        opts, pos = parse_opts(rest, "ft", ("file", "tag", "build-arg", "target", "platform", "secret", "output"))
        for f in _vals(opts, "-f", "--file"):
            ctx.read(f)
        for p in pos:
            ctx.read(p)
    elif sub == "pull" and rest:
        ctx.read("image:" + ctx.text(rest[-1]))
    elif sub == "push" and rest:
        ctx.send("image:" + ctx.text(rest[-1]))
    elif sub == "save":
        opts, _ = parse_opts(rest, "o", ("output",))
        for f in _vals(opts, "-o", "--output"):
            ctx.write(f)
    elif sub in ("load", "import"):
        opts, pos = parse_opts(rest, "i", ("input",))
        for f in _vals(opts, "-i", "--input") + pos[:1]:
            ctx.read(f)
    elif sub in ("rm", "rmi", "prune"):
        _, pos = parse_opts(rest)
        for p in pos:
            ctx.delete(("image:" if sub == "rmi" else "container:") + ctx.text(p))


def h_compiler(ctx: Ctx, args: list[str], name: str) -> None:
    """gcc/cc/clang/g++/rustc: sources read, -o OUT written."""
    i = 0
    while i < len(args):
        t = ctx.text(args[i])
        if t == "-o" and i + 1 < len(args):
            ctx.write(args[i + 1])
            i += 2
            continue
        if t.startswith("-o") and len(t) > 2 and name != "rustc":
            ctx.write(t[2:])
        elif t in ("-I", "-L", "-D", "-U", "-include", "-isystem", "-x", "-MF", "-MT", "-MQ", "--target"):
            i += 1
        elif not t.startswith("-"):
            ctx.read(args[i])
        i += 1


def h_make(ctx: Ctx, args: list[str], name: str) -> None:
    """make [-f FILE] [-C DIR] targets."""
    opts, _ = parse_opts(args, "fCIjlo", ("file", "makefile", "directory", "include-dir", "jobs"))
    for f in _vals(opts, "-f", "--file", "--makefile"):
        ctx.read(f)


def h_pkg(ctx: Ctx, args: list[str], name: str) -> None:
    """pip/npm/apt-get/...: installs have no file resource; -r FILE and local paths/URLs are read."""
    opts, pos = parse_opts(args, "rcietd", ("requirement", "constraint", "index-url", "extra-index-url",
                                            "target", "prefix", "root", "find-links", "editable", "dest"))
    for f in _vals(opts, "-r", "--requirement", "-c", "--constraint"):
        ctx.read(f)
    for p in pos:
        t = ctx.text(p)
        if "://" in t or looks_like_path(t):
            ctx.read(p)


def h_none(ctx: Ctx, args: list[str], name: str) -> None:
    """Commands with no resource (ps, kill, date, cd, ...)."""


def h_pathcalc(ctx: Ctx, args: list[str], name: str) -> None:
    """pwd, basename, dirname, realpath, readlink: computed names, no resource."""
    _, pos = parse_opts(args, "as", ("suffix",))
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


def h_tr(ctx: Ctx, args: list[str], name: str) -> None:
    """tr SET1 SET2: no file; stdout is stdin rewritten."""
    ctx.stdout_transformed()


def h_history(ctx: Ctx, args: list[str], name: str) -> None:
    """history: prints the shell history file."""
    ctx.read("~/.bash_history")


def h_unknown(ctx: Ctx, args: list[str], name: str) -> None:
    """Unknown programs: path-looking arguments are reads."""
    for a in args:
        t = ctx.text(a)
        if "=" in t and t.startswith("--"):
            t = t.split("=", 1)[1]
        if looks_like_path(t) or "://" in t:
            ctx.read(t if a.startswith("--") else a)


_NONE = ("cd pushd popd whoami id uname date sleep true false : test [ [[ kill pkill killall pgrep ps top "
         "htop free uptime df lsof netstat ss ip ifconfig nproc lscpu lsblk dmesg journalctl systemctl service "
         "seq yes expr bc tput stty getent groups last w who locale tty clear reset exit return break continue "
         "shift wait jobs fg bg disown trap shopt ulimit umask alias unalias unset local readonly let hash type "
         "which whereis hostname mktemp mkfifo sync usermod useradd "
         "groupadd passwd chpasswd visudo pip-compile pytest py.test tox nosetests mypy ruff black flake8 "
         "pylint isort unittest coverage C-c C-d C-z q :q").split()
_PKG = ("pip pip3 pipx npm npx yarn pnpm bun apt apt-get aptitude yum dnf apk brew snap gem cargo go conda "
        "mamba poetry uv dpkg rpm zypper pacman composer mvn gradle").split()
_DNS = "ping ping6 dig host nslookup traceroute tracepath whois mtr".split()

HANDLERS: dict[str, Handler] = {
    **{n: h_reader for n in _READERS}, **{n: h_none for n in _NONE}, **{n: h_pkg for n in _PKG},
    **{n: h_dns for n in _DNS}, **{n: h_wrapper for n in _WRAPPERS},
    "sort": h_sort, "uniq": h_uniq, "grep": h_grep, "egrep": h_grep, "fgrep": h_grep, "zgrep": h_grep,
    "rg": h_grep, "ag": h_grep, "sed": h_sed, "gsed": h_sed, "awk": h_awk, "gawk": h_awk, "mawk": h_awk,
    "jq": h_jq, "yq": h_jq, "cp": h_copy, "mv": h_copy, "install": h_copy, "ln": h_ln, "tee": h_write_all,
    "touch": h_write_all, "mkdir": h_write_all, "rm": h_delete, "rmdir": h_delete, "shred": h_delete,
    "unlink": h_delete, "truncate": h_delete, "wipe": h_delete, "srm": h_delete, "dd": h_dd, "mkfs": h_mkfs,
    "mke2fs": h_mkfs, "mkswap": h_mkfs, "wipefs": h_mkfs, "chmod": h_chmod, "chown": h_chmod,
    "chgrp": h_chmod, "chattr": h_chmod, "setfacl": h_chmod, "find": h_find, "tar": h_tar, "zip": h_zip,
    "7z": h_zip, "7za": h_zip, "7zr": h_zip, "unzip": h_unzip, **{n: h_compress for n in list(_COMPRESS_SUFFIX) + list(_DECOMPRESSORS)},
    "base64": h_base64, "base32": h_base64, "basenc": h_base64, "xxd": h_base64, "uudecode": h_base64,
    "openssl": h_openssl, "gpg": h_gpg, "gpg2": h_gpg, "curl": h_curl, "wget": h_wget, "scp": h_scp,
    "rsync": h_scp, "ssh": h_ssh, "ssh-copy-id": h_ssh_copy_id, "ssh-keygen": h_ssh_keygen, "nc": h_nc,
    "ncat": h_nc, "netcat": h_nc, "telnet": h_nc, "socat": h_socat, "ftp": h_ftp, "sftp": h_ftp, "lftp": h_ftp,
    "mail": h_mail, "mailx": h_mail, "mutt": h_mail, "sendmail": h_mail, "git": h_git, "aws": h_cloud_copy,
    "gsutil": h_cloud_copy, "rclone": h_cloud_copy, "gh": h_gh, "az": h_publish, "bash": h_shell, "sh": h_shell,
    "zsh": h_shell, "dash": h_shell, "ksh": h_shell, "fish": h_shell, "ash": h_shell, "python": h_python,
    **{n: h_interp for n in _CODE_FLAGS}, "java": h_interp, "source": h_source, ".": h_source,
    "watch": h_watch, "tmux": h_tmux, "screen": h_tmux, "eval": h_eval, "printenv": h_env_dump,
    "export": h_env_dump, "declare": h_env_dump, "typeset": h_env_dump, "set": h_env_dump, "echo": h_echo,
    "printf": h_echo, "read": h_read, "mapfile": h_read, "readarray": h_read, "crontab": h_crontab,
    "at": h_at, "batch": h_at, "mysql": h_db, "mariadb": h_db, "psql": h_db, "pg_dump": h_db,
    "sqlite3": h_db, "docker": h_docker, "podman": h_docker, "gcc": h_compiler, "cc": h_compiler,
    "g++": h_compiler, "clang": h_compiler, "clang++": h_compiler, "rustc": h_compiler, "tcc": h_compiler,
    "make": h_make, "history": h_history, "tr": h_tr, "pwd": h_pathcalc, "basename": h_pathcalc, "dirname": h_pathcalc,
    "realpath": h_pathcalc, "readlink": h_pathcalc,
}


def canonical(name: str) -> str:
    """Map versioned or variant program names onto table keys (python3.11 -> python)."""
    if re.fullmatch(r"python[\d.]*|pypy[\d.]*|ipython[\d.]*", name):
        return "python"
    if re.fullmatch(r"pip[\d.]*", name):
        return "pip"
    if name.startswith("mkfs"):
        return "mkfs"
    if re.fullmatch(r"(node|perl|ruby|php)[\d.]*", name):
        return re.sub(r"[\d.]+$", "", name)
    return name


def run_command_words(words: list[str], ctx: Ctx) -> None:
    """Dispatch one simple command (raw words, assignments already removed)."""
    if not words:
        return
    w0 = words[0]
    if ctx.dynamic(w0):
        ctx.fail(f"command name built from a variable or substitution: {ctx.text(w0)[:60]}")
        return
    text = ctx.text(w0)
    name = text
    if "/" in text:
        parent, _, base = text.rpartition("/")
        known = canonical(base) in HANDLERS
        if not (known and re.search(r"(^|/)s?bin$", parent or "/")):
            ctx.execute(w0)
        if not known:
            h_unknown(ctx, words[1:], base)
            return
        name = base
    name = canonical(name)
    HANDLERS.get(name, h_unknown)(ctx, words[1:], name)
