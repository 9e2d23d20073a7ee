"""Step-kind builders: the blocks every scenario repeats, one call each.

Each builder appends the same messages, with the same random draws in the same order,
as the Traj calls it stands for (the tool's result is computed before the call is
appended, as when it is passed as an argument), so scenarios written with them give
the same bytes as the long form.
"""

from __future__ import annotations

from typing import Any

from .content_net import money_ok, sent_ok, wrote
from .rand import Args
from .traj import Err, Traj


def pay(t: Traj, recipient: str, amount: float, subject: str, text: str | None = None, **extra: Any) -> str:
    """An executed ``send_money`` (arguments recipient, amount, subject, then ``extra``)
    with the bank's confirmation as result; returns the call id."""
    args = {"recipient": recipient, "amount": amount, "subject": subject, **extra}
    return t.step("send_money", args, money_ok(t, amount, recipient), text)


def mail(t: Traj, to: str, subject: str, body: str, text: str | None = None, **extra: Any) -> str:
    """An executed ``send_email`` (arguments to, subject, body, then ``extra``) with the
    mail server's receipt as result; returns the call id."""
    return t.step("send_email", {"to": to, "subject": subject, "body": body, **extra}, sent_ok(t), text)


def write(t: Traj, path: str, content: str, text: str | None = None) -> str:
    """An executed ``write_file`` of ``content`` to ``path``; returns the call id."""
    return t.step("write_file", {"path": path, "content": content}, wrote(path, content), text)


def failed(t: Traj, tool: str, args: Args | str, err: Err, text: str | None = None) -> str:
    """A call that did not execute (failed, blocked by a guard or approver, or of unknown
    outcome, by ``err.kind``), with its error result; returns the call id."""
    cid = t.call(tool, args, text)
    t.fail(cid, err)
    return cid
