"""What the SQLite store readers ask of a database's catalog (names of our own code, given
as parameters)."""

from __future__ import annotations

import sqlite3


def tables(con: sqlite3.Connection) -> dict[str, str]:
    """The database's tables and views: name -> ``table`` | ``view``."""
    return dict(con.execute("select name, type from sqlite_master where type in ('table', 'view') order by name"))


def columns(con: sqlite3.Connection, table: str) -> set[str]:
    """The columns of ``table``."""
    return {row[0] for row in con.execute("select name from pragma_table_info(?)", (table,))}


def missing(con: sqlite3.Connection, needed: dict[str, set[str]]) -> str | None:
    """None when every table of ``needed`` is a table with those columns; '' when one of
    them is no table (no store of this kind); else the columns a table lacks."""
    found = tables(con)
    if any(found.get(name) != "table" for name in needed):
        return ""
    for name, cols in needed.items():
        lacking = cols - columns(con, name)
        if lacking:
            return f"its {name} table has no {', '.join(sorted(lacking))} column"
    return None
