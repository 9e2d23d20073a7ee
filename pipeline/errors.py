"""One error hierarchy. The CLI turns each into a one-line message and an exit code.

Per-record problems are never raised: they become rows of the `attrition` table.
These exceptions are for problems that stop the run itself.
"""

from __future__ import annotations

import re

# what must not reach a terminal from data (a file name, an id): C0/C1 controls (ESC and
# CSI start sequences that clear or retitle it), lone surrogates (a file name that is not
# UTF-8) and bidi controls (they reorder what is read)
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: object) -> str:
    """``text`` for one line of stderr: newlines become spaces, other controls U+FFFD."""
    return _UNSAFE.sub("\ufffd", str(text).replace("\n", " "))


class _OneLine:
    """What the CLI prints of a stop: a message and a hint (set by ``__init__``)."""

    message: str
    hint: str | None

    def one_line(self) -> str:
        """Message and hint on one line, for the terminal (control characters neutralised)."""
        text = self.message.replace("\n", " ")
        return terminal_safe(f"{text} ({self.hint})" if self.hint else text)


class LitmusError(_OneLine, Exception):
    """Base class: the run cannot proceed. ``exit_code`` is what the CLI returns."""

    exit_code: int = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(LitmusError):
    """The operator asked for something impossible: bad flag, missing input, ..."""

    exit_code = 2


class InputNotFoundError(UsageError):
    """An INPUT path does not exist or holds no readable transcript file."""


class PolicyError(UsageError):
    """The policy file cannot be read, parsed or does not fit the policy schema."""


class LabelsError(UsageError):
    """The labels or gold file cannot be read or does not fit its contract."""


class RunDirError(UsageError):
    """RUN_DIR exists (without --overwrite), is not writable, or is not a run."""


class FormatError(UsageError):
    """An unknown --format, or a file whose format cannot be detected."""


class StorageError(LitmusError):
    """Shared storage (a URI) failed in the middle of a run. Nothing was published; the
    work folder is kept, so ``--resume`` continues from the finished shards."""


class WorkerLostError(LitmusError):
    """A worker process died in the middle of a shard (killed by a signal: the kernel's
    OOM killer, a scheduler's kill of one process). Nothing was published; the work
    folder is kept, so ``--resume`` continues from the finished shards."""


class ShardMemoryError(LitmusError):
    """A shard needed more than DuckDB's ``memory_limit`` in an operator that cannot
    spill. Nothing was published; the work folder is kept, so ``--resume`` with a larger
    ``--memory-limit`` continues from the finished shards."""


class InputChangedError(LitmusError):
    """An input file changed while the run read it (rewritten, truncated, or a file read
    whole that grew): what was scored is not what planning hashed, so nothing was
    published and the work folder is removed."""


class SchemaValidationError(LitmusError):
    """A table failed its Pandera schema: a bug in litmus-gate, never in the input."""

    exit_code = 4


class CanaryError(LitmusError):
    """Built-in reference trajectories came out wrong: the grader is broken."""

    exit_code = 3


class PromptError(UsageError):
    """The ``label`` prompt file cannot be read or does not fit its format."""


class EndpointError(UsageError):
    """The labelling endpoint refused every request (bad URL, model, or API key)."""


class Interrupted(_OneLine, BaseException):
    """SIGTERM or SIGINT stopped the run: nothing was published, the work folder is
    kept for ``--resume`` (an interrupt while planning has none: the driver's hint then
    says to rerun the same command). ``exit_code`` is 128 + the signal number (143, 130).
    Like ``KeyboardInterrupt`` it is not an ``Exception``: a handler that keeps one bad
    record from stopping the run (``except Exception``) never takes a signal for that
    record's error. The CLI prints it as it prints a :class:`LitmusError`."""

    def __init__(self, signum: int, name: str) -> None:
        self.message = f"interrupted by {name}; no run was published"
        super().__init__(self.message)
        self.hint = "the work folder is kept: rerun with --resume to continue"
        self.exit_code = 128 + signum
