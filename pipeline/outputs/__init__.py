"""Outputs: what users read: validated Parquet, reports, explain pages, query and diff.

Owns the table writer and schema glue (``writer``), ``report.html`` and its parts
(``report*``), per-trajectory pages (``explain*``), ``query``, ``diff`` and the run summary.
May import only the foundation modules: outputs read finished tables, they never score.
"""
