"""The local worker pool (pipeline/execution/pool.py): what crosses its pipes stays small,
big jobs and results go through its spool folder intact, and the folder goes with it."""

from __future__ import annotations

import pickle
from pathlib import Path

from pipeline.execution.pool import INLINE_JOB_BYTES, INLINE_RESULT_BYTES, WorkerPool, _pack, _unpack
from tests.pool_jobs import sized


def test_pack_keeps_small_values_inline_and_big_ones_in_a_file(tmp_path: Path) -> None:
    small = _pack(b"x" * 100, INLINE_RESULT_BYTES, tmp_path / "a")
    assert isinstance(small, bytes) and _unpack(small) == b"x" * 100
    big = _pack(b"y" * 10_000, INLINE_RESULT_BYTES, tmp_path / "b")
    assert big == str(tmp_path / "b") and (tmp_path / "b").is_file()
    assert _unpack(big) == b"y" * 10_000
    assert not (tmp_path / "b").exists()  # read once, then removed


def test_a_pool_message_stays_under_pipe_buf() -> None:
    # the worker's result message: the pool pickles (job, i, (True, (i, packed))) with a 4-byte header
    framed = pickle.dumps((10**9, 10**6, (True, (10**6, b"r" * INLINE_RESULT_BYTES))))
    assert len(framed) + 4 <= 4096
    assert INLINE_JOB_BYTES < 64 * 1024 // 2


def test_big_jobs_and_results_round_trip_and_the_spool_goes_with_the_pool() -> None:
    sizes = [0, 10, INLINE_RESULT_BYTES, INLINE_RESULT_BYTES + 1, 200_000]
    with WorkerPool(2) as workers:
        spool = workers._spool
        assert workers.map(sized, sizes, lambda n: None) == [b"r" * n for n in sizes]
        payloads = [b"j" * 10, b"j" * (INLINE_JOB_BYTES + 1), b"j" * 1_000_000]
        assert workers.map(len, payloads, lambda n: None) == [len(p) for p in payloads]
        assert list(spool.iterdir()) == []  # every file read once and removed
    assert not spool.exists()
