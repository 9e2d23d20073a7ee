"""Opaque rate of the shell analyser on real agent commands.

Reads OpenHands trajectories (``openagentsafety/evaluation/*/traj_*.json``: ``run``
actions carry ``args.command``, ``run_ipython`` actions ``args.code``) and SWE-agent
``.traj`` files (``trajectory[*].action``) from ``../shared/corpora`` and prints, per
source, the number of commands, how many are opaque, the rate, and the most common
opaque reasons with one example each. Exits 0 with a message when the corpora are absent.

Usage: python bench/shell_opaque_rate.py [CORPORA_DIR]
"""

from __future__ import annotations

import collections
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.analysis.shell import ShellAnalysis, analyse_code, analyse_command  # noqa: E402

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "corpora"


def openhands(root: Path, action: str, key: str) -> Iterator[str]:
    """Texts of one OpenHands action kind."""
    for path in sorted(root.glob("openagentsafety/evaluation/*/traj_*.json")):
        try:
            events = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for ev in events if isinstance(events, list) else []:
            if isinstance(ev, dict) and ev.get("action") == action:
                text = (ev.get("args") or {}).get(key)
                if isinstance(text, str):
                    yield text


def swe_agent(root: Path) -> Iterator[str]:
    """Shell actions of SWE-agent trajectories (editor commands included: they are commands)."""
    for path in sorted(root.glob("swe-agent/**/*.traj")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for step in data.get("trajectory", []) if isinstance(data, dict) else []:
            action = step.get("action") if isinstance(step, dict) else None
            if isinstance(action, str) and action.strip():
                yield action


def report(title: str, texts: list[str], analyse: object) -> tuple[int, int]:
    """Print the opaque rate and top reasons of one source; returns (n, opaque)."""
    reasons: collections.Counter[str] = collections.Counter()
    examples: dict[str, str] = {}
    n_opaque = 0
    for text in texts:
        result: ShellAnalysis = analyse(text)  # type: ignore[operator]
        if result.opaque:
            n_opaque += 1
            key = re.sub(r":.*", "", result.opaque_reason or "?")
            reasons[key] += 1
            examples.setdefault(key, text)
    rate = n_opaque / len(texts) if texts else 0.0
    print(f"== {title}: {len(texts)} commands, {n_opaque} opaque, rate {rate:.2%}")
    for reason, count in reasons.most_common(15):
        example = examples[reason].replace("\n", "\\n")
        print(f"  {count:5d}  {reason}\n         e.g. {example[:160]}")
    return len(texts), n_opaque


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else DEFAULT
    if not root.is_dir():
        print(f"corpora not found at {root}; skipping")
        return 0
    total = opaque = 0
    for title, texts, fn in (
        ("OpenHands run", list(openhands(root, "run", "command")), analyse_command),
        ("OpenHands run_ipython", list(openhands(root, "run_ipython", "code")), analyse_code),
        ("SWE-agent actions", list(swe_agent(root)), analyse_command),
    ):
        n, o = report(title, texts, fn)
        total, opaque = total + n, opaque + o
    print(f"== all: {total} commands, {opaque} opaque, rate {opaque / total if total else 0:.2%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
