"""Stage `steps`: golden fixtures (explode order, call/result pairing, exec_status)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.golden_runner import check_golden, golden_cases


@pytest.mark.parametrize("path", golden_cases("steps"), ids=lambda p: p.stem)
def test_golden(path: Path) -> None:
    check_golden(path, until="steps")
