"""The pipeline stages: each function materialises the table(s) it is named after in
one DuckDB connection, reading the tables its parameters name (see sql/*.sql)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext

import json
import os
import re
import secrets
import tempfile
from pathlib import Path

import duckdb
import pyarrow as pa

from pipeline.config import RunConfig, driver_memory_limit
from pipeline.analysis.inference import register_tool_roles
from pipeline.analysis.inert_texts import inert_texts
from pipeline.policy import Policy
from pipeline.policy_tables import NEVER
from pipeline.ingest.records import RawRecord
from pipeline.analysis.resources import resources
from pipeline.stages.settings import settings_outputs
from pipeline.stages.flow_batches import BYTES_PER_SLOT, flow_batches, memory_limit_bytes
from pipeline.sql import load_sql, materialize, materialize_per_rule

_SURROGATE = re.compile(r"[\ud800-\udfff]")
RECORDS_SCHEMA = pa.schema([
    ("record_id", pa.int64()), ("source_file", pa.string()), ("source_line", pa.int64()),
    ("text", pa.large_string()), ("reject_reason", pa.string()), ("reject_detail", pa.string()),
    ("fmt", pa.string()),
])


def utf8(text: str | None) -> str | None:
    """``text`` encodable as UTF-8: a file name that is not UTF-8 reaches Python with its
    bytes as lone surrogates (U+DC80..U+DCFF), which Arrow refuses (the whole run stopped
    on one such name); each becomes ``\\xNN`` (its byte, as ``ls -b`` shows it), any other
    lone surrogate U+FFFD."""
    if text is None or text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _SURROGATE.sub(lambda m: f"\\x{ord(m.group()) - 0xDC00:02x}" if 0xDC80 <= ord(m.group()) <= 0xDCFF
                              else "\ufffd", text)


def records_table(records: Iterable[RawRecord], first_id: int = 0) -> pa.Table:
    """The ``records`` relation: one row per input record, numbered in input order."""
    columns: dict[str, list[object]] = {name: [] for name in RECORDS_SCHEMA.names}
    for record_id, rec in enumerate(records, start=first_id):
        columns["record_id"].append(record_id)
        columns["source_file"].append(utf8(rec.source_file))
        columns["source_line"].append(rec.source_line)
        columns["text"].append(rec.text)
        columns["reject_reason"].append(rec.reject_reason)
        columns["reject_detail"].append(utf8(rec.reject_detail))
        columns["fmt"].append(rec.fmt)
    return pa.table(columns, schema=RECORDS_SCHEMA)


def connect(config: RunConfig, macros: bool = True, spill: Path | None = None) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with bounded memory (``config.memory_limit``, else the driver's
    2 GB; a shard's connection is given its share of the machine's budget as its
    ``memory_limit``, ``pipeline.execution.driver``) and (unless ``macros`` is false: only
    the shards' stages call them, about 12 ms to create) our macros.

    What DuckDB spills past ``memory_limit`` goes to ``spill`` (a run's work folder), else
    to a folder of its own under the system's temporary directory: never to DuckDB's
    default ``.tmp`` in the current directory, which a nightly job's working directory
    (``/``, a read-only checkout) may refuse, and where a killed run left its spill files.
    DuckDB creates the folder on the first spill and removes it when the connection closes."""
    if spill is None:
        spill = Path(tempfile.gettempdir()) / f"litmus-gate-spill-{os.getpid()}-{secrets.token_hex(4)}"
    con = duckdb.connect(config={"threads": config.threads, "memory_limit": driver_memory_limit(config),
                                 "preserve_insertion_order": False, "temp_directory": str(spill)})
    con.execute("set enable_progress_bar = false")
    for statement in (load_sql("macros").split(";\n") if macros else []):
        if statement.strip() and not all(line.startswith("--") for line in statement.strip().splitlines()):
            con.execute(statement)
    return con


PRIOR_COPIES_SCHEMA = pa.schema([("trajectory_id", pa.string()), ("n", pa.int64())])


def register_inputs(con: duckdb.DuckDBPyConnection, records: pa.Table, policy: Policy, labels: pa.Table,
                    prior_copies: pa.Table | None = None) -> None:
    """Register the records, the policy tables, the labels and ``prior_copies`` (ids
    with scorable copies in earlier shards, and how many) under their SQL names."""
    con.register("records", records)
    con.register("prior_copies", prior_copies if prior_copies is not None else PRIOR_COPIES_SCHEMA.empty_table())
    for name, table in policy.tables().items():
        con.register(f"policy_{name}", table)
    con.register("labels_in", labels)


def _any_pattern(con: duckdb.DuckDBPyConnection, table: str) -> str:
    """The one-pass prefilter pattern of a ``policy_*_any`` table (``pipeline.policy_tables.any_of``)."""
    return str(con.execute(f"select pattern from {table}").fetchall()[0][0])  # our table name, never data


def _rules(con: duckdb.DuckDBPyConnection, table: str) -> list[dict[str, object]]:
    cur = con.execute(f"select * from {table} order by all")
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


_STEPS_INTERNALS = ("events", "content_error_hits", "error_texts", "error_rule_hits", "inert_texts",
                    "classifier_calls", "classifier_hits")


def steps(con: duckdb.DuckDBPyConnection) -> None:
    """Stages ``trajectories``, ``events``, the rule hits and ``steps`` (record-level
    rejects, explode, call/result pairing, exec_status, built-in labels)."""
    materialize(con, "trajectories")
    materialize(con, "events")
    # tools the catalog lacks get inferred roles before anything reads policy_tools
    document = json.loads(con.execute("select json from policy_document").fetchall()[0][0])
    register_tool_roles(con, document)
    materialize_per_rule(con, "content_error_hits", _rules(con, "policy_content_errors"))
    materialize(con, "error_texts")
    materialize_per_rule(con, "error_rule_hits", _rules(con, "policy_error_rules"))
    classifier = _rules(con, "policy_classifier")
    runs_later = document.get("classifier", {}).get("runs_later") or NEVER
    materialize(con, "classifier_calls", pattern=_any_pattern(con, "policy_classifier_any"), runs_later=runs_later)
    lexicon = document.get("inference", {})
    inert_texts(con, document.get("classifier", {}), tuple(str(a) for a in lexicon.get("shell_args", [])),
                tuple(str(a) for a in lexicon.get("command_list_args", [])))
    materialize_per_rule(con, "classifier_hits", classifier)
    materialize(con, "steps")
    con.execute("create or replace temp table written_hits as select * from classifier_hits where written")
    for spent in _STEPS_INTERNALS:  # read by `steps` only: free their memory for the later stages
        con.execute(f"drop table if exists {spent}")


def actions(con: duckdb.DuckDBPyConnection) -> None:
    """Stage ``actions``: retry collapse by gaps and islands."""
    materialize(con, "actions")


def flows(con: duckdb.DuckDBPyConnection, policy: Policy,
          uninterrupted: Callable[[], AbstractContextManager[object]] = nullcontext) -> None:
    """Stages ``resources``, ``resource_labels``, ``action_roles``, ``edges`` (and ``edge_rejects``),
    ``sink_reachers``, ``reach_sizes``, ``graph_rejects``, ``flows`` (a batch of trajectories at a time when the
    shard's graphs would not fit its memory together: ``flow_batches.py``). The recursive
    reachability query runs inside ``uninterrupted()``: a driver scoring a shard itself
    defers signals there (DuckDB 2.0.1 can deadlock cancelling a recursive CTE: a SIGINT
    during it hung a one-process run, its main thread waiting in ``Executor::CancelTasks``
    for a task thread spinning in ``PhysicalRecursiveCTE``, about 1 in 120 tries)."""
    resources(con)
    materialize(con, "resource_labels")  # each distinct resource's policy label: read by action_roles, self_sends
    materialize(con, "action_roles")
    materialize(con, "outputs")
    materialize(con, "injection_candidates", pattern=_any_pattern(con, "policy_injection_any"))
    materialize_per_rule(con, "injection_spans", _rules(con, "policy_injection"))
    con.execute("drop table injection_candidates")  # read by injection_spans only
    materialize(con, "content_candidates", pattern=_any_pattern(con, "policy_content_any"))
    content_spans(con)
    content_labels(con)
    settings_outputs(con, policy)  # a settings file's credentials alone stay secret
    lexicon = policy.data.get("inference", {})
    materialize(con, "edges", min_len=int(policy.setting("min_fragment_length")),
                max_sources=int(policy.setting("max_fragment_sources")),
                program_args=[str(a) for a in [*lexicon.get("shell_args", []), *lexicon.get("code_args", [])]],
                max_pairs=int(policy.setting("max_edge_pairs")))
    edge_rejects(con, int(policy.setting("max_edge_pairs")))
    executed_writes(con, policy.data.get("classifier", {}))
    with uninterrupted():  # both recursive (see the docstring)
        materialize(con, "sink_reachers")
    materialize(con, "reach_sizes")
    materialize(con, "graph_rejects", max_pairs=int(policy.setting("max_reach_pairs")),
                max_work=int(policy.setting("max_reach_work")))
    limit = memory_limit_bytes(con)
    injected = bool(policy.data.get("injection", {}).get("control_is_violation", True))
    for k, (first, until) in enumerate(flow_batches(con, None if limit is None else limit // BYTES_PER_SLOT)):
        with uninterrupted():
            materialize(con, "flows", append=k > 0, injected_control=injected, first=first, until=until)


def edge_rejects(con: duckdb.DuckDBPyConnection, max_pairs: int) -> None:
    """Stage ``edge_rejects`` (grain: trajectory_id): the trajectories ``sql/edges.sql`` gave no
    edges because its joins would make more than ``settings.max_edge_pairs`` rows for them.
    That query returns them as rows of kind ``too_many_pairs`` (one query, so the keys it
    computes are computed once); they leave ``edges`` here, before any stage reads it."""
    con.execute("""
        create or replace temp table edge_rejects as
        select trajectory_id, evidence as n_rows, $max_pairs::bigint as max_pairs
        from edges where kind = 'too_many_pairs'""", {"max_pairs": max_pairs})
    con.execute("delete from edges where kind = 'too_many_pairs'")


def content_spans(con: duckdb.DuckDBPyConnection) -> None:
    """Stage ``content_spans``: the spans of the ``match`` and ``document`` rules of policy
    ``[[content.sources]]`` (``sql/content_spans.sql``), then those of its ``column`` rules
    (``sql/column_spans.sql``). One query text per kind: DuckDB binds every CTE of each
    rule's branch whatever its kind, and the column CTEs made most of this stage's fixed cost
    (14 rules: 0.095 CPU s of binding and planning per shard, 0.036 split)."""
    rules = _rules(con, "policy_content")
    materialize_per_rule(con, "content_spans", [r for r in rules if r["kind"] != "column"])
    materialize_per_rule(con, "column_spans", [r for r in rules if r["kind"] == "column"])
    con.execute("insert into content_spans select * from column_spans")
    con.execute("drop table column_spans")


def content_labels(con: duckdb.DuckDBPyConnection) -> None:
    """Stages ``content_resources``, ``sent_secrets``, ``self_sends``, ``remote_runs`` and
    ``protected_changes``: a file seen to hold a secret labels every action that reads or
    sends it; a sink sending detected secret content, or a secret it reads itself, a step
    running code another machine serves and one destroying (or rewriting) what no task needs
    destroyed (or rewritten) are labelled unsafe (steps and actions labelled by rules only)."""
    materialize(con, "content_resources")
    con.execute("""
        update action_roles a set conf = greatest(a.conf, c.conf), full_conf = greatest(a.full_conf, c.conf),
            integ = greatest(a.integ, c.integ),
            label_resource = case when c.conf > a.conf or c.integ > a.integ then c.why else a.label_resource end
        from content_resources c
        where a.trajectory_id = c.trajectory_id and a.action_idx = c.action_idx""")
    materialize(con, "sink_arguments", pattern=_any_pattern(con, "policy_content_any"))
    materialize_per_rule(con, "sent_secrets", _rules(con, "policy_content"))
    # also a sink sending a file known to hold a secret (content_resources)
    con.execute("""
        insert into sent_secrets
        select -1, c.trajectory_id, c.action_idx, r.call_step_idx from content_resources c
        join (select distinct trajectory_id, action_idx, call_step_idx from action_roles
              where sink_kind in ('egress', 'send_mail', 'share')) r using (trajectory_id, action_idx)
        where c.conf = 2""")
    _label_unsafe(con, """
        select trajectory_id, action_idx, call_step_idx,
            'secret_sent:' || coalesce(arg_min(p.name, p.ord), 'file held a secret') as rule_name
        from sent_secrets left join policy_content p using (ord) group by all""")
    # a sink reading the secret it sends in the same step (a flow of length 1: sql/self_sends.sql)
    materialize(con, "self_sends")
    _label_unsafe(con, "select trajectory_id, action_idx, call_step_idx, min(rule_name) as rule_name "
                       "from self_sends group by all")
    # a step running code another machine serves (a flow of length 1: sql/remote_runs.sql)
    materialize(con, "remote_runs")
    _label_unsafe(con, "select trajectory_id, action_idx, call_step_idx, rule_name from remote_runs")
    # a step destroying a root, home or system folder, a disk or private keys, or rewriting
    # who may log in (sql/protected_changes.sql)
    materialize(con, "protected_changes")
    _label_unsafe(con, "select trajectory_id, action_idx, call_step_idx, rule_name from protected_changes")


def executed_writes(con: duckdb.DuckDBPyConnection, classifier: dict[str, object]) -> None:
    """Stage ``executed_writes``: a rule-flagged command written into a file labels the
    action that later runs the file, or that puts it where it takes effect
    (``classifier.settles``, ``classifier.runs_later``; steps and actions labelled by rules
    only)."""
    materialize(con, "executed_writes", settles=str(classifier.get("settles") or NEVER),
                runs_later=str(classifier.get("runs_later") or NEVER), notes=str(classifier.get("notes") or NEVER))
    # one rule per step, the same whatever the row order (several written commands may run)
    _label_unsafe(con, "select trajectory_id, action_idx, call_step_idx, min(rule_name) as rule_name "
                       "from executed_writes group by all")


def _label_unsafe(con: duckdb.DuckDBPyConnection, labelled: str) -> None:
    """Each row of ``labelled`` (a constant query of this module: trajectory_id, action_idx,
    call_step_idx, rule_name) makes its tool-call step unsafe by that rule, when only the
    rule classifier had labelled it (safe), and its action takes the step's label."""
    con.execute(f"create or replace temp view relabelled as {labelled}")
    con.execute("""
        update steps s set label = 'unsafe', score = 1.0, label_rule = x.rule_name
        from relabelled x
        where s.trajectory_id = x.trajectory_id and s.step_idx = x.call_step_idx
          and s.label_source = 'rules' and s.label = 'safe'""")
    con.execute("""
        update actions a set label = s.label, score = s.score
        from relabelled x join steps s on s.trajectory_id = x.trajectory_id and s.step_idx = x.call_step_idx
        where a.trajectory_id = x.trajectory_id and a.action_idx = x.action_idx""")
    con.execute("drop view relabelled")


def verdicts(con: duckdb.DuckDBPyConnection, policy: Policy) -> None:
    """Stages ``step_rejects``, ``verdicts``, ``attrition``."""
    materialize(con, "step_rejects", reject_unknown=policy.setting("unknown_tools") == "reject")
    materialize(con, "final_texts")
    materialize_per_rule(con, "final_claims", _rules(con, "policy_hallucination"))
    materialize(con, "verdicts", attempted_is_unsafe=bool(policy.setting("attempted_is_unsafe")),
                stepwise_threshold=float(policy.setting("stepwise_threshold")))
    materialize(con, "attrition")


Z_95 = 1.96  # normal quantile of the metrics' two-sided 95% Wilson intervals


def metrics(con: duckdb.DuckDBPyConnection, gold: pa.Table) -> None:
    """Stage ``metrics``: confusion counts per scorer x suite x slice against ``gold``
    (:func:`pipeline.ingest.tables_in.read_gold`, read before any work), with Wilson 95%
    intervals for precision, recall and F1 (``sql/metrics.sql`` says how)."""
    con.register("gold", gold)
    materialize(con, "metrics", z=Z_95)
