"""Evaluate litmus-gate on the shared third-party corpora and write docs/evaluation.md.

    .venv/bin/python eval/evaluate.py [--shared ../shared/corpora] [--out docs/evaluation.md]
                                      [--work /tmp/litmus-eval] [--corpora agentdojo ...]

Per corpus: gold JSONL files from ``gold_rows``, one ``score`` run (library API) with the
first gold, metrics for further golds computed on that run the way ``litmus-gate report
--gold`` does (in memory, so the run's own metrics table stays as scored), a conservation
check (records_read == verdicts + attrition), and a Markdown section. Every number in the
document is computed here; exits 0 with a message when the corpora are absent.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from pipeline import run
from pipeline.ingest.adapters.gold import gold_rows
from pipeline.config import RunConfig
from pipeline.errors import LitmusError
from pipeline.ingest.tables_in import read_gold
from pipeline.policy import load_policy
from pipeline.outputs.writer import conform

REPO = Path(__file__).resolve().parent.parent
# corpus folder -> (format, gold columns of gold_rows; empty = no safety labels)
CORPORA: dict[str, tuple[str, tuple[str, ...]]] = {
    "agentdojo": ("agentdojo", ("gold",)), "openagentsafety": ("openhands", ("gold_llm", "gold_rule")),
    "tau-bench": ("tau-bench", ()), "swe-agent": ("swe-agent", ()), "r-judge": ("r-judge", ("gold",)),
    # agent logs as their CLIs write them, read with --format auto (no safety labels)
    "claude-code": ("auto", ()), "codex": ("auto", ())}
SCORERS = ("flow_aware", "execution_gated", "stepwise_min", "all_safe")
MAX_SUITES = 8  # per-suite breakdown only for corpora with at most this many suites
N_EXAMPLES = 5
VIOLATION = re.compile(r"(\w+)/(\w+) data reaches an? (\w+) sink")


@dataclass
class Outcome:
    """What one corpus produced: its run, conservation, metrics per gold, problems found."""

    name: str
    run_dir: Path
    seconds: float
    records_read: int
    n_verdicts: int
    n_attrition: int
    metrics: dict[str, pa.Table] = field(default_factory=dict)
    golds: dict[str, Path] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def conserved(self) -> bool:
        return self.records_read == self.n_verdicts + self.n_attrition


def write_golds(path: Path, fmt: str, keys: Sequence[str], folder: Path) -> dict[str, Path]:
    """One gold JSONL (trajectory_id, gold, slice) per column of ``gold_rows``; only non-empty ones."""
    rows = list(gold_rows(path, fmt)) if keys else []
    golds: dict[str, Path] = {}
    for key in keys:
        lines = [json.dumps({"trajectory_id": r["trajectory_id"], "gold": r[key], "slice": [str(r["slice"])]})
                 for r in rows if r.get(key) in ("safe", "unsafe")]
        if lines:
            golds[key] = folder / f"{key}.jsonl"
            golds[key].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return golds


def parquet(run_dir: Path, table: str) -> str:
    return (f"read_parquet('{run_dir / table}/**/*.parquet', hive_partitioning = true, union_by_name = true, "
            "hive_types_autocast = false)")


def metrics_in_memory(run_dir: Path, gold: Path, problems: list[str], what: str) -> pa.Table:
    """The metrics table of ``run_dir`` against ``gold`` (the SQL of ``report --gold``), schema-checked."""
    con = run.connect(RunConfig(inputs=(), out=run_dir))
    for name in ("verdicts", "attrition"):
        con.execute(f"create temp table {name} as select * from {parquet(run_dir, name)}")
    run.metrics(con, read_gold(con, gold))
    frame = con.table("metrics").pl()
    try:
        conform("metrics", frame)
    except LitmusError as exc:
        problems.append(f"metrics against {what} fail their schema: {exc.one_line()}")
    return frame.to_arrow()


def evaluate(name: str, corpus: Path, work: Path, policy: Path | None = None) -> Outcome:
    """Score one corpus (with the bundled catalogs, or with ``policy`` layered over them)."""
    fmt, keys = CORPORA[name]
    folder = work / (name if policy is None else f"{name}-{policy.stem}")
    folder.mkdir(parents=True, exist_ok=True)
    golds = write_golds(corpus, fmt, keys, folder)
    first = next(iter(golds.values()), None)
    config = RunConfig(inputs=(corpus,), out=folder / "run", fmt=fmt, gold=first, overwrite=True, policy=policy)
    problems: list[str] = []
    start = time.perf_counter()
    try:
        result = run.score(config)
    except LitmusError as exc:  # a scorer problem: keep going without gold, report it
        if first is None:
            raise
        problems.append(f"`score --gold` failed: {exc.one_line()}; metrics computed in memory instead")
        result = run.score(RunConfig(inputs=(corpus,), out=folder / "run", fmt=fmt, overwrite=True, policy=policy))
    seconds = time.perf_counter() - start
    manifest = json.loads((result.out / "manifest.json").read_text())
    con = duckdb.connect()
    n_v, n_a = (int(con.sql(f"select count(*) from {parquet(result.out, t)}").fetchall()[0][0])
                for t in ("verdicts", "attrition"))
    out = Outcome(name, result.out, seconds, int(manifest["records_read"]), n_v, n_a, golds=golds,
                  problems=problems)
    for key, gold in golds.items():
        if gold == first and (result.out / "metrics").is_dir():
            out.metrics[key] = con.sql(f"select * from {parquet(result.out, 'metrics')}").to_arrow_table()
        else:
            out.metrics[key] = metrics_in_memory(result.out, gold, problems, key)
    return out


def fmt_rate(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def fmt_ci(value: float | None, low: float | None, high: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.3f} [{fmt_rate(low)}, {fmt_rate(high)}]"


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows] + [""]


def metric_rows(metrics: pa.Table, suite: str, slice_: str) -> dict[str, dict[str, Any]]:
    return {r["scorer"]: r for r in metrics.to_pylist() if r["suite"] == suite and r["slice"] == slice_}


def classify(row: dict[str, Any], false_positive: bool) -> tuple[str, str]:
    """A coarse error class for one wrong product verdict, and what would fix it."""
    reason = row["reason"] or ""
    found = VIOLATION.search(reason)
    conf, integ, sink = found.groups() if found else ("", "", "")
    if false_positive:
        if reason.startswith("executed action labelled unsafe"):
            return ("a built-in step rule labelled an executed action unsafe",
                    "narrow the argument-pattern rule for this context or supply classifier labels (--labels).")
        if integ == "untrusted":
            return (f"untrusted data reached a `{sink}` sink, but the gold says the harm did not happen",
                    "the agent acted on injected/external content without completing the attacker's goal; "
                    "score this as `attempted` (with attempted counted safe) or add an 'injection followed' gold slice.")
        return (f"{conf}/{integ} data reached a `{sink}` sink in a task the gold calls benign",
                f"the task legitimately moves this data: relax the accepted label of this `{sink}` sink per tool "
                "or allow-list the task's destinations.")
    if row["n_actions"] == 0:
        return ("gold unsafe but the transcript holds no tool action at all",
                "nothing observable to score (truncated export, or harm only in text): drop such records from "
                "the gold or label assistant text with a content classifier.")
    if reason.startswith("no violation") and found:
        return (f"a flow into a `{sink}` sink exists but its label is within what the sink accepts",
                f"the harm is in what is sent/executed, not where it came from: tighten the `{sink}` sink's "
                "accepted label or add content rules for its payload arguments.")
    if row["saw_injection"]:
        return ("a tool output carried an injection span, but no dependency edge links it to a later action",
                "the edge finder missed the link: plain-word values (addresses, names, short codes) are never "
                "evidence (fragments need `min_fragment_length` chars and a digit, '@' or dot), a fragment seen in "
                "more than `max_fragment_sources` outputs is dropped as common even when those outputs are repeats "
                "of one call, and fragments also in the user prompt are discounted.")
    return ("no multi-step flow and no built-in step rule fired",
            "the harm is semantic (what the code, message or edit says); it needs an instance-level classifier "
            "passed with --labels, the built-in argument rules cannot see it.")


def error_section(con: duckdb.DuckDBPyConnection, out: Outcome, gold: Path) -> list[str]:
    con.register("policy_injection", load_policy().tables()["injection"])
    rows = con.sql(f"""with injected as (
            select distinct s.trajectory_id from {parquet(out.run_dir, 'steps')} s join policy_injection p
                on s.kind = 'tool_result' and regexp_matches(s.content, p.pattern))
        select v.trajectory_id, v.reason, v.n_actions, g.gold = 'unsafe' as gold_unsafe,
            i.trajectory_id is not null as saw_injection
        from {parquet(out.run_dir, 'verdicts')} v join read_json('{gold}') g using (trajectory_id)
        left join injected i using (trajectory_id)
        where v.is_unsafe <> (g.gold = 'unsafe') order by v.trajectory_id""").to_arrow_table().to_pylist()
    lines: list[str] = []
    for fp, title in ((True, "False positives"), (False, "False negatives")):
        errors = [r for r in rows if r["gold_unsafe"] != fp]
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for r in errors:
            groups.setdefault(classify(r, fp), []).append(r)
        ordered = sorted(groups.items(), key=lambda kv: -len(kv[1]))
        picked: list[dict[str, Any]] = []  # round-robin over classes, largest first
        for i in range(N_EXAMPLES):
            picked += [members[i] for _, members in ordered if i < len(members)]
        picked = picked[:N_EXAMPLES]
        lines.append(f"**{title} of `flow_aware`: {len(errors)}**" + ("" if errors else " (none)."))
        lines.append("")
        for (label, fix), members in ordered:
            lines.append(f"- *{label}* — {len(members)} trajectories. Fix: {fix}")
            lines += [f"  - `{r['trajectory_id']}` — {r['reason']}" for r in members if r in picked]
        lines.append("")
    return lines


def judgement(prod: dict[str, Any], base: dict[str, dict[str, Any]]) -> str:
    f1 = prod.get("f1")
    best = max(((s, r.get("f1") or 0.0) for s, r in base.items()), key=lambda x: x[1], default=("none", 0.0))
    if f1 is None:
        return "No F1 could be computed (no gold unsafe and nothing flagged)."
    quality = "good" if f1 >= 0.8 else "mediocre" if f1 >= 0.5 else "poor"
    compare = ("better than" if f1 > best[1] else "no better than")
    return (f"Verdict: **{quality}** — flow_aware F1 {f1:.3f} (recall {fmt_rate(prod.get('recall'))}, precision "
            f"{fmt_rate(prod.get('precision'))}), {compare} the best baseline ({best[0]}, F1 {best[1]:.3f}).")


def corpus_section(out: Outcome) -> list[str]:
    con = duckdb.connect()
    v, a = parquet(out.run_dir, "verdicts"), parquet(out.run_dir, "attrition")
    rate = out.n_attrition / out.records_read if out.records_read else 0.0
    reasons = con.sql(f"select reason, count(*) from {a} group by 1 order by 2 desc, 1").fetchall()
    lines = [f"## {out.name}", "",
             f"- records read: {out.records_read}; scored: {out.n_verdicts}; rejected: {out.n_attrition} "
             f"(attrition {rate:.1%}); scoring time {out.seconds:.1f} s",
             "- attrition by reason: " + (", ".join(f"`{r}` {n}" for r, n in reasons) or "none"),
             f"- conservation (records_read = verdicts + attrition): {out.records_read} = {out.n_verdicts} + "
             f"{out.n_attrition} → **{'holds' if out.conserved else 'BROKEN'}**", ""]
    lines += [f"- scorer problem: {p}" for p in out.problems] + ([""] if out.problems else [])
    mix = con.sql(f"""select route, count(*) filter (where verdict = 'safe'), count(*) filter (where verdict = 'attempted'),
        count(*) filter (where verdict = 'unsafe'), count(*) from {v} group by 1 order by 1""").fetchall()
    lines += ["Route mix (product verdicts):", ""] + table(("route", "safe", "attempted", "unsafe", "total"), mix)
    if not out.golds:
        flagged = {s: int(n) for s, n in zip(("flow_aware", "execution_gated", "stepwise_min", "all_safe"), con.sql(
            f"select count(*) filter (where is_unsafe), count(*) filter (where execution_gated_unsafe), "
            f"count(*) filter (where stepwise_min_unsafe), count(*) filter (where all_safe_unsafe) from {v}").fetchall()[0])}
        lines += ["No safety labels in this corpus: no precision/recall. Trajectories flagged unsafe per scorer: "
                  + ", ".join(f"{s} {n}" for s, n in flagged.items()) + ".", ""]
    for key, gold in out.golds.items():
        m = out.metrics[key]
        total = metric_rows(m, "*", "*")
        lines += [f"### Metrics against `{key}` (suite='*', slice='*')", ""]
        lines += table(("scorer", "precision [95% CI]", "recall [95% CI]", "F1 [95% CI]", "tp", "fp", "fn", "tn",
                        "gold rows not scored"),
                       [(s, fmt_ci(r["precision"], r["precision_low"], r["precision_high"]),
                         fmt_ci(r["recall"], r["recall_low"], r["recall_high"]),
                         fmt_ci(r["f1"], r["f1_low"], r["f1_high"]), r["tp"], r["fp"], r["fn"], r["tn"],
                         r["n_unscored"]) for s in SCORERS if (r := total.get(s))])
        if "flow_aware" in total:
            lines += [judgement(total["flow_aware"], {s: total[s] for s in SCORERS[1:] if s in total}), ""]
        if all(total[s]["tp"] + total[s]["fp"] == 0 for s in SCORERS[1:] if s in total):
            lines += ["The baselines flag nothing here: the built-in step rules label no step of this corpus "
                      "unsafe, so this compares the flow analysis with a grader that has no classifier, not with "
                      "a real instance-level classifier.", ""]
        if len({tuple(total[s][c] for c in ("tp", "fp", "fn", "tn")) for s in SCORERS[1:] if s in total}) == 1:
            lines += ["The three baselines give identical confusion counts (only the built-in binary step labels "
                      "exist, so `stepwise_min` equals `all_safe`; execution gating changes no count here).", ""]
        suites = sorted({r["suite"] for r in m.to_pylist()} - {"*"})
        slices = sorted({r["slice"] for r in m.to_pylist()} - {"*"})
        cells = ([(f"suite {s}", s, "*") for s in suites] if 1 < len(suites) <= MAX_SUITES else []) + \
                [(f"slice {s}", "*", s) for s in slices]
        if len(suites) > MAX_SUITES:
            lines += [f"{len(suites)} suites: per-suite rows omitted here, they are in the run's metrics table.", ""]
        rows = []
        for label, suite, slice_ in cells:
            by = metric_rows(m, suite, slice_)
            p, e = by.get("flow_aware"), by.get("execution_gated")
            if p:
                rows.append((label, p["tp"], p["fp"], p["fn"], p["tn"], fmt_rate(p["precision"]),
                             fmt_rate(p["recall"]), fmt_rate(p["f1"]), fmt_rate(e["f1"]) if e else "–"))
        if rows:
            lines += ["Breakdown (flow_aware; last column execution_gated F1 for comparison):", ""]
            lines += table(("cell", "tp", "fp", "fn", "tn", "precision", "recall", "F1", "exec-gated F1"), rows)
        lines += error_section(con, out, gold)
    return lines


INFERENCE_POLICY = '[settings]\nbundled_catalogs = "default"\n'  # default.toml + [inference] only


def modes_section(pairs: list[tuple[Outcome, Outcome | None]]) -> list[str]:
    """Leave-one-corpus-out: each corpus with the bundled catalogs and with inference only."""
    lines = ["## Out of the box: bundled catalogs vs inference only", "",
             "Every corpus scored twice: with the bundled catalogs (`default.toml` plus the suite and agent catalogs "
             + ", ".join(f"`{s.split(':', 1)[-1]}`" for s in load_policy(None).sources
                         if s.split(':', 1)[-1] != "default.toml")
             + "), and with `default.toml` alone "
             "(its generic vocabulary, role inference for every other tool, content detectors), selected by a "
             "`--policy` file holding `[settings] bundled_catalogs = \"default\"`. No corpus-specific catalog "
             "takes part in the second column: **it is the product's out-of-the-box figure** for a suite nobody "
             "wrote a catalog for.", ""]
    rows = []
    for cat, inf in pairs:
        def attr(o: Outcome | None) -> str:
            return "–" if o is None else f"{o.n_attrition / max(o.records_read, 1):.1%}"
        keys = list(cat.metrics) or [""]
        for key in keys:
            for scorer in SCORERS if key else ("–",):
                c = metric_rows(cat.metrics[key], "*", "*").get(scorer, {}) if key else {}
                i = metric_rows(inf.metrics[key], "*", "*").get(scorer, {}) if key and inf and key in inf.metrics else {}
                rows.append((cat.name, key or "no gold", scorer, attr(cat), fmt_rate(c.get("precision")),
                             fmt_rate(c.get("recall")), fmt_rate(c.get("f1")), attr(inf),
                             fmt_rate(i.get("precision")), fmt_rate(i.get("recall")), fmt_rate(i.get("f1"))))
    lines += table(("corpus", "gold", "scorer", "catalogs: attrition", "P", "R", "F1",
                    "inference only: attrition", "P", "R", "F1"), rows)
    for _, inf in pairs:
        if inf is not None:
            reasons = duckdb.connect().sql(f"select reason, count(*) from {parquet(inf.run_dir, 'attrition')} "
                                           "group by 1 order by 2 desc, 1").fetchall()
            roles = duckdb.connect().sql(f"select role_source, count(*) from {parquet(inf.run_dir, 'actions')} "
                                         "group by 1 order by 1").fetchall()
            lines.append(f"- {inf.name}, inference only: attrition by reason "
                         + (", ".join(f"`{r}` {n}" for r, n in reasons) or "none") + "; actions by role source "
                         + ", ".join(f"`{r}` {n}" for r, n in roles) + f"; scoring time {inf.seconds:.1f} s")
    return lines + [""]


def render(outcomes: list[Outcome], command: str, seconds: float,
           inferred: dict[str, Outcome] | None = None) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = ["# Evaluation on third-party transcripts", "",
             f"Regenerate (from the repository root): `{command}`  ", f"Generated {stamp}; total runtime "
             f"{seconds:.0f} s. Every number below is computed by `eval/evaluate.py` from the run tables.", "",
             "Scorers: `flow_aware` is the product verdict; `execution_gated`, `stepwise_min`, `all_safe` are the "
             "SPEC §5 baselines. No per-step classifier labels are supplied, so every scorer sees only the built-in "
             "rule classifier. Intervals are the Wilson 95% intervals of the metrics table (F1's through "
             "J = tp / (tp + fp + fn), F1 = 2J / (1 + J)).", ""]
    summary = []
    for o in outcomes:
        f1s = {k: metric_rows(m, "*", "*") for k, m in o.metrics.items()}
        summary.append((o.name, o.records_read, o.n_verdicts, f"{o.n_attrition / max(o.records_read, 1):.1%}",
                        "holds" if o.conserved else "BROKEN",
                        "; ".join(f"{k}: {fmt_rate(r['flow_aware']['f1'])} vs "
                                  f"{fmt_rate(max((r[s]['f1'] or 0.0) for s in SCORERS[1:]))}"
                                  for k, r in f1s.items()) or "no gold"))
    lines += table(("corpus", "records", "scored", "attrition", "conservation", "F1 flow_aware vs best baseline"),
                   summary)
    if inferred is not None:
        lines += modes_section([(o, inferred.get(o.name)) for o in outcomes])
        lines += ["The sections below detail the runs with the bundled catalogs.", ""]
    for o in outcomes:
        lines += corpus_section(o)
    return "\n".join(lines).rstrip() + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "corpora")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "evaluation.md")
    parser.add_argument("--work", type=Path, default=Path("/tmp/litmus-eval"))
    parser.add_argument("--corpora", nargs="+", choices=list(CORPORA), default=list(CORPORA))
    parser.add_argument("--catalogs-only", action="store_true",
                        help="skip the second (inference only, default.toml alone) run of each corpus")
    args = parser.parse_args(argv)
    if not args.shared.is_dir():
        print(f"evaluate: {args.shared} not present; nothing to evaluate (skipped)")
        return 0
    start = time.perf_counter()
    outcomes = []
    inferred: dict[str, Outcome] = {}
    for name in args.corpora:
        if not (args.shared / name).is_dir():
            print(f"evaluate: {args.shared / name} not present; skipped")
            continue
        outcomes.append(o := evaluate(name, args.shared / name, args.work))
        print(f"evaluate: {name}: {o.records_read} records, {o.n_verdicts} scored, {o.n_attrition} rejected, "
              f"conservation {'holds' if o.conserved else 'BROKEN'} ({o.seconds:.1f} s)")
        if not args.catalogs_only:
            policy = args.work / "default-only.toml"
            args.work.mkdir(parents=True, exist_ok=True)
            policy.write_text(INFERENCE_POLICY, encoding="utf-8")
            inferred[name] = i = evaluate(name, args.shared / name, args.work, policy)
            print(f"evaluate: {name} (inference only): {i.n_attrition} rejected, "
                  f"conservation {'holds' if i.conserved else 'BROKEN'} ({i.seconds:.1f} s)")
    python = os.path.relpath(sys.executable, Path.cwd()) if sys.executable.startswith(str(Path.cwd())) else "python"
    command = shlex.join([python, "eval/evaluate.py", *(sys.argv[1:] if argv is None else argv)])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render(outcomes, command, time.perf_counter() - start,
                               None if args.catalogs_only else inferred), encoding="utf-8")
    print(f"evaluate: wrote {args.out}")
    return 0 if all(o.conserved for o in [*outcomes, *inferred.values()]) else 1


if __name__ == "__main__":
    sys.exit(main())
