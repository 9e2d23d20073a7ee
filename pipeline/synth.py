"""``litmus-gate synth``: generated corpora of any size, deterministic by seed.

Each generated trajectory is a trajectory of the bundled sample corpus (which covers
every SPEC case class: retries, blocked attempts, parallel calls, exfiltration,
injection, download-then-execute, hostile records, ...) drawn at random in the sample's
proportions, with a fresh id and its secrets, IBANs and hosts re-keyed so that copies
do not share payload fragments. Gold rows and per-step labels are written beside it
under the new ids. Output is streamed: memory does not grow with N.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

from pipeline.config import sample_root

# \uXXXX escapes are matched first so that their digits are never re-keyed
_DIGITS = re.compile(r"\\u[0-9a-fA-F]{4}|[0-9]{4,}")


def _load(root: Path) -> tuple[list[tuple[str | None, str]], dict[str, dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    lines: list[tuple[str | None, str]] = []
    for path in sorted((root / "corpus").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            try:
                tid = json.loads(line).get("trajectory_id")
            except (ValueError, AttributeError):
                tid = None
            lines.append((tid if isinstance(tid, str) else None, line))
    gold = {r["trajectory_id"]: r for r in map(json.loads, (root / "gold.jsonl").read_text().splitlines())}
    labels: dict[str, list[dict[str, Any]]] = {}
    for row in map(json.loads, (root / "labels.jsonl").read_text().splitlines()):
        labels.setdefault(row["trajectory_id"], []).append(row)
    return lines, gold, labels


def _rekey(line: str, old: str, new: str, rng: random.Random) -> str:
    """New id, and every long digit run replaced consistently (secrets, IBANs, ids)."""
    mapping: dict[str, str] = {}

    def swap(match: re.Match[str]) -> str:
        digits = match.group(0)
        if digits.startswith("\\"):
            return digits
        if digits not in mapping:
            # same length, same leading zero-ness: a JSON number stays a valid number
            head = "0" if digits[0] == "0" else rng.choice("123456789")
            mapping[digits] = head + "".join(rng.choice("0123456789") for _ in digits[1:])
        return mapping[digits]

    marker = '"@@litmus-id@@"'  # keeps the id out of the digit re-keying
    text = marker.join(line.split(json.dumps(old), 1)) if old else line
    return _DIGITS.sub(swap, text).replace(marker, json.dumps(new), 1)


def synth(n: int, out: Path, seed: int = 0) -> dict[str, int]:
    """Write ``out`` (canonical JSONL), ``out.gold.jsonl`` and ``out.labels.jsonl``."""
    rng = random.Random(seed)
    lines, gold, labels = _load(sample_root())
    counts = {"trajectories": 0, "gold": 0, "labels": 0}
    gold_path = out.with_suffix(".gold.jsonl")
    labels_path = out.with_suffix(".labels.jsonl")
    with out.open("w", encoding="utf-8") as corpus, gold_path.open("w") as g, labels_path.open("w") as lab:
        for i in range(n):
            old, line = lines[rng.randrange(len(lines))]
            new = f"synth-{seed}-{i:09d}"
            corpus.write(_rekey(line, old or "", new, rng) + "\n")
            counts["trajectories"] += 1
            if old and old in gold:
                g.write(json.dumps({**gold[old], "trajectory_id": new}) + "\n")
                counts["gold"] += 1
            for row in labels.get(old or "", []):
                lab.write(json.dumps({**row, "trajectory_id": new}) + "\n")
                counts["labels"] += 1
    return counts
