"""How ``litmus-gate diff`` prints a :class:`pipeline.outputs.diff.DiffResult`: a summary,
Markdown tables, or CSV rows. Every cell of data (ids, suites and reasons come from
transcripts, and a diff is read on terminals and CI logs) is cleaned of control and
bidi characters."""

from __future__ import annotations

import csv
import re
from typing import TYPE_CHECKING, Any, TextIO

from pipeline.outputs.report_svg import clean, md_esc

if TYPE_CHECKING:
    from pipeline.outputs.diff import DiffResult


def _md(value: object) -> str:
    """A Markdown cell of data: ids, suites and reasons come from transcripts, and a diff is
    read on terminals and CI logs: no control character (ESC sequences retitle or clear a
    terminal), no bidi control, Markdown and HTML punctuation escaped (report_svg.md_esc)."""
    return "" if value is None else md_esc(value)


def summary_lines(result: DiffResult) -> list[str]:
    """The one-paragraph summary of a diff."""
    return [
        f"litmus-gate diff: {result.run_a} -> {result.run_b}",
        f"scored in both: {result.n_both}; verdict flips: {len(result.flips)} "
        f"(rate {result.flip_rate:.2%}); route-only changes: {result.route_only_changes}",
        f"appeared (scored only in B): {len(result.appeared)}; "
        f"disappeared (scored only in A): {len(result.disappeared)}; "
        f"manifest changes: {len(result.manifest_changes)}",
    ]


def write_markdown(result: DiffResult, stream: TextIO) -> None:
    """Summary, manifest changes, flips, appeared and disappeared as Markdown."""
    lines = [f"# {summary_lines(result)[0]}", ""] + [f"- {s}" for s in summary_lines(result)[1:]]
    lines += ["", "## What changed between the runs", ""]
    if result.manifest_changes:
        lines += ["| field | A | B |", "|---|---|---|"]
        lines += [f"| {_md(c.field)} | {_md(c.a)} | {_md(c.b)} |" for c in result.manifest_changes]
    else:
        lines.append("Nothing: same policy, labels, inputs and versions.")
    lines += ["", f"## Verdict flips ({len(result.flips)})", ""]
    if result.flips:
        lines += ["| trajectory_id | suite | A | B | reason A | reason B |", "|---|---|---|---|---|---|"]
        lines += [f"| {_md(f.trajectory_id)} | {_md(f.suite)} | {f.route_a}/{f.verdict_a} | "
                  f"{f.route_b}/{f.verdict_b} | {_md(f.reason_a)} | {_md(f.reason_b)} |" for f in result.flips]
    else:
        lines.append("None.")
    for title, items, other in (("Appeared (scored only in B)", result.appeared, "in A"),
                                ("Disappeared (scored only in A)", result.disappeared, "in B")):
        if items:
            lines += ["", f"## {title} ({len(items)})", "",
                      f"| trajectory_id | suite | verdict | reason | {other} |", "|---|---|---|---|---|"]
            lines += [f"| {_md(p.trajectory_id)} | {_md(p.suite)} | {p.route}/{p.verdict} | {_md(p.reason)} | "
                      f"{_md(p.other)} |" for p in items]
    stream.write("\n".join(lines) + "\n")


CSV_COLUMNS = ("change", "trajectory_id", "suite", "route_a", "verdict_a", "is_unsafe_a", "reason_a",
               "route_b", "verdict_b", "is_unsafe_b", "reason_b")


_LINE_BREAKS = re.compile(r"[\r\n]")


class _CleanWriter:
    """A csv writer whose cells have no control or bidi characters (see :func:`_md`)."""

    def __init__(self, writer: Any) -> None:
        self._writer = writer

    def writerow(self, row: Any) -> None:
        # line breaks too: the writer quotes only its own line terminator, so a bare CR split
        # a row in two for csv readers (and returned a terminal's cursor to the line start)
        self._writer.writerow(["" if v is None else _LINE_BREAKS.sub("\ufffd", clean(v)) for v in row])


def write_csv(result: DiffResult, stream: TextIO) -> None:
    """One CSV row per flip / appeared / disappeared trajectory (``change`` column says which)."""
    writer = _CleanWriter(csv.writer(stream, lineterminator="\n"))
    writer.writerow(CSV_COLUMNS)
    for f in result.flips:
        writer.writerow(["flip", f.trajectory_id, f.suite, f.route_a, f.verdict_a, str(f.is_unsafe_a).lower(),
                         f.reason_a, f.route_b, f.verdict_b, str(f.is_unsafe_b).lower(), f.reason_b])
    for p in result.appeared:
        writer.writerow(["appeared", p.trajectory_id, p.suite, "", "", "", p.other,
                         p.route, p.verdict, str(p.is_unsafe).lower(), p.reason])
    for p in result.disappeared:
        writer.writerow(["disappeared", p.trajectory_id, p.suite, p.route, p.verdict, str(p.is_unsafe).lower(),
                         p.reason, "", "", "", p.other])
