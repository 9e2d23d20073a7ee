"""The dependency graph of one trajectory as inline SVG (no JavaScript, no library).

Layout: actions are already ordered, so each is one row, top to bottom in action order;
every edge goes forward (``a -> b`` with ``a`` before ``b``) and is drawn as an arc on
the right of the boxes. Arcs get lanes by interval colouring (an arc takes the nearest
lane no arc overlapping its span holds), so nested arcs never share a lane. That is the
whole layout: graphviz would need a system binary and a layered layout of a total order
has nothing left to optimise. Every data string is neutralised and escaped here.
"""

from __future__ import annotations

import html
import re

from pipeline.outputs.explain import Action, Explanation, neutral
from pipeline.outputs.explain_flow import deciding_flow, flow_subgraph, roles, witness_edges

MAX_NODES, MAX_EDGES = 150, 400
ROW, BOX_H, BOX_X, BOX_W = 58, 42, 150, 300
LANE_W, LABEL_ROOM = 30, 300
EDGE_STYLE = {"data": ("#0072B2", ""), "resource": ("#8a5a00", ' stroke-dasharray="7 4"'),
              "explicit": ("#555555", ' stroke-dasharray="2 3"')}
HOT = "#D55E00"
_FONT = 'font-family="system-ui, sans-serif" font-size="12"'


# characters neither neutral() nor html.escape() changes: a text of only these (most of
# a page's cells: names, statuses, numbers) is its own escape, without the five passes
_PLAIN = re.compile(r"[A-Za-z0-9 _.,:;#/()=+*@!?%\[\]{}|~^$-]*")


def esc(text: object, limit: int | None = None) -> str:
    """Neutralised, cut and HTML-escaped ``text`` (quotes too: safe in attributes)."""
    if type(text) is str and (limit is None or len(text) <= limit) and _PLAIN.fullmatch(text):
        return text
    return html.escape(neutral(text, limit), quote=True)


def _pick(ex: Explanation, hot: set[int]) -> tuple[list[Action], str]:
    """The actions drawn: all of them, or when there are too many, those on the deciding
    paths, edges and flows first (in order), then the rest up to MAX_NODES."""
    if len(ex.actions) <= MAX_NODES and ex.n_actions <= len(ex.actions):
        return ex.actions, ""
    linked = hot | {int(e[k]) for e in ex.edges for k in ("src_action_idx", "dst_action_idx")} \
        | {int(i) for f in ex.flows for i in f["path"]}
    first = [a for a in ex.actions if a.idx in linked][:MAX_NODES]
    rest = [a for a in ex.actions if a.idx not in linked][: MAX_NODES - len(first)]
    chosen = sorted(first + rest, key=lambda a: a.idx)
    return chosen, f"showing {len(chosen)} of {ex.n_actions} actions (those on edges and flows first)"


def _lanes(spans: list[tuple[int, int]]) -> list[int]:
    """A lane per (top_row, bottom_row) span; spans sharing a lane never overlap."""
    order = sorted(range(len(spans)), key=lambda i: (spans[i][1] - spans[i][0], spans[i]))
    taken: list[list[tuple[int, int]]] = []
    lane = [0] * len(spans)
    for i in order:
        top, bottom = spans[i]
        for k, used in enumerate(taken):
            if all(bottom <= t or top >= b for t, b in used):
                used.append((top, bottom))
                lane[i] = k
                break
        else:
            taken.append([(top, bottom)])
            lane[i] = len(taken) - 1
    return lane


def _node(a: Action, y: float, hot: bool, tags: list[str]) -> str:
    r = a.row
    status = r["exec_status"]
    stroke, dash, fill = "#333", "", "#ffffff"
    if not r["executed"] and not r["blocked"]:
        stroke, dash, fill = "#999", ' stroke-dasharray="4 3"', "#f4f4f4"  # a non-event
    elif r["blocked"]:
        stroke, fill = "#b07800", "#fff6e0"
    if hot:
        stroke, fill = HOT, "#fde7dc"
    width = 3 if hot else 1.5
    sub_color = "#b00020" if r["label"] == "unsafe" else "#444"  # a label that says unsafe stands out
    sub = f"{status} \u00b7 label {r['label']} \u00b7 {r['attempts']} attempt(s)"
    tip = f"{a.name}: {sub}" + (f"; {'; '.join(tags)}" if tags else "")
    cls = "node hot" if hot else "node"
    parts = [f'<g class="{cls}"><title>{esc(tip, 600)}</title>'
             f'<rect x="{BOX_X}" y="{y:.0f}" width="{BOX_W}" height="{BOX_H}" rx="6" fill="{fill}" '
             f'stroke="{stroke}" stroke-width="{width}"{dash}/>'
             f'<text x="{BOX_X + 10}" y="{y + 17:.0f}" font-weight="600">{esc(a.name, 40)}</text>'
             f'<text x="{BOX_X + 10}" y="{y + 33:.0f}" fill="{sub_color}" font-size="11">{esc(sub, 52)}</text>']
    for k, tag in enumerate(tags[:2]):
        color = "#0072B2" if tag.startswith("source") else "#CC0000"
        ty = y + 4 + k * 18
        parts.append(f'<rect x="4" y="{ty:.0f}" width="{BOX_X - 10}" height="15" rx="7" fill="{color}"/>'
                     f'<text x="{(BOX_X - 6) / 2 + 2:.0f}" y="{ty + 11:.0f}" fill="#fff" font-size="9.5" '
                     f'text-anchor="middle">{esc(tag, 26)}</text>')
    parts.append("</g>")
    return "".join(parts)


def graph_svg(ex: Explanation) -> tuple[str, str]:
    """(SVG markup, a note: empty unless actions or edges were left out of the drawing)."""
    flow = deciding_flow(ex)
    hot_nodes, hot_edges = flow_subgraph(ex, flow)
    witness = witness_edges(flow)
    actions, note = _pick(ex, hot_nodes)
    if not actions:
        return "", "no logical actions: nothing to draw"
    row_of = {a.idx: i for i, a in enumerate(actions)}
    edges = [e for e in ex.edges if int(e["src_action_idx"]) in row_of and int(e["dst_action_idx"]) in row_of]
    edges.sort(key=lambda e: ((int(e["src_action_idx"]), int(e["dst_action_idx"])) not in hot_edges,
                              e["src_action_idx"], e["dst_action_idx"], e["kind"]))
    if len(edges) > MAX_EDGES:
        note = (note + "; " if note else "") + f"showing {MAX_EDGES} of {len(edges)} edges"
        edges = edges[:MAX_EDGES]
    spans = [(row_of[int(e["src_action_idx"])], row_of[int(e["dst_action_idx"])]) for e in edges]
    lanes = _lanes(spans)
    n_lanes = max(lanes, default=-1) + 1
    top = 34
    x0 = BOX_X + BOX_W
    x_label = x0 + 48 + n_lanes * LANE_W + 14
    width = x_label + LABEL_ROOM
    tags = roles(ex)
    mid = lambda row: top + row * ROW + BOX_H / 2  # noqa: E731
    arrow = ('<marker id="{id}" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" '
             'markerWidth="{size}" markerHeight="{size}" orient="auto-start-reverse">'
             '<path d="M0,0 L10,5 L0,10 z" fill="{color}"/></marker>')
    parts = ["<defs>" + arrow.format(id="arrow", size=9, color="#555")
             + arrow.format(id="arrow-hot", size=12, color=HOT) + "</defs>", _legend()]
    labels, last_y = [], 0.0
    # edges in the order of their midpoints, so the label column reads top to bottom
    for e, (r0, r1), lane in sorted(zip(edges, spans, lanes), key=lambda t: (t[1][0] + t[1][1], t[1], t[0]["kind"])):
        pair = (int(e["src_action_idx"]), int(e["dst_action_idx"]))
        color, dash = EDGE_STYLE.get(e["kind"], ("#555555", ""))
        hot, strong = pair in hot_edges, pair in witness
        if hot:
            color = HOT
        marker = "arrow-hot" if hot else "arrow"
        stroke = 4.5 if strong else 2.5 if hot else 1.6
        d = 48 + lane * LANE_W
        y0, y1 = mid(r0) - 6, mid(r1) + 6
        evidence = e["evidence"]
        full = f"{e['kind']} edge {pair[0]} -> {pair[1]}: {evidence.value or ''}"
        if evidence.cut:
            full += f"\u2026 [{evidence.length} chars]"
        cls = "edge" + (" hot" if hot else "") + (" witness" if strong else "")
        parts.append(f'<path class="{cls}" '
                     f'd="M{x0},{y0:.0f} C{x0 + d},{y0:.0f} {x0 + d},{y1:.0f} {x0 + 5},{y1:.0f}" fill="none" '
                     f'stroke="{color}" stroke-width="{stroke}"{dash} '
                     f'marker-end="url(#{marker})"><title>{esc(full, 2100)}</title></path>')
        apex_x, apex_y = x0 + 0.75 * d, (y0 + y1) / 2
        ly = max(apex_y + 4, last_y + 15)
        last_y = ly
        text = f"{pair[0]}\u2192{pair[1]} {e['kind']}: {neutral(evidence.value or '', 26)}"
        weight = ' font-weight="600"' if hot else ""
        labels.append(f'<line x1="{apex_x:.0f}" y1="{apex_y:.0f}" x2="{x_label - 4}" y2="{ly - 4:.0f}" '
                      f'stroke="{color}" stroke-width="0.8" stroke-dasharray="1 2"/>'
                      f'<text x="{x_label}" y="{ly:.0f}" font-size="11" fill="{color}"{weight}>'
                      f'{esc(text)}<title>{esc(full, 2100)}</title></text>')
    height = int(max(top + len(actions) * ROW + 10, last_y + 10))
    for a in actions:
        parts.append(_node(a, top + row_of[a.idx] * ROW, a.idx in hot_nodes, tags.get(a.idx, [])))
    parts.extend(labels)  # labels last, so no box or arc covers them
    label = f"dependency graph of {neutral(ex.trajectory_id, 200)}"
    svg = (f'<svg class="graph" role="img" aria-label="{esc(label)}" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" {_FONT}><title>{esc(label)}</title>' + "".join(parts) + "</svg>")
    return svg, note


def _legend() -> str:
    items = [("data", *EDGE_STYLE["data"]), ("resource", *EDGE_STYLE["resource"]),
             ("explicit", *EDGE_STYLE["explicit"]), ("witness path", HOT, ""), ("other source-to-sink path", HOT, "")]
    out, x = [], BOX_X
    for name, color, dash in items:
        width = 4.5 if name == "witness path" else 2.5 if name.startswith("other") else 2
        out.append(f'<line x1="{x}" y1="14" x2="{x + 26}" y2="14" stroke="{color}" stroke-width="{width}"{dash}/>'
                   f'<text x="{x + 31}" y="18">{name}</text>')
        x += 40 + 7 * len(name)
    return "".join(out)
