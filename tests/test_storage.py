"""Shared storage: inputs, RUN_DIR and the shard work folder as URIs, through pyarrow
filesystems, against a real S3 API (moto server on localhost). The CLI builds its
filesystem from the URI, configured by the standard AWS environment variables."""

from __future__ import annotations

import gzip
import json
import shutil
import socket
import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from pipeline import run
from pipeline.execution import publish, shard, workdir
from pipeline.cli import main
from pipeline.config import RunConfig, sample_root
from pipeline.ingest.discovery import discover_inputs
from pipeline.ingest.reader import iter_records
from pipeline.execution.shard import ShardTask
from tests.conftest import parquet_digests

moto_server = pytest.importorskip("moto.server")

SAMPLE = sample_root()
SAMPLE_ARGS = ["--labels", str(SAMPLE / "labels.jsonl"), "--gold", str(SAMPLE / "gold.jsonl"), "--quiet"]


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


@pytest.fixture
def s3(endpoint: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[pafs.S3FileSystem, str]:
    """A fresh bucket; the environment points every S3 client (also Ray's and the
    worker processes') at the moto server."""
    for key, value in {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "testing",
                       "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
                       "AWS_EC2_METADATA_DISABLED": "true",
                       "AWS_CONFIG_FILE": str(tmp_path / "none"),
                       "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none")}.items():
        monkeypatch.setenv(key, value)
    fs = pafs.S3FileSystem(endpoint_override=endpoint.removeprefix("http://"), scheme="http",
                           access_key="testing", secret_key="testing", region="us-east-1",
                           allow_bucket_creation=True)
    bucket = f"lg-{uuid.uuid4().hex[:12]}"
    fs.create_dir(bucket)
    return fs, bucket


def _upload(fs: pafs.S3FileSystem, local: Path, dest: str) -> None:
    pafs.copy_files(str(local), dest, source_filesystem=pafs.LocalFileSystem(), destination_filesystem=fs)


def _download(fs: pafs.S3FileSystem, src: str, local: Path) -> Path:
    pafs.copy_files(src, str(local), source_filesystem=fs, destination_filesystem=pafs.LocalFileSystem())
    return local


def _keys(fs: pafs.S3FileSystem, prefix: str) -> list[str]:
    return sorted(i.path[len(prefix) + 1:] for i in fs.get_file_info(pafs.FileSelector(prefix, recursive=True,
                                                                                         allow_not_found=True))
                  if i.type == pafs.FileType.File)


def _assert_same_tables(got: Path, want: Path, source_map: tuple[str, str]) -> None:
    """Every Parquet file of ``want`` has the same rows in ``got``, ``source_file``
    mapped from URI to local path; tables without lineage are byte-identical."""
    assert sorted(p.relative_to(got) for p in got.rglob("*.parquet")) == \
        sorted(p.relative_to(want) for p in want.rglob("*.parquet")) != []
    for path in want.rglob("*.parquet"):
        a, b = pq.read_table(got / path.relative_to(want)).to_pylist(), pq.read_table(path).to_pylist()
        if a and "source_file" in a[0]:
            for row in a:
                row["source_file"] = row["source_file"].replace(*source_map)
        else:
            assert (got / path.relative_to(want)).read_bytes() == path.read_bytes(), path
        assert a == b, path


@pytest.mark.parametrize("shards", [[], ["--shards", "5"]])  # whole files / byte ranges read from S3
def test_s3_input_and_out_equal_a_local_run(s3: tuple[pafs.S3FileSystem, str], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str], shards: list[str]) -> None:
    fs, bucket = s3
    _upload(fs, SAMPLE / "corpus", f"{bucket}/corpus")
    assert main(["score", str(SAMPLE / "corpus"), "--out", str(tmp_path / "local"), *SAMPLE_ARGS, *shards]) == 0
    uri = f"s3://{bucket}/runs/nightly"
    assert main(["score", f"s3://{bucket}/corpus/", "--out", uri, *SAMPLE_ARGS, *shards, "--summary"]) == 0
    assert "verdicts by route:" in capsys.readouterr().out
    keys = _keys(fs, f"{bucket}/runs/nightly")
    assert {"manifest.json", "report.html", "report.md", "steps/part-00000.parquet", "metrics/part-0.parquet"} <= set(keys)
    got = _download(fs, f"{bucket}/runs/nightly", tmp_path / "s3")
    _assert_same_tables(got, tmp_path / "local", (f"s3://{bucket}/corpus", str(SAMPLE / "corpus")))
    manifest = json.loads((got / "manifest.json").read_text())
    local = json.loads((tmp_path / "local" / "manifest.json").read_text())
    assert [i["path"] for i in manifest["inputs"]] == [f"s3://{bucket}/corpus/{p.name}"
                                                       for p in sorted((SAMPLE / "corpus").glob("*.jsonl"))]
    assert [(i["sha256"], i["bytes"]) for i in manifest["inputs"]] == [(i["sha256"], i["bytes"]) for i in local["inputs"]]
    assert manifest["row_counts"] == local["row_counts"]


def test_prefix_is_walked_like_a_local_folder(s3: tuple[pafs.S3FileSystem, str], tmp_path: Path) -> None:
    """Same files, same order (a folder's files before its subfolders), gzip streamed,
    hidden and label files skipped, over-long lines rejected without being held."""
    root = tmp_path / "in"
    (root / "a" / "deep").mkdir(parents=True)
    (root / ".hidden").mkdir()
    lines = (SAMPLE / "corpus" / "file-net.jsonl").read_text().splitlines()
    (root / "z.jsonl").write_text("\n".join(lines[:5]) + "\n" + "x" * 5000 + "\n" + lines[5] + "\n")
    (root / "a" / "m.jsonl.gz").write_bytes(gzip.compress(("\n".join(lines[6:12]) + "\n").encode()))
    (root / "a" / "deep" / "b.jsonl").write_text("\n".join(lines[12:15]) + "\n")
    (root / "a" / "eval_1.json").write_text(json.dumps({"final_score": 1, "checkpoints": []}))
    (root / ".hidden" / "x.jsonl").write_text(lines[0] + "\n")
    (root / "notes.txt").write_text("not a transcript")
    _upload(fs := s3[0], root, f"{s3[1]}/in")
    uri = f"s3://{s3[1]}/in"
    local_files = discover_inputs([root])
    remote_files = discover_inputs([uri])
    assert [str(p) for p in remote_files] == [str(p).replace(str(root), uri) for p in local_files]
    assert [p.name for p in local_files] == ["z.jsonl", "m.jsonl.gz", "b.jsonl"]
    local_recs = list(iter_records([root], max_record_bytes=4096))
    remote_recs = list(iter_records([uri], max_record_bytes=4096))
    assert [r.reject_reason for r in remote_recs].count("record_too_large") == 1
    assert [(r.source_file.replace(uri, str(root)), r.source_line, r.text, r.reject_reason) for r in remote_recs] == \
        [(r.source_file, r.source_line, r.text, r.reject_reason) for r in local_recs]
    assert fs.get_file_info(f"{s3[1]}/in/z.jsonl").type == pafs.FileType.File


def test_inspect_eval_archive_is_read_from_s3(s3: tuple[pafs.S3FileSystem, str], tmp_path: Path) -> None:
    fs, bucket = s3
    log = tmp_path / "run.eval"
    with zipfile.ZipFile(log, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.json", json.dumps({"eval": {"task": "t", "eval_id": "e1"}}))
        for i in (1, 2):
            zf.writestr(f"samples/{i}_epoch_1.json", json.dumps(
                {"id": i, "epoch": 1, "messages": [{"role": "user", "content": f"hello {i}"},
                                                   {"role": "assistant", "content": "hi"}]}))
    _upload(fs, log, f"{bucket}/logs/run.eval")
    uri = f"s3://{bucket}/logs/run.eval"
    local = [(r.source_line, r.text, r.reject_reason) for r in iter_records([log])]
    remote = list(iter_records([uri]))
    assert {r.source_file for r in remote} == {uri}
    assert [(r.source_line, r.text, r.reject_reason) for r in remote] == local and len(local) == 2


def test_goose_session_store_is_read_from_s3(s3: tuple[pafs.S3FileSystem, str], tmp_path: Path) -> None:
    """A SQLite store needs seeks: read from a temporary local copy, as an .eval archive is;
    a prefix walk takes it (a remote .db is not opened to be told from other databases)."""
    from tests.test_adapters_goose import exfiltration
    from tests.test_adapters_goose_store import store

    fs, bucket = s3
    db = store(tmp_path / "sessions.db", {"20251201_1": exfiltration(), "20251201_2": exfiltration()})
    _upload(fs, db, f"{bucket}/goose/sessions.db")
    uri = f"s3://{bucket}/goose/sessions.db"
    local = [(r.source_line, r.text, r.reject_reason) for r in iter_records([db])]
    remote = list(iter_records([f"s3://{bucket}/goose/"]))
    assert {r.source_file for r in remote} == {uri}
    assert [(r.source_line, r.text, r.reject_reason) for r in remote] == local and len(local) == 2


def test_existing_s3_out_is_refused_unless_overwrite(s3: tuple[pafs.S3FileSystem, str],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    fs, bucket = s3
    corpus = str(SAMPLE / "corpus" / "file-net.jsonl")
    out = f"s3://{bucket}/runs/steps"
    assert main(["explode", corpus, "--out", out, "--quiet"]) == 0
    capsys.readouterr()
    assert main(["explode", corpus, "--out", out, "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "already exists" in err and "--overwrite" in err
    with fs.open_output_stream(f"{bucket}/runs/steps/steps/stale.parquet") as fh:
        fh.write(b"old")
    assert main(["explode", corpus, "--out", out, "--quiet", "--overwrite"]) == 0
    assert _keys(fs, f"{bucket}/runs/steps") == ["manifest.json", "steps/part-00000.parquet"]
    with fs.open_output_stream(f"{bucket}/other/notes.txt") as fh:  # a prefix holding no run: never replaced
        fh.write(b"mine")
    capsys.readouterr()
    assert main(["explode", corpus, "--out", f"s3://{bucket}/other", "--quiet"]) == 2
    assert main(["explode", corpus, "--out", f"s3://{bucket}/other", "--quiet", "--overwrite"]) == 2
    assert "not a litmus-gate run" in capsys.readouterr().err
    assert _keys(fs, f"{bucket}/other") == ["notes.txt"]


def test_manifest_is_uploaded_last(s3: tuple[pafs.S3FileSystem, str], monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A failure before the manifest upload leaves tables but no manifest.json (no
    committed run); --overwrite then replaces the unfinished upload."""
    fs, bucket = s3
    args = ["score", str(SAMPLE / "corpus"), "--out", f"s3://{bucket}/runs/r", "--quiet"]

    def fail(out: object, manifest: bytes) -> None:
        raise OSError("injected: connection lost before the manifest upload")

    with monkeypatch.context() as patch:
        patch.setattr(publish, "_commit", fail)
        assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "injected" in err
    keys = _keys(fs, f"{bucket}/runs/r")
    assert "manifest.json" not in keys and {"steps/part-00000.parquet", "report.html"} <= set(keys)
    assert main([*args, "--overwrite"]) == 0
    assert "manifest.json" in _keys(fs, f"{bucket}/runs/r")


def test_resume_with_work_dir_on_s3(s3: tuple[pafs.S3FileSystem, str], tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    fs, bucket = s3
    inputs = (SAMPLE / "corpus",)
    assert main(["score", str(SAMPLE / "corpus"), "--out", str(tmp_path / "local"), "--shards", "2",
                 "--workers", "1", "--quiet"]) == 0
    config = RunConfig(inputs=inputs, out=tmp_path / "remote", shards=2, workers=1,
                       work_dir=f"s3://{bucket}/work")
    real, scored, lost = shard._score_local, [], [1]

    def flaky(task: ShardTask, local: Path) -> dict[str, object]:
        scored.append(task.shard)
        if task.shard in lost:
            lost.remove(task.shard)
            raise RuntimeError("worker lost")
        return real(task, local)

    monkeypatch.setattr(shard, "_score_local", flaky)
    with pytest.raises(RuntimeError):
        run.score(config)
    folders = {k.split("/", 1)[0] for k in _keys(fs, f"{bucket}/work")}
    assert len(folders) == 1 and folders.pop().startswith(".remote-")  # keyed by the full RUN_DIR path
    work = f"{bucket}/work/" + next(iter({k.split("/", 1)[0] for k in _keys(fs, f"{bucket}/work")}))
    keys = _keys(fs, work)
    done = sorted(k for k in keys if k.endswith(".done"))
    assert "plan.json" in keys and len(done) == 1 and done[0].startswith("out/shard-00000.")
    assert not any(k.startswith("spill/") for k in keys)  # shards read the inputs: no copy of the corpus
    assert not (tmp_path / ".remote.work").exists()  # nothing beside RUN_DIR: the work folder is on S3
    scored.clear()
    run.score(RunConfig(**{**config.__dict__, "resume": True, "overwrite": True}))
    assert scored == [1]  # shard 0 is skipped: its done marker is in the remote work folder
    assert parquet_digests(tmp_path / "remote") == parquet_digests(tmp_path / "local") != {}
    assert _keys(fs, work) == []


def test_runs_sharing_a_work_dir_never_share_a_work_folder(s3: tuple[pafs.S3FileSystem, str], tmp_path: Path) -> None:
    fs, bucket = s3
    a = workdir.open_work(tmp_path / "teamA" / "nightly", f"s3://{bucket}/work", "plan-a", resume=False)
    b = workdir.open_work(tmp_path / "teamB" / "nightly", f"s3://{bucket}/work", "plan-b", resume=False)
    assert a.remote is not None and b.remote is not None and a.remote != b.remote
    assert {k.split("/", 1)[0] for k in _keys(fs, f"{bucket}/work")} == {a.remote.path.rsplit("/", 1)[1],
                                                                         b.remote.path.rsplit("/", 1)[1]}
    a.remove()
    b.remove()


def test_ray_with_work_dir_on_s3_equals_local(s3: tuple[pafs.S3FileSystem, str], tmp_path: Path) -> None:
    pytest.importorskip("ray")
    fs, bucket = s3
    args = [str(SAMPLE / "corpus"), "--labels", str(SAMPLE / "labels.jsonl"), "--shards", "2", "--quiet"]
    assert main(["score", *args, "--out", str(tmp_path / "local"), "--workers", "2"]) == 0
    assert main(["score", *args, "--out", str(tmp_path / "ray"), "--workers", "2", "--engine", "ray",
                 "--work-dir", f"s3://{bucket}/work"]) == 0
    assert parquet_digests(tmp_path / "ray") == parquet_digests(tmp_path / "local") != {}
    assert _keys(fs, f"{bucket}/work") == []  # removed after the run


def test_file_uri_input(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE / "corpus", corpus)
    assert main(["score", str(corpus), "--out", str(tmp_path / "local"), *SAMPLE_ARGS]) == 0
    assert main(["score", f"file://{corpus}", "--out", str(tmp_path / "uri"), *SAMPLE_ARGS]) == 0
    _assert_same_tables(tmp_path / "uri", tmp_path / "local", (f"file://{corpus}", str(corpus)))
    manifest = json.loads((tmp_path / "uri" / "manifest.json").read_text())
    assert manifest["inputs"][0]["path"] == f"file://{corpus}/file-net.jsonl"


@pytest.mark.parametrize("argv, needle", [
    (["score", "s3://{bucket}/missing.jsonl", "--out", "{tmp}/r"], "input not found: s3://{bucket}/missing.jsonl"),
    (["score", "s3://{bucket}/missing/", "--out", "{tmp}/r"], "input not found: s3://{bucket}/missing"),
    (["score", "s3://no-such-bucket-{bucket}/x.jsonl", "--out", "{tmp}/r"], "s3://no-such-bucket-{bucket}/x.jsonl"),
    (["score", "s3:///key.jsonl", "--out", "{tmp}/r"], "cannot open s3:///key.jsonl"),
    (["score", "klingon://x/y.jsonl", "--out", "{tmp}/r"], "cannot open klingon://x/y.jsonl"),
    (["score", "{corpus}", "--out", "s3://no-such-bucket-{bucket}/runs/r"], "'no-such-bucket-{bucket}' of s3://"),
    (["score", "{corpus}", "--out", "{tmp}/r", "--work-dir", "klingon://w"], "cannot open klingon://w"),
    (["score", "s3://{bucket}/x.jsonl", "--out", "{tmp}/r", "UNREACHABLE"], "cannot read input s3://"),
])
def test_storage_errors_exit_2_with_one_line(s3: tuple[pafs.S3FileSystem, str], tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                            argv: list[str], needle: str) -> None:
    if argv[-1] == "UNREACHABLE":
        argv = argv[:-1]
        monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens there
    args = [a.format(bucket=s3[1], tmp=tmp_path, corpus=SAMPLE / "corpus" / "file-net.jsonl") for a in argv]
    assert main([*args, "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle.format(bucket=s3[1]) in err, err
    assert not (tmp_path / "r").exists()


def test_credentials_in_a_uri_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # they would end up in the manifest, in every source_file value and in error messages
    code = main(["score", "s3://AKIAEXAMPLE:s3cr3t@bucket/corpus.jsonl", "--out", str(tmp_path / "run"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "credentials in a URI are refused" in err and "s3cr3t" not in err
    assert not (tmp_path / "run").exists()
