"""Command-line options of ``litmus-gate label`` (registered by :mod:`pipeline.cli`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from pipeline.errors import UsageError
from pipeline.ingest.discovery import FORMATS
from pipeline.storage import cli_location

EXAMPLE = ("example:\n  export OPENAI_API_KEY=...   # only if the server wants a key\n"
           "  litmus-gate label transcripts/ --endpoint http://localhost:8000/v1 "
           "--model meta-llama/Llama-Guard-3-8B --out labels.parquet\n"
           "  litmus-gate score transcripts/ --labels labels.parquet --out runs/guarded")


def add_arguments(cmd: argparse.ArgumentParser) -> None:
    """The ``label`` options."""
    cmd.add_argument("inputs", nargs="+", type=cli_location, metavar="INPUT",
                     help="files or folders of .jsonl/.jsonl.gz/.json, or URIs (as for explode)")
    cmd.add_argument("--endpoint", required=True, metavar="URL",
                     help="OpenAI-compatible base URL (http://host:8000/v1) or its /chat/completions URL")
    cmd.add_argument("--model", required=True, metavar="NAME", help="model name the server serves")
    cmd.add_argument("--out", type=Path, required=True, metavar="FILE", help="labels file to write (.parquet)")
    cmd.add_argument("--prompt", type=Path, metavar="FILE", help="prompt file (TOML; default: the bundled one)")
    cmd.add_argument("--concurrency", type=int, default=8, metavar="N", help="requests in flight (default 8)")
    cmd.add_argument("--api-key-env", metavar="VAR",
                     help="environment variable holding the API key (default OPENAI_API_KEY, used when set)")
    cmd.add_argument("--api-key", help=argparse.SUPPRESS)  # refused: keys never go on a command line
    cmd.add_argument("--steps", default="tool_call,assistant_text", metavar="KINDS",
                     help="step kinds to judge, comma-separated (default tool_call,assistant_text)")
    cmd.add_argument("--resume", action="store_true",
                     help="continue a killed run: keep its explode; cached replies are never asked again")
    cmd.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    cmd.add_argument("--quiet", action="store_true", help="no progress line")
    cmd.add_argument("--cache", type=Path, metavar="FILE",
                     help="reply cache (SQLite; default $XDG_CACHE_HOME/litmus-gate/label-cache.sqlite)")
    cmd.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS", help="per attempt (default 60)")
    cmd.add_argument("--max-retries", type=int, default=5, metavar="N", help="per request (default 5)")
    cmd.add_argument("--retry-budget", type=float, default=300.0, metavar="SECONDS",
                     help="total time per request, attempts and waits included (default 300)")
    cmd.add_argument("--format", default="auto", choices=FORMATS, dest="fmt", help="input format (default: auto)")
    cmd.add_argument("--workers", type=int, default=1, help="worker processes of the explode (default 1)")


def main_from_args(args: argparse.Namespace) -> int:
    """Run ``label`` from parsed options; prints the closing summary."""
    from pipeline.label.client import RetryPolicy
    from pipeline.label.command import LabelConfig, label
    from pipeline.label.progress import summary

    if args.api_key is not None:
        raise UsageError("--api-key is not accepted: a key on the command line ends up in shell history and "
                         "process lists", "export it and name the variable with --api-key-env")
    if args.timeout <= 0 or args.max_retries < 0 or args.retry_budget <= 0:
        raise UsageError("--timeout and --retry-budget must be positive, --max-retries at least 0")
    config = LabelConfig(
        inputs=tuple(args.inputs), out=args.out, endpoint=args.endpoint, model=args.model, prompt=args.prompt,
        concurrency=args.concurrency, api_key_env=args.api_key_env or "OPENAI_API_KEY",
        api_key_required=args.api_key_env is not None,
        kinds=tuple(k.strip() for k in args.steps.split(",") if k.strip()), resume=args.resume,
        overwrite=args.overwrite or args.resume, progress=not args.quiet, cache=args.cache, fmt=args.fmt,
        workers=args.workers,
        retry=RetryPolicy(timeout=args.timeout, max_retries=args.max_retries, budget=args.retry_budget))
    print(summary(label(config), str(args.out)))
    return 0
