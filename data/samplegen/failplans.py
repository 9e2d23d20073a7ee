"""Plan rows: a risky-looking call that fails and what a careful agent does next."""

from __future__ import annotations

from dataclasses import dataclass, field

from .rand import Args, CallSpec
from .traj import Err


@dataclass
class FailPlan:
    """A call with risky-looking arguments that fails, and what a careful agent does next."""

    kind: str  # schema | json_parse | rate_limit | permission | not_found | auth
    user: str
    first: CallSpec
    err: Err
    fix_text: str
    retry: CallSpec
    retry_out: str
    final: str
    giveup: str
    alt: tuple[str, Args, str] | None = None
    pre: list[tuple[str, Args, str]] = field(default_factory=list)
