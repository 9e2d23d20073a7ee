"""Bench the shell analyser's parser: the hand-written one, tree-sitter-bash, bashlex.

Two steps:

``--collect OUT.json`` scores the bundled sample and every shared corpus the way
``bench/digests.py`` does (bundled catalogs, then inference only) with the analyser's
entry points wrapped, and writes every distinct program the pipeline analyses (shell
commands and code steps, by source; with ``--workers 1`` so every call is in this
process), plus the commands the shell tests pass (``tests/test_shell.py``,
``tests/test_sinks_and_writes.py``, run with the entry points wrapped), to ``OUT.json``.

``--compare IN.json`` runs each distinct shell command through:

- ``hand``: the hand-written analyser of ``--baseline REV`` (default ``8636df7``, the last
  commit before the port), extracted with ``git archive`` and run in a subprocess;
- ``tree-sitter``: the tree-sitter-bash front end (``pipeline.analysis.shell.syntax``, ``pipeline.analysis.shell.tree``);
- ``bashlex``: ``bashlex.parse`` alone (parse failures and time only: it is not wired
  into the analyser);

and prints, per source (``tests`` are the shell tests' strings, hypothesis examples
included; ``corpora`` is every source but those), the parse-failure rate (hand: an
unclosed quote or substitution; tree-sitter: any syntax error, most of them recovered;
bashlex: an exception), the opaque rate, how many analyses differ from ``hand`` (any of
the six resource sets or opacity) and the mean time per distinct program (the whole
analysis for hand and tree-sitter, the parse alone for bashlex), then bashlex's failure
reasons. ``--show N`` lists the first N differing commands.

Usage:
    .venv/bin/python bench/shell_parsers.py --collect /tmp/programs.json
    .venv/bin/python bench/shell_parsers.py --compare /tmp/programs.json [--show 20]
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO))

FIELDS = ("reads", "writes", "executes", "sends", "payloads", "deletes")


def collect(out: Path, shared: Path) -> None:
    """Record every distinct program the pipeline analyses on the sample and corpora."""
    import digests

    from pipeline.analysis import resources

    seen: dict[str, dict[str, str]] = {"shell": {}, "code": {}}
    current = {"source": "sample"}
    real_cmd, real_code = resources.analyse_command, resources.analyse_code

    def cmd(text: str) -> Any:
        if isinstance(text, str):
            seen["shell"].setdefault(text, current["source"])
        return real_cmd(text)

    def code(text: str) -> Any:
        if isinstance(text, str):
            seen["code"].setdefault(text, current["source"])
        return real_code(text)

    resources.analyse_command, resources.analyse_code = cmd, code  # type: ignore[assignment]
    real_main = digests.cli.main

    def main(argv: list[str]) -> int:
        corpus = argv[1] if len(argv) > 1 and not argv[1].startswith("--") else "sample"
        current["source"] = Path(corpus).name
        return real_main([*argv, "--workers", "1"])  # in this process, where the wrappers are

    digests.cli.main = main  # type: ignore[assignment]
    with tempfile.TemporaryDirectory(prefix="shell-bench-") as work:
        digests.runs(shared, Path(work))
    current["source"] = "tests"
    _test_programs(cmd, code)
    out.write_text(json.dumps(seen, indent=0, sort_keys=True), encoding="utf-8")
    print(f"wrote {out}: {len(seen['shell'])} shell commands, {len(seen['code'])} code steps")


def _test_programs(cmd: Callable[[str], Any], code: Callable[[str], Any]) -> None:
    """Run the shell tests with the analyser's entry points wrapped (they import them from
    ``pipeline.analysis.shell`` at collection time)."""
    import pytest

    from pipeline.analysis import shell

    real = shell.analyse_command, shell.analyse_code
    shell.analyse_command, shell.analyse_code = cmd, code  # type: ignore[assignment]
    try:
        pytest.main(["-q", "-p", "no:cacheprovider", str(REPO / "tests" / "test_shell.py"),
                     str(REPO / "tests" / "test_sinks_and_writes.py")])
    finally:
        shell.analyse_command, shell.analyse_code = real


def _as_dict(result: Any) -> dict[str, Any]:
    return {**{f: sorted(getattr(result, f)) for f in FIELDS}, "opaque": result.opaque}


def _timed(fn: Callable[[str], Any], text: str) -> tuple[Any, float]:
    t0 = time.perf_counter()
    try:
        out = fn(text)
    except Exception as exc:  # noqa: BLE001 - a parser crash is a bench figure
        out = exc
    return out, time.perf_counter() - t0


def _bashlex_parse(text: str) -> bool:
    import bashlex

    try:
        bashlex.parse(text)
        return True
    except Exception:  # noqa: BLE001 - bashlex raises several error types
        return False


_BASELINE_RUN = """
import json, sys, time
from pipeline.analysis.shell import analyse_command
out = []
for text in json.load(sys.stdin):
    t0 = time.perf_counter()
    r = analyse_command(text)
    dt = time.perf_counter() - t0
    out.append([{f: sorted(getattr(r, f)) for f in %r} | {"opaque": r.opaque}, r.opaque_reason, dt])
json.dump(out, sys.stdout)
"""
_HAND_PARSE_FAIL = ("cannot tokenize", "unbalanced")


def baseline(rev: str, texts: list[str]) -> dict[str, tuple[dict[str, Any], str | None, float]]:
    """Results of the analyser at ``rev`` on ``texts`` (run from a ``git archive`` copy)."""
    with tempfile.TemporaryDirectory(prefix="shell-baseline-") as tmp:
        archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "pipeline"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        done = subprocess.run([sys.executable, "-c", _BASELINE_RUN % (FIELDS,)], cwd=tmp, check=True,
                              input=json.dumps(texts), capture_output=True, text=True)
    return {t: (r[0], r[1], r[2]) for t, r in zip(texts, json.loads(done.stdout))}


def compare(path: Path, show: int, rev: str) -> None:
    """Print the per-source figures of the three parsers."""
    from pipeline.analysis.shell import tree as shell_tree
    from pipeline.analysis.shell import analyse_command

    programs: dict[str, str] = json.loads(path.read_text(encoding="utf-8"))["shell"]
    hand_results = baseline(rev, list(programs))
    by_source: dict[str, list[str]] = {}
    for text, source in programs.items():
        by_source.setdefault(source, []).append(text)
    by_source["corpora"] = [t for t, s in programs.items() if s != "tests"]
    by_source["all"] = list(programs)
    shown = 0
    print(f"{'source':<16}{'n':>6} | {'hand fail':>9} {'opaque':>7} {'ms/prog':>8} | "
          f"{'ts fail':>8} {'opaque':>7} {'differ':>7} {'ms/prog':>8} | {'bashlex fail':>12} {'ms/prog':>8}")
    bashlex_errors: collections.Counter[str] = collections.Counter()
    for source, texts in sorted(by_source.items(), key=lambda kv: (kv[0] in ("corpora", "all"), kv[0] == "all")):
        stats: dict[str, list[Any]] = {k: [] for k in ("ht", "tt", "bt")}
        hf = ho = tf = to = diff = bf = 0
        for text in texts:
            hand, hand_reason, ht = hand_results[text]
            tree, tt = _timed(analyse_command, text)
            ok, bt = _timed(_bashlex_parse, text)
            if ok is not True and source == "corpora":
                bashlex_errors[_bashlex_error(text)] += 1
            stats["ht"].append(ht)
            stats["tt"].append(tt)
            stats["bt"].append(bt)
            hf += (hand_reason or "").startswith(_HAND_PARSE_FAIL)
            tf += shell_tree.parse_failed(text)
            bf += ok is not True
            ho += hand["opaque"]
            to += bool(getattr(tree, "opaque", True))
            if isinstance(tree, Exception) or hand != _as_dict(tree):
                diff += 1
                if source != "all" and shown < show:
                    shown += 1
                    h = {k: v for k, v in hand.items() if v} | ({"reason": hand_reason} if hand_reason else {})
                    print(f"--- differs [{source}]: {text[:300]!r}\n    hand: {json.dumps(h)[:400]}\n"
                          f"    tree: {_brief(tree)}")
        n = len(texts)

        def ms(xs: list[float]) -> str:
            return f"{statistics.mean(xs) * 1000:8.3f}"
        print(f"{source:<16}{n:>6} | {hf / n:>9.2%} {ho / n:>7.2%} {ms(stats['ht'])} | "
              f"{tf / n:>8.2%} {to / n:>7.2%} {diff:>7} {ms(stats['tt'])} | {bf / n:>12.2%} {ms(stats['bt'])}")
    print("bashlex failures on corpus commands:")
    for reason, count in bashlex_errors.most_common(8):
        print(f"  {count:5d}  {reason}")


def _bashlex_error(text: str) -> str:
    import bashlex

    try:
        bashlex.parse(text)
    except Exception as exc:  # noqa: BLE001 - the message is the figure
        return f"{type(exc).__name__}: {str(exc).split(' (position')[0][:70]}"
    return "ok"


def _brief(result: Any) -> str:
    if isinstance(result, Exception):
        return f"raised {result!r}"
    d = {k: v for k, v in _as_dict(result).items() if v}
    if result.opaque:
        d["reason"] = result.opaque_reason
    return json.dumps(d)[:400]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collect", type=Path, metavar="OUT")
    parser.add_argument("--compare", type=Path, metavar="IN")
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "corpora")
    parser.add_argument("--show", type=int, default=0)
    parser.add_argument("--baseline", default="8636df7", help="git revision of the hand-written analyser")
    args = parser.parse_args(argv)
    if args.collect:
        collect(args.collect, args.shared)
    if args.compare:
        compare(args.compare, args.show, args.baseline)
    if not (args.collect or args.compare):
        parser.error("--collect or --compare is required")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
