"""The policy as Arrow tables (``policy_<name>`` in DuckDB), the only way the SQL stages
read it: a row of ``policy_tools`` per catalog tool or alias, the rule lists with their
order, glob patterns as LIKE patterns, and one-pass RE2 prefilters (``*_any``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from pipeline.policy_checks import CONFIDENTIALITY, INTEGRITY, TOOL_LIST_KEYS, label, level, re2_compiles

NEVER = r"[^\s\S]"  # an RE2 pattern that matches nothing


def glob_to_like(pattern: str) -> str:
    """A glob (``*``, ``?``) as a SQL LIKE pattern with ``\\`` as escape character."""
    escaped = pattern.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped.replace("*", "%").replace("?", "_")


def any_of(patterns: Iterable[object]) -> str:
    """One RE2 pattern matching where any of ``patterns`` matches, for a one-pass prefilter
    before the per-pattern queries (each pattern in its own group, so inline flags such as
    ``(?i)`` stay its own); matches nothing when there are none. Should the alternation not
    compile (too large for RE2), ``""``: it matches everywhere, so the prefilter keeps
    every row, as without it."""
    alternation = "|".join(f"(?:{p})" for p in patterns) or NEVER
    return alternation if re2_compiles(alternation) else ""


def tool_row(key: str, catalog: str | None, entry: dict[str, Any], sinks: dict[str, Any],
             role_source: str, named: bool = True) -> dict[str, Any]:
    """One row of ``policy_tools`` for a catalog (or inferred) entry; ``catalog`` is None when inferred.
    ``named``: the catalog or the lexicon knows the name itself (a verb or a source word), so
    ``settings.unknown_tools = "reject"`` never rejects its calls."""
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
        "shell_session": entry.get("shell_session") or "fresh", "workdir_arg": entry.get("workdir") or None,
        "source_conf": src[0], "source_integ": src[1], "sink_kind": sink,
        "accepts_conf": acc[0], "accepts_integ": acc[1],
        "control_conf": ctl[0], "control_integ": ctl[1], "role_source": role_source, "named": named,
    }


_TOOLS_SCHEMA = pa.schema(
    [("tool_key", pa.string()), ("catalog_name", pa.string())]
    + [(k, pa.list_(pa.string())) for k in TOOL_LIST_KEYS if k != "aliases"]
    + [("shell_arg", pa.string()), ("code_arg", pa.string()), ("shell_session", pa.string()),
       ("workdir_arg", pa.string()), ("source_conf", pa.int64()),
       ("source_integ", pa.int64()), ("sink_kind", pa.string()), ("accepts_conf", pa.int64()),
       ("accepts_integ", pa.int64()), ("control_conf", pa.int64()), ("control_integ", pa.int64()),
       ("role_source", pa.string()), ("named", pa.bool_())])


def policy_tables(data: dict[str, Any], names: dict[str, str]) -> dict[str, pa.Table]:
    """The tables of a merged policy document ``data`` whose tool names and aliases are
    ``names`` (:meth:`pipeline.policy.Policy.tool_names`); label values are checked here."""
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
         "override": bool(r.get("override", False)), "unless": str(r.get("unless") or NEVER),
         "conf": level(r.get("confidentiality"), CONFIDENTIALITY, "labels.resources.confidentiality"),
         "integ": level(r.get("integrity"), INTEGRITY, "labels.resources.integrity")}
        for i, r in enumerate(data.get("labels", {}).get("resources", []))
    ]
    inj = data.get("injection", {})
    content = data.get("content", {})
    content_rows = [
        {"ord": i, "name": str(r["name"]), "kind": str(r.get("kind", "match")), "pattern": str(r["pattern"]),
         "luhn": bool(r.get("luhn", False)), "files": bool(r.get("files", True)),
         "max_spans": int(content.get("max_spans", 64)),
         "unless": str(r.get("unless") or NEVER),
         "conf": level(r.get("confidentiality"), CONFIDENTIALITY, f"content.sources[{i}].confidentiality"),
         "integ": level(r.get("integrity"), INTEGRITY, f"content.sources[{i}].integrity")}
        for i, r in enumerate(content.get("sources", []))]
    classifier_rows = [  # one row per rule and tool it names: a rule with ``tools = []`` has none
        {"ord": i, "name": r["name"], "tool_key": str(t).lower(), "argument": r.get("argument", "*"),
         "pattern": r["pattern"]}
        for i, r in enumerate(data.get("classifier", {}).get("rules", [])) for t in r.get("tools", ["*"])]
    injection_rows = [{"ord": i, "kind": kind, "pattern": p} for i, (kind, p) in enumerate(
        [("block", p) for p in inj.get("blocks", [])] + [("marker", p) for p in inj.get("markers", [])])]
    settings = data.get("labels", {}).get("settings_files", {})
    return {
        "tools": pa.Table.from_pylist(tool_rows, schema=_TOOLS_SCHEMA),
        # globs of the key=value settings files whose credentials alone stay secret
        # (sql/action_roles.sql, sql/settings_outputs.sql); their value shapes as one pattern
        "settings_files": pa.Table.from_pylist(
            [{"like": glob_to_like(str(g)), "pattern": str(g)} for g in settings.get("files", [])],
            schema=pa.schema([("like", pa.string()), ("pattern", pa.string())])),
        "settings_shapes_any": pa.table({"pattern": [
            "|".join(f"(?:{r['pattern']})" for r in settings.get("shapes", [])) or NEVER]}),
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
                                        ("override", pa.bool_()), ("unless", pa.string()),
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
            ("luhn", pa.bool_()), ("files", pa.bool_()), ("max_spans", pa.int64()), ("unless", pa.string()),
            ("conf", pa.int64()),
            ("integ", pa.int64())])),
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
