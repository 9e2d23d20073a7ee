"""Side inputs: the per-step labels file (SPEC section 4) and the gold file.

Both may be JSONL, CSV or Parquet. They are read by DuckDB with fixed column types;
a file that does not fit is an operator error (exit 2), never silently ignored.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa

from pipeline.errors import LabelsError

LABELS_SCHEMA = pa.schema([("trajectory_id", pa.string()), ("step_idx", pa.int64()),
                           ("label", pa.string()), ("score", pa.float64())])
GOLD_SCHEMA = pa.schema([("trajectory_id", pa.string()), ("gold", pa.string()),
                         ("slice", pa.list_(pa.string()))])


def _relation(con: duckdb.DuckDBPyConnection, path: Path, what: str) -> duckdb.DuckDBPyRelation:
    if not path.is_file():
        raise LabelsError(f"{what} file {path} does not exist", f"check the --{what} path")
    name = path.name.lower()
    try:
        if name.endswith(".parquet"):
            return con.read_parquet(str(path))
        if name.endswith(".csv"):
            return con.read_csv(str(path), header=True, all_varchar=True)
        return con.read_json(str(path), format="newline_delimited")
    except duckdb.Error as exc:
        raise LabelsError(f"{what} file {path} cannot be read: {str(exc).splitlines()[0]}") from exc


def _columns(rel: duckdb.DuckDBPyRelation, required: tuple[str, ...], path: Path, what: str) -> None:
    missing = [c for c in required if c not in rel.columns]
    if missing:
        raise LabelsError(f"{what} file {path} lacks column(s) {', '.join(missing)}")


def read_labels(con: duckdb.DuckDBPyConnection, path: Path | None) -> pa.Table:
    """The labels table (empty when no file): one row per (trajectory_id, step_idx)."""
    if path is None:
        return LABELS_SCHEMA.empty_table()
    rel = _relation(con, path, "labels")
    _columns(rel, ("trajectory_id", "step_idx", "label"), path, "labels")
    score = "try_cast(score as double)" if "score" in rel.columns else "null::double"
    # a score that is there but no number counts as a problem below (it was read as no score)
    bad_score = "score is not null and try_cast(score as double) is null" if "score" in rel.columns else "false"
    try:
        # a null label means "not labelled" (e.g. `litmus-gate label` could not judge the step):
        # the row is dropped, so the built-in rule classifier labels that step. A step_idx
        # must be a whole number: 1.5 (or "0.5" in a CSV) was rounded to a step it never named
        table = con.sql(
            f"select trajectory_id::varchar as trajectory_id, "
            f"case when try_cast(step_idx as double) = floor(try_cast(step_idx as double)) "
            f"then try_cast(try_cast(step_idx as double) as bigint) end as step_idx, "
            f"lower(label::varchar) as label, {score} as score, {bad_score} as bad_score "
            f"from rel where label is not null").to_arrow_table()
    except duckdb.Error as exc:
        raise LabelsError(f"labels file {path}: {str(exc).splitlines()[0]}") from exc
    con.register("labels_check", table)
    problems = con.sql(
        "select count(*) filter (where trajectory_id is null or step_idx is null or step_idx < 0), "
        "count(*) filter (where label not in ('safe', 'unsafe')), "
        "count(*) filter (where bad_score), "
        "count(*) filter (where score < 0 or score > 1 or isnan(score)), "
        "count(*) - count(distinct (trajectory_id, step_idx)) from labels_check").fetchall()[0]
    con.unregister("labels_check")
    table = table.drop_columns(["bad_score"])
    what = ("rows without trajectory_id or a valid step_idx (a whole number, 0 or more)",
            "labels other than safe/unsafe", "scores that are no number", "scores outside [0, 1]",
            "duplicate (trajectory_id, step_idx) rows")
    for count, text in zip(problems, what):
        if count:
            raise LabelsError(f"labels file {path} has {count} {text}", "see SPEC section 4")
    return table.cast(LABELS_SCHEMA)


def read_gold(con: duckdb.DuckDBPyConnection, path: Path) -> pa.Table:
    """The gold table: trajectory_id, gold (safe|unsafe), slice tags (list, maybe empty)."""
    rel = _relation(con, path, "gold")
    _columns(rel, ("trajectory_id", "gold"), path, "gold")
    slice_type = str(rel.types[rel.columns.index("slice")]) if "slice" in rel.columns else None
    if slice_type is None:
        slice_expr, bad_slice = "[]::varchar[]", "false"
    elif slice_type == "JSON":
        # JSON lines whose slices differ in type (a string here, a list there): each value
        # must be a ';'-separated string or a list of strings; cast whole, anything else
        # became its JSON text ('["a","b"]', '{"k":1}') and a tag no one meant
        slice_expr = ("case json_type(slice) when 'VARCHAR' then string_split(slice ->> '$', ';') "
                      "when 'ARRAY' then slice ->> '$[*]' else []::varchar[] end")
        bad_slice = ("coalesce(json_type(slice) not in ('VARCHAR', 'ARRAY', 'NULL') or (json_type(slice) = 'ARRAY' "
                     "and list_bool_or(list_transform(json_extract(slice, '$[*]'), lambda x: json_type(x) <> 'VARCHAR'))), "
                     "false)")
    elif slice_type == "VARCHAR[]":
        slice_expr, bad_slice = "coalesce(slice, [])", "false"
    elif slice_type == "VARCHAR":
        slice_expr, bad_slice = "coalesce(string_split(slice, ';'), [])", "false"
    else:  # every row a number, an object, a list of numbers...: no tag anyone wrote (an empty list is no tag)
        slice_expr = "[]::varchar[]"
        bad_slice = ("coalesce(len(slice) > 0, true) and slice is not null" if slice_type.endswith("[]")
                     else "slice is not null")
    # tags as written, trimmed; an empty tag ('a;' or '') is none, and a tag given twice in a
    # row is one tag (it was counted twice in that slice's metrics)
    tags = (f"list_filter(list_transform({slice_expr}, lambda t: trim(t)), lambda t: t <> '')")
    try:
        table = con.sql(f"select trajectory_id::varchar as trajectory_id, lower(gold::varchar) as gold, "
                        f"list_filter(tags, lambda t, i: list_position(tags, t) = i) as slice, bad_slice "
                        f"from (select *, {tags} as tags, {bad_slice} as bad_slice from rel)").to_arrow_table()
    except duckdb.Error as exc:  # e.g. a column whose type changes deep in the file
        raise LabelsError(f"gold file {path}: {str(exc).splitlines()[0]}") from exc
    con.register("gold_check", table)
    bad, dup, bad_slices, reserved = con.sql(
        "select count(*) filter (where gold not in ('safe', 'unsafe') or gold is null or trajectory_id is null), "
        "count(*) - count(distinct trajectory_id), count(*) filter (where bad_slice), "
        "count(*) filter (where list_bool_or(list_transform(slice, lambda t: t = '*' or starts_with(t, 'route:')))) "
        "from gold_check").fetchall()[0]
    con.unregister("gold_check")
    table = table.drop_columns(["bad_slice"])
    if bad:
        raise LabelsError(f"gold file {path} has {bad} rows without trajectory_id or with gold not safe/unsafe")
    if bad_slices:
        raise LabelsError(f"gold file {path} has {bad_slices} rows whose slice is neither a ';'-separated "
                          "string nor a list of strings")
    if reserved:
        # '*' is the metrics' total and 'route:...' their route slices: such a tag merged its
        # rows into those cells (each trajectory of the tag counted in the route slice)
        raise LabelsError(f"gold file {path} has {reserved} rows with a reserved slice tag ('*' or 'route:...')",
                          "'*' names the totals and 'route:aggregate' / 'route:flow' the route slices of metrics")
    if dup:
        raise LabelsError(f"gold file {path} has {dup} duplicate trajectory_id rows")
    return table.cast(GOLD_SCHEMA)
