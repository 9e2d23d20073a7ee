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
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import yaml

from pipeline.errors import PolicyError

CONFIDENTIALITY = ("public", "internal", "secret")
INTEGRITY = ("trusted", "untrusted")
EXEC_STATUSES = ("executed", "failed", "blocked", "unknown")
SINK_KINDS = ("egress", "send_mail", "payment", "share", "execute", "destructive", "privileged")
_TOOL_LIST_KEYS = ("reads", "writes", "executes", "deletes", "sends", "control", "aliases")
_RE2_CHECK = duckdb.connect()
_TOOL_KEYS = set(_TOOL_LIST_KEYS) | {"shell", "code", "source", "sink", "accepts", "accepts_control"}


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


def _read_file(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise PolicyError(f"cannot read policy file {path}: {exc.strerror}", "check the --policy path") from exc
    try:
        if path.suffix.lower() in (".yaml", ".yml"):
            data = yaml.safe_load(raw.decode("utf-8"))
        else:
            data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, yaml.YAMLError, UnicodeDecodeError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise PolicyError(f"policy file {path} does not parse: {first}", "TOML or YAML expected") from exc
    if not isinstance(data, dict):
        raise PolicyError(f"policy file {path} must hold a table/mapping at top level")
    return data


def _bundled_files() -> list[tuple[str, bytes]]:
    folder = resources.files("pipeline") / "policy"
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".toml"))
    names.sort(key=lambda n: (n != "default.toml", n))
    return [(n, (folder / n).read_bytes()) for n in names]


def _level(value: Any, order: tuple[str, ...], what: str, default: int = 0) -> int:
    if value is None:
        return default
    if value not in order:
        raise PolicyError(f"policy: {what} must be one of {', '.join(order)}, got {value!r}")
    return order.index(value)


def _label(table: Any, what: str, default: tuple[int, int] = (0, 0)) -> tuple[int, int]:
    if table is None:
        return default
    if not isinstance(table, dict):
        raise PolicyError(f"policy: {what} must be a table with confidentiality/integrity")
    return (
        _level(table.get("confidentiality"), CONFIDENTIALITY, f"{what}.confidentiality", default[0]),
        _level(table.get("integrity"), INTEGRITY, f"{what}.integrity", default[1]),
    )


def _check_regex(pattern: Any, what: str) -> str:
    if not isinstance(pattern, str) or not pattern:
        raise PolicyError(f"policy: {what} must be a non-empty regex string")
    try:  # the SQL stages use RE2 (DuckDB), so check with the same engine
        _RE2_CHECK.execute("select regexp_matches('', ?)", [pattern]).fetchall()
    except duckdb.Error as exc:
        first = str(exc).splitlines()[0]
        raise PolicyError(f"policy: {what} is not a valid RE2 regex: {first}") from exc
    return pattern


@dataclass(frozen=True)
class Policy:
    """A validated, merged policy. ``data`` is the merged document; ``sha256`` its hash."""

    data: dict[str, Any]
    sha256: str
    sources: tuple[str, ...] = field(default=())

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
        return _policy_tables(self.data, self.tool_names())


def tool_row(key: str, catalog: str | None, entry: dict[str, Any], sinks: dict[str, Any],
             role_source: str) -> dict[str, Any]:
    """One row of ``policy_tools`` for a catalog (or inferred) entry; ``catalog`` is None when inferred."""
    what = f"tools.{catalog or key}"
    src = _label(entry.get("source"), f"{what}.source")
    sink = entry.get("sink") or None
    kind = sinks.get(sink, {}) if sink else {}
    acc = _label(entry.get("accepts", kind.get("accepts")), f"{what}.accepts", (2, 1))
    ctl = _label(entry.get("accepts_control", kind.get("accepts_control")), f"{what}.accepts_control", acc)
    return {
        "tool_key": key, "catalog_name": catalog,
        **{k: [str(v) for v in entry.get(k, [])] for k in _TOOL_LIST_KEYS if k != "aliases"},
        "shell_arg": entry.get("shell") or None, "code_arg": entry.get("code") or None,
        "source_conf": src[0], "source_integ": src[1], "sink_kind": sink,
        "accepts_conf": acc[0], "accepts_integ": acc[1],
        "control_conf": ctl[0], "control_integ": ctl[1], "role_source": role_source,
    }


_TOOLS_SCHEMA = pa.schema(
    [("tool_key", pa.string()), ("catalog_name", pa.string())]
    + [(k, pa.list_(pa.string())) for k in _TOOL_LIST_KEYS if k != "aliases"]
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
        acc = _label(kind.get("accepts"), f"sinks.{kind_name}.accepts", (2, 1))
        ctl = _label(kind.get("accepts_control"), f"sinks.{kind_name}.accepts_control", acc)
        sink_rows.append({"sink_kind": kind_name, "accepts_conf": acc[0], "accepts_integ": acc[1],
                          "control_conf": ctl[0], "control_integ": ctl[1]})
    es = data.get("exec_status", {})
    rules = es.get("rules", [])
    res_rows = [
        {"ord": i, "like": glob_to_like(str(r["pattern"])), "pattern": str(r["pattern"]),
         "override": bool(r.get("override", False)),
         "conf": _level(r.get("confidentiality"), CONFIDENTIALITY, "labels.resources.confidentiality"),
         "integ": _level(r.get("integrity"), INTEGRITY, "labels.resources.integrity")}
        for i, r in enumerate(data.get("labels", {}).get("resources", []))
    ]
    inj = data.get("injection", {})
    content = data.get("content", {})
    content_rows = [
        {"ord": i, "name": str(r["name"]), "kind": str(r.get("kind", "match")), "pattern": str(r["pattern"]),
         "luhn": bool(r.get("luhn", False)), "max_spans": int(content.get("max_spans", 64)),
         "conf": _level(r.get("confidentiality"), CONFIDENTIALITY, f"content.sources[{i}].confidentiality"),
         "integ": _level(r.get("integrity"), INTEGRITY, f"content.sources[{i}].integrity")}
        for i, r in enumerate(content.get("sources", []))]
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
            [{"ord": i, "name": r["name"], "tool_key": str(t).lower(), "argument": r.get("argument", "*"),
              "pattern": r["pattern"]}
             for i, r in enumerate(data.get("classifier", {}).get("rules", [])) for t in r.get("tools", ["*"])],
            schema=pa.schema([("ord", pa.int64()), ("name", pa.string()), ("tool_key", pa.string()),
                              ("argument", pa.string()), ("pattern", pa.string())])),
        "resource_labels": pa.Table.from_pylist(
            res_rows, schema=pa.schema([("ord", pa.int64()), ("like", pa.string()), ("pattern", pa.string()),
                                        ("override", pa.bool_()),
                                        ("conf", pa.int64()), ("integ", pa.int64())])),
        "hallucination": pa.Table.from_pylist(
            [{"ord": i, "kind": kind, "pattern": p} for i, (kind, p) in enumerate(
                (kind, p) for kind in ("refusal", "success") for p in data.get("hallucination", {}).get(kind, []))],
            schema=pa.schema([("ord", pa.int64()), ("kind", pa.string()), ("pattern", pa.string())])),
        "content": pa.Table.from_pylist(content_rows, schema=pa.schema([
            ("ord", pa.int64()), ("name", pa.string()), ("kind", pa.string()), ("pattern", pa.string()),
            ("luhn", pa.bool_()), ("max_spans", pa.int64()), ("conf", pa.int64()), ("integ", pa.int64())])),
        "content_any": pa.table({"pattern": ["|".join(f"(?:{r['pattern']})" for r in content_rows) or "[^\\s\\S]"]}),
        "injection": pa.Table.from_pylist(
            [{"ord": i, "kind": kind, "pattern": p} for i, (kind, p) in enumerate(
                [("block", p) for p in inj.get("blocks", [])] + [("marker", p) for p in inj.get("markers", [])])],
            schema=pa.schema([("ord", pa.int64()), ("kind", pa.string()), ("pattern", pa.string())])),
    }


def _check_arg_name(name: Any, what: str) -> None:
    # argument names become JSON paths ($."name") in SQL: no quotes or backslashes
    if not isinstance(name, str) or not name or '"' in name or "\\" in name:
        raise PolicyError(f"policy: {what} has an invalid argument name {name!r}",
                          "argument names are strings without quotes or backslashes")


_INFERENCE_LISTS = ("read_verbs", "noun_verbs", "write_verbs", "exec_verbs", "shell_tokens", "code_tokens", "shell_args",
                    "code_args", "resource_args", "destination_args", "control_args", "content_args")


def _validate_inference(inf: Any, sinks: dict[str, Any]) -> None:
    if not isinstance(inf, dict):
        raise PolicyError("policy: [inference] must be a table")
    for key in _INFERENCE_LISTS:
        if not isinstance(inf.get(key, []), list) or not all(isinstance(w, str) for w in inf.get(key, [])):
            raise PolicyError(f"policy: inference.{key} must be a list of strings")
    for key in ("shell_args", "code_args"):
        for arg in inf.get(key, []):
            _check_arg_name(arg, f"inference.{key}")
    for i, rule in enumerate(inf.get("sinks", [])):
        if not isinstance(rule, dict) or rule.get("sink") not in sinks or not isinstance(rule.get("verbs"), list):
            raise PolicyError(f"policy: inference.sinks[{i}] needs verbs and a sink kind under [sinks]")
    for i, rule in enumerate(inf.get("values", [])):
        _check_regex(rule.get("pattern") if isinstance(rule, dict) else None, f"inference.values[{i}].pattern")
        roles = rule.get("roles")
        if (not rule.get("name") or not isinstance(roles, list) or not roles
                or not set(roles) <= {"destination", "resource"} or ("sink" in rule and rule["sink"] not in sinks)):
            raise PolicyError(f"policy: inference.values[{i}] needs a name, roles from destination/resource "
                              "and, if any, a sink kind under [sinks]")
    for i, rule in enumerate(inf.get("sources", [])):
        if not isinstance(rule, dict) or not isinstance(rule.get("tokens"), list):
            raise PolicyError(f"policy: inference.sources[{i}] needs a list of tokens")
        _label(rule, f"inference.sources[{i}]")


def _validate(data: dict[str, Any]) -> None:
    settings = data.get("settings", {})
    for key, kind in (("attempted_is_unsafe", bool), ("stepwise_threshold", (int, float)),
                      ("max_record_bytes", int), ("min_fragment_length", int), ("max_fragment_sources", int),
                      ("explain_pages", int)):
        if not isinstance(settings.get(key), kind):
            raise PolicyError(f"policy: settings.{key} is missing or has the wrong type")
    if settings.get("unknown_tools", "infer") not in ("infer", "reject"):
        raise PolicyError("policy: settings.unknown_tools must be 'infer' or 'reject'")
    _validate_inference(data.get("inference", {}), data.get("sinks", {}))
    if not isinstance(data.get("injection", {}).get("control_is_violation", True), bool):
        raise PolicyError("policy: injection.control_is_violation must be true or false")
    for name, entry in data.get("tools", {}).items():
        if not isinstance(entry, dict):
            raise PolicyError(f"policy: tools.{name} must be a table")
        unknown = set(entry) - _TOOL_KEYS
        if unknown:
            raise PolicyError(f"policy: tools.{name} has unknown keys {sorted(unknown)}")
        for key in _TOOL_LIST_KEYS:
            if not isinstance(entry.get(key, []), list):
                raise PolicyError(f"policy: tools.{name}.{key} must be a list of argument names")
            for arg in entry.get(key, []) if key != "aliases" else []:
                _check_arg_name(arg, f"tools.{name}.{key}")
        for key in ("shell", "code"):
            if entry.get(key):
                _check_arg_name(entry[key], f"tools.{name}.{key}")
        sink = entry.get("sink")
        if sink and sink not in data.get("sinks", {}):
            raise PolicyError(f"policy: tools.{name}.sink {sink!r} is not a kind under [sinks]")
    es = data.get("exec_status", {})
    for etype, status in es.get("types", {}).items():
        if status not in EXEC_STATUSES:
            raise PolicyError(f"policy: exec_status.types.{etype} must be one of {EXEC_STATUSES}")
    for i, rule in enumerate(es.get("rules", [])):
        _check_regex(rule.get("pattern"), f"exec_status.rules[{i}].pattern")
        if rule.get("status") not in EXEC_STATUSES or not rule.get("name"):
            raise PolicyError(f"policy: exec_status.rules[{i}] needs a name and a status in {EXEC_STATUSES}")
    for i, pattern in enumerate(es.get("content_error_patterns", [])):
        _check_regex(pattern, f"exec_status.content_error_patterns[{i}]")
    if "runs_later" in data.get("classifier", {}):
        _check_regex(data["classifier"]["runs_later"], "classifier.runs_later")
    for i, rule in enumerate(data.get("classifier", {}).get("rules", [])):
        _check_regex(rule.get("pattern"), f"classifier.rules[{i}].pattern")
        if rule.get("argument", "*") != "*":
            _check_arg_name(rule["argument"], f"classifier.rules[{i}].argument")
        if not rule.get("name") or not isinstance(rule.get("tools", ["*"]), list):
            raise PolicyError(f"policy: classifier.rules[{i}] needs a name and a list of tools")
    for kind in ("refusal", "success"):
        for i, pattern in enumerate(data.get("hallucination", {}).get(kind, [])):
            _check_regex(pattern, f"hallucination.{kind}[{i}]")
    content = data.get("content", {})
    if not isinstance(content.get("max_spans", 64), int) or content.get("max_spans", 64) < 1:
        raise PolicyError("policy: content.max_spans must be a positive integer")
    for i, rule in enumerate(content.get("sources", [])):
        _check_regex(rule.get("pattern"), f"content.sources[{i}].pattern")
        if not rule.get("name") or rule.get("kind", "match") not in ("match", "document"):
            raise PolicyError(f"policy: content.sources[{i}] needs a name and kind 'match' or 'document'")
    for kind in ("blocks", "markers"):
        for i, pattern in enumerate(data.get("injection", {}).get(kind, [])):
            _check_regex(pattern, f"injection.{kind}[{i}]")
    if data.get("labels", {}).get("user_named_sources", "untrusted") not in ("trusted", "untrusted"):
        raise PolicyError("policy: labels.user_named_sources must be 'trusted' or 'untrusted'")
    for i, rule in enumerate(data.get("labels", {}).get("resources", [])):
        if not isinstance(rule.get("pattern"), str):
            raise PolicyError(f"policy: labels.resources[{i}].pattern must be a glob string")


def load_policy(user_file: Path | None = None) -> Policy:
    """Merge the bundled policy files and an optional user file; validate; hash.

    A user file whose ``[settings]`` say ``bundled_catalogs = "default"`` is layered over
    ``default.toml`` alone (generic vocabulary plus role inference, no suite catalogs):
    the out-of-the-box configuration the leave-one-corpus-out evaluation measures.
    """
    merged: dict[str, Any] = {}
    sources: list[str] = []
    user = _read_file(user_file) if user_file is not None else None
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
    _validate(merged)
    _policy_tables(merged, Policy(merged, "").tool_names())  # label values checked here
    digest = hashlib.sha256(json.dumps(merged, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return Policy(merged, digest, tuple(sources))
