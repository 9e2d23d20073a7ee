"""Role inference for tools the catalog lacks (SPEC section 9, policy ``[inference]``).

Mechanism only: the lexicon (which name tokens are verbs, which nouns bring which
label, which argument names choose an effect) is policy data. A tool name is split
into lower-case tokens (CamelCase, snake_case, kebab-case, dotted and namespaced MCP
names ``mcp__server__tool``); its *verb* is the first token any verb list knows
(``GmailSendEmail`` -> ``send``). The verb and the other tokens pick a sink rule, a
shell/code role or a source label; argument names (tokenised the same way) pick the
control and resource arguments, and argument *values* (``inference.values``: an e-mail
address, phone number, IBAN or URL marks a recipient argument, a path a resource) add to
them. The result is an ordinary catalog entry, so every
later stage treats an inferred tool exactly like a catalogued one. The catalog always
wins: inference runs only for names absent from it. A name nothing in the lexicon
recognises gets no entry: a neutral action, through which data edges still pass.

Inference depends on the tool name and on the argument names seen with it; each
argument name is classified on its own, so a call's roles do not depend on which
other calls share its shard. Two choices would depend on the shard, so the run makes
them per call instead: a shell/code step's program argument is the first of
``shell_args`` / ``code_args`` present in that call's arguments (``resources.py``),
and a tool placed only by a resource argument (no verb, no source token) is placed
for the calls that pass one (``role_source = 'by_arguments'`` in ``policy_tools``,
``inferred`` or ``none`` per call in ``actions`` and ``step_rejects``). Value evidence is
the one input that comes from the calls: an argument counts as (say) a recipient when one
of its values in the shard matches the rule; a tool placed only by values is
``by_arguments``, so only calls that pass that argument are placed.

A key is a lower-cased name; when a shard holds several spellings of one name, the one
with the most tokens speaks for all (``GmailSendEmail`` over ``gmailsendemail``), so a
case-less spelling never hides what a CamelCase one says.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

import duckdb
import pyarrow as pa

from pipeline.analysis.inference_lexicon import Lexicon, SinkRule, lexicon, tokenise
from pipeline.analysis.inference_lexicon import forms as _forms, has as _has, joined as _joined
from pipeline.analysis.inference_values import value_kinds
from pipeline.sql import query

__all__ = ["infer_entry", "inferred_entries", "register_tool_roles", "lexicon", "tokenise", "Lexicon"]


def _verb(tokens: tuple[str, ...], lex: Lexicon) -> str | None:
    """The first verb token; words that are mostly nouns (email, post, control) are the
    verb only when the name has no other verb (``GmailReadEmail`` reads, ``chat`` sends)."""
    verbs = lex.verbs
    primary = next((t for t in tokens if t in verbs and t not in lex.noun_verbs), None)
    return primary or next((t for t in tokens if t in verbs), None)


def _sink(verb: str | None, tokens: tuple[str, ...], lex: Lexicon) -> SinkRule | None:
    """The first sink rule the verb and the name's other tokens meet (a rule that only an
    argument's name meets, ``arg_nouns`` alone, is :func:`_fetch_rule`'s)."""
    if verb is None:
        return None
    others = tuple(t for t in _joined(tokens) if t != verb)
    for rule in lex.sinks:
        if verb not in rule.verbs or (rule.arg_nouns and not rule.nouns):
            continue
        if not rule.nouns or _has(others, rule.nouns, join=False):
            return rule
    return None


def _fetch_rule(name: str, verb: str | None, lex: Lexicon) -> SinkRule | None:
    """The ``arg_nouns`` rule of a tool whose name places nothing by itself (`fetch`, `get`,
    `mcp__fetch__fetch`): decided by the name alone, so every shard gives the tool the same
    entry, placed only for the calls that pass an argument the rule names (a `url`). A name
    that places the tool by itself (`read_file(path, isUrl)`, `load_document`) keeps its own
    roles for every call."""
    if verb is None or infer_entry(name, (), lex, fetch=False) is not None:
        return None
    return next((r for r in lex.sinks if r.arg_nouns and not r.nouns and verb in r.verbs), None)


def _source(tokens: tuple[str, ...], lex: Lexicon) -> dict[str, str] | None:
    levels = {"public": 0, "internal": 1, "secret": 2, "trusted": 0, "untrusted": 1}
    strong = [r for r in lex.sources if not r.weak and _has(tokens, r.tokens)]
    hits = strong or [r for r in lex.sources if r.weak and _has(tokens, r.tokens)]
    if not hits:
        return None
    conf = max((r.conf for r in hits if r.conf), key=levels.__getitem__, default=None)
    integ = max((r.integ for r in hits if r.integ), key=levels.__getitem__, default=None)
    return {k: v for k, v in (("confidentiality", conf), ("integrity", integ)) if v}


def _is_content(arg: str, lex: Lexicon) -> bool:
    """An argument whose name ends in a content word holds text, not an address: the file's
    text (`file_text`, `file_content`), not `input_file` or `output_path`."""
    toks = tokenise(arg)
    return bool(toks) and any(f in lex.content_args for f in _forms(toks[-1]))


def _pick(args: Iterable[str], preferred: tuple[str, ...]) -> str:
    present = set(args)
    return next((a for a in preferred if a in present), preferred[0] if preferred else "")


def _by_value(kinds: Mapping[str, Collection[str]], role: str, lex: Lexicon) -> list[str]:
    """Argument names one of whose values matched a value rule with ``role``."""
    named = {r.name for r in lex.values if role in r.roles}
    return sorted(a for a, ks in kinds.items() if named.intersection(ks))


def infer_entry(name: str, arg_names: Iterable[str], lex: Lexicon,
                value_kinds: Mapping[str, Collection[str]] | None = None, fetch: bool = True) -> dict[str, Any] | None:
    """A catalog entry for tool ``name`` guessed from the lexicon, or None when nothing places it.

    ``value_kinds`` maps an argument name to the ``inference.values`` rules its values matched;
    ``fetch=False``: without :func:`_fetch_rule` (the name's own roles).
    """
    tokens = tokenise(name)
    kinds = {a: ks for a, ks in (value_kinds or {}).items()  # a content argument's value is text, not an address
             if ks and a and '"' not in a and "\\" not in a and not _has(tokenise(a), lex.content_args)}
    args = sorted({a for a in arg_names if a and '"' not in a and "\\" not in a} | set(kinds))
    verb = _verb(tokens, lex)
    runs = verb is None or verb in lex.exec_verbs
    entry: dict[str, Any] = {}
    if runs and (_has(tokens, lex.code_tokens)):
        entry["code"] = _pick(args, lex.code_args)
        entry["executes"] = [a for a in args if _has(tokenise(a), lex.resource_args)]
        return entry
    if runs and (_has(tokens, lex.shell_tokens) or (tokens and set(tokens) <= lex.exec_verbs)
                 or (verb is not None and _has(tokens, lex.process_tokens))):
        entry["shell"] = _pick(args, lex.shell_args)
        return entry
    resources = sorted({a for a in args if _has(tokenise(a), lex.resource_args) and not _is_content(a, lex)}
                       | set(_by_value(kinds, "resource", lex)))
    destinations = _by_value(kinds, "destination", lex)
    rule = _sink(verb, tokens, lex)
    fetch_rule = _fetch_rule(name, verb, lex) if fetch and rule is None else None
    rule = rule or fetch_rule
    sink = rule.sink if rule else None
    source = _source(tokens, lex)
    if sink is None and verb is None and source is None:
        # a name that says nothing: a recipient-like value suggests the sink (first rule wins)
        sink = next((r.sink for r in lex.values if r.sink and "destination" in r.roles
                     and any(r.name in kinds.get(a, ()) for a in destinations)), None)
    if sink is not None and verb in lex.read_verbs and (source or {}).get("confidentiality") == "secret":
        sink = None  # reading a key or a secret record brings it in: a source, not egress (`get_api_key`)
    if sink is not None:
        entry["sink"] = sink
        # where an egress sink publishes (a repository, project, workspace) is its destination
        # too; at a share or payment sink a `workspace` or `project` is where, not to whom
        where = lex.destination_args | (lex.publish_destination_args if sink == "egress" else frozenset())
        entry["control"] = sorted({a for a in args if _has(tokenise(a), lex.control_args | where)} | set(destinations))
        entry["sends"] = sorted({a for a in args if _has(tokenise(a), where)} | set(destinations))
        access = {"destructive": "deletes", "execute": "executes"}.get(sink, "reads")
        entry[access] = [a for a in resources if a not in entry["sends"] or access != "reads"]
        if fetch_rule is not None:
            # placed (`by_arguments`) only for the calls that pass an argument the rule names:
            # a call without one is no fetch, whichever other calls share its shard
            entry["sends"] = [a for a in args if _has(tokenise(a), fetch_rule.arg_nouns, join=False)]
            entry[access] = []
            if not entry["sends"]:
                return None  # no call passes one (`get_me`, `fetch(id)`): no entry, as a verb alone
        integrity = max((i for i in ((source or {}).get("integrity"), rule.integrity if rule else None) if i),
                        key=("trusted", "untrusted").index, default=None)
        if integrity:  # a page fetcher is a sink AND brings untrusted text
            entry["source"] = {"integrity": integrity}
        if sink == "privileged" and verb in lex.write_verbs and (source or {}).get("confidentiality") == "secret":
            # creating or changing a key, token or password returns it (`create_api_key`): secret output
            entry.setdefault("source", {})["confidentiality"] = "secret"
        return entry
    if verb is not None and verb in lex.write_verbs:
        entry["writes"] = resources
        if _has(tokens, lex.read_write_tokens):  # an editor views what it edits
            entry["reads"] = resources
    elif verb is not None and verb in lex.exec_verbs:
        entry["executes"] = resources
    else:
        entry["reads"] = resources
    if source:
        entry["source"] = source
    if not source and not resources:
        return None  # a verb alone places nothing (`get_me`, `create_branch`): no entry, as no verb
    return entry


def name_known(name: str, lex: Lexicon) -> bool:
    """The lexicon knows the name itself: a verb, or a word that brings a source label."""
    tokens = tokenise(name)
    return _verb(tokens, lex) is not None or _source(tokens, lex) is not None


def inferred_entries(names_args: Iterable[tuple[str, list[str]]], data: dict[str, Any],
                     value_kinds: Mapping[str, Mapping[str, Collection[str]]] | None = None,
                     ) -> dict[str, tuple[dict[str, Any], str]]:
    """Inferred entries and their ``role_source`` for (tool name, argument names seen in
    the shard) pairs, keyed by lower-cased name, with no choice that depends on which
    calls the shard holds (module docstring): a program argument is left to each call
    (the first of the lexicon's list stands for it), and an entry placed only by a
    resource argument or an argument value is ``by_arguments``. ``value_kinds`` maps a
    lower-cased name to its arguments' matched value rules. Several spellings of one
    key: the one with the most tokens decides (then the smallest)."""
    lex = lexicon(data.get("inference", {}))
    spellings: dict[str, tuple[str, set[str]]] = {}
    for name, args in names_args:
        key = name.lower()
        best, seen = spellings.get(key, (name, set()))
        if (-len(tokenise(name)), name) < (-len(tokenise(best)), best):
            best = name
        spellings[key] = (best, seen | set(args))
    out: dict[str, tuple[dict[str, Any], str]] = {}
    for key, (name, args) in spellings.items():
        entry = infer_entry(name, args, lex, (value_kinds or {}).get(key))
        if entry is None:
            continue
        if "shell" in entry:
            entry["shell"] = _pick((), lex.shell_args)
        if "code" in entry:
            entry["code"] = _pick((), lex.code_args)
        # placed by its name alone, or only for the calls that pass an argument it names: a
        # recipient-like value, or a `url` given to a tool whose name places nothing (_fetch_rule)
        by_name = infer_entry(name, (), lex, fetch=False) is not None
        out[key] = (entry, "inferred" if by_name else "by_arguments")
    return out


def register_tool_roles(con: duckdb.DuckDBPyConnection, data: dict[str, Any]) -> None:
    """Replace ``policy_tools`` by the catalog plus inferred entries for the shard's other tools.

    One inference per distinct tool name of the shard (argument names and matched value
    rules seen with it), never per row. Inferred rows carry ``role_source = 'inferred'``,
    or ``'by_arguments'`` for a tool placed only by an argument (decided per call by the
    SQL stages).
    """
    from pipeline.policy_tables import tool_row

    catalog = con.table("policy_tools").to_arrow_table()
    found = query(con, "uncatalogued_tools").fetchall()
    if not found:
        return
    lex = lexicon(data.get("inference", {}))
    kinds = value_kinds(con, lex.values)
    names = [(name, args) for _, name, args in found]
    entries = inferred_entries(names, data, kinds)
    known = {name.lower() for name, _ in names if name_known(name, lex)}
    sinks = data.get("sinks", {})
    # a name whose verb or source word the lexicon knows but that places no role
    # (`get_hotels_prices`, `create_branch`) is a neutral tool, not an unknown one: a row of
    # its own, role_source 'none', so `unknown_tools = "reject"` keeps its calls whichever
    # calls share the shard
    rows = [tool_row(key, None, entries[key][0], sinks, entries[key][1], key in known) if key in entries
            else tool_row(key, None, {}, sinks, "none", True)
            for key in sorted(known | entries.keys())]
    if rows:
        inferred = pa.Table.from_pylist(rows, schema=catalog.schema)
        con.register("policy_tools", pa.concat_tables([catalog, inferred]))
