"""Which model and prompt produced a labels file (for the manifest and the report).

A file written by ``litmus-gate label`` has ``model`` and ``prompt_sha256`` columns;
``score --labels`` records their distinct pairs in ``manifest.json`` (under
``labels.labelled_by``) and the report names them beside the metrics. A hand-made file
without those columns records nothing more than its path and hash.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from pipeline.errors import LabelsError
from pipeline.ingest.tables_in import _relation


def label_provenance(path: Path) -> dict[str, Any]:
    """``{"labelled_by": [{model, prompt_sha256, rows, null_labels}, ...]}``, or ``{}``
    when the file does not say which model labelled it."""
    con = duckdb.connect()
    try:
        rel = _relation(con, path, "labels")
        if not {"model", "prompt_sha256", "label"} <= set(rel.columns):
            return {}
        rows = con.sql("select model::varchar, prompt_sha256::varchar, count(*), count(*) filter (where label is null) "
                       "from rel group by all order by all").fetchall()
    except duckdb.Error as exc:
        raise LabelsError(f"labels file {path}: {str(exc).splitlines()[0]}") from exc
    finally:
        con.close()
    return {"labelled_by": [{"model": m, "prompt_sha256": p, "rows": int(n), "null_labels": int(k)}
                            for m, p, n, k in rows]}


def provenance_notes(labels: Any) -> list[str]:
    """Report notes naming the labelling model(s) of a manifest's ``labels`` entry."""
    if not isinstance(labels, dict):
        return ["Step labels: the built-in rule classifier only (no --labels file)."]
    entries = labels.get("labelled_by") or []
    name = Path(str(labels.get("path", "?"))).name
    if not entries:
        return [f"Step labels: from {name} (it names no model); steps it does not cover are labelled by "
                "the built-in rule classifier."]
    notes = []
    for e in entries:
        notes.append(f"Step labels: {e['rows']} rows of {name} labelled by model {e['model']} with prompt "
                     f"sha256 {str(e['prompt_sha256'])[:12]}… ({e['null_labels']} null: those steps, and the "
                     "steps the file does not cover, are labelled by the built-in rule classifier).")
    return notes
