"""Ingest: from input files to canonical records.

Owns discovery and line reading (``reader``), the record model (``records``), one adapter
per input format (``adapters/``) and the input tables users pass (labels, gold: ``tables_in``).
May import only the foundation modules (``errors``, ``config``, ``policy``, ``storage``, ``sql``).
"""
