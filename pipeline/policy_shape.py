"""The shape of a policy document: which sections and keys exist and what type each holds.

Checked before any field's own check (``pipeline.policy_checks``), so a value of the wrong
type is one line naming the field, never a traceback, and never a string read one
character at a time where a list of patterns belongs; a misspelled section or setting
(``[setings]``) is refused instead of ignored. :func:`check_values` runs on a user's file
as parsed (any value but text, numbers, booleans, lists and tables, such as a TOML date,
a YAML set or a non-text key, and nesting past ``MAX_DEPTH``); :func:`check_shape` on the
merged document (sections, keys, types, ranges).
"""

from __future__ import annotations

import math
from typing import Any

from pipeline.errors import PolicyError

MAX_DEPTH = 32  # the bundled policy nests 4 deep; deeper is no policy (and recursion for json)
MAX_POLICY_BYTES = 16 * 2**20  # the bundled files weigh 60 KB together

# what a key holds: "bool", "int" (not a boolean), "number" (finite), "str", "list[str]",
# "list[table]", "table" (any keys), "table[str]" / "table[table]" (any keys, those values),
# or a dict: a table with exactly these keys
_INFERENCE_LISTS = ("read_verbs", "noun_verbs", "write_verbs", "exec_verbs", "shell_tokens", "code_tokens",
                    "process_tokens",
                    "shell_args", "code_args", "command_list_args", "resource_args", "destination_args", "publish_destination_args",
                    "control_args",
                    "content_args", "read_write_tokens")
SECTIONS: dict[str, Any] = {
    "settings": {"attempted_is_unsafe": "bool", "stepwise_threshold": "number", "max_record_bytes": "int",
                 "min_fragment_length": "int", "max_fragment_sources": "int", "max_reach_pairs": "int",
                 "max_reach_work": "int", "max_edge_pairs": "int", "explain_pages": "int",
                 # read by nothing (it was in default.toml until 2026-12-03): a policy copied from
                 # that file still loads
                 "workspace": "str",
                 "unknown_tools": "str", "bundled_catalogs": "str"},
    "lattice": {"confidentiality": "list[str]", "integrity": "list[str]"},
    "sinks": "table[table]",
    "labels": {"user_named_sources": "str", "resources": "list[table]", "never_sent": "list[str]",
               "common_file_names": "list[str]", "never_sent_except": "list[str]",
               "never_deleted": "list[str]", "never_written": "list[str]",
               "settings_files": {"files": "list[str]", "credential_rule": "str", "line_prefix": "str",
                                  "random_length": "int", "mixed_length": "int", "max_bytes": "int",
                                  "shapes": "list[table]"}},
    "injection": {"control_is_violation": "bool", "blocks": "list[str]", "markers": "list[str]"},
    "content": {"max_spans": "int", "sources": "list[table]"},
    "exec_status": {"types": "table[str]", "content_error_patterns": "list[str]", "rules": "list[table]"},
    "classifier": {"runs_later": "str", "settles": "str", "notes": "str", "rules": "list[table]", "data_programs": "list[str]",
                   "print_programs": "list[str]", "dry_run_flags": "list[str]", "names": "table[list[str]]"},
    "tools": "table[table]",
    "inference": {**{k: "list[str]" for k in _INFERENCE_LISTS},
                  "values": "list[table]", "sinks": "list[table]", "sources": "list[table]"},
    "hallucination": {"refusal": "list[str]", "success": "list[str]"},
}
# the fields a rule (a table in a list of tables) or a tool entry may hold, by type; a
# field of another name is left to the section's own check
FIELDS = {"name": "str", "pattern": "str", "status": "str", "programs": "bool", "tools": "list[str]",
          "argument": "str", "kind": "str", "luhn": "bool", "files": "bool", "unless": "str", "confidentiality": "str", "integrity": "str",
          "override": "bool", "roles": "list[str]", "verbs": "list[str]", "nouns": "list[str]", "tokens": "list[str]",
          "arg_nouns": "list[str]", "weak": "bool", "sink": "str",
          "aliases": "list[str]", "reads": "list[str]", "writes": "list[str]", "executes": "list[str]",
          "deletes": "list[str]", "sends": "list[str]", "control": "list[str]", "shell": "str", "code": "str",
          "shell_session": "str", "workdir": "str",
          "source": "table", "accepts": "table", "accepts_control": "table"}
# inclusive bounds of numbers (None: no bound on that side)
BOUNDS = {"settings.max_record_bytes": (1, 2**31 - 1), "settings.min_fragment_length": (1, 1_000_000),
          "settings.max_fragment_sources": (1, None), "settings.max_reach_pairs": (1, 2**31 - 1),
          "settings.max_reach_work": (1, 2**62), "settings.max_edge_pairs": (1, 2**62),
          "settings.explain_pages": (0, 1_000_000),
          "settings.stepwise_threshold": (0, 1), "content.max_spans": (1, 2**31 - 1),
          "labels.settings_files.random_length": (1, 10_000), "labels.settings_files.mixed_length": (1, 10_000),
          "labels.settings_files.max_bytes": (0, 2**31 - 1)}
# the label lattice is fixed by the engine; [lattice] states it and may not change it
LATTICE = {"confidentiality": ["public", "internal", "secret"], "integrity": ["trusted", "untrusted"]}
_SCALARS = (str, int, float, bool)


def check_values(doc: dict[str, Any], source: str) -> None:
    """Refuse what no policy holds, anywhere in ``doc`` (walked without recursion)."""
    stack: list[tuple[str, Any, int]] = [("", doc, 0)]
    while stack:
        path, value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise PolicyError(f"policy file {source}: {path or 'the document'} is nested more than "
                              f"{MAX_DEPTH} levels deep")
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    raise PolicyError(f"policy file {source}: key {key!r} under {path or 'the top level'} "
                                      "is not text")
                stack.append((f"{path}.{key}" if path else key, item, depth + 1))
        elif isinstance(value, list):
            stack.extend((f"{path}[{i}]", item, depth + 1) for i, item in enumerate(value))
        elif not isinstance(value, _SCALARS):
            what = "no value" if value is None else f"a {type(value).__name__} value"
            raise PolicyError(f"policy file {source}: {path} holds {what}; a policy holds text, numbers, "
                              "true/false, lists and tables")


def check_shape(doc: dict[str, Any]) -> None:
    """Raise PolicyError for the first section, key or value of the merged ``doc`` that
    is unknown, of the wrong type or out of range (in document order)."""
    for section, value in doc.items():
        if section not in SECTIONS:
            raise PolicyError(f"policy: unknown section [{section}]", f"known: {', '.join(SECTIONS)}")
        _check(value, SECTIONS[section], section)
    if "lattice" in doc and any(doc["lattice"].get(k, v) != v for k, v in LATTICE.items()):
        raise PolicyError("policy: the label lattice is fixed: [lattice] may only state "
                          + "; ".join(f"{k} = {v}" for k, v in LATTICE.items()))


def _check(value: Any, kind: Any, path: str) -> None:
    if isinstance(kind, dict):
        _expect(isinstance(value, dict), path, "a table")
        for key, item in value.items():
            if key not in kind:
                raise PolicyError(f"policy: unknown key {path}.{key}", f"known: {', '.join(kind)}")
            _check(item, kind[key], f"{path}.{key}")
    elif kind == "bool":
        _expect(isinstance(value, bool), path, "true or false")
    elif kind in ("int", "number"):
        ok = isinstance(value, int) if kind == "int" else isinstance(value, (int, float)) and math.isfinite(value)
        _expect(ok and not isinstance(value, bool), path, "an integer" if kind == "int" else "a finite number")
        low, high = BOUNDS.get(path, (None, None))
        if (low is not None and value < low) or (high is not None and value > high):
            raise PolicyError(f"policy: {path} must be "
                              + (f"between {low} and {high}" if high is not None else f"at least {low}")
                              + f", got {value}")
    elif kind == "str":
        _expect(isinstance(value, str), path, "text")
    elif kind.startswith("list["):
        _expect(isinstance(value, list), path, f"a list of {'texts' if kind == 'list[str]' else 'tables'}")
        for i, item in enumerate(value):
            _check(item, "str" if kind == "list[str]" else "table", f"{path}[{i}]")
    elif kind.startswith("table"):
        _expect(isinstance(value, dict), path, "a table")
        for key, item in value.items():
            if kind == "table[str]":
                _check(item, "str", f"{path}.{key}")
            elif kind == "table[table]":
                _check(item, "table", f"{path}.{key}")
            elif kind == "table[list[str]]":
                _check(item, "list[str]", f"{path}.{key}")
            elif key in FIELDS:  # a rule's or a tool entry's own fields
                _check(item, FIELDS[key], f"{path}.{key}")


def _expect(ok: bool, path: str, what: str) -> None:
    if not ok:
        raise PolicyError(f"policy: {path} must be {what}")
