"""Markup primitives for the run report: escaping, tables and small inline SVG charts.

:class:`Section` / :class:`Block` hold a report's content; :func:`to_html` and
:func:`to_markdown` render it. Everything here takes raw (possibly hostile) strings and escapes them itself: callers
never pass pre-escaped text. The charts are plain inline ``<svg>`` elements (no
``xmlns`` needed inside HTML5), with a ``<title>`` on every mark so that hovering shows
the exact value without any JavaScript, and a colour-blind-safe palette (Okabe-Ito).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7",
           "#56B4E9", "#F0E442", "#7F7F7F", "#000000", "#A6761D")
# control characters, lone surrogates and bidi controls (which could reorder what a reader sees)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_MD_SPECIAL = re.compile(r"([\\`|<>\[\]&])")
_FONT = 'font-family="system-ui, sans-serif" font-size="12"'
LABEL_W = 190  # width of the label column of the horizontal charts
PLOT_W = 380
ROW_H = 20


def clean(text: object, limit: int | None = None) -> str:
    """``text`` as a string without control characters or lone surrogates, optionally cut."""
    out = _CONTROL.sub("\ufffd", str(text))
    if limit is not None and len(out) > limit:
        out = out[: limit - 1] + "\u2026"
    return out


def esc(text: object, limit: int | None = None) -> str:
    """HTML-escaped ``text`` (quotes included), safe in element content and attributes."""
    return html.escape(clean(text, limit), quote=True)


def md_esc(text: object) -> str:
    """``text`` for a Markdown table cell: one line, with Markdown/HTML punctuation escaped."""
    one_line = re.sub(r"[\r\n\t]+", " ", clean(text))
    return _MD_SPECIAL.sub(r"\\\1", one_line)


def html_table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool],
               link_col: int | None = None, links: Mapping[str, str] | None = None) -> str:
    """An HTML table; ``numeric`` columns are right-aligned; a cell of ``link_col`` found
    in ``links`` becomes a link to its (relative, sanitized) target."""
    def cls(i: int) -> str:
        return ' class="num"' if i < len(numeric) and numeric[i] else ""

    def cell(i: int, c: str) -> str:
        if i == link_col and links and c in links:
            return f'<a href="{esc(links[c])}">{esc(c)}</a>'
        return esc(c)

    head = "".join(f"<th{cls(i)}>{esc(h)}</th>" for i, h in enumerate(headers))
    body = "".join(
        "<tr>" + "".join(f"<td{cls(i)}>{cell(i, c)}</td>" for i, c in enumerate(row)) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def md_table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool]) -> str:
    """A GitHub-flavoured Markdown table."""
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(md_esc(c) for c in cells) + " |"

    rule = "|" + "|".join("---:" if i < len(numeric) and numeric[i] else "---" for i in range(len(headers))) + "|"
    return "\n".join([line(headers), rule, *(line(r) for r in rows)])


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.3f}"


def _svg(width: int, height: int, label: str, body: str) -> str:
    return (f'<svg class="chart" role="img" aria-label="{esc(label)}" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" {_FONT}><title>{esc(label)}</title>{body}</svg>')


def _legend(series: Sequence[str], colors: Sequence[str]) -> tuple[str, int]:
    """Legend entries wrapped to the plot width; returns the markup and its height."""
    parts, x, y = [], LABEL_W, 4
    for name, color in zip(series, colors):
        width = 24 + 7 * min(len(name), 28)
        if x > LABEL_W and x + width > LABEL_W + PLOT_W + 60:
            x, y = LABEL_W, y + 16
        parts.append(f'<rect x="{x}" y="{y}" width="10" height="10" fill="{color}"/>'
                     f'<text x="{x + 14}" y="{y + 9}">{esc(name, 28)}<title>{esc(name)}</title></text>')
        x += width
    return "".join(parts), y + 16


def _row_label(label: str, y: float) -> str:
    return (f'<text x="{LABEL_W - 6}" y="{y}" text-anchor="end">{esc(label, 28)}'
            f'<title>{esc(label)}</title></text>')


def stacked_bars(title: str, rows: Sequence[tuple[str, Sequence[float]]], series: Sequence[str],
                 colors: Sequence[str] = PALETTE) -> str:
    """Horizontal stacked bars, one per row, scaled to the largest row total."""
    if not rows:
        return ""
    cols = [colors[i % len(colors)] for i in range(len(series))]
    top = max((sum(v) for _, v in rows), default=0) or 1
    legend, top_y = _legend(series, cols)
    parts = [legend]
    for r, (label, values) in enumerate(rows):
        y, x = top_y + 4 + r * ROW_H, float(LABEL_W)
        parts.append(_row_label(label, y + 13))
        for name, value, color in zip(series, values, cols):
            w = PLOT_W * value / top
            if w > 0:
                parts.append(f'<rect x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="{ROW_H - 6}" fill="{color}">'
                             f'<title>{esc(label)}: {esc(name)} {_num(value)}</title></rect>')
            x += w
        parts.append(f'<text x="{x + 4:.1f}" y="{y + 13}">{_num(sum(values))}</text>')
    return _svg(LABEL_W + PLOT_W + 60, top_y + 10 + len(rows) * ROW_H, title, "".join(parts))


def bars(title: str, rows: Sequence[tuple[str, float]], color: str = PALETTE[0]) -> str:
    """Horizontal bars with their values, scaled to the largest value."""
    return stacked_bars(title, [(label, [value]) for label, value in rows], [title], [color])


def columns(title: str, rows: Sequence[tuple[str, float]], axis: str, color: str = PALETTE[0]) -> str:
    """A vertical column chart (a histogram over ordered buckets), ``axis`` naming the x axis."""
    if not rows:
        return ""
    top = max(v for _, v in rows) or 1
    col_w, plot_h, base = 36, 120, 140
    parts = [f'<line x1="30" y1="{base}" x2="{30 + col_w * len(rows)}" y2="{base}" stroke="#444"/>']
    for i, (label, value) in enumerate(rows):
        x, h = 30 + i * col_w, plot_h * value / top
        parts.append(f'<rect x="{x + 4}" y="{base - h:.1f}" width="{col_w - 8}" height="{h:.1f}" fill="{color}">'
                     f'<title>{esc(label)}: {_num(value)}</title></rect>'
                     f'<text x="{x + col_w / 2}" y="{base - h - 3:.1f}" text-anchor="middle">{_num(value)}</text>'
                     f'<text x="{x + col_w / 2}" y="{base + 14}" text-anchor="middle">{esc(label, 6)}</text>')
    parts.append(f'<text x="30" y="{base + 32}" fill="#555">{esc(axis)}</text>')
    return _svg(max(40 + col_w * len(rows), 30 + 7 * len(axis)), base + 38, title, "".join(parts))


Interval = tuple[str, float | None, float | None, float | None]  # (metric, value, low, high)


def interval_chart(title: str, groups: Sequence[tuple[str, Sequence[Interval]]]) -> str:
    """Dots with 95% whiskers on a 0..1 axis: one row per (group, metric)."""
    rows = [(group, i == 0, item) for group, items in groups for i, item in enumerate(items)]
    if not rows:
        return ""
    metrics = list(dict.fromkeys(item[0] for _, _, item in rows))
    color = {m: PALETTE[i % len(PALETTE)] for i, m in enumerate(metrics)}
    height = 30 + len(rows) * ROW_H + 20
    x_of = lambda v: LABEL_W + 60 + PLOT_W * v  # noqa: E731 - tiny local scale
    parts = [_legend(metrics, [color[m] for m in metrics])[0]]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        x = x_of(tick)
        parts.append(f'<line x1="{x:.1f}" y1="22" x2="{x:.1f}" y2="{height - 18}" stroke="#ddd"/>'
                     f'<text x="{x:.1f}" y="{height - 5}" text-anchor="middle">{tick:.2f}</text>')
    for r, (group, first, (metric, value, low, high)) in enumerate(rows):
        y = 24 + r * ROW_H + ROW_H / 2
        if first:
            parts.append(_row_label(group, y + 4))
        parts.append(f'<text x="{LABEL_W + 4}" y="{y + 4}" fill="#555">{esc(metric, 10)}</text>')
        tip = f"{esc(group)} {esc(metric)}: {_fmt(value)} [{_fmt(low)}, {_fmt(high)}]"
        if value is None:
            parts.append(f'<text x="{x_of(0) + 4:.1f}" y="{y + 4}" fill="#555">n/a<title>{tip}</title></text>')
            continue
        c = color[metric]
        if low is not None and high is not None:
            x1, x2 = x_of(low), x_of(high)
            parts.append(f'<line x1="{x1:.1f}" y1="{y}" x2="{x2:.1f}" y2="{y}" stroke="{c}" stroke-width="2"/>'
                         f'<line x1="{x1:.1f}" y1="{y - 5}" x2="{x1:.1f}" y2="{y + 5}" stroke="{c}" stroke-width="2"/>'
                         f'<line x1="{x2:.1f}" y1="{y - 5}" x2="{x2:.1f}" y2="{y + 5}" stroke="{c}" stroke-width="2"/>')
        parts.append(f'<circle cx="{x_of(value):.1f}" cy="{y}" r="4.5" fill="{c}"><title>{tip}</title></circle>')
    return _svg(LABEL_W + PLOT_W + 90, height, title, "".join(parts))


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


_NUMERIC = re.compile(r"^(n/a|-?\d+(\.\d+)?%?|\[.*\])$")


@dataclass
class Block:
    """One table of a section: a header row and rows of already formatted cells."""

    headers: tuple[str, ...]
    rows: list[tuple[str, ...]]
    caption: str = ""
    id_col: int | None = None  # the column of trajectory ids, linked to their explain pages

    def numeric(self) -> list[bool]:
        """Per column: every cell is a number, a percentage, an interval or n/a."""
        return [bool(self.rows) and all(_NUMERIC.match(r[i]) for r in self.rows) for i in range(len(self.headers))]


@dataclass
class Section:
    """A report section: notes (plain text), SVG charts (HTML only) and tables."""

    title: str
    notes: list[str] = field(default_factory=list)
    charts: list[str] = field(default_factory=list)
    tables: list[Block] = field(default_factory=list)


_CSS = """
body{font:14px/1.45 system-ui,sans-serif;color:#1a1a1a;background:#fff;margin:0}
main{max-width:1100px;margin:0 auto;padding:1rem 1.5rem 3rem}
h1{font-size:1.5rem;margin:.5rem 0 1rem;overflow-wrap:anywhere}
h2{font-size:1.15rem;margin:2rem 0 .5rem;border-bottom:1px solid #ccc;padding-bottom:.2rem}
nav ol{columns:2;margin:0 0 1rem;padding-left:1.2rem}
table{border-collapse:collapse;margin:.4rem 0 1rem;font-size:13px}
th,td{border:1px solid #d0d0d0;padding:.2rem .5rem;text-align:left;vertical-align:top}
td{overflow-wrap:anywhere;max-width:38rem}
th{background:#f3f3f3}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
caption{text-align:left;font-weight:600;padding:.2rem 0}
.chart{display:block;max-width:100%;height:auto;margin:.4rem 0}
p.note{color:#444;margin:.3rem 0}
@media print{nav{display:none}}
"""
# No scripts, no network: a CSP that forbids both, even if something slipped through.
_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def _anchor(i: int) -> str:
    return f"s{i + 1}"


def to_html(run_name: str, sections: list[Section], links: Mapping[str, str] | None = None) -> str:
    """The self-contained HTML report; ``links``: trajectory id -> its explain page."""
    title = f"litmus-gate report: {run_name}"
    toc = "".join(f'<li><a href="#{_anchor(i)}">{esc(s.title)}</a></li>' for i, s in enumerate(sections))
    body = []
    for i, s in enumerate(sections):
        body.append(f'<section id="{_anchor(i)}"><h2>{esc(s.title)}</h2>')
        body.extend(f'<p class="note">{esc(n)}</p>' for n in s.notes)
        body.extend(s.charts)
        for t in s.tables:
            table = html_table(t.headers, t.rows, t.numeric(), t.id_col, links)
            if t.caption:
                table = table.replace("<table>", f"<table><caption>{esc(t.caption)}</caption>", 1)
            body.append(table)
        body.append("</section>")
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{_CSS}</style></head>\n<body><main>"
        f"<h1>{esc(title)}</h1><nav><ol>{toc}</ol></nav>\n" + "\n".join(body) + "\n</main></body></html>\n"
    )


def to_markdown(run_name: str, sections: list[Section]) -> str:
    """The Markdown report (same facts, no charts)."""
    out = [f"# litmus-gate report: {md_esc(run_name)}", ""]
    for s in sections:
        out += [f"## {md_esc(s.title)}", ""]
        for n in s.notes:
            out += [md_esc(n), ""]
        for t in s.tables:
            if t.caption:
                out += [f"**{md_esc(t.caption)}**", ""]
            out += [md_table(t.headers, t.rows, t.numeric()), ""]
    return "\n".join(out).rstrip() + "\n"
