"""The shell analyser's layout: per-command grammar as data (pipeline/shell_tables.py), each
command in one handler family, and modules that import one way and stay under 400 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pipeline import shell_commands, shell_tables
from pipeline.shell import analyse_command

PIPELINE = Path(__file__).resolve().parents[1] / "pipeline"
SHELL_MODULES = sorted(p for p in PIPELINE.glob("shell*.py"))


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
    sources = "".join(p.read_text(encoding="utf-8") for p in PIPELINE.glob("shell_cmd_*.py"))
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


def _imports(path: Path) -> set[str]:
    """pipeline.shell* modules a module imports, at any level (function bodies too)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "pipeline":
                out.update(f"pipeline.{a.name}" for a in node.names)
            else:
                out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m.removeprefix("pipeline.") for m in out if m.startswith("pipeline.shell")}


def test_shell_modules_import_one_way_and_stay_small() -> None:
    graph = {p.stem: _imports(p) for p in SHELL_MODULES}
    state: dict[str, int] = {}

    def visit(mod: str, path: list[str]) -> None:
        if state.get(mod) == 2:
            return
        assert state.get(mod) != 1, "import cycle: " + " -> ".join(path + [mod])
        state[mod] = 1
        for dep in graph.get(mod, ()):
            visit(dep, path + [mod])
        state[mod] = 2

    for mod in graph:
        visit(mod, [])
    assert "shell" not in {d for deps in graph.values() for d in deps}  # the entry point is on top
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in SHELL_MODULES}
    assert all(n <= 400 for n in sizes.values()), sizes
