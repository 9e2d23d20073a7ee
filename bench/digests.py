"""Table digests of a checkout's runs, to show that a refactor leaves behaviour unchanged.

Scores the bundled sample corpus (``data/sample``, copied to a fixed path first) and each shared corpus that is
present (with the format and gold files ``eval/evaluate.py`` uses), once with the bundled
catalogs and once with inference only (``bundled_catalogs = "default"``), into ``--work``.
For every table it records two digests:

- ``bytes``: the SHA-256 of every Parquet file of the table, by path inside the run;
- ``rows`` and ``content``: the row count and an order-free hash of the rows (DuckDB
  ``bit_xor(hash(row))``), so a difference in bytes can be told from one in contents.

``manifest.json`` and ``report.html`` carry run metadata (times, paths) and are left out.

Usage:
    .venv/bin/python bench/digests.py --out /tmp/before.json [--shared ../shared/corpora]
    .venv/bin/python bench/digests.py --compare /tmp/before.json /tmp/after.json

Run the first form in each checkout (before and after a change), then compare: exit 1 and
one line per differing table when anything differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

import duckdb

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "eval"))
sys.path.insert(0, str(REPO))

from pipeline import cli  # noqa: E402

INFERENCE_ONLY = '[settings]\nbundled_catalogs = "default"\n'
SAMPLE_COPY = Path(tempfile.gettempdir()) / "litmus-digests-sample"


def table_digests(run_dir: Path) -> dict[str, dict[str, Any]]:
    """Per table folder of ``run_dir``: file SHA-256s, row count and a content hash."""
    con = duckdb.connect()
    out: dict[str, dict[str, Any]] = {}
    for folder in sorted(p for p in run_dir.iterdir() if p.is_dir()):
        files = sorted(folder.rglob("*.parquet"))
        if not files:
            continue
        digests = {str(f.relative_to(run_dir)): hashlib.sha256(f.read_bytes()).hexdigest() for f in files}
        glob = str(folder / "**" / "*.parquet")
        rows, content = con.execute(
            "select count(*), coalesce(bit_xor(hash(t)), 0) "
            "from read_parquet(?, hive_partitioning = true, union_by_name = true) t", [glob]).fetchall()[0]
        out[folder.name] = {"bytes": digests, "rows": int(rows), "content": str(content)}
    return out


def runs(shared: Path | None, work: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """Score every corpus in both modes; the table digests of each run, by run name."""
    import evaluate  # eval/evaluate.py: the corpus list, its formats and golds

    policy = work / "inference-only.toml"
    policy.write_text(INFERENCE_ONLY, encoding="utf-8")
    result: dict[str, dict[str, dict[str, Any]]] = {}
    # the bundled sample, copied to a fixed path: verdicts carry source_file, and the same
    # corpus read from two checkouts must give the same rows
    sample = SAMPLE_COPY
    shutil.rmtree(sample, ignore_errors=True)
    shutil.copytree(REPO / "data" / "sample", sample)
    jobs: list[tuple[str, list[str]]] = [("sample", [str(sample / "corpus"), "--labels", str(sample / "labels.jsonl"),
                                                     "--gold", str(sample / "gold.jsonl")])]
    if shared is not None and shared.is_dir():
        for name, (fmt, keys) in evaluate.CORPORA.items():
            corpus = shared / name
            if not corpus.exists():
                continue
            folder = work / f"gold-{name}"
            folder.mkdir(parents=True, exist_ok=True)
            golds = evaluate.write_golds(corpus, fmt, keys, folder)
            gold = next(iter(golds.values()), None)
            jobs.append((name, [str(corpus), "--format", fmt] + (["--gold", str(gold)] if gold else [])))
    for name, argv in jobs:
        for mode, pol in (("catalogs", []), ("inference", ["--policy", str(policy)])):
            out = work / f"{name}-{mode}"
            code = cli.main(["score", *argv, *pol, "--out", str(out), "--overwrite", "--quiet"])
            if code != 0:
                raise SystemExit(f"{name}/{mode}: score exited {code}")
            result[f"{name}/{mode}"] = table_digests(out)
            print(f"{name}/{mode}: " + ", ".join(f"{t} {d['rows']}" for t, d in result[f"{name}/{mode}"].items()),
                  file=sys.stderr)
    return result


def compare(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """One line per run or table whose digests differ (empty when all are identical)."""
    lines: list[str] = []
    for name in sorted(set(before) | set(after)):
        if name not in before or name not in after:
            lines.append(f"{name}: only in {'after' if name in after else 'before'}")
            continue
        b, a = before[name], after[name]
        for table in sorted(set(b) | set(a)):
            if table not in b or table not in a:
                lines.append(f"{name}/{table}: only in {'after' if table in a else 'before'}")
            elif b[table] != a[table]:
                same_rows = (b[table]["rows"], b[table]["content"]) == (a[table]["rows"], a[table]["content"])
                what = "bytes differ, contents identical" if same_rows else (
                    f"contents differ (rows {b[table]['rows']} -> {a[table]['rows']})")
                lines.append(f"{name}/{table}: {what}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="digests JSON to write")
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "corpora")
    parser.add_argument("--work", type=Path, help="run folder (default: a temporary folder, removed)")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args(argv)
    if args.compare:
        before, after = (json.loads(p.read_text(encoding="utf-8")) for p in args.compare)
        lines = compare(before, after)
        print("\n".join(lines) if lines else f"identical: {len(before)} runs, every table, bytes and contents")
        return 1 if lines else 0
    if args.out is None:
        parser.error("--out or --compare is required")
    work = args.work or Path(tempfile.mkdtemp(prefix="litmus-digests-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        result = runs(args.shared, work)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    args.out.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {len(result)} runs", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
