"""The package layout: imports go one way down the data path, no cycles, small modules.

Layers, lowest first (a module may import its own layer and the ones below it):
foundation (errors, config, policy, storage, storage_copy, sql) < ingest < analysis < stages < outputs
< execution < commands (run, cli, suggest, synth, label). Imports under ``if TYPE_CHECKING:``
are annotations, not dependencies, and are left out.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PIPELINE = Path(__file__).resolve().parent.parent / "pipeline"
MAX_LINES = 400
LAYERS = ("foundation", "ingest", "analysis", "stages", "outputs", "execution", "commands")
SUBPACKAGES = ("ingest", "analysis", "stages", "outputs", "execution")
FOUNDATION = ("pipeline", "pipeline.errors", "pipeline.config", "pipeline.policy", "pipeline.policy_checks", "pipeline.policy_shape",
              "pipeline.policy_files", "pipeline.policy_tables", "pipeline.storage",
              "pipeline.storage_copy",
              "pipeline.sql")


def module_name(path: Path) -> str:
    parts = path.relative_to(PIPELINE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PIPELINE.rglob("*.py")}


def layer(module: str) -> str:
    if module in FOUNDATION:
        return "foundation"
    second = module.split(".")[1]
    return second if second in SUBPACKAGES else "commands"


def _type_checking_only(tree: ast.Module) -> set[int]:
    """Line numbers of statements inside ``if TYPE_CHECKING:`` blocks."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING":
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def imports(module: str) -> set[str]:
    """The pipeline modules ``module`` imports at run time (resolved to modules, not names)."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_only(tree)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                root = ".".join(base + ([node.module] if node.module else []))
            else:
                root = node.module or ""
            subs = [f"{root}.{a.name}" for a in node.names]
            # ``from pkg import submodule`` depends on the submodule, not on pkg's own code
            names = [s for s in subs if s in MODULES] + ([root] if any(s not in MODULES for s in subs) else [])
        else:
            continue
        for name in names:
            # the longest known module that the imported name lies in
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name and name != module:
                found.add(name)
    return found


GRAPH = {m: imports(m) for m in MODULES}


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(GRAPH[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    return out


def test_the_graph_is_read_from_real_imports() -> None:
    assert "pipeline.stages.tables" in GRAPH["pipeline.execution.shard"]
    assert "pipeline.ingest.records" in GRAPH["pipeline.stages.tables"]


def test_no_import_cycle_inside_pipeline() -> None:
    assert _cycles() == []


def test_a_cycle_would_be_found() -> None:
    GRAPH["pipeline.errors"].add("pipeline.cli")
    try:
        assert _cycles(), "a cycle through errors -> cli was not reported"
    finally:
        GRAPH["pipeline.errors"].discard("pipeline.cli")


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_go_down_the_data_path(module: str) -> None:
    rank = LAYERS.index(layer(module))
    upward = sorted(m for m in GRAPH[module] if LAYERS.index(layer(m)) > rank)
    assert upward == [], f"{module} ({layer(module)}) imports a later layer: {upward}"


def test_no_module_over_the_line_limit() -> None:
    long = {str(p.relative_to(PIPELINE.parent)): n for p in PIPELINE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


@pytest.mark.parametrize("package", SUBPACKAGES)
def test_each_subpackage_says_what_it_owns(package: str) -> None:
    doc = ast.get_docstring(ast.parse((PIPELINE / package / "__init__.py").read_text(encoding="utf-8")))
    assert doc and "import" in doc, f"pipeline/{package}/__init__.py: docstring must say what it may import"
