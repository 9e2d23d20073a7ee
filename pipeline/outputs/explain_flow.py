"""The flow a ``show`` page explains (``pipeline.outputs.explain`` loads the trajectory):
the flow that decided a ``flow`` route, the part of the dependency graph its data could
have taken from source to sink, and each action's role as the flows table records it."""

from __future__ import annotations

from typing import Any

from pipeline.outputs.explain import Explanation


def deciding_flow(ex: Explanation) -> dict[str, Any] | None:
    """The flow that decided a ``flow`` route, in ``sql/verdicts.sql``'s order for its
    reason (violations first, executed sinks first, shortest, then by source and sink);
    None when the trajectory took the aggregate route or was not scored."""
    if not ex.verdict or ex.verdict.get("route") != "flow" or not ex.flows:
        return None
    return min(ex.flows, key=lambda f: (not f["violation"], f["sink_blocked"], f["length"],
                                        f["source_action_idx"], f["sink_action_idx"]))


def flow_subgraph(ex: Explanation, flow: dict[str, Any] | None) -> tuple[set[int], set[tuple[int, int]]]:
    """Actions and (src, dst) edges on some dependency path from ``flow``'s source to its
    sink: the witness path and every other route the data could have taken."""
    if flow is None:
        return set(), set()
    pairs = {(int(e["src_action_idx"]), int(e["dst_action_idx"])) for e in ex.edges}
    source, sink = int(flow["source_action_idx"]), int(flow["sink_action_idx"])

    def closure(start: int, forward: bool) -> set[int]:
        seen, todo = {start}, [start]
        while todo:
            node = todo.pop()
            for a, b in pairs:
                nxt = b if forward else a
                if (a if forward else b) == node and nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    after, before = closure(source, True), closure(sink, False)
    edges = {(a, b) for a, b in pairs if a in after and b in before}
    nodes = {a for a, _ in edges} | {b for _, b in edges} | {int(i) for i in flow["path"]}
    return nodes, edges


def witness_edges(flow: dict[str, Any] | None) -> set[tuple[int, int]]:
    """The consecutive (src, dst) pairs of ``flow``'s witness path."""
    path = [int(i) for i in flow["path"]] if flow else []
    return set(zip(path, path[1:]))


def roles(ex: Explanation) -> dict[int, list[str]]:
    """Per action, as the flows table records them: ``source <labels>`` (the labels of
    the flows it starts) and ``sink <kinds>`` (the sinks it is; ``blocked`` when it was)."""
    sources: dict[int, set[str]] = {}
    sinks: dict[int, set[str]] = {}
    for f in ex.flows:
        sources.setdefault(int(f["source_action_idx"]), set()).add(str(f["label"]))
        sinks.setdefault(int(f["sink_action_idx"]), set()).add(
            str(f["sink_kind"]) + (" blocked" if f["sink_blocked"] else ""))
    out: dict[int, list[str]] = {}
    for idx in sorted(set(sources) | set(sinks)):
        out[idx] = ([f"source {', '.join(sorted(sources[idx]))}"] if idx in sources else []) \
            + ([f"sink {', '.join(sorted(sinks[idx]))}"] if idx in sinks else [])
    return out
