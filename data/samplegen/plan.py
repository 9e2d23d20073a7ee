"""The suite plans (case class, count) and the assembly of one suite file."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from .benign import case_benign
from .blocked import case_blocked_attempt, case_blocked_benign
from .effects import case_destructive_discussed, case_destructive_executed, case_download_execute, case_secret_unrelated_post, case_self_written_execute, case_user_provided_value
from .exfil import case_exfiltration, case_single_step_exfiltration
from .failures import case_error_no_retry, case_retry_false_positive
from .flows import case_benign_flow
from .hidden import case_retry_hidden_violation
from .hostile import GOLDLESS_HOSTILE, HOSTILE_PLAN, case_hostile, case_multi_turn
from .injection import case_injection_followed, case_injection_ignored
from .intent import case_intent_change
from .parallel import case_parallel_calls
from .rand import SEED, SUITE_PREFIX
from .traj import Traj


# ============================================================================ plan and assembly
CaseFn = Callable[[Traj, int], None]

PLAN: dict[str, list[tuple[CaseFn, int]]] = {
    "file-net": [
        (case_benign, 16),
        (case_retry_false_positive, 14),
        (case_error_no_retry, 8),
        (case_retry_hidden_violation, 7),
        (case_blocked_attempt, 5),
        (case_blocked_benign, 2),
        (case_parallel_calls, 6),
        (case_intent_change, 5),
        (case_exfiltration, 9),
        (case_single_step_exfiltration, 2),
        (case_injection_followed, 2),
        (case_injection_ignored, 2),
        (case_benign_flow, 5),
        (case_download_execute, 5),
        (case_self_written_execute, 3),
        (case_secret_unrelated_post, 5),
        (case_user_provided_value, 2),
        (case_destructive_executed, 7),
        (case_destructive_discussed, 6),
        (case_multi_turn, 5),
    ],
    "mail-pay": [
        (case_benign, 17),
        (case_retry_false_positive, 12),
        (case_error_no_retry, 8),
        (case_retry_hidden_violation, 5),
        (case_blocked_attempt, 5),
        (case_blocked_benign, 2),
        (case_parallel_calls, 5),
        (case_intent_change, 5),
        (case_exfiltration, 6),
        (case_single_step_exfiltration, 1),
        (case_injection_followed, 15),
        (case_injection_ignored, 11),
        (case_benign_flow, 10),
        (case_user_provided_value, 6),
        (case_multi_turn, 5),
    ],
    "web-agent": [
        (case_benign, 16),
        (case_retry_false_positive, 11),
        (case_error_no_retry, 7),
        (case_retry_hidden_violation, 6),
        (case_blocked_attempt, 5),
        (case_blocked_benign, 2),
        (case_parallel_calls, 5),
        (case_intent_change, 4),
        (case_exfiltration, 5),
        (case_single_step_exfiltration, 1),
        (case_injection_followed, 10),
        (case_injection_ignored, 7),
        (case_benign_flow, 6),
        (case_download_execute, 6),
        (case_self_written_execute, 3),
        (case_secret_unrelated_post, 4),
        (case_user_provided_value, 3),
        (case_destructive_executed, 3),
        (case_destructive_discussed, 2),
        (case_multi_turn, 5),
    ],
}

CASE_CLASSES: list[str] = [
    "benign",
    "retry_false_positive",
    "error_no_retry",
    "retry_hidden_violation",
    "blocked_attempt",
    "blocked_benign",
    "parallel_calls",
    "intent_change",
    "exfiltration",
    "single_step_exfiltration",
    "injection_followed",
    "injection_ignored",
    "benign_flow",
    "download_execute",
    "self_written_execute",
    "secret_unrelated_post",
    "user_provided_value",
    "destructive_executed",
    "destructive_discussed",
    "multi_turn",
    "hostile",
]


def build_suite(suite: str) -> list[Traj]:
    """All records of one suite file, in file order, with ids assigned."""
    items: list[Traj] = []
    for fn, count in PLAN[suite]:
        case = fn.__name__.removeprefix("case_")
        for k in range(count):
            t = Traj(suite, case, str(k))
            fn(t, k)
            items.append(t)
    order = random.Random(f"{SEED}|order|{suite}")
    order.shuffle(items)
    for i, kind in enumerate(HOSTILE_PLAN[suite]):
        h = Traj(suite, "hostile", f"{kind}-{i}")
        case_hostile(h, kind)
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
    if t.hostile in GOLDLESS_HOSTILE:
        return None
    return {"trajectory_id": t.tid, "gold": t.gold, "slice": [t.case] + [x for x in t.tags if x != t.case]}
