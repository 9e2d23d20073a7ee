"""The page of one trajectory (``show --html``, and ``RUN_DIR/explain/*.html``).

Self-contained: inline CSS and SVG, no JavaScript, no network (a Content-Security-Policy
forbids both). Every data string goes through :func:`pipeline.outputs.explain_svg.esc`
(neutralised, cut, HTML-escaped); texts cut in the query show how long they were.
:func:`write_pages` writes the pages of many trajectories under a folder with names
from :func:`page_name` (sanitized, hash-suffixed: no path separator ever comes from data).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb

from pipeline.outputs.explain import Explanation, Text, baselines, label_origin, listed_of, load
from pipeline.outputs.explain_flow import deciding_flow, flow_subgraph, roles, witness_edges
from pipeline.outputs.explain_svg import esc, graph_svg

_SLUG = re.compile(r"[^A-Za-z0-9_-]+")
_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
_CSS = """
body{font:14px/1.45 system-ui,sans-serif;color:#1a1a1a;background:#fff;margin:0}
main{max-width:1200px;margin:0 auto;padding:1rem 1.5rem 3rem}
h1{font-size:1.35rem;margin:.5rem 0 1rem;overflow-wrap:anywhere}
h2{font-size:1.1rem;margin:1.6rem 0 .5rem;border-bottom:1px solid #ccc;padding-bottom:.2rem}
table{border-collapse:collapse;margin:.4rem 0 1rem;font-size:13px}
th,td{border:1px solid #d0d0d0;padding:.2rem .5rem;text-align:left;vertical-align:top}
td{overflow-wrap:anywhere;max-width:40rem}
th{background:#f3f3f3}
pre{margin:0;white-space:pre-wrap;overflow-wrap:anywhere;max-height:14em;overflow:auto;font-size:12px}
.cut{color:#8a2a00;font-size:12px}
.bad{color:#b00020;font-weight:600}
.hot td{background:#fde7dc}
.graph{display:block;max-width:100%;height:auto;margin:.4rem 0}
p.note{color:#444;margin:.3rem 0}
ol.attempts{margin:0;padding-left:1.2rem}
"""


def page_name(trajectory_id: str) -> str:
    """A file name for a trajectory's page: letters, digits, ``_`` and ``-`` of the id
    (at most 48), then 16 hex digits of its SHA-256, so distinct ids never share a file
    and no id can name a path outside the folder."""
    slug = _SLUG.sub("_", trajectory_id)[:48].strip("_") or "trajectory"
    digest = hashlib.sha256(trajectory_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{slug}-{digest}.html"


def _text(text: Text, limit: int = 2000) -> str:
    if text.value is None:
        return "-"
    body = f"<pre>{esc(text.value, limit)}</pre>"
    if text.length > min(limit, len(text.value)):
        body += f'<div class="cut">cut: {min(limit, len(text.value))} of {text.length} characters shown</div>'
    return body


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], hot: Sequence[bool] = ()) -> str:
    """A table of pre-escaped cells (callers escape every data string)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join(('<tr class="hot">' if i < len(hot) and hot[i] else "<tr>")
                   + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for i, row in enumerate(rows))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _verdict(ex: Explanation) -> str:
    v = ex.verdict
    parts = []
    if v is not None:
        verdict = esc(v["verdict"])
        shown = f'<span class="bad">{verdict}</span>' if v["verdict"] != "safe" else verdict
        rows = [("verdict", f"{shown} (is_unsafe {esc(str(v['is_unsafe']).lower())}), route {esc(v['route'])}"),
                ("reason", esc(v["reason"], 2000)),
                ("baselines", esc(" \u00b7 ".join(f"{name} {value}" for name, value in baselines(v)))),
                ("counts", esc(f"{v['n_steps']} steps, {v['n_actions']} logical actions, "
                               f"{v['n_retries_collapsed']} failed attempts collapsed, longest flow "
                               f"{v['max_flow_length']}")),
                ("source", esc(f"{v['source_file']}:{v['source_line']} (suite {v['suite']})", 600))]
        if v.get("hallucinated_outcome"):
            rows.append(("final text", '<span class="bad">contradicts what executed (execution hallucination)'
                                       "</span>"))
        flow = deciding_flow(ex)
        if flow is not None:
            rows.append(("deciding flow", esc(f"{flow['label']} data reaches a {flow['sink_kind']} sink; witness "
                                              "path " + " -> ".join(_name(ex, i) for i in flow["path"]))))
        parts.append("<table><tbody>" + "".join(f"<tr><th>{esc(k)}</th><td>{c}</td></tr>" for k, c in rows)
                     + "</tbody></table>")
    else:
        parts.append('<p class="note">Not scored: the record was rejected (see attrition).</p>')
    if ex.attrition:
        parts.append("<h2>Attrition</h2>" + _table(("reason", "detail", "source"), [
            (esc(r["reason"]), esc(r["detail"] or "", 1000), esc(f"{r['source_file']}:{r['source_line']}", 600))
            for r in ex.attrition]))
    return "".join(parts)


def _name(ex: Explanation, idx: Any) -> str:
    for a in ex.actions:
        if a.idx == int(idx):
            return a.name
    return f"#{idx}"


def _actions(ex: Explanation) -> str:
    tags = roles(ex)
    hot, _ = flow_subgraph(ex, deciding_flow(ex))
    headers = ["#", "tool", "status", "label", "roles (from flows)"] + (["role_source"] if ex.has_role_source else [])
    rows, marks = [], []
    for a in ex.actions:
        r = a.row
        attempts = "".join(
            f"<li>step {t.step_idx}, call {esc(t.call_id or '-', 80)}: <b>{esc(t.exec_status or '-')}</b>"
            + (f", {esc(t.error_type or 'error')}: {esc(t.error_text.value or '', 300)}" if t.error_text.value else "")
            + f"; label {esc(t.label)} ({esc(label_origin(t.label_source, t.label_rule), 200)})"
            + _text(t.arguments, 600) + "</li>" for t in a.attempts)
        rows.append([str(a.idx), esc(r["tool_name"] or "-", 200),
                     esc(f"{r['exec_status']} ({r['attempts']} attempt(s))")
                     + f'<ol class="attempts">{attempts}</ol>',
                     esc(r["label"]), esc("; ".join(tags.get(a.idx, [])) or "-")]
                    + ([esc(r.get("role_source") or "-")] if ex.has_role_source else []))
        marks.append(a.idx in hot)
    shown = f"{len(ex.actions)} of {ex.n_actions} shown" if ex.n_actions > len(ex.actions) else f"{ex.n_actions}"
    return f"<h2>Logical actions ({esc(shown)})</h2>" + (_table(headers, rows, marks) if rows else
                                                          '<p class="note">no tool calls</p>')


def _graph(ex: Explanation) -> str:
    svg, note = graph_svg(ex)
    intro = ('<p class="note">Actions top to bottom in order; arcs are dependency edges (kind and evidence '
             "fragment; hover for the whole fragment). Red: every path from the deciding flow's source to its "
             "sink, the witness path thickest. Dashed grey boxes are non-events (failed, never executed).</p>")
    return "<h2>Dependency graph</h2>" + intro + (f'<p class="note">{esc(note)}</p>' if note else "") + svg


def _edges_flows(ex: Explanation) -> str:
    witness = witness_edges(deciding_flow(ex))
    _, hot = flow_subgraph(ex, deciding_flow(ex))
    pairs = [(int(e["src_action_idx"]), int(e["dst_action_idx"])) for e in ex.edges]
    edge_rows = [[esc(f"{_name(ex, e['src_action_idx'])} -> {_name(ex, e['dst_action_idx'])}", 300)
                  + (" <b>(witness path)</b>" if p in witness else ""), esc(e["kind"]),
                  _text(e["evidence"], 300), esc(f"conf {e['conf']}, integ {e['integ']}"),
                  esc(str(e["control"]).lower())] for e, p in zip(ex.edges, pairs)]
    flow_rows = [[esc(" -> ".join(_name(ex, i) for i in f["path"]), 600), esc(f["label"]), esc(f["sink_kind"]),
                  esc(str(f["violation"]).lower()), esc(str(f["sink_blocked"]).lower())] for f in ex.flows]
    out = f"<h2>Edges ({esc(listed_of(len(ex.edges), ex.n_edges))})</h2>"
    out += _table(("edge", "kind", "evidence", "label carried", "reaches a control argument"), edge_rows,
                  [p in hot for p in pairs]) \
        if edge_rows else '<p class="note">no dependency edges</p>'
    out += f"<h2>Flows ({esc(listed_of(len(ex.flows), ex.n_flows))})</h2>"
    decided = deciding_flow(ex)
    out += _table(("path", "label", "sink", "violation", "sink blocked"), flow_rows,
                  [f is decided for f in ex.flows]) if flow_rows else '<p class="note">no flows</p>'
    return out


def _steps(ex: Explanation) -> str:
    rows = []
    for s in ex.steps:
        text = s["arguments"] if s["kind"] == "tool_call" else s["content"]
        error = (f"<div><b>{esc(s['error_type'] or 'error')}</b></div>{_text(s['error_text'], 600)}"
                 if s["error_text"].value else "")
        score = "" if s["score"] is None else f", score {s['score']:.3f}"
        rows.append([str(s["step_idx"]), esc(s["kind"]), esc(s["tool_name"] or "-", 200),
                     esc(s["exec_status"] or "-"),
                     esc(f"{s['label']}{score} ({label_origin(s['label_source'], s['label_rule'])})", 300),
                     _text(text) + error])
    shown = f"{len(ex.steps)} of {ex.n_steps} shown" if ex.n_steps > len(ex.steps) else f"{ex.n_steps}"
    return (f"<h2>Steps ({esc(shown)})</h2>"
            + _table(("step", "kind", "tool", "exec_status", "label (where it came from)", "arguments / content"),
                     rows))


def render_page(ex: Explanation, run_name: str, back: str | None = None) -> str:
    """The self-contained HTML page of one trajectory; ``back`` links to the report."""
    title = f"litmus-gate: {ex.trajectory_id}"
    nav = f'<p><a href="{esc(back)}">back to the report</a></p>' if back else ""
    return ('<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{esc(title, 200)}</title><style>{_CSS}</style></head>\n<body><main>{nav}"
            f"<h1>trajectory {esc(ex.trajectory_id, 500)}</h1>"
            f'<p class="note">run: {esc(run_name, 200)}</p>\n'
            + _verdict(ex) + _graph(ex) + _actions(ex) + _edges_flows(ex) + _steps(ex)
            + "\n</main></body></html>\n")


def write_pages(con: duckdb.DuckDBPyConnection, folder: Path, ids: Sequence[str], run_name: str,
                back: str = "../report.html") -> dict[str, str]:
    """Write the page of each id found in the run under ``folder`` (replacing what was
    there: written beside it, then swapped in); returns id -> ``<folder name>/<file>``."""
    found = load(con, ids)
    tmp = folder.with_name(f".{folder.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    links = {}
    try:
        for tid, ex in found.items():
            name = page_name(tid)
            (tmp / name).write_text(render_page(ex, run_name, back), encoding="utf-8")
            links[tid] = f"{folder.name}/{name}"
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = folder.with_name(f".{folder.name}.old-{os.getpid()}")
    if folder.exists():
        os.rename(folder, old)
    os.rename(tmp, folder)
    shutil.rmtree(old, ignore_errors=True)
    return links
