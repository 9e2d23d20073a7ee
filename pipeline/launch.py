"""The ``litmus-gate`` console script: the CLI's signal handlers first, then its imports
(a SIGTERM while PyArrow and DuckDB load gives one line too; see
:func:`pipeline.execution.signals.install_cli_handlers`)."""

from __future__ import annotations


def main() -> int:
    """Install the CLI's signal handlers, then run :func:`pipeline.cli.main`."""
    from pipeline.execution.signals import install_cli_handlers

    install_cli_handlers()
    from pipeline.cli import main as cli_main

    return cli_main()
