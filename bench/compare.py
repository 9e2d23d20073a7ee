"""litmus-gate vs a plain-Python reference scorer vs Invariant's analyzer, in one run.

On one generated canonical corpus (``bench/gen_corpus.py``), each measured in its own
child process (``bench/_common.measure``: wall time, CPU time and peak RSS from
``os.wait4``'s rusage, plus the sampled RSS of the process tree):

(b) ``litmus-gate score CORPUS --out DIR --overwrite --quiet`` end to end;
(c) ``bench/reference_scorer.py``: the same decision boundary in plain Python, one
    trajectory at a time, one process; its verdicts are compared with (b)'s;
(d) ``bench/invariant_rules.py``: three equivalent rules in Invariant's policy language
    through ``invariant.analyzer.LocalPolicy`` (offline), one trajectory at a time, one
    process, with ``INVARIANT_MAX_ITERATIONS`` raised so that every trajectory is fully
    checked; (d0) the same with Invariant's default limit (100), for the record.

Prints a Markdown table (method, wall s, trajectories/s, peak RSS, flagged) and the
throughput ratios of (b) to (a), (c) and (d) (``bench/run.py`` puts them in docs/performance.md).

The corpus holds exactly ``--trajectories`` trajectories: the first N lines that
``bench/gen_corpus.py --seed S --mb M`` writes for any M large enough (same generator
object, same order), or, with ``--mb``, whatever ``gen_corpus.generate`` writes for that size.

Usage: python bench/compare.py --trajectories 5000 [--seed 7] [--mb MB] [--invariant-limit N]
       [--workdir /tmp/litmus-compare] [--keep] [--no-doc]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
import time
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gen_corpus  # noqa: E402
from _common import MIB, REPO, Measured, machine, measure  # noqa: E402

BENCH = REPO / "bench"
PY = sys.executable
CLI = str(Path(PY).with_name("litmus-gate"))
FIXED_COST_TRAJECTORIES = 50


def write_corpus(out: Path, n: int, seed: int) -> tuple[int, int]:
    """Exactly ``n`` trajectories, byte-identical to the first ``n`` lines of gen_corpus.generate."""
    gen = gen_corpus.Gen(seed)
    written = 0
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb", buffering=8 * MIB) as handle:
        for i in range(n):
            line = (json.dumps(gen.trajectory(i), ensure_ascii=False) + "\n").encode("utf-8")
            handle.write(line)
            written += len(line)
    return written, n


def median_run(runs: list[Measured]) -> Measured:
    """The run of median wall time (the upper one of an even count)."""
    return sorted(runs, key=lambda m: m.wall)[len(runs) // 2]


def _check(name: str, m: Measured) -> None:
    if m.returncode != 0:
        sys.stderr.write(m.stderr[-4000:])
        raise SystemExit(f"compare: {name} exited {m.returncode}")


def _last_json(text: str) -> dict:
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError("no JSON summary line in output")


def product_verdicts(run_dir: Path) -> tuple[dict[str, dict], int]:
    """(trajectory_id -> row of the product's verdicts Parquet, number of rejected records)."""
    import duckdb

    con = duckdb.connect()
    rows = con.execute(
        "select trajectory_id, route, verdict, is_unsafe, max_flow_length, reason "
        "from read_parquet($p, hive_partitioning = true)", {"p": str(run_dir / "verdicts" / "*" / "*.parquet")}
    ).fetchall()
    attr = list((run_dir / "attrition").glob("**/*.parquet"))
    rejected = con.execute("select count(*) from read_parquet($p)", {"p": [str(p) for p in attr]}).fetchall()[0][0] \
        if attr else 0
    cols = ("trajectory_id", "route", "verdict", "is_unsafe", "max_flow_length", "reason")
    return {r[0]: dict(zip(cols, r)) for r in rows}, rejected


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def agreement(product: dict[str, dict], ref_rows: list[dict]) -> dict:
    """Verdict / is_unsafe / route agreement of the reference scorer with the product."""
    ref = {r["trajectory_id"]: r for r in ref_rows if "rejected" not in r}
    ref_rejected = sum(1 for r in ref_rows if "rejected" in r)
    both = sorted(set(product) & set(ref))
    confusion: dict[tuple[str, str], int] = {}
    same_verdict = same_unsafe = same_route = 0
    examples = []
    for tid in both:
        p, r = product[tid], ref[tid]
        confusion[(p["verdict"], r["verdict"])] = confusion.get((p["verdict"], r["verdict"]), 0) + 1
        same_verdict += p["verdict"] == r["verdict"]
        same_unsafe += bool(p["is_unsafe"]) == bool(r["is_unsafe"])
        same_route += p["route"] == r["route"]
        if (p["verdict"] != r["verdict"] or p["route"] != r["route"]) and len(examples) < 5:
            examples.append((tid, f"{p['route']}/{p['verdict']}: {p['reason']}", f"{r['route']}/{r['verdict']}: {r['reason']}"))
    return {"compared": len(both), "only_product": len(set(product) - set(ref)),
            "only_reference": len(set(ref) - set(product)), "reference_rejected": ref_rejected,
            "verdict": same_verdict, "is_unsafe": same_unsafe, "route": same_route,
            "confusion": confusion, "examples": examples}


def invariant_overlap(product: dict[str, dict], inv_rows: list[dict]) -> dict:
    """How Invariant's flags line up with the product's is_unsafe on the analysed prefix."""
    out = {"both": 0, "only_product": 0, "only_invariant": 0, "neither": 0, "per_rule_product_safe": {}}
    for row in inv_rows:
        p = product.get(row["trajectory_id"])
        if p is None:
            continue
        key = ("both" if p["is_unsafe"] else "only_invariant") if row["flagged"] else \
            ("only_product" if p["is_unsafe"] else "neither")
        out[key] += 1
    return out


def fmt_rss(m: Measured, tree: bool = False) -> str:
    main = f"{m.peak_rss / MIB:,.0f} MB"
    return f"{main} (tree {m.tree_rss / MIB:,.0f} MB)" if tree else main


def main(argv: list[str] | None = None) -> int:
    report, _ = compare(argv)
    print(report)
    return 0


def compare(argv: list[str] | None = None) -> tuple[str, dict]:
    """Run (a), (b), (c), (d) on one corpus; returns the Markdown report and the throughputs."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trajectories", type=int, default=5000, help="corpus size in trajectories (exact)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--mb", type=float, default=None, help="generate by size instead (gen_corpus --mb)")
    parser.add_argument("--invariant-limit", type=int, default=0,
                        help="run (d) on the first N trajectories only (0: the whole corpus)")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/litmus-compare"))
    parser.add_argument("--keep", action="store_true", help="keep the corpus and outputs in --workdir")
    parser.add_argument("--repeat", type=int, default=3, help="runs of (a) and of (b), alternating; the median is kept")
    parser.add_argument("--doc", type=Path, default=None, help="also write the report to this file")
    args = parser.parse_args(argv)

    command = "python bench/compare.py " + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    work = args.workdir
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    corpus, run_dir = work / "corpus.jsonl", work / "run"
    ref_out, inv_out, inv0_out = work / "reference.jsonl", work / "invariant.jsonl", work / "invariant-default.jsonl"
    facts = machine()

    start = time.perf_counter()
    if args.mb is not None:
        size, n = gen_corpus.generate(corpus, args.mb, args.seed)
    else:
        size, n = write_corpus(corpus, args.trajectories, args.seed)
    print(f"corpus: {n:,} trajectories, {size / MIB:.1f} MB, seed {args.seed} "
          f"({time.perf_counter() - start:.1f} s)", file=sys.stderr)
    inv_n = min(n, args.invariant_limit) if args.invariant_limit > 0 else n

    env = dict(os.environ)
    small_n = min(FIXED_COST_TRAJECTORIES, n)
    small = work / "corpus-head.jsonl"
    with corpus.open("rb") as src, small.open("wb") as dst:
        for _ in range(small_n):
            dst.write(src.readline())
    # the canary pass is remembered per install (pipeline/stages/canary_cache.py): the first
    # run of an install scores them (b1 cold, an empty cache), every later one skips them
    cache = work / "canary-cache"
    shutil.rmtree(cache, ignore_errors=True)
    env_b = dict(env, LITMUS_GATE_CACHE_DIR=str(cache))
    print(f"(b1) litmus-gate score on the first {small_n} trajectories (fixed cost), cold and warm ...",
          file=sys.stderr)
    b1_cold = measure([CLI, "score", str(small), "--out", str(work / "run-head"), "--overwrite", "--quiet"],
                      env=env_b, cwd=REPO)
    _check("litmus-gate score (head, cold)", b1_cold)
    b1 = measure([CLI, "score", str(small), "--out", str(work / "run-head"), "--overwrite", "--quiet"],
                 env=env_b, cwd=REPO)
    _check("litmus-gate score (head)", b1)
    # (a) and (b) alternate, args.repeat times each: one run of 1-6 s on a shared machine
    # moves by +-15%; each keeps its run of median wall time (CPU, RSS from that same run)
    a_runs: list[Measured] = []
    b_runs: list[Measured] = []
    for i in range(args.repeat):
        print(f"[{i + 1}/{args.repeat}] (a) raw DuckDB read_json -> explode -> Parquet ...", file=sys.stderr)
        m = measure([PY, str(BENCH / "ingest.py"), "--_raw", str(corpus), str(work / "raw.parquet")], cwd=work)
        _check("raw DuckDB ingest", m)
        a_runs.append(m)
        (work / "raw.parquet").unlink(missing_ok=True)
        print(f"[{i + 1}/{args.repeat}] (b) litmus-gate score ...", file=sys.stderr)
        m = measure([CLI, "score", str(corpus), "--out", str(run_dir), "--overwrite", "--quiet"], env=env_b, cwd=REPO)
        _check("litmus-gate score", m)
        b_runs.append(m)
        print(f"    (a) {a_runs[-1].wall:.1f} s, (b) {m.wall:.1f} s", file=sys.stderr)
    a, b = median_run(a_runs), median_run(b_runs)
    a_rows = json.loads(a.stdout.strip().splitlines()[-1])["rows"]
    print("(c) reference scorer ...", file=sys.stderr)
    c = measure([PY, str(BENCH / "reference_scorer.py"), str(corpus), "--out", str(ref_out)], cwd=REPO)
    _check("reference_scorer", c)
    print(f"    {c.wall:.1f} s", file=sys.stderr)
    print(f"(d) Invariant LocalPolicy on {inv_n:,} trajectories ...", file=sys.stderr)
    inv_cmd = [PY, str(BENCH / "invariant_rules.py"), str(corpus), "--limit", str(inv_n)]
    d = measure(inv_cmd + ["--out", str(inv_out)], env=dict(env, INVARIANT_MAX_ITERATIONS=str(10 ** 9)), cwd=REPO)
    _check("invariant_rules", d)
    print(f"    {d.wall:.1f} s", file=sys.stderr)
    print("(d0) Invariant with its default INVARIANT_MAX_ITERATIONS ...", file=sys.stderr)
    env0 = {k: v for k, v in env.items() if k != "INVARIANT_MAX_ITERATIONS"}
    d0 = measure(inv_cmd + ["--out", str(inv0_out)], env=env0, cwd=REPO)
    _check("invariant_rules (default limit)", d0)

    product, rejected = product_verdicts(run_dir)
    b_flagged = sum(1 for r in product.values() if r["is_unsafe"])
    c_sum, d_sum, d0_sum = _last_json(c.stdout), _last_json(d.stdout), _last_json(d0.stdout)
    ref_rows = read_jsonl(ref_out)
    agree = agreement(product, ref_rows)
    inv_rows = read_jsonl(inv_out)
    overlap = invariant_overlap(product, inv_rows)
    prefix_ids = {r["trajectory_id"] for r in inv_rows}
    b_flagged_prefix = sum(1 for t, r in product.items() if t in prefix_ids and r["is_unsafe"])

    b_steps = json.loads((run_dir / "manifest.json").read_text())["row_counts"]["steps"]
    tps = {"a": n / a.wall, "b": n / b.wall, "c": n / c.wall, "d": inv_n / d.wall, "d0": inv_n / d0.wall}
    pct = (lambda k, tot: f"{100 * k / tot:.1f}%" if tot else "n/a")
    rows = [
        ("(a) raw DuckDB `read_json` -> unnest messages x tool calls -> Parquet (`bench/ingest.py`)", n, a, tps["a"],
         fmt_rss(a), f"- ({a_rows:,} message x call rows)"),
        ("(b) `litmus-gate score` end to end", n, b, tps["b"], fmt_rss(b, tree=True),
         f"{b_flagged:,} unsafe/attempted ({rejected:,} rejected)"),
        (f"(b1) same on the first {small_n} trajectories (start-up: fixed cost; canary pass remembered)", small_n,
         b1, small_n / b1.wall, fmt_rss(b1, tree=True), "-"),
        ("(b1 cold) the same, first run of an install (empty canary cache: canaries scored)", small_n,
         b1_cold, small_n / b1_cold.wall, fmt_rss(b1_cold, tree=True), "-"),
        ("(c) plain-Python reference scorer", n, c, tps["c"], fmt_rss(c),
         f"{c_sum['flagged']:,} unsafe/attempted ({c_sum['rejected']:,} rejected)"),
        (f"(d) Invariant `LocalPolicy`, 3 rules{'' if inv_n == n else f', first {inv_n:,}'}", inv_n, d, tps["d"],
         fmt_rss(d), f"{d_sum['flagged']:,} ({d_sum['errors']:,} traces raised)"),
        ("(d0) same, default `INVARIANT_MAX_ITERATIONS` (100)", inv_n, d0, tps["d0"], fmt_rss(d0),
         f"{d0_sum['flagged']:,} ({d0_sum['errors']:,} traces raised)"),
    ]
    table = ["| method | trajectories | wall s | CPU s | trajectories/s | peak RSS | flagged |",
             "|---|---:|---:|---:|---:|---:|---|"]
    for name, count, m, rate, rss, flagged in rows:
        table.append(f"| {name} | {count:,} | {m.wall:.1f} | {m.cpu:.1f} | {rate:,.0f} | {rss} | {flagged} |")
    ratio_bc, ratio_bd = tps["b"] / tps["c"], tps["b"] / tps["d"]
    ratio_ba = (b_steps / b.wall) / (a_rows / a.wall)
    cpu_bc = (n / b.cpu) / (n / c.cpu)
    ratios = (f"(b) runs at **{100 * ratio_ba:.0f}%** of (a)'s rows per second ({b_steps / b.wall:,.0f} steps/s vs "
              f"{a_rows / a.wall:,.0f} message x call rows/s; issue target >= 30%); in trajectories/s "
              f"(b)/(a) = {tps['b'] / tps['a']:.2f}x. "
              f"Throughput ratios (trajectories/s, wall): (b)/(c) = **{ratio_bc:.2f}x**, "
              f"(b)/(d) = **{ratio_bd:.2f}x** (issue target >= 25x). "
              f"Per CPU second: (b) {n / b.cpu:,.0f}, (c) {n / c.cpu:,.0f}, (d) {inv_n / d.cpu:,.0f} trajectories: "
              f"(b)/(c) per CPU second **{cpu_bc:.2f}x** (issue target >= 2x). "
              + (f"Without (b)'s fixed cost ((b) - (b1): {n - small_n:,} trajectories in {b.wall - b1.wall:.1f} s) "
                 f"it scores {(n - small_n) / (b.wall - b1.wall):,.0f} trajectories/s, "
                 f"{(n - small_n) / (b.wall - b1.wall) / tps['c']:.2f}x (c) and "
                 f"{(n - small_n) / (b.wall - b1.wall) / tps['d']:.2f}x (d)." if b.wall > b1.wall and n > small_n else ""))
    findings = (f"Targets of the issue: (b) >= 30% of (a) {'met' if ratio_ba >= 0.3 else 'not met'} "
                f"({100 * ratio_ba:.0f}%); (b)/(d) >= 25x {'met' if ratio_bd >= 25 else 'not met'} ({ratio_bd:.2f}x); "
                f"(b)/(c) per CPU second >= 2x {'met' if cpu_bc >= 2 else 'not met'} ({cpu_bc:.2f}x).")
    conf = agree["confusion"]
    labels = ("safe", "attempted", "unsafe")
    conf_table = ["| product \\ reference | " + " | ".join(labels) + " |", "|---|" + "---:|" * len(labels)]
    for pv in labels:
        conf_table.append(f"| {pv} | " + " | ".join(f"{conf.get((pv, rv), 0):,}" for rv in labels) + " |")
    cmp_n = agree["compared"]
    agree_text = (
        f"Agreement of (c) with (b) on the {cmp_n:,} trajectories both scored: verdict "
        f"{agree['verdict']:,}/{cmp_n:,} ({pct(agree['verdict'], cmp_n)}), `is_unsafe` {agree['is_unsafe']:,}/{cmp_n:,} "
        f"({pct(agree['is_unsafe'], cmp_n)}), route {agree['route']:,}/{cmp_n:,} ({pct(agree['route'], cmp_n)}); "
        f"scored only by the product {agree['only_product']:,}, only by the reference {agree['only_reference']:,}; "
        f"rejected by the reference {agree['reference_rejected']:,}, by the product {rejected:,}.")
    if agree["examples"]:
        agree_text += "\n\nDisagreements (first few; product, then reference):\n" + "\n".join(
            f"- `{t}`: {p} | {r}" for t, p, r in agree["examples"])
    inv_text = (
        f"Invariant's flags vs the product's `is_unsafe` on the {inv_n:,} trajectories (d) analysed: "
        f"both {overlap['both']:,}, product only {overlap['only_product']:,}, Invariant only "
        f"{overlap['only_invariant']:,}, neither {overlap['neither']:,} (product flags {b_flagged_prefix:,} of them). "
        f"Per rule: {', '.join(f'{k} {v:,}' for k, v in d_sum['per_rule'].items())}.")
    versions = []
    for dist in ("duckdb", "polars", "pyarrow", "invariant-ai"):
        try:
            versions.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{dist} (not installed)")
    report = "\n".join([
        f"Corpus: {n:,} trajectories, {size / MIB:.1f} MB of canonical NDJSON from `bench/gen_corpus.py` (seed "
        f"{args.seed}). (a) and (b): the run of median wall time of {args.repeat}, alternating (a) (b) (a) (b) ...; "
        "(b1), (c) and (d): one run each.", "", *table, "", ratios, "", findings, "", agree_text, "", *conf_table, "", inv_text])
    if args.doc is not None:
        args.doc.write_text(doc_text(facts, versions, command, report), encoding="utf-8")
        print(f"\nwrote {args.doc}", file=sys.stderr)
    if not args.keep:
        shutil.rmtree(work)
    return report, {"tps": tps, "ratio_ba": ratio_ba, "ratio_bc": ratio_bc, "ratio_bd": ratio_bd,
                    "cpu_bc": cpu_bc, "trajectories": n, "bytes": size, "command": command}


def doc_text(facts: str, versions: list[str], command: str, report: str) -> str:
    return f"""# Performance baselines: litmus-gate vs a plain-Python scorer vs Invariant

Written by `bench/compare.py` (issue "Scale", items 6 (c) and (d)). One run, one generated
corpus, three scorers, each in its own child process (`bench/_common.measure`): wall time
from the parent, CPU seconds (user + system, all processes) and peak RSS of the largest
process from `os.wait4`'s rusage; for `litmus-gate score`, which runs worker processes, also
the sampled peak of the summed RSS of its process tree. Throughput = trajectories / wall
seconds, start-up included. The machine is shared, so wall times carry noise; ratios taken
side by side in one run are the steadier figures. 1 MB = 2^20 bytes.

- **(b)** `litmus-gate score CORPUS --out DIR --overwrite --quiet`: the product end to end
  (ingest, every SQL stage, Pandera validation, Parquet, report, canaries), default
  `--workers` (the core count).
- **(c)** `bench/reference_scorer.py`: the same decision boundary (SPEC sections 2-3) in
  plain Python, one trajectory at a time (`json.loads` per line, Python loops, one
  process): exec_status from error fields and the policy's text rules, retry collapse,
  the rule classifier, resources (a sketch of the shell analyser), labels, data /
  resource / explicit edges, injection spans, BFS over (node, label, control) states,
  routes and verdicts. Its verdicts are checked against the product's (below).
- **(d)** `bench/invariant_rules.py`: Invariant Labs' analyzer (`invariant-ai`,
  `invariant.analyzer.LocalPolicy`, offline), three rules equivalent to ours written in
  Invariant's policy language (secret read then egress carrying a fragment of the read,
  download then execute of the downloaded file, `<INFORMATION>` injection then a send),
  one trajectory at a time, one process, with `INVARIANT_MAX_ITERATIONS` raised so every
  trajectory is fully checked. **(d0)** is the same with Invariant's default limit.

{facts}
Versions: {', '.join(versions)}.

Command (from the repository root, with the project's venv):

```sh
{command}
```

## Results

{report}

## Reading the figures

- Agreement of (c) with (b) is measured on this generated corpus only: its trajectories
  use a handful of tools and shell command shapes and carry no malformed records, so
  (c)'s shortcuts (a sketch of the shell analyser, common reject reasons only, Python
  `re` instead of RE2) are not exercised here; it is evidence that (c) implements the
  same decision boundary on this corpus, not on hostile input.
- (b) includes a fixed cost per run (interpreter and DuckDB start-up, the six canaries,
  Pandera validation, the report); (b1) measures it on a small head of the corpus, and
  the ratios line also gives (b)'s rate without it. (c) and (d) use one core; (b) splits its input into
  one shard per 32 MB (`RunConfig.shard_bytes`), so a smaller corpus is one shard scored by one worker whose
  DuckDB connection may use every core (compare its CPU and wall seconds).
- The three scorers do not answer the same question. (b) and (c) compute the full
  verdict (every flow, label and sink kind the policy knows, plus routes and, for (b),
  baselines, reports and validated tables); (d) checks three patterns. Flagged counts
  differ for that reason, not only because of speed.
- Invariant's `(a: X) -> (b: Y)` means "a occurs before b in the trace": its dataflow graph
  (`invariant.analyzer.runtime.input.Dataflow`) links every event to every later event.
  It has no notion of execution status (a failed or approval-blocked call counts like an
  executed one), retries, labels joined along a path, or transitive flows: a data
  dependency exists only where a rule spells out a condition between the two events it
  names (here: a >= 16-character run of the read output found in the send's `body`).
- Invariant's default evaluation budget (`INVARIANT_MAX_ITERATIONS`, 100 "checking
  cycles" per rule and trace) makes a two-variable rule raise `RuntimeError: Maximum
  checking cycles exceeded` on longer trajectories: (d0) shows how many traces that
  leaves unchecked on this corpus. (d) raises the limit.
- Invariant's `in` on two strings also runs the left operand as a regular expression (to
  mark matched ranges), so a data fragment such as `+abc...` raises `re.error`; the
  fragment pattern in rule 1 therefore leaves out `+`. An `or` of two `is tool:...`
  patterns raised `TypeError: 'str' object is not callable` after a false condition, so
  the rules test `call.function.name in [...]` instead.

Reproduce: `.venv/bin/pip install invariant-ai` (not a project dependency), then the
command above; `--invariant-limit N` runs (d) on the first N trajectories only (its
trajectories/s stays comparable), `--keep` keeps the corpus and all outputs in `--workdir`.
"""


if __name__ == "__main__":
    raise SystemExit(main())
