"""``litmus-gate show RUN_DIR TRAJECTORY_ID [--html FILE]``: the terminal view and the CLI.

The terminal view is plain text, one fact per line, every data string passed through
:func:`pipeline.outputs.explain.neutral` (so an ESC sequence or a bidi override in a transcript
cannot drive the terminal) and cut to a line's worth; ``--html`` also writes the page
of :mod:`pipeline.outputs.explain_html`.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from pipeline.errors import UsageError
from pipeline.outputs.explain import Explanation, Text, baselines, label_origin, listed_of, load, neutral
from pipeline.outputs.explain_flow import deciding_flow, flow_subgraph, roles, witness_edges

LINE = 160  # characters of a text shown per line
_SPACE = re.compile(r"\s+")


def one_line(text: object, limit: int = LINE) -> str:
    """``text`` on one line (whitespace runs become one space), neutralised and cut."""
    return neutral(_SPACE.sub(" ", str(text)).strip(), limit)


def shown(text: Text, limit: int = LINE) -> str:
    """A cut text with its full length when it was cut (here or in the query)."""
    if text.value is None:
        return "-"
    body = one_line(text.value, limit)
    return f"{body} [{text.length} chars]" if text.length > limit or text.cut else body


def _verdict_lines(ex: Explanation) -> list[str]:
    v = ex.verdict
    if v is None:
        return ["not scored (rejected: see attrition below)"]
    flow = deciding_flow(ex)
    lines = [f"verdict   {v['verdict']} (is_unsafe {str(v['is_unsafe']).lower()}), route {v['route']}",
             f"reason    {one_line(v['reason'], 600)}",
             "baselines " + ", ".join(f"{name} {value}" for name, value in baselines(v)),
             f"counts    {v['n_steps']} steps, {v['n_actions']} actions, {v['n_retries_collapsed']} retries "
             f"collapsed, longest flow {v['max_flow_length']}",
             f"source    {one_line(v['source_file'], 300)}:{v['source_line']} (suite {one_line(v['suite'], 80)})"]
    if v.get("hallucinated_outcome"):
        lines.append("final text contradicts what executed (execution hallucination)")
    if flow is not None:
        lines.append(f"deciding  {flow['label']} data reaches a {flow['sink_kind']} sink, witness path "
                     + " -> ".join(str(i) for i in flow["path"]))
    return lines


def render_text(ex: Explanation) -> str:
    """The compact terminal view of one trajectory."""
    out = [f"trajectory {one_line(ex.trajectory_id, 300)}", *_verdict_lines(ex)]
    for row in ex.attrition:
        out.append(f"rejected  {row['reason']}: {one_line(row['detail'] or '', 300)} "
                   f"({one_line(row['source_file'], 200)}:{row['source_line']})")
    out += ["", f"steps ({len(ex.steps)} of {ex.n_steps} shown)"]
    for s in ex.steps:
        status = s["exec_status"] or ""
        what = s["tool_name"] or ""
        text = s["arguments"] if s["kind"] == "tool_call" else s["content"]
        label = f"{s['label']} ({label_origin(s['label_source'], s['label_rule'])})"
        out.append(f"  {s['step_idx']:>4} {s['kind']:<14} {one_line(what, 40):<16} {status:<9} {label}")
        if text.value:
            out.append(f"       {shown(text)}")
        if s["error_text"].value:
            out.append(f"       error {s['error_type'] or '-'}: {shown(s['error_text'])}")
    out += ["", f"logical actions ({len(ex.actions)} of {ex.n_actions} shown)"]
    marks = roles(ex)
    for a in ex.actions:
        r = a.row
        role = f", role_source {r['role_source']}" if ex.has_role_source else ""
        tags = "; ".join(marks.get(a.idx, []))
        out.append(f"  #{a.idx} {one_line(a.name, 60)}: {r['exec_status']}, label {r['label']}, {r['attempts']} "
                   f"attempt(s), steps {r['first_step_idx']}-{r['last_step_idx']}{role}"
                   + (f"; {tags}" if tags else ""))
        for t in a.attempts:
            err = f", {t.error_type or 'error'}: {shown(t.error_text, 100)}" if t.error_text.value else ""
            out.append(f"     attempt step {t.step_idx} call {one_line(t.call_id or '-', 40)}: {t.exec_status}{err}, "
                       f"label {t.label} ({label_origin(t.label_source, t.label_rule)})")
    witness = witness_edges(deciding_flow(ex))
    _, hot = flow_subgraph(ex, deciding_flow(ex))
    out += ["", f"edges ({listed_of(len(ex.edges), ex.n_edges)})"]
    for e in ex.edges:
        pair = (int(e["src_action_idx"]), int(e["dst_action_idx"]))
        star = " *" if pair in witness else " +" if pair in hot else ""
        out.append(f"  {e['src_action_idx']} -> {e['dst_action_idx']} {e['kind']}{star}: {shown(e['evidence'], 80)}")
    out += ["", f"flows ({listed_of(len(ex.flows), ex.n_flows)})"]
    for f in ex.flows:
        out.append(f"  {' -> '.join(str(i) for i in f['path'])}: {f['label']} to {f['sink_kind']}"
                   + (" VIOLATION" if f["violation"] else "") + (" (sink blocked)" if f["sink_blocked"] else ""))
    if witness:
        out.append("  (* on the deciding flow's witness path, + on another path from its source to its sink)")
    return "\n".join(out) + "\n"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``litmus-gate show RUN_DIR TRAJECTORY_ID [--html FILE]``."""
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a score run folder")
    parser.add_argument("trajectory_id", metavar="TRAJECTORY_ID")
    parser.add_argument("--html", type=Path, metavar="FILE",
                        help="also write a self-contained page with the dependency graph")


def main_from_args(args: argparse.Namespace) -> int:
    """Print the terminal view (and write --html); an unknown id is an operator error."""
    from pipeline.outputs.explain_html import render_page
    from pipeline.outputs.query import open_runs, table_names

    con = open_runs([args.run_dir])
    try:
        present = set(table_names(con))
        missing = [t for t in ("steps", "actions", "verdicts", "attrition") if t not in present]
        if missing:
            raise UsageError(f"{args.run_dir} has no {missing[0]} table", "show needs a score run")
        found = load(con, [args.trajectory_id]).get(args.trajectory_id)
    finally:
        con.close()
    if found is None:
        raise UsageError(f"no trajectory {one_line(repr(args.trajectory_id), 200)} in {args.run_dir}",
                         "ids are in the verdicts, attrition and steps tables")
    if args.html is not None:
        tmp = args.html.with_name(f".{args.html.name}.tmp-{os.getpid()}")
        tmp.write_text(render_page(found, args.run_dir.resolve().name), encoding="utf-8")
        os.replace(tmp, args.html)
    sys.stdout.write(render_text(found))
    return 0
