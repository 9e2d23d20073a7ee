"""The shell analyser's layout: per-command grammar as data (pipeline/analysis/shell/tables.py), each
command in one handler family. Import direction and module size: tests/test_layout.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.analysis.shell import commands as shell_commands, tables as shell_tables
from pipeline.analysis.shell import analyse_command

SHELL = Path(__file__).resolve().parents[1] / "pipeline" / "analysis" / "shell"


def test_a_command_belongs_to_one_family() -> None:
    derived = [*shell_tables.READERS, *shell_tables.WRAPPERS, *shell_tables.CODE_FLAGS,
               *shell_tables.COMPRESS_SUFFIX, *shell_tables.DECOMPRESSORS]
    listed = [name for names in shell_tables.COMMAND_FAMILIES.values() for name in names.split()]
    names = derived + listed
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})
    assert set(shell_commands.HANDLERS) == set(names)


def test_every_family_has_its_handler() -> None:
    for family, names in shell_tables.COMMAND_FAMILIES.items():
        handler = shell_commands.HANDLERS[names.split()[0]]
        assert handler.__name__ == f"h_{family}"
    with pytest.raises(LookupError):
        shell_commands._handler("no_such_family")


def test_every_option_grammar_is_used() -> None:
    sources = "".join(p.read_text(encoding="utf-8") for p in SHELL.glob("cmd_*.py"))
    unused = [key for key in shell_tables.OPTIONS if f'OPTIONS["{key}"]' not in sources]
    assert not unused


@pytest.mark.parametrize(("cmd", "field", "value"), [
    ("tail -n 5 app.log", "reads", ("app.log",)),     # READERS: -n takes a value, 5 is not a file
    ("sudo -u bob rm -rf /srv", "deletes", ("/srv",)),  # WRAPPERS: -u takes a value
    ("pigz big.tar", "writes", ("big.tar.gz",)),        # COMPRESS_SUFFIX
    ("7za a out.7z secrets/", "writes", ("out.7z",)),   # COMMAND_FAMILIES["zip"]
    ("sort -k 2 -o out.txt in.txt", "writes", ("out.txt",)),  # OPTIONS["sort"]: -k takes a value
    ("wget -O page.html https://h/p", "writes", ("page.html",)),  # OPTIONS["wget"]
])
def test_tables_drive_the_handlers(cmd: str, field: str, value: tuple[str, ...]) -> None:
    result = analyse_command(cmd)
    assert not result.opaque, result.opaque_reason
    assert getattr(result, field) == value
