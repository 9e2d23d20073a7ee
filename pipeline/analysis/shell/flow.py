"""What one pipeline stage of a shell command hands the next (:class:`Flow`), and what
several commands write one after another to one stdout (:func:`union_flows`); re-exported
by :mod:`pipeline.analysis.shell.model`."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass
class Flow:
    """What a command writes to stdout, as far as the next pipeline stage cares.

    ``resources``: files/URLs whose content flows on; ``literal``: known text (echo,
    here-doc; beside resources, the part of the output that is known); ``items``: names it lists (find, grep -l) for xargs; ``transformed``: the
    data was decoded or rewritten (base64 -d, tr, sed); ``exact``: the whole output as the
    command prints it, when known (echo/printf/cat of a known text: ``tee FILE`` writes it).
    All empty: output of a program we cannot follow."""

    resources: tuple[str, ...] = ()
    literal: str | None = None
    items: tuple[str, ...] = ()
    transformed: bool = False
    exact: str | None = None
    # the output is its one resource's content as it is (`cat x.sh`): `| tee y.sh` copies it
    whole: bool = False


def union_flows(flows: list[Flow]) -> Flow:
    """What several commands write one after another to one stdout (a group's commands, a
    loop's runs): every resource any of them carries, the names they list, the text known
    of them joined by lines (``(crontab -l; echo LINE) | crontab -`` schedules LINE beside the
    old table), rewritten if any was. Commands that wrote nothing known (``cd``, output sent
    elsewhere) add nothing; so nothing is known to be its exact text (``Flow.exact``)."""
    live = [f for f in flows if f.resources or f.literal is not None or f.items or f.transformed]
    if len(live) <= 1:  # never exactly what one printed: the others' output, if any, is not known
        return replace(live[0], exact=None, whole=False) if live else Flow()
    literals = [f.literal for f in live if f.literal is not None]
    return Flow(tuple(dict.fromkeys(r for f in live for r in f.resources)),
                "\n".join(literals) if literals else None,
                tuple(i for f in live for i in f.items), any(f.transformed for f in live))
