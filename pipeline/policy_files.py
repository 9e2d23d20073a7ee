"""Policy files read and merged: a file read within its size bound, parsed (TOML, or YAML
without aliases) and shape-checked, the bundled files in ``pipeline/policy/`` in merge
order, and the merge of one document over another (:func:`pipeline.policy.load_policy`
layers them).
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from pipeline.errors import PolicyError
from pipeline.policy_shape import MAX_POLICY_BYTES, check_shape, check_values


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` merged over ``base``: tables merge key by key, arrays of tables (rule
    lists) are appended, everything else replaces."""
    out = dict(base)
    for key, value in over.items():
        old = out.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            out[key] = merge(old, value)
        elif (
            isinstance(old, list)
            and isinstance(value, list)
            and all(isinstance(v, dict) for v in old + value)
            and old
        ):
            out[key] = old + value
        else:
            out[key] = value
    return out


# a list of `[classifier.names]` named in a classifier rule's pattern: `{{default_branches}}`
NAMES_RE = re.compile(r"\{\{(\w+)\}\}")


def expand_names(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with each ``{{list}}`` in a classifier rule's pattern replaced by the
    alternation of that ``[classifier.names]`` list, each name matched literally
    (``(?:main|master)``): which names a rule means is data a user's policy replaces, the
    pattern around them mechanism. A list no rule names is allowed; a rule naming a list
    that does not exist, or is empty, is a PolicyError."""
    classifier = data.get("classifier", {})
    names, rules = classifier.get("names", {}), classifier.get("rules", [])
    if not any(NAMES_RE.search(str(r.get("pattern", ""))) for r in rules):
        return data

    def alternation(found: re.Match[str], i: int) -> str:
        key = found.group(1)
        if not names.get(key):
            raise PolicyError(f"policy: classifier.rules[{i}].pattern names {{{{{key}}}}}, "
                              "which is no non-empty list of [classifier.names]")
        return "(?:" + "|".join(re.escape(str(n)) for n in names[key]) + ")"

    expanded = [{**r, "pattern": NAMES_RE.sub(lambda m: alternation(m, i), r["pattern"])}
                if isinstance(r.get("pattern"), str) else r for i, r in enumerate(rules)]
    return {**data, "classifier": {**classifier, "rules": expanded}}


def read_bytes(path: Path) -> bytes:
    """The bytes of a user's policy file; a PolicyError when it is no regular file, cannot
    be read, or is larger than ``MAX_POLICY_BYTES``."""
    try:
        if not path.is_file():  # a folder, a FIFO (waits for ever), /dev/zero (never ends)
            if not path.exists():
                raise FileNotFoundError(2, "No such file or directory")
            raise PolicyError(f"policy file {path} is not a regular file", "check the --policy path")
        with path.open("rb") as file:
            raw = file.read(MAX_POLICY_BYTES + 1)
    except OSError as exc:
        raise PolicyError(f"cannot read policy file {path}: {exc.strerror}", "check the --policy path") from exc
    if len(raw) > MAX_POLICY_BYTES:
        raise PolicyError(f"policy file {path} is larger than {MAX_POLICY_BYTES // 2**20} MB")
    return raw


def _unparsable(path: Path, exc: Exception) -> PolicyError:
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return PolicyError(f"policy file {path} does not parse: {first}", "TOML or YAML expected")


def parse_file(path: Path, raw: bytes) -> dict[str, Any]:
    """A policy file's bytes parsed (YAML by its suffix, else TOML) and shape-checked."""
    try:
        if path.suffix.lower() in (".yaml", ".yml"):
            import yaml  # imported for a YAML policy file only (about 15 ms a process)

            try:
                data = yaml.load(raw.decode("utf-8"), Loader=_loader())  # noqa: S506 - a SafeLoader
            except yaml.YAMLError as exc:
                raise _unparsable(path, exc) from exc
        else:
            data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, ValueError) as exc:
        raise _unparsable(path, exc) from exc
    except RecursionError as exc:
        raise PolicyError(f"policy file {path} is nested too deeply", "TOML or YAML expected") from exc
    if not isinstance(data, dict):
        raise PolicyError(f"policy file {path} must hold a table/mapping at top level")
    check_values(data, str(path))
    check_shape(data)
    return data


@cache
def _loader() -> type:
    """PyYAML's SafeLoader refusing aliases: ``*name`` repeats a node without copying it,
    so nine nested aliases ("billion laughs") expand to 10^9 values once the document is
    walked (hashing it took 1.6 GB and did not end). A policy has no use for them."""
    import yaml

    class NoAliasLoader(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:  # noqa: D102 - PyYAML's hook
            if self.check_event(yaml.AliasEvent):
                mark = self.peek_event().start_mark
                raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed in a policy file",
                                                  mark)
            return super().compose_node(parent, index)

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:  # noqa: D102 - PyYAML's hook
            # a key given twice: PyYAML keeps the last silently, TOML refuses it; so do we
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                if isinstance(key, str) and key in seen:
                    raise yaml.constructor.ConstructorError(None, None, f"key {key!r} is given twice",
                                                            key_node.start_mark)
                if isinstance(key, str):
                    seen.add(key)
            return super().construct_mapping(node, deep)

    return NoAliasLoader


def bundled_files() -> list[tuple[str, bytes]]:
    """(name, bytes) of each bundled ``pipeline/policy/*.toml``, ``default.toml`` first."""
    folder = resources.files("pipeline") / "policy"
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".toml"))
    names.sort(key=lambda n: (n != "default.toml", n))
    return [(n, (folder / n).read_bytes()) for n in names]
