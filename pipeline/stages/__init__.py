"""Stages: the Python that drives ``sql/*.sql``, one function per table it builds.

Owns the per-shard connection and stage functions (``tables``) and the start-up canaries
(``canaries``) that run the same stages on known trajectories.
May import the foundation modules, ``ingest`` and ``analysis``; never outputs or execution.
"""
