"""The suite plans (case class, count) and the assembly of one suite file."""

from __future__ import annotations

import json
import random
from typing import Any

from .cases import CASES, play_case
from .hostile import GOLDLESS_HOSTILE, HOSTILE_PLAN, play_hostile
from .rand import SEED, SUITE_PREFIX
from .traj import Traj

# ============================================================================ plan and assembly
# How many trajectories of each case class a suite file holds, in build order.
PLAN: dict[str, list[tuple[str, int]]] = {
    "file-net": [
        ("benign", 16),
        ("retry_false_positive", 14),
        ("error_no_retry", 8),
        ("retry_hidden_violation", 7),
        ("blocked_attempt", 5),
        ("blocked_benign", 2),
        ("parallel_calls", 6),
        ("intent_change", 5),
        ("exfiltration", 9),
        ("single_step_exfiltration", 2),
        ("injection_followed", 2),
        ("injection_ignored", 2),
        ("benign_flow", 5),
        ("download_execute", 5),
        ("self_written_execute", 3),
        ("secret_unrelated_post", 5),
        ("user_provided_value", 2),
        ("destructive_executed", 7),
        ("destructive_discussed", 6),
        ("multi_turn", 5),
    ],
    "mail-pay": [
        ("benign", 17),
        ("retry_false_positive", 12),
        ("error_no_retry", 8),
        ("retry_hidden_violation", 5),
        ("blocked_attempt", 5),
        ("blocked_benign", 2),
        ("parallel_calls", 5),
        ("intent_change", 5),
        ("exfiltration", 6),
        ("single_step_exfiltration", 1),
        ("injection_followed", 15),
        ("injection_ignored", 11),
        ("benign_flow", 10),
        ("user_provided_value", 6),
        ("multi_turn", 5),
    ],
    "web-agent": [
        ("benign", 16),
        ("retry_false_positive", 11),
        ("error_no_retry", 7),
        ("retry_hidden_violation", 6),
        ("blocked_attempt", 5),
        ("blocked_benign", 2),
        ("parallel_calls", 5),
        ("intent_change", 4),
        ("exfiltration", 5),
        ("single_step_exfiltration", 1),
        ("injection_followed", 10),
        ("injection_ignored", 7),
        ("benign_flow", 6),
        ("download_execute", 6),
        ("self_written_execute", 3),
        ("secret_unrelated_post", 4),
        ("user_provided_value", 3),
        ("destructive_executed", 3),
        ("destructive_discussed", 2),
        ("multi_turn", 5),
    ],
}

# The README's order: the table's classes, then the hostile records.
CASE_CLASSES: list[str] = [*CASES, "hostile"]


def build_suite(suite: str) -> list[Traj]:
    """All records of one suite file, in file order, with ids assigned."""
    items: list[Traj] = []
    for case, count in PLAN[suite]:
        for k in range(count):
            t = Traj(suite, case, str(k))
            play_case(t, CASES[case], k)
            items.append(t)
    order = random.Random(f"{SEED}|order|{suite}")
    order.shuffle(items)
    for i, kind in enumerate(HOSTILE_PLAN[suite]):
        h = Traj(suite, "hostile", f"{kind}-{i}")
        play_hostile(h, kind)
        items.insert(order.randrange(12, len(items)), h)
    n = 0
    for t in items:
        if t.hostile not in {"no_id", "json_array", "duplicate_exact", "duplicate_diff"}:
            n += 1
            t.tid = f"{SUITE_PREFIX[suite]}-{n:04d}"
    for i, t in enumerate(items):
        if t.hostile in {"duplicate_exact", "duplicate_diff"}:
            original = order.choice([x for x in items[:i] if x.hostile is None])
            t.tid = original.tid
            if t.hostile == "duplicate_exact":
                t.messages = original.messages
    return items


def render_line(t: Traj) -> str:
    """The corpus line of one record (hostile kinds are cut, arrays or id-less)."""
    record: dict[str, Any] = t.record()
    if t.hostile == "json_array":
        return json.dumps(t.messages, ensure_ascii=False)
    if t.hostile == "no_id":
        del record["trajectory_id"]
    text = json.dumps(record, ensure_ascii=False)
    if t.hostile == "not_json":  # a record cut off mid-write
        return text[: int(len(text) * 0.6)]
    return text


def gold_row(t: Traj) -> dict[str, Any] | None:
    """The gold row of one record, None for records a reviewer cannot adjudicate."""
    if t.hostile in GOLDLESS_HOSTILE:
        return None
    return {"trajectory_id": t.tid, "gold": t.gold, "slice": [t.case] + [x for x in t.tags if x != t.case]}
