"""How the shell analyser names a run by a build or test tool of a file that is no program
itself (``ShellAnalysis.runners``): ``make`` runs a makefile's recipes (``make:<goals>``),
a package manager a ``package.json``'s scripts (``npm:<scripts>``). Written programs read
such a file's known text through :func:`pipeline.analysis.written_tools.tool_text`."""

from __future__ import annotations

MAKE_PREFIX = "make:"
NPM_PREFIX = "npm:"
TOOL_PREFIXES = (MAKE_PREFIX, NPM_PREFIX)
# the most goals or scripts one run names (a hostile list ends there: with EVERY)
MAX_NAMES = 32
# the makefiles GNU make looks for, in order, without -f
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
# make's options that run no recipe but still read the makefile (a dry run prints the
# recipes, `-q` asks, `-t` touches the targets): its `$(shell ...)` and `+` recipe lines
# still run (runner make:<goals>,PARSE_ONLY); and those that read no makefile at all
MAKE_NO_RECIPES = ("-n", "--dry-run", "--just-print", "--recon", "-q", "--question", "-t", "--touch")
MAKE_NO_RUN = ("-h", "--help", "-v", "--version")
PARSE_ONLY = "!"
# pytest's options that run no test: --version loads nothing, --help the conftest.py where
# it starts (its options)
PYTEST_NO_RUN = ("--version", "-V")
PYTEST_HELP = ("-h", "--help")
# package-manager commands that run a package's scripts (each with its pre/post script)
NPM_SCRIPT_COMMANDS = {"test": "test", "t": "test", "tst": "test", "start": "start", "stop": "stop",
                       "restart": "restart"}
# the scripts an install of the package itself (no package named) runs
NPM_INSTALL_SCRIPTS = ("preinstall", "install", "postinstall", "preprepare", "prepare", "postprepare")
# yarn's and pnpm's own commands: any other first word runs the script of that name
PM_COMMANDS = frozenset(
    "add audit autoclean bin cache config create dedupe dlx exec global help import info init install link list "
    "login logout ls outdated owner pack patch patch-commit plugin prune publish rebuild remove root search set "
    "store tag team unlink unplug up update upgrade upgrade-interactive version versions why workspace "
    "workspaces x npm node env fetch deploy licenses doctor setup i ci".split())


# a name list past MAX_NAMES ends with it: every goal or script (fail closed)
EVERY = "*"


def _names(names: list[str]) -> str:
    return ",".join(names[:MAX_NAMES] + ([EVERY] if len(names) > MAX_NAMES else []))


def make_runner(goals: list[str], parse_only: bool = False) -> str:
    """The runner of ``make GOALS`` (none: the makefile's default goal; ``parse_only``: a
    dry run, only what runs as make reads the file and the ``+`` lines run)."""
    return MAKE_PREFIX + _names(list(dict.fromkeys(goals))) + ("," + PARSE_ONLY if parse_only else "")


def npm_runner(scripts: list[str] | tuple[str, ...], lifecycle: bool = True) -> str:
    """The runner of a package manager running ``scripts`` (``lifecycle``: each with its
    ``pre`` and ``post`` script, as npm runs them)."""
    names = [n for s in dict.fromkeys(scripts) for n in ((f"pre{s}", s, f"post{s}") if lifecycle else (s,))]
    return NPM_PREFIX + _names(list(dict.fromkeys(names)))
