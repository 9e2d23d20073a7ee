"""Checks of a merged policy document (``pipeline.policy`` loads, then calls :func:`validate`).

Every judgement the policy holds is user data: after its shape (``pipeline.policy_shape``:
sections, keys, types, ranges), each field is checked here for what its type cannot say,
and every regex is compiled by RE2 (DuckDB), the engine the SQL stages use, so a bad
policy fails at load time with the field's name, never mid-run.
"""

from __future__ import annotations

import threading
from functools import cache
from typing import Any

import duckdb

from pipeline.errors import PolicyError

CONFIDENTIALITY = ("public", "internal", "secret")
INTEGRITY = ("trusted", "untrusted")
SINK_KINDS = ("egress", "send_mail", "payment", "share", "execute", "destructive", "privileged")
EXEC_STATUSES = ("executed", "failed", "blocked", "unknown")
TOOL_LIST_KEYS = ("reads", "writes", "executes", "deletes", "sends", "control", "aliases")
_TOOL_KEYS = set(TOOL_LIST_KEYS) | {"shell", "code", "source", "sink", "accepts", "accepts_control",
                                    "shell_session", "workdir"}
# a shell tool's session: does a `cd` in one call hold for its next call (README, "the shell
# session"); a tool that does not say is "fresh"
SHELL_SESSIONS = ("fresh", "persistent")
_RE2_LOCK = threading.Lock()  # one connection, and the canaries run in a thread of the driver


@cache
def _re2_connection() -> duckdb.DuckDBPyConnection:
    """The connection that compiles patterns, opened by the first check (in the driver: a
    worker scores with the driver's validated policy, whose prefilter alternations are
    built there too, and never opens it)."""
    return duckdb.connect()


def level(value: Any, order: tuple[str, ...], what: str, default: int = 0) -> int:
    if value is None:
        return default
    if value not in order:
        raise PolicyError(f"policy: {what} must be one of {', '.join(order)}, got {value!r}")
    return order.index(value)


def label(table: Any, what: str, default: tuple[int, int] = (0, 0)) -> tuple[int, int]:
    if table is None:
        return default
    if not isinstance(table, dict):
        raise PolicyError(f"policy: {what} must be a table with confidentiality/integrity")
    return (
        level(table.get("confidentiality"), CONFIDENTIALITY, f"{what}.confidentiality", default[0]),
        level(table.get("integrity"), INTEGRITY, f"{what}.integrity", default[1]),
    )


_COMPILED: set[str] = set()  # patterns RE2 compiled in one batch (prime_re2)
_COLLECTING = threading.local()  # .patterns: a list while validate() collects them


def prime_re2(patterns: list[str]) -> None:
    """Compile ``patterns`` in one query (a query per pattern costs about 1 ms of DuckDB
    set-up; a policy has about a hundred) and remember those that compile. A pattern
    that does not is left to :func:`_re2_error`, which finds RE2's message."""
    todo = [p for p in dict.fromkeys(patterns) if p not in _COMPILED]
    if not todo:
        return
    with _RE2_LOCK:  # try(): an uncompilable pattern gives null instead of failing the query
        rows = _re2_connection().execute(
            "select p, try(regexp_matches('', p)) from unnest(?::varchar[]) t(p)", [todo]).fetchall()
    _COMPILED.update(p for p, matches in rows if matches is not None)
    _MATCHES_EMPTY.update(p for p, matches in rows if matches)


# a text no pattern of a policy means to find: a pattern matching it and the empty text
# matches every text (`z*`, `(?i)`, `^`); `^$` matches the empty text only
_PROBE = "\x01"


# patterns RE2 compiled that match the empty text (prime_re2 or _matches_empty)
_MATCHES_EMPTY: set[str] = set()


def _matches_every_text(pattern: str) -> bool:
    """Whether a compiled ``pattern`` matches the empty text and ``_PROBE`` (so every text)."""
    if pattern in _COMPILED and pattern not in _MATCHES_EMPTY:
        return False
    with _RE2_LOCK:
        return bool(_re2_connection().execute("select regexp_matches('', $p) and regexp_matches($probe, $p)",
                                              {"p": pattern, "probe": _PROBE}).fetchall()[0][0])


def _re2_error(pattern: str) -> str | None:
    """RE2's complaint about ``pattern`` (None when it compiles); the SQL stages use RE2
    (DuckDB), so the check uses the same engine."""
    return None if pattern in _COMPILED else _re2_message(pattern)


@cache
def _re2_message(pattern: str) -> str | None:
    try:
        with _RE2_LOCK:
            _re2_connection().execute("select regexp_matches('', ?)", [pattern]).fetchall()
    except duckdb.Error as exc:
        return str(exc).splitlines()[0]
    return None


def re2_compiles(pattern: str) -> bool:
    """Whether RE2 (DuckDB) compiles ``pattern`` (cached per pattern)."""
    return _re2_error(pattern) is None


def _check_regex(pattern: Any, what: str) -> str:
    if not isinstance(pattern, str) or not pattern:
        raise PolicyError(f"policy: {what} must be a non-empty regex string")
    collected = getattr(_COLLECTING, "patterns", None)
    if collected is not None:  # the first pass of validate(): compiled in one batch after it
        collected += [pattern, f"(?:{pattern})"]
        return pattern
    error = _re2_error(pattern)
    if error is not None:
        raise PolicyError(f"policy: {what} is not a valid RE2 regex: {error}")
    # the stages also run patterns inside a group ("(?:p)", and alternations of several);
    # RE2's \Q quotes to the end of the pattern, so an unclosed \Q would swallow the ")"
    if _re2_error(f"(?:{pattern})") is not None:
        raise PolicyError(f"policy: {what} does not compile inside a group (?:...)",
                          "close a \\Q quote with \\E")
    # every pattern of a policy is searched for in texts: one that matches every text (`z*`,
    # `(?i)`) flagged every step, span or error (245 verdicts flipped on the sample by one
    # classifier rule)
    if _matches_every_text(pattern):
        raise PolicyError(f"policy: {what} matches the empty text, so it matches every text",
                          "make it require at least one character: z+, not z*")
    return pattern



def _check_arg_name(name: Any, what: str) -> None:
    # argument names become JSON paths ($."name") in SQL: no quotes or backslashes
    if not isinstance(name, str) or not name or '"' in name or "\\" in name:
        raise PolicyError(f"policy: {what} has an invalid argument name {name!r}",
                          "argument names are strings without quotes or backslashes")


def _validate_inference(inf: Any, sinks: dict[str, Any]) -> None:
    for key in ("shell_args", "code_args", "command_list_args"):
        for arg in inf.get(key, []):
            _check_arg_name(arg, f"inference.{key}")
    for i, rule in enumerate(inf.get("sinks", [])):
        if not isinstance(rule, dict) or rule.get("sink") not in sinks or not isinstance(rule.get("verbs"), list):
            raise PolicyError(f"policy: inference.sinks[{i}] needs verbs and a sink kind under [sinks]")
        label({"integrity": rule["integrity"]} if "integrity" in rule else None, f"inference.sinks[{i}]")
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
        label(rule, f"inference.sources[{i}]")


def validate(data: dict[str, Any]) -> None:
    """Raise PolicyError for the first field of ``data`` that is missing, mistyped or out of range.

    Two passes: the first runs every check but the regex compilations and collects the
    patterns, which are then compiled in one batch; the second runs every check again,
    in order, and finds RE2's message for a pattern the batch could not compile (when
    the first pass fails, the second runs without a batch). Same errors as one pass.
    The caller has checked the document's shape (sections, keys, types, ranges:
    ``pipeline.policy_shape.check_shape``), which the field checks below rely on."""
    _COLLECTING.patterns = []
    try:
        _validate(data)
        prime_re2(_COLLECTING.patterns)
    except Exception:  # noqa: BLE001 - whatever stopped the first pass, the second raises it in field order
        pass
    finally:
        _COLLECTING.patterns = None
    _validate(data)


def _validate(data: dict[str, Any]) -> None:
    settings = data.get("settings", {})
    for key, kind in (("attempted_is_unsafe", bool), ("stepwise_threshold", (int, float)),
                      ("max_record_bytes", int), ("min_fragment_length", int), ("max_fragment_sources", int), ("max_reach_pairs", int), ("max_reach_work", int),
                      ("max_edge_pairs", int),
                      ("explain_pages", int)):
        if not isinstance(settings.get(key), kind):
            raise PolicyError(f"policy: settings.{key} is missing or has the wrong type")
    if settings.get("unknown_tools", "infer") not in ("infer", "reject"):
        raise PolicyError("policy: settings.unknown_tools must be 'infer' or 'reject'")
    _validate_inference(data.get("inference", {}), data.get("sinks", {}))
    for name, entry in data.get("tools", {}).items():
        unknown = set(entry) - _TOOL_KEYS
        if unknown:
            raise PolicyError(f"policy: tools.{name} has unknown keys {sorted(unknown)}")
        for key in TOOL_LIST_KEYS:
            for arg in entry.get(key, []) if key != "aliases" else []:
                _check_arg_name(arg, f"tools.{name}.{key}")
        for key in ("shell", "code", "workdir"):
            if entry.get(key):
                _check_arg_name(entry[key], f"tools.{name}.{key}")
        if entry.get("shell_session", "fresh") not in SHELL_SESSIONS:
            raise PolicyError(f"policy: tools.{name}.shell_session must be one of {', '.join(SHELL_SESSIONS)}")
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
    for key in ("runs_later", "settles", "notes"):
        if key in data.get("classifier", {}):
            _check_regex(data["classifier"][key], f"classifier.{key}")
    for i, rule in enumerate(data.get("classifier", {}).get("rules", [])):
        _check_regex(rule.get("pattern"), f"classifier.rules[{i}].pattern")
        if rule.get("argument", "*") != "*":
            _check_arg_name(rule["argument"], f"classifier.rules[{i}].argument")
        if not rule.get("name") or not isinstance(rule.get("tools", ["*"]), list):
            raise PolicyError(f"policy: classifier.rules[{i}] needs a name and a list of tools")
    for kind in ("refusal", "success"):
        for i, pattern in enumerate(data.get("hallucination", {}).get(kind, [])):
            _check_regex(pattern, f"hallucination.{kind}[{i}]")
    for i, rule in enumerate(data.get("labels", {}).get("resources", [])):
        if rule.get("unless") is not None:
            _check_regex(rule.get("unless"), f"labels.resources[{i}].unless")
    content = data.get("content", {})
    for i, rule in enumerate(content.get("sources", [])):
        _check_regex(rule.get("pattern"), f"content.sources[{i}].pattern")
        if rule.get("unless") is not None:
            _check_regex(rule.get("unless"), f"content.sources[{i}].unless")
        if not rule.get("name") or rule.get("kind", "match") not in ("match", "document", "column"):
            raise PolicyError(f"policy: content.sources[{i}] needs a name and kind 'match', 'document' or 'column'")
    for kind in ("blocks", "markers"):
        for i, pattern in enumerate(data.get("injection", {}).get(kind, [])):
            _check_regex(pattern, f"injection.{kind}[{i}]")
    settings = data.get("labels", {}).get("settings_files", {})
    if settings.get("line_prefix") is not None:
        _check_regex(settings["line_prefix"], "labels.settings_files.line_prefix")
    for i, shape in enumerate(settings.get("shapes", [])):
        _check_regex(shape.get("pattern"), f"labels.settings_files.shapes[{i}].pattern")
    rule = settings.get("credential_rule")
    if settings.get("files") and rule not in {r.get("name") for r in content.get("sources", [])
                                              if r.get("kind", "match") == "match"}:
        raise PolicyError(f"policy: labels.settings_files.credential_rule {rule!r} names no content.sources "
                          "rule of kind 'match'")
    if data.get("labels", {}).get("user_named_sources", "untrusted") not in ("trusted", "untrusted"):
        raise PolicyError("policy: labels.user_named_sources must be 'trusted' or 'untrusted'")
    for i, rule in enumerate(data.get("labels", {}).get("resources", [])):
        if not isinstance(rule.get("pattern"), str):
            raise PolicyError(f"policy: labels.resources[{i}].pattern must be a glob string")
