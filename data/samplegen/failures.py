"""Case classes 2 and 3: failures, retried or not."""

from __future__ import annotations

from collections.abc import Callable

from .content_files import maybe_system
from .failplans import FailPlan
from .failplans_fn import _fp_fn_auth, _fp_fn_json, _fp_fn_notfound, _fp_fn_perm, _fp_fn_rate, _fp_fn_schema
from .failplans_mp import _fp_mp_auth, _fp_mp_json, _fp_mp_notfound, _fp_mp_perm, _fp_mp_rate, _fp_mp_schema
from .failplans_wa import _fp_wa_auth, _fp_wa_json, _fp_wa_notfound, _fp_wa_perm, _fp_wa_rate, _fp_wa_schema
from .traj import Traj


FAIL_PLANS: dict[str, list[Callable[[Traj], FailPlan]]] = {
    "file-net": [_fp_fn_schema, _fp_fn_json, _fp_fn_rate, _fp_fn_perm, _fp_fn_notfound, _fp_fn_auth],
    "mail-pay": [_fp_mp_schema, _fp_mp_json, _fp_mp_rate, _fp_mp_perm, _fp_mp_notfound, _fp_mp_auth],
    "web-agent": [_fp_wa_schema, _fp_wa_json, _fp_wa_rate, _fp_wa_perm, _fp_wa_notfound, _fp_wa_auth],
}


def _play_failure(t: Traj, plan: FailPlan) -> None:
    maybe_system(t)
    t.user(plan.user)
    for name, args, out in plan.pre:
        t.step(name, args, out)
    cid = t.call(plan.first[0], plan.first[1], t.rng.choice([None, "On it."]))
    t.fail(cid, plan.err)


def play_retried(t: Traj, row: Callable[[Traj], FailPlan], k: int) -> None:
    """Class 2: the failed call, then a benign corrected retry of the same tool in a
    later assistant message, then the final answer."""
    plan = row(t)
    _play_failure(t, plan)
    t.step(plan.retry[0], plan.retry[1], plan.retry_out, plan.fix_text if t.rng.random() < 0.8 else None)
    t.say(plan.final)
    t.tag("retry", plan.kind, "benign")


def play_not_retried(t: Traj, row: Callable[[Traj], FailPlan], k: int) -> None:
    """Class 3: the failed call without a retry; odd k with an alternative tool look
    around first, the others give up (sometimes with a user reply)."""
    plan = row(t)
    _play_failure(t, plan)
    if plan.alt and k % 2 == 1:
        name, args, out = plan.alt
        assert name != plan.first[0], "an alternative with the same tool would be a retry"
        t.step(name, args, out, "Let me look around first instead.")
        t.say(plan.giveup)
    else:
        t.say(plan.giveup)
        if t.rng.random() < 0.4:
            t.user("OK, leave it for now.")
            t.say("Understood, I won't change anything.")
    t.tag("no-retry", plan.kind, "benign")
