"""pipeline/ingest/tables_in.py: the user's gold file, read as written or refused with one line."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from pipeline.errors import LabelsError
from pipeline.ingest.tables_in import read_gold


def _gold(path: Path, slices: list[object]) -> Path:
    path.write_text("".join(json.dumps({"trajectory_id": f"t{i}", "gold": "safe", "slice": s}) + "\n"
                            for i, s in enumerate(slices)))
    return path


def test_slices_of_either_form_in_one_file_are_read_as_tags(tmp_path: Path) -> None:
    # a JSON lines file whose slices are a ';'-separated string in one row and a list in
    # another: DuckDB types the column JSON, and its text had become the tags
    # ('["a","b"]', '"p' and 'q"')
    table = read_gold(duckdb.connect(), _gold(tmp_path / "g.jsonl", [["a", "b"], "p;q", None, []]))
    assert table.column("slice").to_pylist() == [["a", "b"], ["p", "q"], [], []]


@pytest.mark.parametrize("bad", [5, {"k": 1}, True, ["a", 3], ["a", {"k": 1}]])
def test_a_slice_that_is_no_string_or_list_of_strings_is_refused(tmp_path: Path, bad: object) -> None:
    with pytest.raises(LabelsError, match="1 rows whose slice is neither"):
        read_gold(duckdb.connect(), _gold(tmp_path / "g.jsonl", [["a"], "b", bad]))


@pytest.mark.parametrize("slices", [[3, 7], [{"k": 1}, {"k": 2}], [[1, 2], [3]]])
def test_slices_of_one_wrong_type_in_every_row_are_refused(tmp_path: Path, slices: list[object]) -> None:
    # every row alike: DuckDB types the column BIGINT, STRUCT or BIGINT[], not JSON, and
    # the cast made each value a tag ('3', "{'k': 1}")
    with pytest.raises(LabelsError, match=f"{len(slices)} rows whose slice is neither"):
        read_gold(duckdb.connect(), _gold(tmp_path / "g.jsonl", slices))


def test_csv_and_parquet_slices_are_read_as_tags(tmp_path: Path) -> None:
    (tmp_path / "g.csv").write_text("trajectory_id,gold,slice\nt0,safe,a;b\nt1,unsafe,\n")
    assert read_gold(duckdb.connect(), tmp_path / "g.csv").column("slice").to_pylist() == [["a", "b"], []]
    table = read_gold(duckdb.connect(), _gold(tmp_path / "g.jsonl", [["x"], [], ["y", "z"]]))
    assert table.column("slice").to_pylist() == [["x"], [], ["y", "z"]]


def test_tags_are_trimmed_and_each_counts_once(tmp_path: Path) -> None:
    # 'a; b;' gave the tags 'a', ' b' and '' (a metrics slice named ''), and a tag given twice
    # in a row counted that trajectory twice in its slice
    table = read_gold(duckdb.connect(), _gold(tmp_path / "g.jsonl", ["a; b;", ["x", "x", " y", ""], ""]))
    assert table.column("slice").to_pylist() == [["a", "b"], ["x", "y"], []]
    (tmp_path / "g.csv").write_text('trajectory_id,gold,slice\nt0,safe,"b ; a;b"\n')
    assert read_gold(duckdb.connect(), tmp_path / "g.csv").column("slice").to_pylist() == [["b", "a"]]


@pytest.mark.parametrize("tag", ["*", "route:flow", "route:aggregate", " * "])
def test_a_reserved_tag_is_refused(tmp_path: Path, tag: str) -> None:
    # '*' doubled every trajectory of the row in the totals; 'route:flow' put aggregate-route
    # trajectories into the flow route's slice
    with pytest.raises(LabelsError, match="1 rows with a reserved slice tag"):
        read_gold(duckdb.connect(), _gold(tmp_path / "g.jsonl", [["a"], ["b", tag]]))
