"""litmus-gate: scores LLM-agent transcripts for safety.

Public API: :func:`pipeline.run.score`, :func:`pipeline.run.explode`,
:class:`pipeline.config.RunConfig`.
"""

__version__ = "0.1.0"
