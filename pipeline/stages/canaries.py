"""Canaries: reference trajectories with a known (route, verdict), scored before a run.

``pipeline/canaries/reference.jsonl`` holds a small set of known-unsafe and known-safe
trajectories in canonical format (SPEC section 8); each states what it must score as in
``meta.expected`` (``{"route": ..., "verdict": ...}``). :func:`check_canaries` scores
them with the same stage functions a real run uses, in a connection of their own (so a
canary never enters a run's tables), and returns one human-readable line per canary
whose (route, verdict) differs. An empty list means the grader still separates the
known cases: a policy edit or a code change that silently disables the flow grader
(sinks that accept everything, a broken flows stage) makes the exfiltration and
injection canaries fail.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import duckdb

from pipeline.stages import tables as stages
from pipeline.config import RunConfig
from pipeline.errors import UsageError
from pipeline.policy import Policy, load_policy
from pipeline.ingest.records import RawRecord
from pipeline.ingest.tables_in import read_labels

REFERENCE = "reference.jsonl"
ROUTES = ("aggregate", "flow")
VERDICTS = ("safe", "unsafe", "attempted")


@dataclass(frozen=True)
class Canary:
    """One reference trajectory: its id, expected (route, verdict) and canonical text."""

    trajectory_id: str
    route: str
    verdict: str
    description: str
    text: str
    source_line: int


def _reference_text() -> tuple[str, str]:
    resource = resources.files("pipeline") / "canaries" / REFERENCE
    return f"canaries/{REFERENCE}", resource.read_text(encoding="utf-8")


def load_canaries(path: Path | None = None) -> list[Canary]:
    """The canaries of ``path`` (default: the bundled ``reference.jsonl``).

    Raises UsageError when a line is not a canonical record with a valid
    ``meta.expected`` (a broken canary file must never pass silently).
    """
    if path is None:
        name, text = _reference_text()
    else:
        try:
            name, text = str(path), path.read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot read canary file {path}: {exc.strerror}") from exc
    out: list[Canary] = []
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"canary file {name}:{line_no} is not JSON: {exc.msg}") from exc
        expected = (doc.get("meta") or {}).get("expected") if isinstance(doc, dict) else None
        tid = doc.get("trajectory_id") if isinstance(doc, dict) else None
        if (not isinstance(tid, str) or not isinstance(expected, dict)
                or expected.get("route") not in ROUTES or expected.get("verdict") not in VERDICTS):
            raise UsageError(f"canary file {name}:{line_no} needs a trajectory_id and "
                             "meta.expected = {route: aggregate|flow, verdict: safe|unsafe|attempted}")
        out.append(Canary(tid, expected["route"], expected["verdict"],
                          str(doc["meta"].get("description", "")), line, line_no))
    if len({c.trajectory_id for c in out}) != len(out):
        raise UsageError(f"canary file {name} repeats a trajectory_id")
    return out


def default_stages(policy: Policy) -> Callable[[duckdb.DuckDBPyConnection], None]:
    """The stage sequence of a score run (``pipeline.stages.tables``: steps, actions, flows, verdicts)."""
    def run_all(con: duckdb.DuckDBPyConnection) -> None:
        stages.steps(con)
        stages.actions(con)
        stages.flows(con, policy)
        stages.verdicts(con, policy)

    return run_all


def score_canaries(
    policy: Policy,
    canaries: Sequence[Canary],
    run_stages: Callable[[duckdb.DuckDBPyConnection], None] | None = None,
) -> duckdb.DuckDBPyConnection:
    """Score ``canaries`` in a fresh in-memory connection; returns it (tables verdicts, attrition)."""
    con = stages.connect(RunConfig(inputs=(), out=Path("canaries"), threads=1))
    records = stages.records_table(
        RawRecord(f"canaries/{REFERENCE}", c.source_line, c.text) for c in canaries)
    stages.register_inputs(con, records, policy, read_labels(con, None))
    (run_stages or default_stages(policy))(con)
    return con


def check_canaries(
    policy: Policy,
    run_stages: Callable[[duckdb.DuckDBPyConnection], None] | None = None,
    canaries: Sequence[Canary] | None = None,
) -> list[str]:
    """One failure line per canary whose (route, verdict) differs from its expectation.

    ``run_stages(con)`` runs the SQL stages on a connection whose inputs (``records``,
    the ``policy_*`` tables, empty ``labels_in``) are registered; by default the stage
    functions of :mod:`pipeline.run`. A canary that was rejected, or is missing from
    ``verdicts``, is a failure too. ``canaries`` defaults to the bundled reference set.
    """
    return list(canary_failures(policy, run_stages, canaries).values())


def canary_failures(
    policy: Policy,
    run_stages: Callable[[duckdb.DuckDBPyConnection], None] | None = None,
    canaries: Sequence[Canary] | None = None,
) -> dict[str, str]:
    """Like :func:`check_canaries`, keyed by the failing canary's trajectory_id."""
    items = list(canaries) if canaries is not None else load_canaries()
    con = score_canaries(policy, items, run_stages)
    try:
        got = {r[0]: (r[1], r[2], r[3]) for r in con.execute(
            "select trajectory_id, route, verdict, reason from verdicts").fetchall()}
        rejected = {r[0]: r[1] for r in con.execute(
            "select trajectory_id, string_agg(distinct reason, ', ' order by reason) "
            "from attrition where trajectory_id is not null group by 1").fetchall()}
    finally:
        con.close()
    failures: dict[str, str] = {}
    for c in items:
        want = f"{c.route}/{c.verdict}"
        if c.trajectory_id in got:
            route, verdict, reason = got[c.trajectory_id]
            if (route, verdict) != (c.route, c.verdict):
                failures[c.trajectory_id] = (f"canary {c.trajectory_id}: expected {want}, "
                                             f"got {route}/{verdict} (reason: {reason})")
        elif c.trajectory_id in rejected:
            failures[c.trajectory_id] = (f"canary {c.trajectory_id}: expected {want}, got rejected "
                                         f"({rejected[c.trajectory_id]})")
        else:
            failures[c.trajectory_id] = f"canary {c.trajectory_id}: expected {want}, got no verdict"
    return failures


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``litmus-gate canaries [--policy FILE] [--file CANARIES.jsonl]``."""
    parser.add_argument("--policy", type=Path, help="policy file (TOML/YAML) layered over the default")
    parser.add_argument("--file", type=Path, dest="canary_file", metavar="CANARIES",
                        help="canary JSONL with meta.expected (default: the bundled reference set)")


def main_from_args(args: argparse.Namespace) -> int:
    """Score the canaries; print one line each. Exit 0 when all pass, 3 otherwise."""
    policy = load_policy(getattr(args, "policy", None))
    canaries = load_canaries(getattr(args, "canary_file", None))
    failures = canary_failures(policy, canaries=canaries)
    for c in canaries:
        if c.trajectory_id in failures:
            print(f"FAIL  {failures[c.trajectory_id]}")
        else:
            print(f"ok    canary {c.trajectory_id}: {c.route}/{c.verdict}")
    if failures:
        print(f"litmus-gate: {len(failures)} of {len(canaries)} canaries failed "
              "(the grader no longer separates known cases)", file=sys.stderr)
        return 3
    print(f"litmus-gate: all {len(canaries)} canaries pass")
    return 0
