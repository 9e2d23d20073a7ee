"""The policy file (SPEC section 9): load, layer, validate, hash, and expose as tables.

Bundled files in ``pipeline/policy/`` are merged in name order (``default.toml``
first); a user's ``--policy FILE`` (TOML or YAML) is merged last. Merging: tables
merge key by key, arrays of tables (rule lists) are appended, everything else
replaces. The SQL stages read the policy only through the Arrow tables built by
:meth:`Policy.tables`, never through string formatting.
"""

from __future__ import annotations

import hashlib
import json
import threading
import tomllib
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from pipeline.errors import PolicyError
from pipeline.policy_checks import CONFIDENTIALITY, INTEGRITY, TOOL_LIST_KEYS, label, level, re2_compiles, validate
from pipeline.policy_shape import MAX_POLICY_BYTES, check_shape, check_values



def glob_to_like(pattern: str) -> str:
    """A glob (``*``, ``?``) as a SQL LIKE pattern with ``\\`` as escape character."""
    escaped = pattern.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped.replace("*", "%").replace("?", "_")


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        old = out.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            out[key] = _merge(old, value)
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


def _read_bytes(path: Path) -> bytes:
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


def _parse_file(path: Path, raw: bytes) -> dict[str, Any]:
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


def _bundled_files() -> list[tuple[str, bytes]]:
    folder = resources.files("pipeline") / "policy"
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".toml"))
    names.sort(key=lambda n: (n != "default.toml", n))
    return [(n, (folder / n).read_bytes()) for n in names]


@dataclass(frozen=True)
class Policy:
    """A validated, merged policy. ``data`` is the merged document; ``sha256`` its hash.

    A loaded policy carries its Arrow tables (built once, when it was validated) and is
    what a shard task ships to its worker: the worker scores with exactly the document
    the driver validated and hashed into the plan, and neither reads nor checks the
    policy file again."""

    data: dict[str, Any]
    sha256: str
    sources: tuple[str, ...] = field(default=())
    built: dict[str, pa.Table] | None = field(default=None, compare=False, repr=False)

    @property
    def settings(self) -> dict[str, Any]:
        """The ``[settings]`` table."""
        return dict(self.data.get("settings", {}))

    def setting(self, name: str) -> Any:
        """One setting (all settings have bundled defaults)."""
        return self.data["settings"][name]

    def tool_names(self) -> dict[str, str]:
        """Lower-cased tool name or alias -> catalog name."""
        out: dict[str, str] = {}
        for name, entry in self.data.get("tools", {}).items():
            out[name.lower()] = name
            for alias in entry.get("aliases", []):
                out.setdefault(str(alias).lower(), name)
        return out

    def tables(self) -> dict[str, pa.Table]:
        """The policy as Arrow tables, registered in DuckDB as ``policy_<name>``."""
        return dict(self.built) if self.built is not None else _policy_tables(self.data, self.tool_names())


def any_of(patterns: Iterable[object]) -> str:
    """One RE2 pattern matching where any of ``patterns`` matches, for a one-pass prefilter
    before the per-pattern queries (each pattern in its own group, so inline flags such as
    ``(?i)`` stay its own); matches nothing when there are none. Should the alternation not
    compile (too large for RE2), ``""``: it matches everywhere, so the prefilter keeps
    every row, as without it."""
    alternation = "|".join(f"(?:{p})" for p in patterns) or r"[^\s\S]"
    return alternation if re2_compiles(alternation) else ""


def tool_row(key: str, catalog: str | None, entry: dict[str, Any], sinks: dict[str, Any],
             role_source: str) -> dict[str, Any]:
    """One row of ``policy_tools`` for a catalog (or inferred) entry; ``catalog`` is None when inferred."""
    what = f"tools.{catalog or key}"
    src = label(entry.get("source"), f"{what}.source")
    sink = entry.get("sink") or None
    kind = sinks.get(sink, {}) if sink else {}
    acc = label(entry.get("accepts", kind.get("accepts")), f"{what}.accepts", (2, 1))
    ctl = label(entry.get("accepts_control", kind.get("accepts_control")), f"{what}.accepts_control", acc)
    return {
        "tool_key": key, "catalog_name": catalog,
        **{k: [str(v) for v in entry.get(k, [])] for k in TOOL_LIST_KEYS if k != "aliases"},
        "shell_arg": entry.get("shell") or None, "code_arg": entry.get("code") or None,
        "source_conf": src[0], "source_integ": src[1], "sink_kind": sink,
        "accepts_conf": acc[0], "accepts_integ": acc[1],
        "control_conf": ctl[0], "control_integ": ctl[1], "role_source": role_source,
    }


_TOOLS_SCHEMA = pa.schema(
    [("tool_key", pa.string()), ("catalog_name", pa.string())]
    + [(k, pa.list_(pa.string())) for k in TOOL_LIST_KEYS if k != "aliases"]
    + [("shell_arg", pa.string()), ("code_arg", pa.string()), ("source_conf", pa.int64()),
       ("source_integ", pa.int64()), ("sink_kind", pa.string()), ("accepts_conf", pa.int64()),
       ("accepts_integ", pa.int64()), ("control_conf", pa.int64()), ("control_integ", pa.int64()),
       ("role_source", pa.string())])


def _policy_tables(data: dict[str, Any], names: dict[str, str]) -> dict[str, pa.Table]:
    tools = data.get("tools", {})
    sinks = data.get("sinks", {})
    tool_rows = [tool_row(key, catalog, tools[catalog], sinks, "catalog") for key, catalog in sorted(names.items())]
    sink_rows = []
    for kind_name, kind in sorted(sinks.items()):
        acc = label(kind.get("accepts"), f"sinks.{kind_name}.accepts", (2, 1))
        ctl = label(kind.get("accepts_control"), f"sinks.{kind_name}.accepts_control", acc)
        sink_rows.append({"sink_kind": kind_name, "accepts_conf": acc[0], "accepts_integ": acc[1],
                          "control_conf": ctl[0], "control_integ": ctl[1]})
    es = data.get("exec_status", {})
    rules = es.get("rules", [])
    res_rows = [
        {"ord": i, "like": glob_to_like(str(r["pattern"])), "pattern": str(r["pattern"]),
         "override": bool(r.get("override", False)),
         "conf": level(r.get("confidentiality"), CONFIDENTIALITY, "labels.resources.confidentiality"),
         "integ": level(r.get("integrity"), INTEGRITY, "labels.resources.integrity")}
        for i, r in enumerate(data.get("labels", {}).get("resources", []))
    ]
    inj = data.get("injection", {})
    content = data.get("content", {})
    content_rows = [
        {"ord": i, "name": str(r["name"]), "kind": str(r.get("kind", "match")), "pattern": str(r["pattern"]),
         "luhn": bool(r.get("luhn", False)), "max_spans": int(content.get("max_spans", 64)),
         "conf": level(r.get("confidentiality"), CONFIDENTIALITY, f"content.sources[{i}].confidentiality"),
         "integ": level(r.get("integrity"), INTEGRITY, f"content.sources[{i}].integrity")}
        for i, r in enumerate(content.get("sources", []))]
    classifier_rows = [  # one row per rule and tool it names: a rule with ``tools = []`` has none
        {"ord": i, "name": r["name"], "tool_key": str(t).lower(), "argument": r.get("argument", "*"),
         "pattern": r["pattern"]}
        for i, r in enumerate(data.get("classifier", {}).get("rules", [])) for t in r.get("tools", ["*"])]
    injection_rows = [{"ord": i, "kind": kind, "pattern": p} for i, (kind, p) in enumerate(
        [("block", p) for p in inj.get("blocks", [])] + [("marker", p) for p in inj.get("markers", [])])]
    return {
        "tools": pa.Table.from_pylist(tool_rows, schema=_TOOLS_SCHEMA),
        "document": pa.table({"json": [json.dumps(data, sort_keys=True)]}),
        "sinks": pa.Table.from_pylist(sink_rows),
        "error_types": pa.Table.from_pylist(
            [{"error_type": k, "status": v} for k, v in sorted(es.get("types", {}).items())],
            schema=pa.schema([("error_type", pa.string()), ("status", pa.string())])),
        "error_rules": pa.Table.from_pylist(
            [{"ord": i, "name": r["name"], "pattern": r["pattern"], "status": r["status"],
              "programs": bool(r.get("programs", True))} for i, r in enumerate(rules)],
            schema=pa.schema([("ord", pa.int64()), ("name", pa.string()), ("pattern", pa.string()),
                              ("status", pa.string()), ("programs", pa.bool_())])),
        "content_errors": pa.Table.from_pylist(
            [{"ord": i, "pattern": p} for i, p in enumerate(es.get("content_error_patterns", []))],
            schema=pa.schema([("ord", pa.int64()), ("pattern", pa.string())])),
        "classifier": pa.Table.from_pylist(
            classifier_rows,
            schema=pa.schema([("ord", pa.int64()), ("name", pa.string()), ("tool_key", pa.string()),
                              ("argument", pa.string()), ("pattern", pa.string())])),
        "resource_labels": pa.Table.from_pylist(
            res_rows, schema=pa.schema([("ord", pa.int64()), ("like", pa.string()), ("pattern", pa.string()),
                                        ("override", pa.bool_()),
                                        ("conf", pa.int64()), ("integ", pa.int64())])),
        "never_sent": pa.Table.from_pylist(
            [{"ord": i, "like": glob_to_like(str(g)), "pattern": str(g), "exclude": exclude}
             for i, (g, exclude) in enumerate(
                 [(g, False) for g in data.get("labels", {}).get("never_sent", [])]
                 + [(g, True) for g in data.get("labels", {}).get("never_sent_except", [])])],
            schema=pa.schema([("ord", pa.int64()), ("like", pa.string()), ("pattern", pa.string()),
                              ("exclude", pa.bool_())])),
        "hallucination": pa.Table.from_pylist(
            [{"ord": i, "kind": kind, "pattern": p} for i, (kind, p) in enumerate(
                (kind, p) for kind in ("refusal", "success") for p in data.get("hallucination", {}).get(kind, []))],
            schema=pa.schema([("ord", pa.int64()), ("kind", pa.string()), ("pattern", pa.string())])),
        "content": pa.Table.from_pylist(content_rows, schema=pa.schema([
            ("ord", pa.int64()), ("name", pa.string()), ("kind", pa.string()), ("pattern", pa.string()),
            ("luhn", pa.bool_()), ("max_spans", pa.int64()), ("conf", pa.int64()), ("integ", pa.int64())])),
        "content_any": pa.table({"pattern": [any_of(r["pattern"] for r in content_rows)]}),
        "injection": pa.Table.from_pylist(injection_rows,
                                          schema=pa.schema([("ord", pa.int64()), ("kind", pa.string()),
                                                            ("pattern", pa.string())])),
        "injection_any": pa.table({"pattern": [any_of(r["pattern"] for r in injection_rows)]}),
        # the prefilter of the rules on any argument, compiled here (the driver, which has RE2
        # primed) and shipped with the policy: a worker then opens no connection of its own for it
        "classifier_any": pa.table({"pattern": [any_of(sorted({r["pattern"] for r in classifier_rows
                                                               if r["argument"] == "*"}))]}),
    }



_LOADED: dict[tuple[str | None, str | None], Policy] = {}
_LOADED_LOCK = threading.Lock()


def load_policy(user_file: Path | None = None) -> Policy:
    """Merge the bundled policy files and an optional user file; validate; hash.

    A user file whose ``[settings]`` say ``bundled_catalogs = "default"`` is layered over
    ``default.toml`` alone (generic vocabulary plus role inference, no suite catalogs):
    the out-of-the-box configuration the leave-one-corpus-out evaluation measures.

    Loaded once per process for each (path, contents of the user file): a worker scores
    many shards, and parsing and checking the policy (every regex through RE2) costs
    tens of milliseconds. The returned policy is shared: never mutate its ``data``.
    """
    raw = _read_bytes(user_file) if user_file is not None else None
    key = (None if user_file is None else str(user_file), None if raw is None else hashlib.sha256(raw).hexdigest())
    with _LOADED_LOCK:
        found = _LOADED.get(key)
    if found is None:
        found = _load_policy(user_file, raw)
        with _LOADED_LOCK:
            _LOADED[key] = found
    return found


def _load_policy(user_file: Path | None, raw: bytes | None) -> Policy:
    merged: dict[str, Any] = {}
    sources: list[str] = []
    user = _parse_file(user_file, raw) if user_file is not None and raw is not None else None
    bundled = (user or {}).get("settings", {}).get("bundled_catalogs", "all")
    if bundled not in ("all", "default"):
        raise PolicyError(f"policy: settings.bundled_catalogs must be 'all' or 'default', got {bundled!r}")
    for name, raw in _bundled_files():
        if bundled == "default" and name != "default.toml":
            continue
        try:
            merged = _merge(merged, tomllib.loads(raw.decode("utf-8")))
        except tomllib.TOMLDecodeError as exc:  # a packaging bug, not an operator error
            raise PolicyError(f"bundled policy {name} does not parse: {exc}") from exc
        sources.append(f"bundled:{name}")
    if user is not None:
        merged = _merge(merged, user)
        sources.append(str(user_file))
    check_shape(merged)
    validate(merged)
    built = _policy_tables(merged, Policy(merged, "").tool_names())  # label values checked here
    return Policy(merged, document_sha256(merged), tuple(sources), built)


def document_sha256(data: dict[str, Any]) -> str:
    """A policy's ``sha256``: of its merged document as canonical JSON (about 1 ms)."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
