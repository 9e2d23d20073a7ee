"""Analysis: what a tool call does, read from its name, arguments and commands.

Owns the shell and code analysers (``shell/``), resource extraction (``resources``) and
role inference for tools the catalog lacks (``inference``).
May import the foundation modules and ``ingest``; nothing downstream (stages, outputs, execution).
"""
