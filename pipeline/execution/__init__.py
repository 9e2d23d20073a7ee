"""The execution path of a run: plan shards, score them (locally or on Ray), publish.

Modules call each other in one direction, and all of them call ``pipeline.storage``
(the thin boundary to local paths and URIs), never the reverse:

``driver`` -> ``plan``, ``engines``, ``shard``, ``duplicates``, ``publish``, ``workdir``,
``signals``; ``engines`` -> ``signals``; ``shard`` -> ``plan``, ``workdir``, ``signals``. Nothing is
imported here, so importing a submodule pulls in only what it needs.
"""
