"""Side by side: variants of one SQL stage on the same shard, in one connection.

Runs a shard's stages (``pipeline.stages.tables``: steps, actions, flows, verdicts, as a
worker does) on FILE up to the ``materialize`` call of ``--stage`` (default ``edges``),
keeping the parameters that call passes, then times each variant file (the stage's own
``sql/<stage>.sql`` first, then the given files) ``--rounds`` times in alternation on
the tables built so far: CPU seconds of the process (all threads) per run, and the
rows of each variant compared with the stage's own (``except all`` both ways). Exit 1
when a variant's rows differ. A stage built by ``materialize_per_rule`` is not a
``materialize`` call and cannot be chosen.

Runs its own checkout's code (the repository above this file comes first on sys.path).

Usage: python bench/sql_variants.py FILE VARIANT.sql [VARIANT.sql ...] [--stage edges] [--rounds 3] [--threads 1]
"""

from __future__ import annotations

import argparse
import dataclasses
import resource
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


class _Reached(Exception):
    """Raised by the patched ``materialize`` at the stage under test."""

    def __init__(self, params: dict[str, Any]) -> None:
        super().__init__()
        self.params = params


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def compare(path: Path, variants: list[Path], stage: str = "edges", rounds: int = 3,
            threads: int = 1) -> dict[str, Any]:
    """CPU seconds per run of each variant (the stage's own SQL first) and whether its rows
    equal the stage's own."""
    import pipeline.stages.tables as ps
    from pipeline.config import RunConfig
    from pipeline.ingest.reader import iter_records
    from pipeline.ingest.tables_in import read_labels
    from pipeline.policy import load_policy
    from pipeline.sql import _used, load_sql

    config = dataclasses.replace(RunConfig(inputs=(path,), out=Path("unused")), threads=threads)
    policy = load_policy(None)
    con = ps.connect(config)
    records = ps.records_table(iter_records([path], config.fmt, int(policy.setting("max_record_bytes"))))
    ps.register_inputs(con, records, policy, read_labels(con, None))
    real = ps.materialize

    def stop_at_stage(con_: Any, name: str, **params: Any) -> None:
        if name == stage:
            raise _Reached(params)
        real(con_, name, **params)

    ps.materialize = stop_at_stage
    params: dict[str, Any] | None = None
    try:
        ps.steps(con)
        ps.actions(con)
        ps.flows(con, policy)
        ps.verdicts(con, policy)
    except _Reached as reached:
        params = reached.params
    finally:
        ps.materialize = real
    if params is None:
        raise SystemExit(f"no materialize call builds {stage!r}")
    texts = [("own", load_sql(stage))] + [(str(v), v.read_text(encoding="utf-8")) for v in variants]
    cpu: dict[str, list[float]] = {name: [] for name, _ in texts}
    for _ in range(rounds):
        for i, (name, text) in enumerate(texts):
            start = _cpu()
            con.execute(f"create or replace temp table variant_{i} as {text}", _used(text, params))
            cpu[name].append(_cpu() - start)
    results = []
    for i, (name, _) in enumerate(texts):
        n = con.execute(f"select count(*) from variant_{i}").fetchall()[0][0]
        extra, missing = (con.execute(f"select count(*) from (select * from variant_{a} except all "
                                      f"select * from variant_{b})").fetchall()[0][0]
                          for a, b in ((i, 0), (0, i)))
        results.append({"variant": name, "cpu": cpu[name], "rows": n, "extra": extra, "missing": missing})
    return {"stage": stage, "file": str(path), "rounds": rounds, "variants": results}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("variants", type=Path, nargs="+")
    parser.add_argument("--stage", default="edges")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    res = compare(args.file, args.variants, args.stage, args.rounds, args.threads)
    print(f"| `{res['stage']}` variant | CPU s per run (median, range) | rows | rows not in own | own rows missing |")
    print("|---|---|---:|---:|---:|")
    for v in res["variants"]:
        print(f"| {v['variant']} | {statistics.median(v['cpu']):.3f} ({min(v['cpu']):.3f}-{max(v['cpu']):.3f}) "
              f"| {v['rows']:,} | {v['extra']:,} | {v['missing']:,} |")
    return 1 if any(v["extra"] or v["missing"] for v in res["variants"]) else 0


if __name__ == "__main__":
    raise SystemExit(main())
