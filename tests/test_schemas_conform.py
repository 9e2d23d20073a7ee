"""Pandera validation in ``pipeline.outputs.writer.conform`` rejects a bad row in every
output table: each column ``Field`` check, each non-nullable column, each ``unique``
grain and each dataframe check of ``schemas/*.py``, taken from the schemas themselves
(a check added without a corruption here fails the test). Valid frames are a real run
of the bundled sample. ``conform`` runs Pandera's queries on Polars' in-memory engine and
puts the caller's engine affinity back."""

from __future__ import annotations

import os
from collections.abc import Callable

import polars as pl
import pytest

from pipeline.cli import main
from pipeline.errors import SchemaValidationError
from pipeline.outputs.writer import conform, table_files
from schemas import TABLES, partition_of, schema_module

# a corruption per dataframe check (schemas/*.py): one row made to break it
FRAME_CHECKS: dict[str, Callable[[pl.DataFrame], pl.DataFrame]] = {
    "executed_matches_status": lambda f: _first(f, executed=~pl.col("executed")),
    "attempts_match_ids": lambda f: _first(f, attempts=pl.col("attempts") + 1),
    "path_matches_length": lambda f: _first(f, length=pl.col("length") + 1),
    # a tool call row (sorted first) without exec_status
    "tool_calls_have_exec_status": lambda f: _first(f.sort(pl.col("kind") != "tool_call", maintain_order=True),
                                                    exec_status=pl.lit(None, dtype=pl.String)),
    "step_idx_is_the_position": lambda f: _first(f, step_idx=pl.col("step_idx") + 1_000_000),
    # an executed attempt put before the last one
    "attempts_form_a_retry_chain": lambda f: _first(
        f, attempt_statuses=pl.concat_list(pl.lit(["executed"]), pl.col("attempt_statuses")),
        attempts=pl.col("attempts") + 1),
    "source_before_destination": lambda f: _first(f, src_action_idx=pl.col("dst_action_idx") + 1),
    "route_follows_flow_length": lambda f: _first(
        f, route=pl.when(pl.col("route") == "flow").then(pl.lit("aggregate")).otherwise(pl.lit("flow"))),
    "unsafe_is_unsafe": lambda f: _first(f.filter(pl.col("verdict").is_in(["safe", "unsafe"])),
                                         is_unsafe=~pl.col("is_unsafe")),
}


def _first(frame: pl.DataFrame, **values: pl.Expr) -> pl.DataFrame:
    """``frame`` with row 0's columns replaced by ``values`` (expressions of that row)."""
    row0 = pl.int_range(pl.len()) == 0
    return frame.with_columns(**{name: pl.when(row0).then(expr).otherwise(pl.col(name))
                                 for name, expr in values.items()})


@pytest.fixture(scope="module")
def frames(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pl.DataFrame]:
    out = tmp_path_factory.mktemp("conform") / "run"
    assert main(["score", "--out", str(out), "--quiet"]) == 0
    found = {}
    for table in TABLES:
        partition = partition_of(table)
        files = table_files(out, table)
        frame = pl.read_parquet(files, hive_partitioning=partition is not None,
                                hive_schema={partition: pl.String} if partition else None)
        assert frame.height > 1, table  # every table has rows to corrupt
        found[table] = frame
    return found


def _violating(check_name: str, stats: dict[str, object], dtype: pl.DataType) -> object:
    """A value breaking one built-in ``Field`` check."""
    if check_name == "greater_than_or_equal_to":
        low = stats["min_value"]
        assert isinstance(low, (int, float))
        return low - (1 if dtype.is_integer() else 0.5)
    if check_name == "less_than_or_equal_to":
        high = stats["max_value"]
        assert isinstance(high, (int, float))
        return high + (1 if dtype.is_integer() else 0.5)
    if check_name == "isin":
        allowed = stats["allowed_values"]
        assert isinstance(allowed, list)
        return max(allowed) + 1 if dtype.is_integer() else "not-an-allowed-value"
    if check_name == "str_length":
        assert stats["min_value"] == 1  # flows.sink_kind: any kind's name, never empty
        return ""
    raise AssertionError(f"no corruption for Field check {check_name}: add one")


def _fails(table: str, frame: pl.DataFrame, *words: str) -> None:
    with pytest.raises(SchemaValidationError) as caught:
        conform(table, frame)
    for word in words:
        assert word in str(caught.value), str(caught.value)


@pytest.mark.parametrize("table", TABLES)
def test_the_run_passes_and_each_bad_row_fails(table: str, frames: dict[str, pl.DataFrame]) -> None:
    frame = frames[table]
    schema = schema_module(table).Schema.to_schema()
    assert conform(table, frame).height == frame.height
    tried = 0
    for name, column in schema.columns.items():
        dtype = frame.schema[name]
        for check in column.checks:
            bad = _violating(check.name, check.statistics, dtype)
            _fails(table, _first(frame, **{name: pl.lit(bad, dtype=dtype)}), name)
            tried += 1
        if not column.nullable:
            _fails(table, _first(frame, **{name: pl.lit(None, dtype=dtype)}), name)
            tried += 1
        if column.unique:
            _fails(table, pl.concat([frame.head(1), frame]), name)
            tried += 1
    if schema.unique:
        _fails(table, pl.concat([frame.head(1), frame]), "unique")
        tried += 1
    for check in schema.checks:
        assert check.name in FRAME_CHECKS, f"no corruption for dataframe check {check.name}: add one"
        _fails(table, FRAME_CHECKS[check.name](frame), check.name)
        tried += 1
    assert tried >= 5


def test_conform_restores_the_engine_affinity(frames: dict[str, pl.DataFrame]) -> None:
    before = os.environ.get("POLARS_ENGINE_AFFINITY")
    try:
        pl.Config.set_engine_affinity("streaming")
        conform("edges", frames["edges"])
        assert os.environ.get("POLARS_ENGINE_AFFINITY") == "streaming"
        _fails("edges", _first(frames["edges"], conf=pl.lit(7, dtype=pl.Int64)), "conf")
        assert os.environ.get("POLARS_ENGINE_AFFINITY") == "streaming"  # after a failure too
        pl.Config.set_engine_affinity(None)
        conform("edges", frames["edges"])
        assert "POLARS_ENGINE_AFFINITY" not in os.environ
    finally:
        pl.Config.set_engine_affinity(before)  # type: ignore[arg-type]


def test_an_engine_set_inside_conform_is_in_memory(frames: dict[str, pl.DataFrame],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import pandera.api.polars.model as model

    seen = []
    real = model.DataFrameModel.validate.__func__  # type: ignore[attr-defined]

    def spy(cls: type, *args: object, **kwargs: object) -> object:
        seen.append(os.environ.get("POLARS_ENGINE_AFFINITY"))
        return real(cls, *args, **kwargs)

    monkeypatch.setattr(model.DataFrameModel, "validate", classmethod(spy))
    conform("steps", frames["steps"])
    assert seen == ["in-memory"]




def test_conform_keeps_an_affinity_it_could_not_put_back(frames: dict[str, pl.DataFrame]) -> None:
    # Polars reads POLARS_ENGINE_AFFINITY=cpu (its old name for in-memory) but
    # set_engine_affinity refuses it; an engine object is not in the variable at all:
    # conform must neither fail putting them back nor lose them
    from polars.lazyframe.engine_config import get_engine_affinity_override

    before = os.environ.get("POLARS_ENGINE_AFFINITY")
    try:
        os.environ["POLARS_ENGINE_AFFINITY"] = "cpu"
        conform("edges", frames["edges"])
        assert os.environ.get("POLARS_ENGINE_AFFINITY") == "cpu"
        engine = pl.StreamingEngine()
        pl.Config.set_engine_affinity(engine)
        conform("edges", frames["edges"])
        assert get_engine_affinity_override() is engine
    finally:
        pl.Config.set_engine_affinity(before)  # type: ignore[arg-type]


# Rows SPEC section 2 rules out, one per clause of the shape checks (second reader, 2026-12-04:
# the schemas let each of them through)
SPEC_SHAPES: list[tuple[str, str, Callable[[pl.DataFrame], pl.DataFrame]]] = [
    ("steps", "a tool call without exec_status", lambda f: _first(
        f.sort(pl.col("kind") != "tool_call", maintain_order=True), exec_status=pl.lit(None, dtype=pl.String))),
    ("steps", "a gap in step_idx", lambda f: _first(f, step_idx=pl.col("step_idx") + 1_000_000)),
    ("actions", "an executed attempt before the last", lambda f: _first(
        f, attempt_statuses=pl.concat_list(pl.lit(["executed"]), pl.col("attempt_statuses")),
        attempts=pl.col("attempts") + 1)),
    ("actions", "exec_status not the last attempt's", lambda f: _first(
        f.filter(pl.col("exec_status") == "executed"), exec_status=pl.lit("unknown"))),
    ("actions", "a blocked attempt chained after a failed one", lambda f: _first(
        f.sort(pl.col("exec_status") != "blocked", maintain_order=True),
        attempt_statuses=pl.lit(["failed", "blocked"]), attempts=pl.lit(2, dtype=pl.Int64))),
    ("actions", "blocked without a blocked status", lambda f: _first(
        f.filter(~pl.col("blocked")), blocked=pl.lit(True))),
    ("actions", "a gap in action_idx", lambda f: _first(f, action_idx=pl.col("action_idx") + 1_000_000)),
    ("edges", "an edge pointing back", lambda f: _first(
        f, src_action_idx=pl.col("dst_action_idx"), dst_action_idx=pl.col("src_action_idx"))),
]


@pytest.mark.parametrize(("table", "what", "corrupt"), SPEC_SHAPES, ids=[s[1] for s in SPEC_SHAPES])
def test_the_schemas_refuse_shapes_spec_rules_out(table: str, what: str, corrupt: Callable[[pl.DataFrame], pl.DataFrame],
                                                  frames: dict[str, pl.DataFrame]) -> None:
    _fails(table, corrupt(frames[table]))
