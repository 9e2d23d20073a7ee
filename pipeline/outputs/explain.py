"""The facts behind ``litmus-gate show``: one trajectory, read back from a run's tables.

:func:`load` reads the steps, logical actions (with their attempts), edges, flows, the
verdict and any attrition rows of a batch of trajectory ids from the relations of a
DuckDB connection (the views of :func:`pipeline.outputs.query.open_runs`, or the run's own
relations at score time), one parameterized query per table. Long texts are cut in SQL
(``left``) with their length kept, so a 50 MB tool output never reaches Python whole.

:func:`deciding_flow` picks the flow that decided a ``flow`` verdict in the order
``sql/verdicts.sql`` uses for its reason; :func:`flow_subgraph` is every dependency
edge lying on some path from that flow's source to its sink (the witness path is the
shortest of them). :func:`neutral` is the one text cleaner both renderers use.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb

STEP_LIMIT = 1000  # steps (and actions) listed per trajectory; the rest are counted, not shown
TEXT_LIMIT = 2000  # characters kept of an argument, content or error text
ATTRITION_LIMIT = 20
# edges and flows grow with the square of the actions: a page lists this many of each (the
# deciding flow and its witness edges first) and counts the rest
EDGE_LIMIT, FLOW_LIMIT = 1000, 200
_DECIDING_ORDER = "not violation, sink_blocked, length, source_action_idx, sink_action_idx"  # = explain_flow.deciding_flow
YES_NO = {True: "unsafe", False: "safe", None: "n/a"}
LABEL_SOURCES = {"input": "external labels file", "rules": "built-in rule"}
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
_BIDI = re.compile(r"[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def neutral(text: object, limit: int | None = None) -> str:
    """``text`` made inert for display: control characters (NUL, ESC, ...) and lone
    surrogates become U+FFFD, bidi controls become a visible ``<U+202E>`` tag (they could
    reorder what a reader sees), then cut to ``limit`` characters."""
    out = _BIDI.sub(lambda m: f"<U+{ord(m.group()):04X}>", _CONTROL.sub("\ufffd", str(text)))
    if limit is not None and len(out) > limit:
        out = out[: max(limit - 1, 0)] + "\u2026"
    return out


@dataclass(frozen=True)
class Text:
    """A possibly cut text: ``value`` holds at most TEXT_LIMIT characters of ``length``."""

    value: str | None
    length: int

    @property
    def cut(self) -> bool:
        """Whether characters were left out."""
        return self.value is not None and self.length > len(self.value)


@dataclass
class Attempt:
    """One tool call of a logical action with the status its result gave it."""

    step_idx: int
    call_id: str | None
    exec_status: str | None
    error_type: str | None
    error_text: Text
    arguments: Text
    result_step_idx: int | None
    label: str
    label_source: str
    label_rule: str | None


@dataclass
class Action:
    """A logical action (retries collapsed) with its attempts in order."""

    row: dict[str, Any]
    attempts: list[Attempt] = field(default_factory=list)

    @property
    def idx(self) -> int:
        """``action_idx``."""
        return int(self.row["action_idx"])

    @property
    def name(self) -> str:
        """``tool#action_idx``, as verdict reasons spell actions."""
        return f"{self.row['tool_name']}#{self.idx}"


@dataclass
class Explanation:
    """Everything ``show`` says about one trajectory (rows as dicts, columns as in schemas/)."""

    trajectory_id: str
    verdict: dict[str, Any] | None = None
    attrition: list[dict[str, Any]] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)
    n_steps: int = 0
    actions: list[Action] = field(default_factory=list)
    n_actions: int = 0
    edges: list[dict[str, Any]] = field(default_factory=list)
    flows: list[dict[str, Any]] = field(default_factory=list)
    has_role_source: bool = False
    n_edges: int = 0
    n_flows: int = 0


def _columns(con: duckdb.DuckDBPyConnection, relation: str) -> list[str]:
    try:
        return list(con.table(relation).columns)
    except duckdb.Error:
        return []


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def _text(row: dict[str, Any], name: str) -> Text:
    return Text(row.pop(name), int(row.pop(f"{name}_len") or 0))


_IDS = "trajectory_id in (select unnest($ids::varchar[]))"
_STEPS = f"""
    select trajectory_id, step_idx, kind, tool_name, call_id, args_ok, error_type, exec_status, result_step_idx,
        call_step_idx, label, score, label_source, label_rule,
        left(arguments, $cut) as arguments, length(arguments) as arguments_len,
        left(content, $cut) as content, length(content) as content_len,
        left(error_text, $cut) as error_text, length(error_text) as error_text_len,
        count(*) over (partition by trajectory_id) as n_total
    from steps where {_IDS}
    qualify row_number() over (partition by trajectory_id order by step_idx) <= $limit
    order by trajectory_id, step_idx
"""
_ATTEMPTS = f"""
    select a.trajectory_id, a.action_idx, s.step_idx, s.call_id, s.exec_status, s.error_type, s.result_step_idx,
        s.label, s.label_source, s.label_rule,
        left(s.arguments, $cut) as arguments, length(s.arguments) as arguments_len,
        left(s.error_text, $cut) as error_text, length(s.error_text) as error_text_len
    from (select * from actions where {_IDS}
          qualify row_number() over (partition by trajectory_id order by action_idx) <= $limit) a
    join (select * from steps where {_IDS} and kind = 'tool_call') s
        on s.trajectory_id = a.trajectory_id and s.step_idx between a.first_step_idx and a.call_step_idx
    order by a.trajectory_id, s.step_idx
"""


def load(con: duckdb.DuckDBPyConnection, ids: Sequence[str]) -> dict[str, Explanation]:
    """The explanation of each id found in the run (ids found nowhere are left out).

    ``con`` must expose ``steps``, ``actions``, ``verdicts`` and ``attrition``;
    ``edges`` and ``flows`` are read when present. ``actions.role_source`` is read only
    when the run's actions table has it.
    """
    wanted = list(dict.fromkeys(str(i) for i in ids))
    if not wanted:
        return {}
    params: dict[str, Any] = {"ids": wanted}
    cut = {"ids": wanted, "cut": TEXT_LIMIT, "limit": STEP_LIMIT}
    out = {tid: Explanation(tid) for tid in wanted}
    for row in _rows(con, f"select * exclude (run_id) from verdicts where {_IDS}"
                     if "run_id" in _columns(con, "verdicts") else f"select * from verdicts where {_IDS}", params):
        out[row["trajectory_id"]].verdict = row
    for row in _rows(con, f"""select * from (select trajectory_id, reason, detail, source_file, source_line,
                                  row_number() over (partition by trajectory_id order by source_file, source_line) as k
                              from attrition where {_IDS}) where k <= {ATTRITION_LIMIT}
                              order by trajectory_id, k""", params):
        out[row.pop("trajectory_id")].attrition.append(row)
    for row in _rows(con, _STEPS, cut):
        ex = out[row.pop("trajectory_id")]
        ex.n_steps = int(row.pop("n_total"))
        for name in ("arguments", "content", "error_text"):
            row[name] = _text(row, name)
        ex.steps.append(row)
    action_cols = _columns(con, "actions")
    role = ", role_source" if "role_source" in action_cols else ""
    actions: dict[tuple[str, int], Action] = {}
    for row in _rows(con, f"""
            select trajectory_id, action_idx, tool_name, first_step_idx, last_step_idx, attempts, exec_status,
                executed, blocked, collapsed_call_ids, attempt_statuses, call_step_idx, result_step_idx,
                error_type, label, score{role}, count(*) over (partition by trajectory_id) as n_total
            from actions where {_IDS}
            qualify row_number() over (partition by trajectory_id order by action_idx) <= $limit
            order by trajectory_id, action_idx""", {"ids": wanted, "limit": STEP_LIMIT}):
        ex = out[row.pop("trajectory_id")]
        ex.n_actions, ex.has_role_source = int(row.pop("n_total")), bool(role)
        action = Action(row)
        ex.actions.append(action)
        actions[(ex.trajectory_id, action.idx)] = action
    for row in _rows(con, _ATTEMPTS, cut):
        action = actions[(row.pop("trajectory_id"), int(row.pop("action_idx")))]
        action.attempts.append(Attempt(
            row["step_idx"], row["call_id"], row["exec_status"], row["error_type"], _text(row, "error_text"),
            _text(row, "arguments"), row["result_step_idx"], row["label"], row["label_source"], row["label_rule"]))
    has_flows = bool(_columns(con, "flows"))
    if has_flows:
        for row in _rows(con, f"""select trajectory_id, source_action_idx, sink_action_idx, length, label, sink_kind,
                                      violation, sink_blocked, via_control, path,
                                      count(*) over (partition by trajectory_id) as n_total
                                  from flows where {_IDS}
                                  qualify row_number() over (partition by trajectory_id
                                                             order by {_DECIDING_ORDER}) <= $limit
                                  order by trajectory_id, source_action_idx, sink_action_idx""",
                              {"ids": wanted, "limit": FLOW_LIMIT}):
            ex = out[row.pop("trajectory_id")]
            ex.n_flows = int(row.pop("n_total"))
            ex.flows.append(row)
    if _columns(con, "edges"):
        # the witness edges (consecutive pairs of the path of each trajectory's first flow in
        # the deciding order) are listed before the others, so a cut never hides them
        witness = f"""
            first_flow as (select trajectory_id, path from flows where {_IDS}
                           qualify row_number() over (partition by trajectory_id order by {_DECIDING_ORDER}) = 1),
            positions as (select trajectory_id, path, unnest(range(1, len(path))) as i from first_flow),
            witness as (select distinct trajectory_id, path[i] as src, path[i + 1] as dst from positions)""" \
            if has_flows else """
            witness as (select null::varchar as trajectory_id, null::bigint as src, null::bigint as dst)"""
        for row in _rows(con, f"""with {witness},
                                  listed as (
                                      select e.trajectory_id, e.src_action_idx, e.dst_action_idx, e.kind,
                                          left(e.evidence, $cut) as evidence, length(e.evidence) as evidence_len,
                                          e.conf, e.integ, e.control,
                                          count(*) over (partition by e.trajectory_id) as n_total
                                      from (select * from edges where {_IDS}) e
                                      left join witness w on w.trajectory_id = e.trajectory_id
                                          and w.src = e.src_action_idx and w.dst = e.dst_action_idx
                                      qualify row_number() over (partition by e.trajectory_id order by w.src is null,
                                          e.src_action_idx, e.dst_action_idx, e.kind) <= $limit)
                                  select * from listed
                                  order by trajectory_id, src_action_idx, dst_action_idx, kind""",
                              {"ids": wanted, "cut": TEXT_LIMIT, "limit": EDGE_LIMIT}):
            row["evidence"] = _text(row, "evidence")
            ex = out[row.pop("trajectory_id")]
            ex.n_edges = int(row.pop("n_total"))
            ex.edges.append(row)
    return {tid: ex for tid, ex in out.items() if ex.verdict or ex.attrition or ex.steps}


def listed_of(listed: int, total: int) -> str:
    """``"N of M shown"`` when rows were left out, else ``"N"``."""
    return f"{listed} of {total} shown" if total > listed else f"{listed}"


def label_origin(label_source: str | None, label_rule: str | None) -> str:
    """Where a step label came from, in words."""
    origin = LABEL_SOURCES.get(label_source or "", label_source or "unknown")
    return f"{origin} {label_rule}" if label_rule else origin


def baselines(verdict: dict[str, Any]) -> list[tuple[str, str]]:
    """(scorer, unsafe/safe) of the three baselines beside the product's is_unsafe."""
    return [("execution_gated", YES_NO[verdict.get("execution_gated_unsafe")]),
            ("stepwise_min", YES_NO[verdict.get("stepwise_min_unsafe")]),
            ("all_safe", YES_NO[verdict.get("all_safe_unsafe")])]
