"""``shard_priors``: each shard's ids with scorable copies in earlier shards, and how many,
sliced per shard from one shard-ordered query (several shards with priors, a shard
without, hostile ids)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.execution.duplicates import shard_priors
from pipeline.stages.tables import PRIOR_COPIES_SCHEMA

HOSTILE = "it's \"quoted\"\x00 ünï 🚀"


def _ids(folder: Path, shard: int, rows: list[tuple[str, int]]) -> str:
    path = folder / f"shard-{shard}.parquet"
    pq.write_table(pa.table({"shard": [shard] * len(rows), "trajectory_id": [r[0] for r in rows],
                             "n_copies": [r[1] for r in rows]},
                            schema=pa.schema([("shard", pa.int64()), ("trajectory_id", pa.string()),
                                              ("n_copies", pa.int64())])), path)
    return str(path)


def test_each_shard_gets_the_copies_of_earlier_shards(tmp_path: Path) -> None:
    files = [
        _ids(tmp_path, 0, [("a", 1), ("b", 2), (HOSTILE, 1)]),
        _ids(tmp_path, 1, [("a", 1), ("c", 1)]),
        _ids(tmp_path, 2, [("d", 1)]),  # no id seen before: no priors
        _ids(tmp_path, 3, [("a", 0), ("b", 1), ("c", 3), (HOSTILE, 2)]),
    ]
    priors = shard_priors(tmp_path, files, 5)
    got = [sorted(zip(t.column("trajectory_id").to_pylist(), t.column("n").to_pylist())) for t in priors]
    # shard 3's "a" has no scorable copy of its own (n_copies 0): not rescored
    assert got == [[], [("a", 1)], [], [("b", 2), ("c", 1), (HOSTILE, 1)], []]
    assert all(t.schema == PRIOR_COPIES_SCHEMA for t in priors)


def test_no_id_files_gives_empty_priors(tmp_path: Path) -> None:
    assert [t.num_rows for t in shard_priors(tmp_path, [], 3)] == [0, 0, 0]


def test_priors_import_no_pyarrow_compute(tmp_path: Path) -> None:
    # a corpus with an id in two shards still keeps pyarrow.compute out of the driver
    import subprocess
    import sys

    files = [_ids(tmp_path, 0, [("a", 1)]), _ids(tmp_path, 1, [("a", 1), ("b", 1)])]
    probe = ("import sys; from pathlib import Path; from pipeline.execution.duplicates import shard_priors; "
             f"p = shard_priors(Path({str(tmp_path)!r}), {files!r}, 2); "
             "assert p[1].column('trajectory_id').to_pylist() == ['a'], p; "
             "print('pyarrow.compute' in sys.modules)")
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                           cwd=Path(__file__).resolve().parents[1])
    assert found.stdout.strip() == "False", found.stdout + found.stderr
