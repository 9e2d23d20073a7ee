"""Bundled catalogs are merged (a later file's list replaces an earlier one's), and a tool
name matches its entry in any case, an entry's own name before another's alias: an agent's
catalog that names a tool another catalog (or the generic vocabulary) names too changes
that tool's roles for every agent. So the entry a name resolves to must keep every
resource argument any bundled catalog lists for that name (its own entry or the entry it
is an alias of); it may add its own. Else another agent's calls of that name lose the files
they read, write or delete (OpenCode's `multiedit` hid Claude Code's `MultiEdit` writes of
`file_path`; its `patch` hid the writes of every other agent's `patch`)."""

from __future__ import annotations

import tomllib
from collections import defaultdict
from pathlib import Path

import pipeline
from pipeline.policy import load_policy

POLICY = Path(pipeline.__file__).parent / "policy"
RESOURCE_KEYS = ("reads", "writes", "deletes", "sends", "executes")


def _listed() -> dict[str, dict[str, set[str]]]:
    """Lower-cased tool name -> resource key -> every argument a bundled file lists for it."""
    found: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for f in sorted(POLICY.glob("*.toml")):
        for name, entry in (tomllib.loads(f.read_text()).get("tools") or {}).items():
            for key in [name, *entry.get("aliases", [])]:
                for k in RESOURCE_KEYS:
                    found[str(key).lower()][k] |= set(entry.get(k) or [])
    return found


def test_every_name_resolves_to_an_entry_keeping_the_arguments_any_catalog_lists() -> None:
    tools = load_policy(None).data["tools"]
    own = defaultdict(list)
    for name in tools:
        own[name.lower()].append(name)
    lost = []
    for key, args in _listed().items():
        for name in own.get(key, []):  # an alias shadowed by an entry of that name
            for k, wanted in args.items():
                missing = wanted - set(tools[name].get(k) or [])
                if missing:
                    lost.append(f"[tools.{name}] {k} lacks {sorted(missing)}")
    assert not lost, "\n".join(lost)
