"""Stage ``shell_folders`` (``sql/shell_folders.sql``): the folder each shell step of a
persistent session starts in, carried from the `cd`s of the session's earlier executed
steps, or given by the call's working-folder argument; and the macro ``lg_norm_path`` it
joins folders with (``sql/macros.sql``). Golden rows written by hand."""

from __future__ import annotations

import json
import posixpath
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest

from pipeline.config import RunConfig
from pipeline.sql import materialize
from pipeline.stages.tables import connect
from tests.conftest import rows

# tool_key -> (shell_session, workdir_arg)
TOOLS = {"bash": ("persistent", None), "shell": ("fresh", "workdir"), "term": ("persistent", "cwd")}
# (trajectory_id, step_idx, tool, exec_status, folder the program leaves ('.': stays, None: unknown), workdir)
STEPS: list[tuple[str, int, str, str, str | None, str | None]] = [
    # an absolute move, a relative one composed on it, `..`, then a step that stays
    ("t1", 1, "bash", "executed", "/etc", None),
    ("t1", 3, "bash", "executed", "nginx", None),
    ("t1", 5, "bash", "unknown", "../ssh", None),  # unknown runs: fail closed, it moved
    ("t1", 7, "bash", "executed", ".", None),
    ("t1", 9, "bash", "failed", "/tmp", None),  # a failed `cd` moves nothing
    ("t1", 11, "bash", "blocked", "/srv", None),  # nor does a blocked one
    ("t1", 13, "bash", "executed", ".", None),
    # a relative move before any absolute one stays relative to where the shell started
    ("t2", 1, "bash", "executed", "sub", None),
    ("t2", 3, "bash", "executed", ".", None),
    # a move to an unknown folder ends what is carried, until an absolute one
    ("t3", 1, "bash", "executed", "/etc", None),
    ("t3", 3, "bash", "executed", None, None),
    ("t3", 5, "bash", "executed", "ssh", None),
    ("t3", 7, "bash", "executed", "~/.aws", None),
    ("t3", 9, "bash", "executed", ".", None),
    # a fresh session carries nothing; its working-folder argument is where the call runs
    ("t4", 1, "shell", "executed", "/etc", None),
    ("t4", 3, "shell", "executed", ".", None),
    ("t4", 5, "shell", "executed", ".", "/srv/app/"),
    ("t4", 7, "shell", "executed", "sub", "/srv/app"),
    # a persistent session with a working-folder argument: the call starts there, and the
    # session is left where the call's own `cd` (relative to it) leaves it
    ("t5", 1, "term", "executed", "sub", "/srv"),
    ("t5", 3, "term", "executed", ".", None),
    # two persistent tools: two sessions
    ("t6", 1, "bash", "executed", "/etc", None),
    ("t6", 3, "term", "executed", ".", None),
    ("t6", 5, "bash", "executed", ".", None),
]
EXPECTED = [
    {"trajectory_id": "t1", "step_idx": 3, "folder": "/etc"},
    {"trajectory_id": "t1", "step_idx": 5, "folder": "/etc/nginx"},
    {"trajectory_id": "t1", "step_idx": 7, "folder": "/etc/ssh"},
    {"trajectory_id": "t1", "step_idx": 9, "folder": "/etc/ssh"},
    {"trajectory_id": "t1", "step_idx": 11, "folder": "/etc/ssh"},
    {"trajectory_id": "t1", "step_idx": 13, "folder": "/etc/ssh"},
    {"trajectory_id": "t2", "step_idx": 3, "folder": "sub"},
    {"trajectory_id": "t3", "step_idx": 3, "folder": "/etc"},
    {"trajectory_id": "t3", "step_idx": 9, "folder": "~/.aws"},
    {"trajectory_id": "t4", "step_idx": 5, "folder": "/srv/app"},
    {"trajectory_id": "t4", "step_idx": 7, "folder": "/srv/app"},
    {"trajectory_id": "t5", "step_idx": 1, "folder": "/srv"},
    {"trajectory_id": "t5", "step_idx": 3, "folder": "/srv/sub"},
    {"trajectory_id": "t6", "step_idx": 5, "folder": "/etc"},
]


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    c = connect(RunConfig(inputs=(), out=Path("unused")))  # with the macros
    c.register("policy_tools", pa.Table.from_pylist(
        [{"tool_key": k, "shell_session": s, "workdir_arg": w} for k, (s, w) in TOOLS.items()]))
    programs = sorted({f for *_, f, _ in STEPS if f != "."}, key=str)
    pid = {f: i for i, f in enumerate(programs)}
    stays = len(programs)
    c.register("program_folders", pa.Table.from_pylist(
        [{"program_id": i, "folder": f} for f, i in pid.items()],
        schema=pa.schema([("program_id", pa.int64()), ("folder", pa.string())])))
    c.register("shell_calls", pa.Table.from_pylist(
        [{"trajectory_id": t, "step_idx": i, "program_id": pid.get(f, stays)} for t, i, _, _, f, _ in STEPS]))
    args: list[dict[str, Any]] = [{"command": "x", **({"workdir": w, "cwd": w} if w else {})} for *_, w in STEPS]
    c.register("steps", pa.Table.from_pylist(
        [{"trajectory_id": t, "step_idx": i, "tool_name": tool.upper(), "exec_status": st, "arguments": json.dumps(a)}
         for (t, i, tool, st, _, _), a in zip(STEPS, args)]))
    return c


def test_golden_folders(con: duckdb.DuckDBPyConnection) -> None:
    materialize(con, "shell_folders")
    got = rows(con, "select trajectory_id, step_idx, folder from shell_folders order by all")
    assert got == EXPECTED


@pytest.mark.parametrize("path", ["/etc/../tmp/./x", "/..", "/", "~", "~/.ssh/../x", "../x", "a/../..", ".", "a//b/",
                                  "sub/../x", "/tmp/build/*", "x/..", "/a/b/../../..", "../../a/../b", "~/.ssh/./id_rsa"])
def test_norm_path_is_posix_normpath(con: duckdb.DuckDBPyConnection, path: str) -> None:
    assert con.execute("select lg_norm_path($1)", [path]).fetchone() == (posixpath.normpath(path),)


def test_norm_path_edges(con: duckdb.DuckDBPyConnection) -> None:
    # `..` right after `~` stays (which home is above is not known); nothing in, nothing out
    assert con.execute("select lg_norm_path('~/..'), lg_norm_path(''), lg_norm_path(null)").fetchone() == ("~/..", ".", None)
