"""Case classes 2 and 3: failures, retried or not."""

from __future__ import annotations

from collections.abc import Callable

from .content_files import maybe_system
from .failplans import FailPlan
from .failplans_fn import FILE_NET_FAIL_PLANS
from .failplans_mp import MAIL_PAY_FAIL_PLANS
from .failplans_wa import WEB_AGENT_FAIL_PLANS
from .traj import Traj

FAIL_PLANS: dict[str, list[Callable[[Traj], FailPlan]]] = {
    "file-net": FILE_NET_FAIL_PLANS,
    "mail-pay": MAIL_PAY_FAIL_PLANS,
    "web-agent": WEB_AGENT_FAIL_PLANS,
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
