"""``litmus-gate query``: SQL over the tables of one or many run folders.

:func:`open_runs` opens an in-memory DuckDB connection with one view per table present
in any of the runs (``steps``, ``actions``, ``edges``, ``flows``, ``verdicts``,
``attrition``, ``metrics``). Each view is the union (by column name) of that table over
all runs, plus a ``run_id`` column: the run folder's name, or the path as given when two
runs share a name. ``verdicts`` and ``attrition`` are read with hive partitioning, so
their ``suite`` column comes back decoded from the partition folders.

Paths come from the operator but never reach SQL text: every run's table is a
``read_parquet`` relation (Python relation API); the relations of one table are
combined with ``union_by_name`` and registered as the view with ``create_view``.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import itertools
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, TextIO

import duckdb

from pipeline.outputs.report_svg import clean
from pipeline.outputs.writer import table_files
from schemas import PARTITIONS

from pipeline.errors import RunDirError, UsageError

TABLES = ("steps", "actions", "edges", "flows", "verdicts", "attrition", "metrics")
FORMATS = ("table", "csv", "markdown", "parquet")
Format = Literal["table", "csv", "markdown", "parquet"]
PROMPT = "litmus> "
_RELATIONS = itertools.count()  # read_table's parameter names
_BATCH = 10_000


def check_run_dir(run_dir: Path) -> None:
    """Raise RunDirError unless ``run_dir`` is a litmus-gate run (has manifest.json)."""
    if not run_dir.is_dir():
        raise RunDirError(f"{run_dir} is not a folder", "RUN_DIR is the --out folder of a score run")
    if not (run_dir / "manifest.json").is_file():
        raise RunDirError(f"{run_dir} is not a litmus-gate run (no manifest.json)")


def read_table(con: duckdb.DuckDBPyConnection, files: list[str], table: str) -> duckdb.DuckDBPyRelation:
    """One table's Parquet ``files`` as a relation; a partition column is text, as written.

    DuckDB would otherwise guess the partition values' type from the folder names: a run
    whose suites all look like `2024-01-01` read back DATE (and `2024-1-1` as the same
    day), all digits BIGINT, so `report` failed on them and two suites merged."""
    if table not in PARTITIONS:
        return con.read_parquet(files, hive_partitioning=False, union_by_name=True)
    # a parameter name of its own: relations united later may not share one
    name = f"files_{next(_RELATIONS)}"
    return con.sql(f"select * from read_parquet(${name}, hive_partitioning = true, union_by_name = true, "
                   "hive_types_autocast = false)", params={name: files})


def table_relation(con: duckdb.DuckDBPyConnection, run_dir: Path, table: str) -> duckdb.DuckDBPyRelation | None:
    """``run_dir/<table>/`` as a relation, or None when the run has no such table."""
    files = table_files(run_dir, table)
    if not files:
        return None
    try:
        return read_table(con, files, table)
    except duckdb.Error as exc:  # a cut or foreign file in the run's table folder
        raise RunDirError(f"{run_dir}/{table} cannot be read: {str(exc).splitlines()[0]}",
                          "the run folder is damaged: score again") from exc


def run_ids(run_dirs: Sequence[Path]) -> list[str]:
    """``run_id`` of each run: its folder name, or its path when two runs share a name."""
    names = [Path(p).resolve().name or str(p) for p in run_dirs]
    return [str(p) if names.count(n) > 1 else n for p, n in zip(run_dirs, names)]


def open_runs(run_dirs: Sequence[Path]) -> duckdb.DuckDBPyConnection:
    """A connection with one view per table present in ``run_dirs`` (see module docstring).

    Raises RunDirError when a path is not a run, UsageError when none is given or a run
    is given twice.
    """
    if not run_dirs:
        raise UsageError("query needs at least one RUN_DIR")
    dirs = [Path(p) for p in run_dirs]
    resolved = [p.resolve() for p in dirs]
    if len(set(resolved)) != len(resolved):
        raise UsageError("the same RUN_DIR is given twice")
    for run_dir in dirs:
        check_run_dir(run_dir)
    con = duckdb.connect()
    con.execute("set enable_progress_bar = false")
    ids = run_ids(dirs)
    for table in TABLES:
        union: duckdb.DuckDBPyRelation | None = None
        for run_dir, run_id in zip(dirs, ids):
            rel = table_relation(con, run_dir, table)
            if rel is None:
                continue
            rel = rel.select(duckdb.StarExpression(), duckdb.ConstantExpression(run_id).alias("run_id"))
            union = rel if union is None else union.union_by_name(rel, all=True)
        if union is not None:
            union.create_view(table, replace=True)
    return con


def table_names(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The tables and views visible in ``con``."""
    rows = con.execute("select table_name from information_schema.tables order by 1").fetchall()
    return [r[0] for r in rows]


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _markdown_cell(value: object) -> str:
    # a table meant for reading: no control or bidi character reaches the terminal (CSV and
    # Parquet keep the data exact)
    return clean(_cell(value)).replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", "<br>")


def write_csv(rel: duckdb.DuckDBPyRelation, stream: TextIO) -> int:
    """``rel`` as CSV (header first) on ``stream``; returns the row count."""
    writer = csv.writer(stream, lineterminator="\n")
    # the writer quotes a value holding its own line terminator ("\n") but not a bare "\r",
    # which csv readers take for a line break (one row became two): such rows are quoted whole
    quoted = csv.writer(stream, lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writerow(rel.columns)
    n = 0
    for row in rel.iter_rows(batch_size=_BATCH):
        cells = [_cell(v) for v in row]
        (quoted if any("\r" in c for c in cells) else writer).writerow(cells)
        n += 1
    return n


def write_markdown(rel: duckdb.DuckDBPyRelation, stream: TextIO) -> int:
    """``rel`` as a GitHub Markdown table on ``stream``; returns the row count."""
    stream.write("| " + " | ".join(_markdown_cell(c) for c in rel.columns) + " |\n")
    stream.write("|" + "---|" * len(rel.columns) + "\n")
    n = 0
    for row in rel.iter_rows(batch_size=_BATCH):
        stream.write("| " + " | ".join(_markdown_cell(v) for v in row) + " |\n")
        n += 1
    return n


def run_query(con: duckdb.DuckDBPyConnection, sql: str, fmt: Format = "table", out: Path | None = None) -> None:
    """Run ``sql`` (one or more statements; the last one's result is shown) and print it.

    ``table`` and ``csv``/``markdown`` print to stdout; ``parquet`` writes ``out``
    (required). A statement that returns no result prints nothing. A failing query
    raises UsageError with DuckDB's first error line.
    """
    if fmt not in FORMATS:
        raise UsageError(f"unknown --format {fmt!r}", f"choose one of {', '.join(FORMATS)}")
    if fmt == "parquet" and out is None:
        raise UsageError("--format parquet needs --out FILE")
    try:
        rel = con.sql(sql)
        if rel is None:
            if fmt == "parquet":
                raise UsageError("the SQL returns no result to write as Parquet")
            return
        if fmt == "table":
            # DuckDB's renderer shows ESC as \e but writes C1 controls (U+009B is CSI) and
            # bidi overrides as they are: the box is caught and neutralised (one character
            # for one, so the columns stay aligned)
            box = io.StringIO()
            with contextlib.redirect_stdout(box):
                rel.show(max_rows=10_000, max_width=None if sys.stdout.isatty() else 100_000)
            sys.stdout.write(clean(box.getvalue()))
        elif fmt == "csv":
            write_csv(rel, sys.stdout)
        elif fmt == "markdown":
            write_markdown(rel, sys.stdout)
        else:
            assert out is not None
            rel.write_parquet(str(out))
    except duckdb.Error as exc:
        raise UsageError(f"query failed: {str(exc).splitlines()[0]}") from exc
    sys.stdout.flush()


def shell(con: duckdb.DuckDBPyConnection, fmt: Format = "table", stdin: TextIO | None = None) -> None:
    """A read-eval-print loop: statements end with ``;``; ``.tables``, ``.quit``/``.exit``, EOF quits."""
    stream = stdin or sys.stdin
    buffer: list[str] = []
    while True:
        sys.stdout.write(PROMPT if not buffer else "   ...> ")
        sys.stdout.flush()
        line = stream.readline()
        if not line:
            sys.stdout.write("\n")
            return
        text = line.strip()
        if not buffer and text.startswith("."):
            if text in (".quit", ".exit"):
                return
            if text == ".tables":
                print("  ".join(table_names(con)))
            else:
                print("commands: .tables  .quit  (SQL statements end with ;)")
            continue
        if not text and not buffer:
            continue
        buffer.append(line)
        if text.endswith(";"):
            sql, buffer = "".join(buffer), []
            try:
                run_query(con, sql, "csv" if fmt == "parquet" else fmt)
            except UsageError as exc:
                print(f"error: {exc.one_line()}")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``litmus-gate query RUN_DIR... [SQL] [--sql SQL] [--format F] [--out FILE]``."""
    parser.usage = ("%(prog)s RUN_DIR... [SQL] [--sql SQL] [--format {table,csv,markdown,parquet}] "
                    "[--out FILE]")
    parser.add_argument("paths", nargs="+", metavar="RUN_DIR",
                        help="run folders; a last argument that is not an existing path is the SQL")
    parser.add_argument("--sql", help="the SQL to run (default: the last positional, else stdin / a shell)")
    parser.add_argument("--format", choices=FORMATS, default="table", dest="query_format",
                        help="output format (default: table; parquet needs --out)")
    parser.add_argument("--out", type=Path, dest="query_out", metavar="FILE", help="Parquet file to write")


def split_positionals(paths: Sequence[str], sql: str | None) -> tuple[list[Path], str | None]:
    """RUN_DIRs and SQL from the positionals: the last one is SQL when it is no existing path."""
    items = list(paths)
    if sql is None and len(items) > 1 and not _is_path(items[-1]):
        sql = items.pop()
    return [Path(p) for p in items], sql


def _is_path(text: str) -> bool:
    """True when ``text`` names an existing file or folder (a long SQL text is no name)."""
    try:
        return Path(text).exists()
    except OSError:  # ENAMETOOLONG and the like: not a path
        return False


def main_from_args(args: argparse.Namespace, stdin: TextIO | None = None) -> int:
    """Run the query command; returns the exit code (errors raise LitmusError)."""
    run_dirs, sql = split_positionals(args.paths, args.sql)
    fmt: Format = args.query_format
    con = open_runs(run_dirs)
    try:
        stream = stdin or sys.stdin
        if sql is None and stream.isatty():
            if fmt == "parquet":
                raise UsageError("--format parquet needs --sql (the shell prints to the terminal)")
            shell(con, fmt, stream)
            return 0
        if sql is None:
            sql = stream.read()
            if not sql.strip():
                raise UsageError("no SQL given", "pass SQL as the last argument, with --sql, or on stdin")
        run_query(con, sql, fmt, args.query_out)
    finally:
        con.close()
    return 0
