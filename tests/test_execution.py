"""The execution path (``pipeline/execution/``): shards are record-aligned byte ranges
of the inputs, read once; duplicate ids across shards; publishing moves shard files.

A shard's pieces must read exactly the records the whole-file reader reads (same
lineage); duplicates split over shards must give the same attrition as one shard; a
table is the shards' files in order, with one folder per partition value; a shard
lost after scoring, or a publish that fails, never publishes and keeps the work.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.cli import main
from pipeline.config import RunConfig
from pipeline.execution.plan import scan_inputs, shard_pieces
from pipeline.ingest.reader import iter_piece, iter_records
from tests.conftest import REPO, calls, parquet_digests, result, table_contents, traj, user

SAMPLE = REPO / "data" / "sample"


_LINE = st.sampled_from([
    '{"trajectory_id": "a", "messages": []}\n', "\n", "   \n", "not json\n", '{"trajectory_id": "b"}\r\n',
    '{"x": "' + "y" * 300 + '"}\n', '{"trajectory_id": "c", "messages": [{"role": "user", "content": "hi"}]}',
])


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(_LINE, max_size=40), n_shards=st.integers(1, 9), bom=st.booleans())
def test_pieces_read_exactly_the_records_of_the_whole_file(tmp_path_factory: pytest.TempPathFactory,
                                                          lines: list[str], n_shards: int, bom: bool) -> None:
    path = tmp_path_factory.mktemp("pieces") / "in.jsonl"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + "".join(lines).encode())
    whole = list(iter_records([path], "auto", 200))
    inputs = scan_inputs([path], n_shards, "auto")
    pieces = [p for shard in shard_pieces(inputs, n_shards) for p in shard]
    read = [r for p in pieces for r in iter_piece(p.path, "auto", 200, p.start, p.end, p.first_line)]
    assert read == whole
    assert inputs[0].sha256 and inputs[0].bytes == path.stat().st_size


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(_LINE, min_size=1, max_size=40), n_shards=st.integers(2, 9), block=st.integers(1, 97))
def test_cut_points_name_their_line_whatever_the_read_block(tmp_path_factory: pytest.TempPathFactory,
                                                             lines: list[str], n_shards: int, block: int) -> None:
    """Each cut is just after a newline and carries the 1-based number of the line it
    starts, also when the file is read in many blocks (line counting stops after the
    last cut) and when a cut falls on a block's edge."""
    import pipeline.execution.plan as plan

    path = tmp_path_factory.mktemp("cuts") / "in.jsonl"
    data = "".join(lines).encode()
    path.write_bytes(data)
    real = plan._BLOCK
    plan._BLOCK = block
    try:
        (scanned,) = scan_inputs([path], n_shards, "auto")
    finally:
        plan._BLOCK = real
    assert scanned.sha256 == hashlib.sha256(data).hexdigest()
    (whole,) = scan_inputs([path], n_shards, "auto")
    assert scanned.cuts == whole.cuts
    for offset, line in scanned.cuts:
        assert 0 < offset < len(data) and data[offset - 1:offset] == b"\n"
        assert line == data.count(b"\n", 0, offset) + 1


@settings(max_examples=40, deadline=None)
@given(lines=st.lists(_LINE, max_size=40), n_shards=st.integers(1, 9), mark=st.integers(1, 200),
       truncate=st.booleans())
def test_gzip_pieces_read_exactly_the_records_of_the_whole_file(
        tmp_path_factory: pytest.TempPathFactory, lines: list[str], n_shards: int, mark: int,
        truncate: bool) -> None:
    """A gzip NDJSON file is planned by its uncompressed bytes and cut at record boundaries
    marked while one pass decompresses it: its pieces, read in order (a reader parked where
    a piece ended reads on into the next), give the records of the whole file, lineage
    included; a cut stream ends with the same reject. Before, the file was one piece: a 10 MB
    file of 1 GB was one shard of 10.6 GB."""
    import gzip

    import pipeline.execution.gzip_plan as gzip_plan

    path = tmp_path_factory.mktemp("gz") / "in.jsonl.gz"
    data = gzip.compress("".join(lines).encode())
    path.write_bytes(data[: len(data) * 2 // 3] if truncate else data)
    whole = list(iter_records([path], "auto", 200))
    real = gzip_plan.GZIP_MARK
    gzip_plan.GZIP_MARK = mark
    try:
        inputs = scan_inputs([path], n_shards, "auto")
    finally:
        gzip_plan.GZIP_MARK = real
    pieces = [p for shard in shard_pieces(inputs, n_shards) for p in shard]
    read = [r for p in pieces for r in iter_piece(p.path, "auto", 200, p.start, p.end, p.first_line)]
    assert read == whole
    assert inputs[0].bytes == path.stat().st_size and inputs[0].sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    if not truncate:
        assert inputs[0].planned == len("".join(lines).encode())


def test_a_gzip_file_is_decompressed_about_once_per_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gzip

    import pipeline.execution.gzip_plan as gzip_plan
    import pipeline.ingest.adapters._io as io_mod

    path = tmp_path / "big.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        fh.write("".join(f'{{"trajectory_id": "t{i}", "messages": []}}\n' for i in range(2000)))
    monkeypatch.setattr(gzip_plan, "GZIP_MARK", 2000)
    (scanned,) = scan_inputs([path], 8, "auto")
    pieces = [p for shard in shard_pieces([scanned], 8) for p in shard]
    assert len(pieces) == 8 and [p.first_line for p in pieces][:2] == [1, pieces[1].first_line]
    opened = []
    real = io_mod.open_binary
    monkeypatch.setattr(io_mod, "open_binary", lambda p: opened.append(p) or real(p))
    io_mod._PARKED.clear()
    # (canonical: "auto" opens each piece's head once more to detect the format)
    ids = [r.text for p in pieces for r in iter_piece(p.path, "canonical", 200, p.start, p.end, p.first_line)]
    assert len(ids) == 2000 and len(opened) == 1  # one reader read on from piece to piece
    list(iter_piece(pieces[2].path, "canonical", 200, pieces[2].start, pieces[2].end, pieces[2].first_line))
    assert len(opened) == 2  # a piece before the parked reader: decompressed again from the start


@pytest.mark.parametrize("bad", ["policy", "labels", "gold"])
def test_a_bad_user_file_is_reported_before_a_gzip_input_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str], bad: str) -> None:
    """Planning reads a gzip input whole (its uncompressed size sets the shards): a bad
    --policy, --labels or --gold is found first, not after minutes of decompressing."""
    import gzip

    import pipeline.execution.driver as driver

    path = tmp_path / "big.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        fh.write("".join(f'{{"trajectory_id": "t{i}", "messages": []}}\n' for i in range(50)))
    (tmp_path / "bad").write_text("[[[ not this file's format\n")
    import pipeline.execution.gzip_plan as gzip_plan

    indexed: list[object] = []

    def index(p: object) -> object:
        indexed.append(p)
        return real(p)
    real = gzip_plan.gzip_index
    monkeypatch.setattr(gzip_plan, "gzip_index", index)
    monkeypatch.setattr(driver, "gzip_index", index, raising=False)
    code = main(["score", str(path), "--out", str(tmp_path / "run"), f"--{bad}", str(tmp_path / "bad")])
    assert indexed == []  # the gzip file was never read
    assert code == 2 and bad in capsys.readouterr().err.lower()


def test_shards_are_contiguous_and_unsplittable_files_stay_whole(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text("".join(f'{{"trajectory_id": "a{i}", "messages": []}}\n' for i in range(50)))
    import gzip

    with gzip.open(tmp_path / "b.jsonl.gz", "wt") as fh:
        fh.write("".join(f'{{"trajectory_id": "b{i}", "messages": []}}\n' for i in range(50)))
    files = [tmp_path / "a.jsonl", tmp_path / "b.jsonl.gz"]
    shards = shard_pieces(scan_inputs(files, 6, "auto"), 6)
    flat = [p for s in shards for p in s]
    assert [p.path for p in flat if p.path.name == "b.jsonl.gz"] == [files[1]]  # one piece, whole
    assert all(p.start == 0 and p.end is None for p in flat if p.path == files[1])
    a_pieces = [p for p in flat if p.path == files[0]]
    assert len(a_pieces) > 1 and all(x.end == y.start for x, y in zip(a_pieces, a_pieces[1:]))


def _dup_corpus(path: Path) -> None:
    with path.open("w") as fh:
        for i in range(120):
            tid = f"t{i % 37}"  # every id several times, spread over the whole file
            body = traj(tid, user(f"task {i}"), calls((f"c{i}", "read_file", {"path": f"n{i}.txt"})),
                        result(f"c{i}", f"note {i}"), suite=f"s{i % 2}") if i % 5 else {"trajectory_id": tid,
                                                                                         "messages": []}
            fh.write(json.dumps(body) + "\n")


@pytest.mark.parametrize("shards, workers", [(4, 1), (7, 2)])
def test_duplicates_across_shards_equal_one_shard(tmp_path: Path, shards: int, workers: int) -> None:
    corpus = tmp_path / "dups.jsonl"
    _dup_corpus(corpus)
    assert main(["score", str(corpus), "--out", str(tmp_path / "one"), "--shards", "1", "--quiet"]) == 0
    out = tmp_path / "many"
    assert main(["score", str(corpus), "--out", str(out), "--shards", str(shards), "--workers", str(workers),
                 "--quiet"]) == 0
    assert table_contents(out) == table_contents(tmp_path / "one")
    again = tmp_path / "again"
    assert main(["score", str(corpus), "--out", str(again), "--shards", str(shards), "--workers", str(3 - workers),
                 "--quiet"]) == 0
    assert parquet_digests(again) == parquet_digests(out)  # same settings: same bytes


def test_tables_are_shard_files_in_order_one_folder_per_partition(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["score", str(SAMPLE / "corpus"), "--out", str(out), "--shards", "4", "--quiet"]) == 0
    steps = sorted(p.name for p in (out / "steps").glob("*.parquet"))
    assert steps and all(n.startswith("part-") for n in steps)
    suites = sorted(p.name for p in (out / "verdicts").iterdir())
    assert suites and all(s.startswith("suite=") for s in suites)
    assert not (tmp_path / ".run.work").exists()


def test_a_shard_lost_after_scoring_is_never_published(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline.errors import SchemaValidationError
    from pipeline.execution import driver

    real = driver._score

    def lose_shard(*args: object) -> list[dict[str, object]]:
        markers = real(*args)  # type: ignore[arg-type]
        markers[0]["files"]["verdicts"] = []  # as if its files vanished from shared storage
        markers[0]["files"]["attrition"] = []
        return markers

    monkeypatch.setattr(driver, "_score", lose_shard)
    out = tmp_path / "run"
    with pytest.raises(SchemaValidationError, match="records read"):
        driver.execute(RunConfig(inputs=(SAMPLE / "corpus",), out=out, shards=3, workers=1),
                       RunConfig(inputs=(), out=out).tables)
    assert not out.exists()
    work = tmp_path / ".run.work" / "out"
    assert len(list(work.glob("steps/shard-*.parquet"))) >= 1  # moved back: --resume can publish


def test_resume_after_a_failed_publish_equals_a_clean_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    args = ["score", str(SAMPLE / "corpus"), "--out", str(tmp_path / "run"), "--shards", "3", "--quiet"]
    assert main(["score", str(SAMPLE / "corpus"), "--out", str(tmp_path / "clean"), "--shards", "3", "--quiet"]) == 0
    with monkeypatch.context() as patch:
        def boom(*a: object, **k: object) -> None:
            raise OSError(28, "No space left on device")

        patch.setattr("pipeline.execution.publish.publish_to", boom)
        assert main(args) == 1
    assert not (tmp_path / "run").exists()
    assert main([*args, "--resume"]) == 0
    assert parquet_digests(tmp_path / "run") == parquet_digests(tmp_path / "clean")


def test_resume_after_a_kill_during_publish_rescores_the_moved_shards(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # SIGKILL while publishing: some shard files were already moved into a staging folder
    # that no rollback ever puts back (the next run removes the dead run's staging folder)
    corpus = tmp_path / "dups.jsonl"
    _dup_corpus(corpus)
    assert main(["score", str(corpus), "--out", str(tmp_path / "clean"), "--shards", "3", "--quiet"]) == 0
    args = ["score", str(corpus), "--out", str(tmp_path / "run"), "--shards", "3", "--quiet"]
    with monkeypatch.context() as patch:
        def killed(config: object, out: object, work: Path, *rest: object) -> None:
            for f in sorted((work / "out").rglob("shard-00001.*.parquet")):
                f.unlink()  # moved away, never moved back
            raise SystemExit(137)

        patch.setattr("pipeline.execution.driver.publish_run", killed)
        with pytest.raises(SystemExit):
            main(args)
    assert main([*args, "--resume"]) == 0
    assert table_contents(tmp_path / "run") == table_contents(tmp_path / "clean")


def test_a_shard_file_never_shares_its_temp_name_with_another_writer(tmp_path: Path) -> None:
    # a Ray task of a killed run can still be writing the same shard when --resume
    # (same run token) scores it again: their temp files must not be one path
    import polars as pl

    from pipeline.execution.shard import _write

    target = tmp_path / "verdicts" / "shard-00000.tok.parquet"
    target.parent.mkdir()
    (target.parent / (target.name + ".tmp")).mkdir()  # the other writer's temp path, in use
    _write(pl.DataFrame({"a": [1, 2]}), target)
    assert pl.read_parquet(target)["a"].to_list() == [1, 2]
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name, target.name + ".tmp"]


def test_resume_with_other_workers_continues_the_killed_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    # the default shard count follows --workers (driver.shard_count): a rerun after a
    # kill on a smaller machine must still find the finished shards, not score them anew
    monkeypatch.setattr("pipeline.execution.driver.MIN_SPLIT_BYTES", 1)  # the sample: 2 shards on 2 workers
    args = ["score", str(SAMPLE / "corpus"), "--out", str(tmp_path / "run"), "--quiet"]
    assert main(["score", str(SAMPLE / "corpus"), "--out", str(tmp_path / "clean"), "--workers", "1", "--quiet"]) == 0
    with monkeypatch.context() as patch:
        def boom(*a: object, **k: object) -> None:
            raise OSError(28, "No space left on device")

        patch.setattr("pipeline.execution.publish.publish_to", boom)
        assert main([*args, "--workers", "2"]) == 1
    capsys.readouterr()
    assert main([*args, "--workers", "1", "--resume"]) == 0
    assert "resuming: 2 of 2 shards already done" in capsys.readouterr().err
    assert table_contents(tmp_path / "run") == table_contents(tmp_path / "clean")


def _published_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[int]]:
    """A 2-shard, 2-worker run of the sample whose publish failed (every shard done), a
    clean run in ``clean``; returns the run's args and :func:`_counted_pools`."""
    monkeypatch.setattr("pipeline.execution.driver.MIN_SPLIT_BYTES", 1)  # the sample: 2 shards on 2 workers
    args = ["score", str(SAMPLE / "corpus"), "--out", str(tmp_path / "run"), "--workers", "2", "--quiet"]
    assert main(["score", str(SAMPLE / "corpus"), "--out", str(tmp_path / "clean"), "--workers", "1", "--quiet"]) == 0
    with monkeypatch.context() as patch:
        def boom(*a: object, **k: object) -> None:
            raise OSError(28, "No space left on device")

        patch.setattr("pipeline.execution.publish.publish_to", boom)
        assert main(args) == 1
    return args, _counted_pools(monkeypatch)


def _counted_pools(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that records every ``WorkerPool`` started from now on (its worker count)."""
    from pipeline.execution import engines

    started: list[int] = []
    real_init = engines.WorkerPool.__init__

    def counted(self: engines.WorkerPool, workers: int, *args: Any, **kwargs: Any) -> None:
        started.append(workers)
        real_init(self, workers, *args, **kwargs)

    monkeypatch.setattr(engines.WorkerPool, "__init__", counted)
    return started


def test_resume_with_every_shard_done_starts_no_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a run killed after its last shard (here: its publish failed) leaves nothing to score:
    # its --resume publishes without paying for worker processes that would do nothing
    args, started = _published_nothing(tmp_path, monkeypatch)
    assert main([*args, "--resume"]) == 0
    assert started == []
    assert table_contents(tmp_path / "run") == table_contents(tmp_path / "clean")


def test_resume_with_a_shard_left_scores_it_on_a_pool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    args, started = _published_nothing(tmp_path, monkeypatch)
    markers = sorted((tmp_path / ".run.work" / "out").glob("shard-00001.*.done"))
    assert len(markers) == 1
    markers[0].unlink()  # as if killed before shard 1 ended
    capsys.readouterr()
    assert main([*args, "--resume"]) == 0
    assert "resuming: 1 of 2 shards already done" in capsys.readouterr().err
    assert started == [2]
    assert table_contents(tmp_path / "run") == table_contents(tmp_path / "clean")


def test_resume_with_every_shard_done_but_stale_priors_rescores_on_a_pool(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # killed after the first pass of every shard, before the second pass rescored a shard
    # whose ids an earlier shard has: the --resume finds every shard done, yet one stale,
    # and starts its pool (lazily) for that one
    args, started = _published_nothing(tmp_path, monkeypatch)
    [marker] = sorted((tmp_path / ".run.work" / "out").glob("shard-00001.*.done"))
    found = json.loads(marker.read_text())
    found["priors"] = "0" * 64  # not the priors the second pass computes: stale
    marker.write_text(json.dumps(found))
    capsys.readouterr()
    assert main([*args, "--resume"]) == 0
    assert "resuming: 2 of 2 shards already done" in capsys.readouterr().err
    assert started == [2]  # the stale shard was scored again, on the pool started for it
    assert table_contents(tmp_path / "run") == table_contents(tmp_path / "clean")


def test_resume_without_a_killed_run_starts_its_pool_before_planning(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # a nightly job that always passes --resume: with no work folder there is nothing to
    # resume, so its workers start before planning like any run's
    from pipeline.execution import driver

    monkeypatch.setattr("pipeline.execution.driver.MIN_SPLIT_BYTES", 1)  # the sample: 2 shards on 2 workers
    started = _counted_pools(monkeypatch)
    real_scan = driver.scan_inputs
    at_planning: list[list[int]] = []

    def scan(*a: object, **k: object) -> object:
        at_planning.append(list(started))
        return real_scan(*a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(driver, "scan_inputs", scan)
    assert main(["score", str(SAMPLE / "corpus"), "--out", str(tmp_path / "run"), "--workers", "2",
                 "--resume", "--quiet"]) == 0
    assert at_planning == [[2]] and started == [2]


def test_a_fresh_work_folder_is_made_while_a_stale_writer_remakes_the_old_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a killed run's worker can still write its shard (mkdir -p of its table folder) between
    # a fresh run's removal of the old folder and the making of its own: the fresh run goes
    # on (the stale file carries the old token: never counted). Before: "File exists"
    import shutil

    from pipeline.execution import workdir

    out = tmp_path / "run"
    old = workdir.open_work(out, None, "plan-a", resume=False)
    real = shutil.rmtree

    def removed_then_remade(path: Path, ignore_errors: bool = False) -> None:
        real(path, ignore_errors=ignore_errors)
        stale = Path(path) / "out" / "steps" / f"{old.name(0)}.parquet"
        stale.parent.mkdir(parents=True)
        stale.write_bytes(b"stale")

    monkeypatch.setattr(workdir.shutil, "rmtree", removed_then_remade)
    fresh = workdir.open_work(out, None, "plan-b", resume=False)
    assert fresh.token != old.token and fresh.done(0) is None
    assert (fresh.local / workdir.PLAN_FILE).exists()
