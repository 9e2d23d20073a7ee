"""Golden fixtures: tests/golden/<stage>/<case>.json holds input records, a query over
the stage's table and the expected rows, written by hand from the SPEC."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import REPO, rows, stage_connection

GOLDEN = REPO / "tests" / "golden"


def golden_cases(stage: str) -> list[Path]:
    return sorted((GOLDEN / stage).glob("*.json"))


def check_golden(path: Path, until: str) -> None:
    case: dict[str, Any] = json.loads(path.read_text())
    con = stage_connection(case["records"], labels=case.get("labels", []), until=until)
    got = rows(con, case["query"])
    assert got == case["expected"], f"{path.name}: {json.dumps(got, indent=1, default=str)}"
