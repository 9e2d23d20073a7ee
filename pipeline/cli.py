"""Command line: parse, build a frozen config, call the library, map errors to exits.

Exit codes: 0 success (rejected records are in attrition, not failures); 2 operator
error (bad flag, missing input, unreadable policy/labels, RUN_DIR exists); 4 a table failed its schema (a bug);
143 / 130 a run stopped by SIGTERM / SIGINT (pipeline.execution.signals); 1 anything else.
"""

from __future__ import annotations

if __name__ == "__main__":  # python -m pipeline.cli: signal handlers before the imports (pipeline/launch.py)
    from pipeline.execution.signals import install_cli_handlers

    install_cli_handlers()

import argparse
import atexit
import gc
import os
import sys
from collections.abc import Sequence
from pathlib import Path

# NumPy (loaded by PyArrow and Pandera; we never call BLAS) starts OpenBLAS with a thread
# per core that busy-waits after start-up: about 0.1 CPU s in each process of a run (the
# driver and every worker, which inherit this environment). Before the imports below load
# NumPy; a user's own OPENBLAS_NUM_THREADS wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# PyArrow's allocator (its bundled mimalloc 3) asks the kernel for transparent huge pages
# on its 1 GiB arenas (madvise MADV_HUGEPAGE); this machine's kernel (defrag=madvise)
# then compacts memory on each first touch of such a region, which took 0.0-0.7 s of
# system time for a 32 MB shard's `records` table (a cold 32 MB shard, bench/stages.py, 5
# alternating runs: read records 0.88 -> 0.20 CPU s median). Off in the driver and in the
# workers (they inherit it) before the imports below load PyArrow; a user's own wins.
os.environ.setdefault("MIMALLOC_ALLOW_THP", "0")

from pipeline.config import MEMORY_LIMIT_MIN, RunConfig, memory_bytes, sample_root
from pipeline.errors import Interrupted, LitmusError, UsageError, terminal_safe
from pipeline.execution.signals import command_ended, command_started
from pipeline.ingest.discovery import FORMATS
from pipeline.storage import cli_location
from pipeline.outputs.summary import print_summary

# At exit, CPython's last garbage collection walks every object the imports made (DuckDB's
# and PyArrow's Python layers): 0.2-0.5 s of a run's critical path, measured. Frozen first,
# they are left to the OS like the rest of the process; refcounts still free the others,
# and every output is written and closed before main returns.
atexit.register(gc.freeze)

# the most shards a run may be told to use (a 25 GB corpus takes 800 by default)
MAX_SHARDS = 100_000
EXAMPLES = {
    "main": "example:\n  litmus-gate score data/sample/corpus --labels data/sample/labels.jsonl --out runs/sample",
    "score": "example:\n  litmus-gate score transcripts/ --labels labels.jsonl --gold gold.jsonl --out runs/nightly",
    "explode": "example:\n  litmus-gate explode transcripts/ --out runs/steps-only",
    "synth": "example:\n  litmus-gate synth --trajectories 100000 --out big.jsonl --seed 7",
    "query": "example:\n  litmus-gate query runs/sample \"select route, count(*) from verdicts group by 1\"",
    "diff": "example:\n  litmus-gate diff runs/yesterday runs/today --max-flip-rate 0.01",
    "canaries": "example:\n  litmus-gate canaries --policy my-policy.toml",
    "report": "example:\n  litmus-gate report runs/nightly --gold gold.jsonl",
    "policy": "example:\n  litmus-gate policy suggest transcripts/ > my-policy.toml",
    "show": "example:\n  litmus-gate show runs/nightly traj-0042 --html traj-0042.html",
}


def _sample_inputs() -> tuple[tuple[Path, ...], Path | None, Path | None]:
    try:
        root = sample_root()
    except FileNotFoundError as exc:
        raise LitmusError("no INPUT given and the bundled sample corpus is missing") from exc
    labels, gold = root / "labels.jsonl", root / "gold.jsonl"
    return (root / "corpus",), labels if labels.exists() else None, gold if gold.exists() else None


class _Parser(argparse.ArgumentParser):
    """argparse with the CLI's one-line refusal: a bad flag or a missing argument is an
    operator error (SPEC section 7: non-zero with a one-line reason), exit 2, stderr one line
    (argparse's default printed the whole usage block before its error line)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        text = " ".join(message.split())
        self.exit(2, f"litmus-gate: error: {text} (see {self.prog} --help)\n")


def _memory_limit(text: str) -> str:
    """--memory-limit: a size DuckDB reads, refused here (one line, exit 2) when it is not one."""
    try:
        memory_bytes(text, MEMORY_LIMIT_MIN)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    return text


def _parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    parser = _Parser(
        prog="litmus-gate", formatter_class=fmt, epilog=EXAMPLES["main"],
        description="Score LLM-agent transcripts for safety: retries collapsed into logical "
                    "actions, taint flows through a dependency graph, verdicts and attrition as Parquet.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, helptext in (("score", "score transcripts into a run folder"),
                           ("explode", "write only the steps table (for an external classifier)")):
        cmd = sub.add_parser(name, help=helptext, description=helptext, formatter_class=fmt, epilog=EXAMPLES[name])
        cmd.add_argument("inputs", nargs="*", type=cli_location, metavar="INPUT",
                         help="files or folders of transcripts (.jsonl/.jsonl.gz/.json/.eval/.traj; an agent's "
                              "SQLite session store: sessions.db, opencode.db, state.vscdb), or URIs such as s3://bucket/prefix "
                              "(score: the bundled sample when omitted)")
        cmd.add_argument("--out", type=cli_location, required=True, metavar="RUN_DIR",
                         help="run folder to create (or a URI prefix: s3://bucket/runs/name)")
        cmd.add_argument("--format", default="auto", choices=FORMATS, dest="fmt", help="input format (default: auto)")
        cmd.add_argument("--suite", help="suite of claude-code / codex / otel records "
                                          "(default: the project folder / codex / service.name)")
        cmd.add_argument("--policy", type=Path, help="policy file (TOML/YAML) layered over the default")
        cmd.add_argument("--overwrite", action="store_true", help="replace an existing RUN_DIR")
        cmd.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                         help="worker processes scoring shards (default: the core count)")
        cmd.add_argument("--shards", type=int, default=None,
                         help="number of shards (default: one per 32 MB of input)")
        cmd.add_argument("--resume", action="store_true",
                         help="continue a killed run from its finished shards")
        cmd.add_argument("--quiet", action="store_true", help="no progress lines")
        cmd.add_argument("--engine", choices=("local", "ray"), default="local",
                         help="run shards as local worker processes or as Ray tasks")
        cmd.add_argument("--address", help="Ray cluster address (with --engine ray; default: a local cluster)")
        cmd.add_argument("--memory-limit", type=_memory_limit, metavar="SIZE",
                         help="DuckDB's memory cap per worker scoring a shard, e.g. 800MB or 1.5GiB "
                              "(default: 1.25 GiB shared by the workers of this machine, at least 512 MiB each)")
        cmd.add_argument("--work-dir", type=cli_location, metavar="LOCATION",
                         help="where the shard work folder .RUN_DIR.work goes (default: beside RUN_DIR); "
                              "a URI such as s3://bucket/tmp lets every Ray node share it")
        if name == "score":
            cmd.add_argument("--labels", type=Path, help="per-step labels (trajectory_id, step_idx, label, score)")
            cmd.add_argument("--gold", type=Path, help="gold labels (trajectory_id, gold, slice) for metrics")
            cmd.add_argument("--summary", action="store_true", help="print a short summary of the run")
    syn = sub.add_parser("synth", help="generate a corpus of any size (with gold and labels)",
                         formatter_class=fmt, description="generate a corpus of any size (with gold and labels)",
                         epilog=EXAMPLES["synth"])
    syn.add_argument("--trajectories", type=int, required=True, metavar="N")
    syn.add_argument("--out", type=Path, required=True, metavar="FILE", help="corpus .jsonl to write")
    syn.add_argument("--seed", type=int, default=0)
    rep = sub.add_parser("report", help="rebuild metrics and report of an existing run", formatter_class=fmt,
                         description="rebuild metrics and report of an existing run", epilog=EXAMPLES["report"])
    rep.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    rep.add_argument("--gold", type=Path, help="gold labels (trajectory_id, gold, slice)")
    from pipeline.stages import canaries
    from pipeline.outputs import diff, explain_text, query

    for name, module, helptext in (
            ("show", explain_text, "one trajectory explained: steps, actions, graph, deciding flow"),
            ("query", query, "SQL over the tables of one or many runs (DuckDB)"),
            ("diff", diff, "verdict flips between two runs of the same corpus"),
            ("canaries", canaries, "score the built-in reference trajectories")):
        cmd = sub.add_parser(name, help=helptext, description=helptext, formatter_class=fmt, epilog=EXAMPLES[name])
        module.add_arguments(cmd)
    from pipeline.label import options as label_options

    label_help = "per-step labels from a guard model behind an OpenAI-compatible chat API"
    label_options.add_arguments(sub.add_parser("label", help=label_help, description=label_help, formatter_class=fmt,
                                               epilog=label_options.EXAMPLE, allow_abbrev=False))
    pol = sub.add_parser("policy", help="policy helpers", formatter_class=fmt,
                         description="policy helpers", epilog=EXAMPLES["policy"])
    pol_sub = pol.add_subparsers(dest="policy_command", required=True)
    sug = pol_sub.add_parser("suggest", help="draft catalog entries for unknown tools", formatter_class=fmt,
                             description="draft catalog entries for unknown tools", epilog=EXAMPLES["policy"])
    sug.add_argument("inputs", nargs="+", type=cli_location, metavar="INPUT")
    sug.add_argument("--format", default="auto", choices=FORMATS, dest="fmt")
    sug.add_argument("--policy", type=Path, help="policy file layered over the default")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The CLI (the ``litmus-gate`` console script runs it through :mod:`pipeline.launch`)."""
    args = _parser().parse_args(argv)  # a signal before this line: one line, exit at once (signals.py)
    try:
        try:
            command_started(run=args.command in ("score", "explode", "label"))
            return _dispatch(args)
        finally:
            command_ended()  # from here a signal has nothing left to stop (signals.py)
    except (LitmusError, Interrupted) as exc:
        print(f"litmus-gate: error: {exc.one_line()}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # output piped into `head`: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # disk full, permissions, ...: one line, never a traceback
        reason = f"{exc.strerror or exc} ({exc.filename or 'no file'})"
        print(f"litmus-gate: error: {terminal_safe(reason)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("litmus-gate: interrupted; no run was published", file=sys.stderr)
        return 130


def _dispatch(args: argparse.Namespace) -> int:
    from pipeline import run

    if args.command in ("score", "explode"):
        inputs = tuple(args.inputs)
        labels = getattr(args, "labels", None)
        gold = getattr(args, "gold", None)
        if not inputs and args.command == "score":
            inputs, sample_labels, sample_gold = _sample_inputs()
            labels = labels or sample_labels
            gold = gold or sample_gold
        elif not inputs:
            raise UsageError("explode needs at least one INPUT")
        if args.workers < 1 or (args.shards is not None and args.shards < 1):
            raise UsageError("--workers and --shards must be at least 1")
        if args.shards is not None and args.shards > MAX_SHARDS:  # 10^8 planned lists past 5 GB
            raise UsageError(f"--shards must be at most {MAX_SHARDS}",
                             "an empty shard still costs about 0.4 s; the default is one per 32 MB")
        config = RunConfig(inputs=inputs, out=args.out, fmt=args.fmt, suite=args.suite, labels=labels, gold=gold,
                           policy=args.policy, overwrite=args.overwrite or args.resume, workers=args.workers,
                           shards=args.shards, resume=args.resume, progress=not args.quiet,
                           engine=args.engine, address=args.address, work_dir=args.work_dir,
                           memory_limit=args.memory_limit, extra={"command": args.command})
        result = run.score(config) if args.command == "score" else run.explode(config)
        if getattr(args, "summary", False):
            print_summary(result)
        else:
            print(f"litmus-gate: wrote {result.out} ({result.records_read} records)")
        return 0
    if args.command in ("query", "diff", "canaries", "show"):
        from pipeline.stages import canaries
        from pipeline.outputs import diff, explain_text, query

        modules = {"query": query, "diff": diff, "canaries": canaries, "show": explain_text}
        return modules[args.command].main_from_args(args)
    if args.command == "label":
        from pipeline.label import options as label_options

        return label_options.main_from_args(args)
    if args.command == "synth":
        from pipeline.synth import synth

        if args.trajectories < 1:  # was: exit 0 and three empty files
            raise UsageError("--trajectories must be at least 1")
        counts = synth(args.trajectories, args.out, args.seed)
        print(f"litmus-gate: wrote {counts['trajectories']} trajectories to {args.out} "
              f"({counts['gold']} gold rows, {counts['labels']} label rows beside it)")
        return 0
    if args.command == "report":
        counts = run.rebuild_report(args.run_dir, args.gold)
        print(f"litmus-gate: rebuilt {args.run_dir}/report.html and report.md"
              + (f" ({counts['metrics']} metrics rows)" if "metrics" in counts else ""))
        return 0
    if args.command == "policy":
        sys.stdout.write(run.suggest(tuple(args.inputs), args.fmt, args.policy))
        return 0
    raise LitmusError(f"unknown command {args.command}")


if __name__ == "__main__":
    sys.exit(main())
