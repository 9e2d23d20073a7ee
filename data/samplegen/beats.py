"""Step-kind builders: the blocks every scenario repeats, one call each.

Each builder appends the same messages, with the same random draws in the same order,
as the Traj calls it stands for (the tool's result is computed before the call is
appended, as when it is passed as an argument), so scenarios written with them give
the same bytes as the long form.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
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


# ----------------------------------------------------------------------------- scripts
# A scenario row written as data: a sequence of beats, each one message (or one call
# with its result). Values are fixed when the script is built; the only random draws
# while it plays are the format variety of each message and the receipts of Pay and
# Mail and the results Step computes when it plays, in beat order, exactly as the
# builder calls above make them.
class Beat:
    """One step of a scripted scenario."""

    def play(self, t: Traj) -> None:
        """Append this beat's message(s) to ``t``."""
        raise NotImplementedError


@dataclass(frozen=True)
class User(Beat):
    """A user message."""

    text: str

    def play(self, t: Traj) -> None:
        t.user(self.text)


@dataclass(frozen=True)
class Say(Beat):
    """An assistant text message without tool calls."""

    text: str

    def play(self, t: Traj) -> None:
        t.say(self.text)


@dataclass(frozen=True)
class Step(Beat):
    """A call that executes, with its result (``text``: the assistant text before it).
    ``out`` may be a function of the trajectory: a result drawn when the call executes."""

    tool: str
    args: Args | str
    out: str | Callable[[Traj], str]
    text: str | None = None

    def play(self, t: Traj) -> None:
        out = self.out(t) if callable(self.out) else self.out
        t.step(self.tool, self.args, out, self.text)


@dataclass(frozen=True)
class Fail(Beat):
    """A call that did not execute, with its error result."""

    tool: str
    args: Args | str
    err: Err
    text: str | None = None

    def play(self, t: Traj) -> None:
        failed(t, self.tool, self.args, self.err, self.text)


@dataclass(frozen=True)
class Call(Beat):
    """A call whose result was never logged."""

    tool: str
    args: Args | str
    text: str | None = None

    def play(self, t: Traj) -> None:
        t.call(self.tool, self.args, self.text)


@dataclass(frozen=True)
class Pay(Beat):
    """An executed send_money (see ``pay``)."""

    recipient: str
    amount: float
    subject: str
    text: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def play(self, t: Traj) -> None:
        pay(t, self.recipient, self.amount, self.subject, self.text, **self.extra)


@dataclass(frozen=True)
class Mail(Beat):
    """An executed send_email (see ``mail``)."""

    to: str
    subject: str
    body: str
    text: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def play(self, t: Traj) -> None:
        mail(t, self.to, self.subject, self.body, self.text, **self.extra)


@dataclass(frozen=True)
class Write(Beat):
    """An executed write_file (see ``write``)."""

    path: str
    content: str
    text: str | None = None

    def play(self, t: Traj) -> None:
        write(t, self.path, self.content, self.text)


class Tag(Beat):
    """Slice tags for the trajectory; with ``unsafe=True`` the gold becomes unsafe too."""

    def __init__(self, *tags: str, unsafe: bool = False) -> None:
        self.tags = tags
        self.unsafe = unsafe

    def play(self, t: Traj) -> None:
        if self.unsafe:
            t.unsafe(*self.tags)
        else:
            t.tag(*self.tags)


Script = Sequence[Beat]
# A scenario row: a Script, or a function of the trajectory (and the case's extra draws)
# that returns one or builds the messages itself (None).
Row = Script | Callable[..., Script | None]


def play_script(t: Traj, script: Script) -> None:
    """Play every beat of ``script`` into ``t``, in order."""
    for beat in script:
        beat.play(t)


def run(t: Traj, row: Row, *args: Any) -> None:
    """Play one scenario row. A row is a Script, or a function of the trajectory (and
    the case's extra draws) that returns one, or, for the few scenarios whose content
    depends on draws made while the conversation unfolds, builds the messages itself
    and returns None."""
    script = row(t, *args) if callable(row) else row
    if script is not None:
        play_script(t, script)


def when(condition: bool, *beats: Beat) -> tuple[Beat, ...]:
    """``beats`` when ``condition`` holds, else none: ``(User(...), *when(follow, Pay(...)), Say(...))``."""
    return beats if condition else ()
