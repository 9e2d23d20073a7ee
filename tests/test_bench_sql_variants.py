"""bench/sql_variants.py: variants of one SQL stage timed side by side on a shard, their
rows compared with the stage's own (the harness behind docs/design.md's `edges` figures)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from pipeline.config import sample_root
from pipeline.sql import load_sql

SPEC = importlib.util.spec_from_file_location(
    "sql_variants", Path(__file__).resolve().parent.parent / "bench" / "sql_variants.py")
assert SPEC is not None and SPEC.loader is not None
sql_variants = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(sql_variants)


def _sample_file() -> Path:
    return sorted((sample_root() / "corpus").glob("*.jsonl"))[0]


def test_same_sql_is_identical_and_a_changed_variant_is_caught(tmp_path: Path, capsys) -> None:
    own = load_sql("edges")
    same, changed = tmp_path / "same.sql", tmp_path / "changed.sql"
    same.write_text(own, encoding="utf-8")
    # one edge twice: a variant whose rows differ by exactly one
    changed.write_text(own.replace("select * from final",
                                   "select * from final union all (select * from final order by all limit 1)"),
                       encoding="utf-8")
    res = sql_variants.compare(_sample_file(), [same, changed], rounds=2)
    by_name = {v["variant"]: v for v in res["variants"]}
    assert by_name["own"]["rows"] > 0 and len(by_name["own"]["cpu"]) == 2
    assert (by_name[str(same)]["extra"], by_name[str(same)]["missing"]) == (0, 0)
    assert (by_name[str(changed)]["extra"], by_name[str(changed)]["missing"]) == (1, 0)
    assert sql_variants.main([str(_sample_file()), str(same), "--rounds", "1"]) == 0
    assert sql_variants.main([str(_sample_file()), str(changed), "--rounds", "1"]) == 1
    assert "| own |" in capsys.readouterr().out
