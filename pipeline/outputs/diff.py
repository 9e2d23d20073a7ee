"""``litmus-gate diff``: what changed between two runs, and a gate on verdict flips.

:func:`diff_runs` compares run B against run A:
- **flips**: trajectories scored in both whose ``verdict`` or ``is_unsafe`` differs,
  with both routes, verdicts and reasons;
- **appeared** (scored in B, not in A) and **disappeared** (scored in A, not in B),
  each saying what the other run did with it (rejected with its attrition reason, or
  absent from its input);
- **manifest changes**: policy hash and sources, labels / gold hashes, package versions,
  input files (matched by path, then by content hash), input format.
Flip rate = flips / trajectories scored in both runs.

The gate counts flips only: ``--max-flips N`` (default 0: any flip fails) or
``--max-flip-rate R`` (a fraction, 0..1). Appeared/disappeared trajectories are reported
but never fail the gate. Exit 1 when the threshold is exceeded, 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from pipeline.errors import RunDirError, UsageError
from pipeline.outputs.diff_render import summary_lines, write_csv, write_markdown
from pipeline.outputs.query import check_run_dir, table_relation

_FLIPS = """
select trajectory_id, b.suite, a.route, a.verdict, a.is_unsafe, a.reason, b.route, b.verdict, b.is_unsafe, b.reason
from va a join vb b using (trajectory_id)
where a.verdict is distinct from b.verdict or a.is_unsafe is distinct from b.is_unsafe
order by trajectory_id
"""
_COUNTS = """
select count(*), count(*) filter (where a.route is distinct from b.route
                                  and a.verdict = b.verdict and a.is_unsafe = b.is_unsafe)
from va a join vb b using (trajectory_id)
"""
# scored in `x`, not in `y`; what `y` did with it (its attrition reasons), if anything
_ONLY = """
select x.trajectory_id, x.suite, x.route, x.verdict, x.is_unsafe, x.reason, r.reasons
from vx x
anti join vy y using (trajectory_id)
left join (select trajectory_id, string_agg(distinct reason, ', ' order by reason) as reasons
           from ay where trajectory_id is not null group by 1) r using (trajectory_id)
order by x.trajectory_id
"""


@dataclass(frozen=True)
class Flip:
    """A trajectory scored in both runs with a different verdict or is_unsafe."""

    trajectory_id: str
    suite: str
    route_a: str
    verdict_a: str
    is_unsafe_a: bool
    reason_a: str
    route_b: str
    verdict_b: str
    is_unsafe_b: bool
    reason_b: str


@dataclass(frozen=True)
class Presence:
    """A trajectory scored in one run only; ``other`` says what the other run did with it."""

    trajectory_id: str
    suite: str
    route: str
    verdict: str
    is_unsafe: bool
    reason: str
    other: str  # "rejected: <reason>" or "absent"


@dataclass(frozen=True)
class ManifestChange:
    """One manifest field that differs between the runs (``-`` when absent)."""

    field: str
    a: str
    b: str


@dataclass(frozen=True)
class DiffResult:
    """Run B compared with run A."""

    run_a: Path
    run_b: Path
    n_both: int
    route_only_changes: int
    flips: list[Flip] = field(default_factory=list)
    appeared: list[Presence] = field(default_factory=list)
    disappeared: list[Presence] = field(default_factory=list)
    manifest_changes: list[ManifestChange] = field(default_factory=list)

    @property
    def flip_rate(self) -> float:
        """Flips over trajectories scored in both runs (0.0 when none are)."""
        return len(self.flips) / self.n_both if self.n_both else 0.0

    def exceeds(self, max_flips: int | None = 0, max_flip_rate: float | None = None) -> bool:
        """True when the flips exceed the threshold (the rate wins when given)."""
        if max_flip_rate is not None:
            return self.flip_rate > max_flip_rate
        return len(self.flips) > (max_flips if max_flips is not None else 0)


def _manifest(run: Path) -> dict[str, Any]:
    check_run_dir(run)
    try:
        data = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RunDirError(f"{run}/manifest.json cannot be read: {exc}") from exc
    if not isinstance(data, dict):
        raise RunDirError(f"{run}/manifest.json is not a JSON object")
    return data


def _get(doc: Any, *keys: str) -> str:
    for key in keys:
        doc = doc.get(key) if isinstance(doc, dict) else None
    if doc is None:
        return "-"
    return doc if isinstance(doc, str) else json.dumps(doc, sort_keys=True)


def _labellers(doc: dict[str, Any]) -> str:
    """Model and prompt hash of each ``litmus-gate label`` source of the labels file."""
    entries = (doc.get("labels") or {}).get("labelled_by") or []
    return ", ".join(f"{e.get('model')} (prompt {str(e.get('prompt_sha256'))[:12]})" for e in entries) or "-"


def manifest_changes(a: dict[str, Any], b: dict[str, Any]) -> list[ManifestChange]:
    """Fields of two manifests that differ (hashes, versions, inputs, format)."""
    out: list[ManifestChange] = []

    def add(name: str, va: str, vb: str) -> None:
        if va != vb:
            out.append(ManifestChange(name, va, vb))

    add("policy.sha256", _get(a, "policy", "sha256"), _get(b, "policy", "sha256"))
    add("policy.sources", _get(a, "policy", "sources"), _get(b, "policy", "sources"))
    for side in ("labels", "gold"):
        add(f"{side}.sha256", _get(a, side, "sha256"), _get(b, side, "sha256"))
    add("labels.labelled_by", _labellers(a), _labellers(b))  # the guard model or prompt changed
    add("format", _get(a, "format"), _get(b, "format"))
    va, vb = a.get("versions") or {}, b.get("versions") or {}
    for pkg in sorted(set(va) | set(vb)):
        add(f"versions.{pkg}", str(va.get(pkg, "-")), str(vb.get(pkg, "-")))
    sa, sb = a.get("settings") or {}, b.get("settings") or {}
    for key in sorted(set(sa) | set(sb)):
        add(f"settings.{key}", _get(sa, key), _get(sb, key))
    ia = {str(i.get("path")): str(i.get("sha256")) for i in a.get("inputs") or [] if isinstance(i, dict)}
    ib = {str(i.get("path")): str(i.get("sha256")) for i in b.get("inputs") or [] if isinstance(i, dict)}
    for path in sorted(set(ia) & set(ib)):
        add(f"input {path}", ia[path], ib[path])
    only_a = {p: h for p, h in ia.items() if p not in ib}
    only_b = {p: h for p, h in ib.items() if p not in ia}
    by_hash_b = {h: p for p, h in only_b.items()}
    for path, digest in sorted(only_a.items()):
        moved = by_hash_b.pop(digest, None)
        if moved is not None:
            only_b.pop(moved)
            add("input moved (same sha256)", path, moved)
        else:
            add(f"input {path}", digest, "-")
    for path, digest in sorted(only_b.items()):
        add(f"input {path}", "-", digest)
    return out


def _register(con: duckdb.DuckDBPyConnection, run: Path, side: str) -> None:
    verdicts = table_relation(con, run, "verdicts")
    if verdicts is None:
        raise RunDirError(f"{run} has no verdicts table", "diff needs two score runs")
    verdicts.create_view(f"v{side}")
    attrition = table_relation(con, run, "attrition")
    if attrition is None:  # no rejects table: an empty one with the columns the queries use
        attrition = con.sql("select null::varchar as trajectory_id, null::varchar as reason where false")
    attrition.create_view(f"a{side}")


def _only(con: duckdb.DuckDBPyConnection, x: str, y: str) -> list[Presence]:
    con.table(f"v{x}").create_view("vx")
    con.table(f"v{y}").create_view("vy")
    con.table(f"a{y}").create_view("ay")
    return [Presence(tid, suite, route, verdict, unsafe, reason, f"rejected: {why}" if why else "absent")
            for tid, suite, route, verdict, unsafe, reason, why in con.sql(_ONLY).fetchall()]


def diff_runs(run_a: Path, run_b: Path) -> DiffResult:
    """Compare run B with run A (see module docstring). RunDirError when one is not a score run."""
    man_a, man_b = _manifest(Path(run_a)), _manifest(Path(run_b))
    con = duckdb.connect()
    try:
        _register(con, Path(run_a), "a")
        _register(con, Path(run_b), "b")
        flips = [Flip(*row) for row in con.sql(_FLIPS).fetchall()]
        n_both, route_only = con.sql(_COUNTS).fetchall()[0]
        appeared, disappeared = _only(con, "b", "a"), _only(con, "a", "b")
    finally:
        con.close()
    return DiffResult(Path(run_a), Path(run_b), int(n_both), int(route_only), flips, appeared, disappeared,
                      manifest_changes(man_a, man_b))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``litmus-gate diff RUN_A RUN_B [--max-flips N | --max-flip-rate R] [--format F]``."""
    parser.add_argument("run_a", type=Path, metavar="RUN_A", help="the baseline run")
    parser.add_argument("run_b", type=Path, metavar="RUN_B", help="the run compared with it")
    gate = parser.add_mutually_exclusive_group()
    gate.add_argument("--max-flips", type=int, default=None, metavar="N",
                      help="fail (exit 1) when more than N verdicts flip (default 0: any flip fails)")
    gate.add_argument("--max-flip-rate", type=float, default=None, metavar="R",
                      help="fail when flips / trajectories scored in both runs exceeds R (0..1)")
    parser.add_argument("--format", choices=("markdown", "csv"), default="markdown", dest="diff_format",
                        help="markdown (summary and tables) or csv (rows on stdout, summary on stderr)")


def main_from_args(args: argparse.Namespace) -> int:
    """Print the diff; 1 when flips exceed the threshold, 0 otherwise."""
    if args.max_flips is not None and args.max_flips < 0:
        raise UsageError("--max-flips must be >= 0")
    if args.max_flip_rate is not None and not 0.0 <= args.max_flip_rate <= 1.0:
        raise UsageError("--max-flip-rate must be between 0 and 1")
    result = diff_runs(args.run_a, args.run_b)
    if args.diff_format == "csv":
        write_csv(result, sys.stdout)
        for line in summary_lines(result):
            print(line, file=sys.stderr)
    else:
        write_markdown(result, sys.stdout)
    sys.stdout.flush()
    if result.exceeds(args.max_flips if args.max_flips is not None else 0, args.max_flip_rate):
        limit = (f"rate {result.flip_rate:.2%} > {args.max_flip_rate:.2%}" if args.max_flip_rate is not None
                 else f"{len(result.flips)} > {args.max_flips or 0}")
        print(f"litmus-gate: verdict flips exceed the threshold ({limit})", file=sys.stderr)
        return 1
    return 0
