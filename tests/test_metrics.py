"""The ``metrics`` table against a plain-Python oracle (SPEC section 6, README "metrics").

The oracle below shares no code with ``sql/metrics.sql``: confusion counts per
(scorer, suite, slice) with each gold trajectory counted once per cell, Wilson score
intervals in their textbook form (p-hat +- ...), and F1's interval as the Wilson interval of
J = tp / (tp + fp + fn) mapped through F1 = 2J / (1 + J).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.ingest.tables_in import GOLD_SCHEMA
from pipeline.outputs.writer import conform
from pipeline.stages.tables import metrics

Z = 1.96
SCORER_COLUMNS = {"flow_aware": "is_unsafe", "execution_gated": "execution_gated_unsafe",
                  "stepwise_min": "stepwise_min_unsafe", "all_safe": "all_safe_unsafe"}
VERDICTS = pa.schema([("trajectory_id", pa.string()), ("suite", pa.string()), ("route", pa.string()),
                      *((c, pa.bool_()) for c in SCORER_COLUMNS.values())])
ATTRITION = pa.schema([("trajectory_id", pa.string()), ("suite", pa.string()), ("source_file", pa.string()),
                       ("source_line", pa.int64())])
Row = dict[str, Any]


def wilson(k: int, n: int) -> tuple[float | None, float | None]:
    """Textbook Wilson score interval of k successes in n trials (None when n = 0)."""
    if n == 0:
        return None, None
    p = k / n
    centre = p + Z * Z / (2 * n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return max(0.0, (centre - half) / (1 + Z * Z / n)), min(1.0, (centre + half) / (1 + Z * Z / n))


def oracle(verdicts: Sequence[Row], attrition: Sequence[Row], gold: Sequence[Row]) -> dict[tuple[str, str, str], Row]:
    """Metrics rows keyed by (scorer, suite, slice), computed the plain way."""
    by_id = {v["trajectory_id"]: v for v in verdicts}
    rejected: dict[str, str] = {}
    for a in sorted(attrition, key=lambda a: (a["source_file"], a["source_line"])):
        if a["trajectory_id"] is not None:
            rejected.setdefault(a["trajectory_id"], a["suite"])
    counts = ("tp", "fp", "fn", "tn", "n_unscored")
    cells: dict[tuple[str, str, str], Row] = defaultdict(lambda: dict.fromkeys(counts, 0))
    for g in gold:
        v = by_id.get(g["trajectory_id"])
        suites = {"*", v["suite"] if v else rejected.get(g["trajectory_id"], "(unknown)")}
        slices = {"*", *g["slice"], *([f"route:{v['route']}"] if v else [])}
        for scorer, column in SCORER_COLUMNS.items():
            if v is None:
                key = "n_unscored"
            else:
                key = {(True, True): "tp", (True, False): "fp", (False, True): "fn",
                       (False, False): "tn"}[(v[column], g["gold"] == "unsafe")]
            for suite in suites:
                for slice_ in slices:
                    cells[(scorer, suite, slice_)][key] += 1
    for row in cells.values():
        tp, fp, fn = row["tp"], row["fp"], row["fn"]
        row["precision"] = tp / (tp + fp) if tp + fp else None
        row["recall"] = tp / (tp + fn) if tp + fn else None
        row["f1"] = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None
        row["precision_low"], row["precision_high"] = wilson(tp, tp + fp)
        row["recall_low"], row["recall_high"] = wilson(tp, tp + fn)
        j_low, j_high = wilson(tp, tp + fp + fn)
        row["f1_low"] = None if j_low is None else 2 * j_low / (1 + j_low)
        row["f1_high"] = None if j_high is None else 2 * j_high / (1 + j_high)
    return dict(cells)


def product(verdicts: Sequence[Row], attrition: Sequence[Row], gold: Sequence[Row]) -> dict[tuple[str, str, str], Row]:
    """The metrics stage's rows (schema-checked) keyed as the oracle's."""
    con = duckdb.connect()
    con.register("verdicts", pa.Table.from_pylist(list(verdicts), schema=VERDICTS))
    con.register("attrition", pa.Table.from_pylist(list(attrition), schema=ATTRITION))
    metrics(con, pa.Table.from_pylist(list(gold), schema=GOLD_SCHEMA))
    frame = conform("metrics", pl.from_arrow(con.table("metrics").to_arrow_table()))
    return {(r.pop("scorer"), r.pop("suite"), r.pop("slice")): r for r in frame.to_dicts()}


def assert_same(got: dict[tuple[str, str, str], Row], want: dict[tuple[str, str, str], Row]) -> None:
    assert sorted(got) == sorted(want)
    for key, row in want.items():
        for column, value in row.items():
            other = got[key][column]
            assert (value is None) == (other is None), (key, column, other, value)
            if value is not None:
                assert other == pytest.approx(value, abs=1e-9), (key, column, other, value)


def verdict(tid: str, suite: str = "s", route: str = "aggregate", flags: tuple[bool, ...] = (False,) * 4) -> Row:
    return {"trajectory_id": tid, "suite": suite, "route": route, **dict(zip(SCORER_COLUMNS.values(), flags))}


def gold(tid: str, label: str, tags: Sequence[str] = ()) -> Row:
    return {"trajectory_id": tid, "gold": label, "slice": list(tags)}


def test_reference_wilson_values() -> None:
    """81 of 263 (Newcombe 1998, method 3): 0.2553 to 0.3662; 0 of 10: 0 to 0.2775."""
    rows = product([verdict(f"t{i}", flags=(True,) * 4) for i in range(263)], [],
                   [gold(f"t{i}", "unsafe" if i < 81 else "safe") for i in range(263)])
    total = rows[("flow_aware", "*", "*")]
    assert (round(total["precision_low"], 4), round(total["precision_high"], 4)) == (0.2553, 0.3662)
    rows = product([verdict(f"t{i}", flags=(True,) * 4) for i in range(10)], [],
                   [gold(f"t{i}", "safe") for i in range(10)])
    total = rows[("all_safe", "*", "*")]
    assert (total["precision"], total["precision_low"], round(total["precision_high"], 4)) == (0.0, 0.0, 0.2775)


def test_f1_interval_is_defined_whenever_f1_is() -> None:
    """Nothing flagged, 3 gold unsafe: F1 = 0 with an interval [0, 2J/(1+J)], J = z^2 / (3 + z^2);
    the old envelope of the precision and recall bounds was null here (precision undefined)."""
    rows = product([verdict(f"t{i}") for i in range(3)], [], [gold(f"t{i}", "unsafe") for i in range(3)])
    total = rows[("flow_aware", "*", "*")]
    j_high = Z * Z / (3 + Z * Z)
    assert (total["precision"], total["recall"], total["f1"], total["f1_low"]) == (None, 0.0, 0.0, 0.0)
    assert total["f1_high"] == pytest.approx(2 * j_high / (1 + j_high))


def test_f1_interval_is_the_wilson_interval_of_the_jaccard_share() -> None:
    """tp 8, fp 2, fn 2: J = 8/12; the F1 bounds are Wilson(8, 12) through 2J/(1+J), narrower
    than the old envelope F1(p_lo, r_lo) .. F1(p_hi, r_hi) (0.49 .. 0.94)."""
    flags = [(True,) * 4] * 10 + [(False,) * 4] * 2
    rows = product([verdict(f"t{i}", flags=f) for i, f in enumerate(flags)], [],
                   [gold(f"t{i}", "unsafe" if i < 8 or i >= 10 else "safe") for i in range(12)])
    total = rows[("flow_aware", "*", "*")]
    low, high = wilson(8, 12)
    assert total["f1"] == pytest.approx(0.8)
    assert (total["f1_low"], total["f1_high"]) == pytest.approx((2 * low / (1 + low), 2 * high / (1 + high)))


def test_each_trajectory_counts_once_per_cell() -> None:
    """A suite literally named '*' and a tag given twice: the totals still count each trajectory once."""
    rows = product([verdict("a", suite="*", flags=(True,) * 4), verdict("b", suite="x")], [],
                   [gold("a", "unsafe", ["k", "k"]), gold("b", "unsafe", ["k"])])
    assert {c: rows[("flow_aware", "*", "*")][c] for c in ("tp", "fn")} == {"tp": 1, "fn": 1}
    assert {c: rows[("flow_aware", "*", "k")][c] for c in ("tp", "fn")} == {"tp": 1, "fn": 1}


def test_unscored_gold_rows() -> None:
    """Rejected gold rows are n_unscored under their attrition suite; gold for ids the run never
    saw is n_unscored under suite '(unknown)'; scored ids without gold are not counted."""
    rows = product([verdict("a", flags=(True,) * 4), verdict("extra")],
                   [{"trajectory_id": "r", "suite": "rej", "source_file": "f", "source_line": 1}],
                   [gold("a", "unsafe"), gold("r", "unsafe"), gold("ghost", "safe")])
    assert rows[("flow_aware", "*", "*")]["tp"] == 1 and rows[("flow_aware", "*", "*")]["tn"] == 0
    assert rows[("flow_aware", "*", "*")]["n_unscored"] == 2
    assert rows[("flow_aware", "rej", "*")]["n_unscored"] == 1
    assert rows[("flow_aware", "(unknown)", "*")]["n_unscored"] == 1


IDS = [f"t{i}" for i in range(12)]


@st.composite
def runs(draw: st.DrawFn) -> tuple[list[Row], list[Row], list[Row]]:
    """Random verdicts, attrition (some ids in both: duplicate copies) and gold."""
    scored = draw(st.lists(st.sampled_from(IDS), unique=True))
    verdicts = [verdict(t, draw(st.sampled_from(["s1", "s2", "*"])), draw(st.sampled_from(["aggregate", "flow"])),
                        tuple(draw(st.lists(st.booleans(), min_size=4, max_size=4)))) for t in scored]
    attrition = [{"trajectory_id": draw(st.sampled_from([*IDS, None])), "suite": draw(st.sampled_from(["s1", "s3"])),
                  "source_file": "f", "source_line": i} for i in range(draw(st.integers(0, 5)))]
    tags = st.lists(st.sampled_from(["a", "b", "c"]), max_size=4)
    gold_ids = draw(st.lists(st.sampled_from([*IDS, "ghost1", "ghost2"]), unique=True))
    return verdicts, attrition, [gold(t, draw(st.sampled_from(["safe", "unsafe"])), draw(tags)) for t in gold_ids]


@given(runs())
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_metrics_equal_the_oracle(run: tuple[list[Row], list[Row], list[Row]]) -> None:
    assert_same(product(*run), oracle(*run))
