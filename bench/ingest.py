"""Ingest benchmark: raw DuckDB explode vs ``litmus-gate score``, side by side on one file.

Generates ONE canonical NDJSON corpus of about ``--mb`` MiB (``bench/gen_corpus.py``) or
takes ``--corpus FILE``, then measures, each in its own child process:

(a) raw DuckDB: ``read_json`` with explicit columns -> unnest messages and tool calls
    (one row per message x tool call) -> ``COPY ... TO ... (FORMAT parquet)``, with the
    pipeline's connection settings (2 threads, memory_limit 4GB,
    preserve_insertion_order=false). This is the ingest limit of the machine.
(b) ``litmus-gate score FILE --out DIR --overwrite``, end to end.

Reports wall time, CPU time, MB/s, trajectories/s and peak RSS for each and the ratio
(b)/(a), prints a Markdown table and writes it to docs/performance.md (section "Ingest").
``--stages`` adds where (b) spends its time: ``bench/stages.py`` on the first shard's worth
(``RunConfig.shard_bytes``) of the same corpus, with DuckDB's heaviest operators of ``events`` and ``edges``.
Generated files are deleted at the end unless ``--keep``; a ``--corpus`` given by the
caller is never deleted.

Usage: python bench/ingest.py [--mb 1024] [--corpus FILE] [--workdir DIR] [--repeat N] [--stages] [--keep] [--no-doc]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import MIB, REPO, Measured, auto_shards, folder_bytes, gib, machine, measure, update_section  # noqa: E402

COLUMNS = (
    "{'trajectory_id': 'VARCHAR', 'suite': 'VARCHAR', 'messages': 'STRUCT(role VARCHAR, content JSON, "
    "tool_call_id VARCHAR, error JSON, tool_calls STRUCT(id VARCHAR, type VARCHAR, "
    "\"function\" STRUCT(name VARCHAR, arguments JSON), depends_on VARCHAR[])[])[]'}"
)
# one row per message x tool call (a message without calls gives one row, call columns null)
RAW_SQL = """
copy (
    with m as (
        select trajectory_id, suite, unnest(messages) as msg,
            generate_subscripts(messages, 1) - 1 as message_idx
        from read_json($path, format = 'newline_delimited', columns = {columns},
                       maximum_object_size = 33554432)
    ),
    c as (
        select trajectory_id, suite, message_idx, msg,
            unnest(if(len(msg.tool_calls) > 0, msg.tool_calls, [null])) as call,
            generate_subscripts(if(len(msg.tool_calls) > 0, msg.tool_calls, [null]), 1) - 1 as call_idx
        from m
    )
    select trajectory_id, coalesce(suite, 'default') as suite, message_idx::bigint as message_idx,
        if(call is null, null, call_idx)::bigint as call_idx, lower(msg.role) as role,
        json_extract_string(msg.content, '$') as content, msg.tool_call_id as tool_call_id,
        msg.error::varchar as error, call.id as call_id, call.function.name as tool_name,
        json_extract_string(call.function.arguments, '$') as arguments, call.depends_on as depends_on
    from c
) to '{out}' (format parquet, compression zstd)
"""


def raw_child(path: str, out: str) -> None:
    """Measured body of (a): runs in a child process, prints {"rows": N} on stdout."""
    import duckdb

    con = duckdb.connect(config={"threads": 2, "memory_limit": "4GB", "preserve_insertion_order": False})
    con.execute("set enable_progress_bar = false")
    sql = RAW_SQL.replace("{columns}", COLUMNS).replace("{out}", out.replace("'", "''"))
    rows = con.execute(sql, {"path": path}).fetchall()[0][0]
    print(json.dumps({"rows": rows}))


def corpus_files(path: Path) -> list[Path]:
    """A corpus file, or the ``*.jsonl`` files of a corpus folder (sorted)."""
    return sorted(path.glob("*.jsonl")) if path.is_dir() else [path]


def count_lines(path: Path) -> int:
    n = 0
    for file in corpus_files(path):
        with file.open("rb") as handle:
            while chunk := handle.read(16 * MIB):
                n += chunk.count(b"\n")
    return n


def _cli() -> str:
    exe = Path(sys.executable).parent / "litmus-gate"
    return str(exe) if exe.exists() else (shutil.which("litmus-gate") or "litmus-gate")


def _median(runs: list[Measured], attr: str) -> float:
    return statistics.median(getattr(m, attr) for m in runs)


def _prefix(corpus: Path, target: Path, limit: int) -> Path:
    """The whole lines of ``corpus`` within its first ``limit`` bytes (one shard's worth)."""
    if corpus.stat().st_size <= limit:
        return corpus
    written = 0
    with corpus.open("rb") as src, target.open("wb") as dst:
        for line in src:
            if written + len(line) > limit:
                break
            dst.write(line)
            written += len(line)
    return target


def stage_profile(corpus: Path, workdir: Path, limit: int | None = None) -> dict:
    """bench/stages.py on one shard's worth of the corpus (default: one default shard), in a measured child."""
    if limit is None:
        from pipeline.config import RunConfig

        limit = RunConfig(inputs=(), out=Path(".")).shard_bytes
    part = _prefix(corpus, workdir / "stages-prefix.jsonl", limit)
    try:
        m = measure([sys.executable, str(REPO / "bench" / "stages.py"), str(part), "--json",
                     "--operators", "events", "--operators", "edges"], cwd=workdir)
        if m.returncode:
            raise SystemExit(f"bench/stages.py failed:\n{m.stderr[-3000:]}")
        res = json.loads(m.stdout.strip().splitlines()[-1])
        res.update(bytes=part.stat().st_size, trajectories=count_lines(part), wall=m.wall, peak_rss=m.peak_rss)
        return res
    finally:
        if part != corpus:
            part.unlink(missing_ok=True)


def run(mb: float, corpus: Path | None, workdir: Path, repeat: int, keep: bool, seed: int,
        stages: bool = False, failing: bool = False) -> dict:
    """Measure (a) and (b); returns the figures (also used by bench/run.py)."""
    workdir.mkdir(parents=True, exist_ok=True)
    generated = corpus is None
    if corpus is None:
        corpus = workdir / f"corpus-{mb:g}mb-s{seed}.jsonl"
        if not corpus.exists():
            start = time.perf_counter()
            gen = measure([sys.executable, str(REPO / "bench" / "gen_corpus.py"), "--mb", str(mb),
                           "--out", str(corpus), "--seed", str(seed)])
            if gen.returncode:
                raise SystemExit(f"gen_corpus failed: {gen.stderr}")
            print(f"generated {corpus} in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    size = sum(f.stat().st_size for f in corpus_files(corpus))
    trajectories = count_lines(corpus)
    raw_out = workdir / "raw-explode.parquet"
    run_dir = workdir / "score-run"
    raw_runs: list[Measured] = []
    score_runs: list[Measured] = []
    raw_rows = 0
    manifest: dict = {}
    score_cmd = [_cli(), "score", str(corpus), "--out", str(run_dir), "--overwrite"]
    watch = (workdir, (f".{run_dir.name}.work", f".{run_dir.name}.staging-*", ".tmp"))  # temporary disk of (b)
    failed: dict | None = None
    # a nightly job's steady state: the install's canary pass is remembered
    # (pipeline/stages/canary_cache.py); a warm-up run on a small head records it first
    env = dict(os.environ, LITMUS_GATE_CACHE_DIR=str(workdir / "canary-cache"))
    head = _prefix(corpus_files(corpus)[0], workdir / "warm-up.jsonl", 200_000)
    warm = measure([_cli(), "score", str(head), "--out", str(workdir / "warm-up-run"), "--overwrite", "--quiet"],
                   env=env, cwd=workdir)
    if warm.returncode:
        raise SystemExit(f"litmus-gate score (warm-up) failed (exit {warm.returncode}):\n{warm.stderr[-3000:]}")
    shutil.rmtree(workdir / "warm-up-run", ignore_errors=True)
    try:
        for i in range(repeat):
            raw_in = str(corpus / "*.jsonl") if corpus.is_dir() else str(corpus)  # read_json takes a glob
            m = measure([sys.executable, __file__, "--_raw", raw_in, str(raw_out)], cwd=workdir)
            if m.returncode:
                raise SystemExit(f"raw DuckDB ingest failed:\n{m.stderr[-3000:]}")
            raw_rows = json.loads(m.stdout.strip().splitlines()[-1])["rows"]
            raw_runs.append(m)
            print(f"[{i + 1}/{repeat}] (a) raw DuckDB: {m.wall:.1f} s, {gib(m.peak_rss)}", file=sys.stderr)
            raw_out.unlink(missing_ok=True)
            m = measure(score_cmd, env=env, cwd=workdir, watch=watch)  # DuckDB may spill to ./.tmp
            if m.returncode:
                raise SystemExit(f"litmus-gate score failed (exit {m.returncode}):\n{m.stderr[-3000:]}")
            manifest = json.loads((run_dir / "manifest.json").read_text())
            score_runs.append(m)
            print(f"[{i + 1}/{repeat}] (b) litmus-gate score: {m.wall:.1f} s, {gib(m.peak_rss)}", file=sys.stderr)
            shutil.rmtree(run_dir, ignore_errors=True)
        if failing and score_runs:  # the same run stopped by SIGTERM half way: peaks of a run that fails
            half = score_runs[0].wall / 2
            f = measure(score_cmd, env=env, cwd=workdir, watch=watch, term_after=half)
            failed = {"after": half, "exit": f.returncode, "wall": f.wall, "tree_rss": f.tree_rss,
                      "disk_peak": f.disk_peak, "stderr": f.stderr.strip().splitlines()[-1:] or [""],
                      "left": folder_bytes(*watch)}
            print(f"(b) SIGTERM after {half:.1f} s: exit {f.returncode}, {gib(f.tree_rss)}", file=sys.stderr)
        profile = stage_profile(corpus, workdir) if stages else None
    finally:
        raw_out.unlink(missing_ok=True)
        (workdir / "warm-up.jsonl").unlink(missing_ok=True)
        shutil.rmtree(run_dir, ignore_errors=True)
        for leftover in [*workdir.glob(f".{run_dir.name}*"), workdir / ".tmp"]:  # work/staging folders, spills
            shutil.rmtree(leftover, ignore_errors=True)
        if generated and not keep:
            corpus.unlink(missing_ok=True)
    result = {
        "stages": profile,
        "corpus": str(corpus), "bytes": size, "trajectories": trajectories, "seed": seed, "repeat": repeat,
        "raw": {"wall": _median(raw_runs, "wall"), "cpu": _median(raw_runs, "cpu"),
                "peak_rss": _median(raw_runs, "peak_rss"), "tree_rss": _median(raw_runs, "tree_rss"),
                "rows": raw_rows},
        "score": {"wall": _median(score_runs, "wall"), "cpu": _median(score_runs, "cpu"),
                  "peak_rss": _median(score_runs, "peak_rss"), "tree_rss": _median(score_runs, "tree_rss"),
                  "disk_peak": _median(score_runs, "disk_peak"), "failed": failed,
                  "rows": manifest.get("row_counts", {}), "records_read": manifest.get("records_read"),
                  "settings": manifest.get("settings", {})},
        "score_cmd": " ".join(score_cmd),
    }
    return result


def markdown(res: dict, command: str) -> str:
    """The "Ingest" section: table, ratio, machine and the exact command."""
    mb = res["bytes"] / MIB
    n = res["trajectories"]
    raw, sc = res["raw"], res["score"]
    rows = sc["rows"]
    conf = dict(sc.get("settings", {}))
    if conf.get("shards") is None and "shards" in conf:
        conf["shards"] = auto_shards(res["bytes"])
    settings = ", ".join(f"{k}={v}" for k, v in conf.items())
    lines = [
        f"Corpus: one canonical NDJSON file from `bench/gen_corpus.py --seed {res['seed']}`, {mb:.0f} MB, "
        f"{n:,} trajectories. Median of {res['repeat']} run(s), (a) and (b) alternating in one run.",
        "",
        "| method | wall s | CPU s | MB/s | trajectories/s | peak RSS (largest process) "
        "| peak RSS (process tree) | output rows |",
        "|---|---|---|---|---|---|---|---|",
        f"| (a) DuckDB `read_json` explicit columns -> unnest messages x tool calls -> `COPY ... (FORMAT parquet)` "
        f"| {raw['wall']:.1f} | {raw['cpu']:.1f} | {mb / raw['wall']:.1f} | {n / raw['wall']:,.0f} "
        f"| {gib(raw['peak_rss'])} | {gib(raw['tree_rss'])} | {raw['rows']:,} message x call rows |",
        f"| (b) `litmus-gate score FILE --out DIR --overwrite` (end to end{'; ' + settings if settings else ''}) "
        f"| {sc['wall']:.1f} | {sc['cpu']:.1f} | {mb / sc['wall']:.1f} | {n / sc['wall']:,.0f} "
        f"| {gib(sc['peak_rss'])} | {gib(sc['tree_rss'])} | "
        + ", ".join(f"{k} {v:,}" for k, v in rows.items()) + " |",
        "",
        f"Ratio (b)/(a): wall time **{sc['wall'] / raw['wall']:.1f}x**, CPU time {sc['cpu'] / raw['cpu']:.1f}x, "
        f"peak RSS (process tree) {sc['tree_rss'] / max(raw['tree_rss'], 1):.1f}x.",
    ]
    prof = res.get("stages")
    if prof:
        from stages import markdown as stages_markdown

        lines += ["", f"Where (b) spends its time: `bench/stages.py` on the first {prof['bytes'] / MIB:.0f} MB "
                  f"({prof['trajectories']:,} trajectories) of the same corpus, i.e. one shard's work in one "
                  f"connection (`pipeline.stages.tables.connect`), {prof['wall']:.1f} s wall, "
                  f"peak RSS {gib(prof['peak_rss'])}:", "", stages_markdown(prof)]
    lines += ["", machine(), f"Command: `{command}`  ", f"(b) ran as: `{res['score_cmd']}`"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--_raw":
        raw_child(argv[1], argv[2])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=1024, help="corpus size in MiB (default 1024)")
    parser.add_argument("--corpus", type=Path, help="use this NDJSON file (or folder of .jsonl files) instead of generating one")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/litmus-bench"))
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--stages", action="store_true", help="also profile the stages of (b) (bench/stages.py)")
    parser.add_argument("--keep", action="store_true", help="keep the generated corpus")
    parser.add_argument("--no-doc", action="store_true", help="do not write docs/performance.md")
    parser.add_argument("--section", default="Ingest",
                        help="the docs/performance.md section to (re)write (default Ingest)")
    args = parser.parse_args(argv)
    res = run(args.mb, args.corpus, args.workdir, args.repeat, args.keep, args.seed, args.stages)
    text = markdown(res, "python bench/ingest.py " + " ".join(argv))
    print(text)
    if not args.no_doc:
        update_section(args.section, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
