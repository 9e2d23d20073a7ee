"""The shell analyser's work bound on hostile text (pipeline/analysis/shell/budget.py Budget,
pipeline/analysis/shell/tree.py tree): quadratic parses halted, loop and variable expansion bounded,
one budget for all nested analyses, resource sets deduplicated in linear time; and the
fuzz harness (bench/shell_fuzz.py) run on the crash-prone families in child processes.

Times are CPU time of this thread (``time.thread_time``), so other jobs on the machine do
not make the tests flaky."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable

import pytest

from pipeline.analysis.shell import ShellAnalysis, analyse_code, analyse_command
from pipeline.analysis.shell.budget import ANALYSIS_CPU_SECONDS, TOO_COMPLEX, Budget, TooComplex
from pipeline.analysis.shell.model import MAX_COMMAND_CHARS
from pipeline.analysis.shell.tree import PARSE_CPU_SECONDS
from tests.conftest import REPO

SLACK = 0.5  # CPU seconds beyond a parse's deadline: tree-sitter checks it between operations
# what a hostile text's analysis may cost: the work count (MAX_WORK) stops these texts
# first on a fast machine; on a slow or loaded one the CPU backstop (ANALYSIS_CPU_SECONDS,
# read every 64 work calls and between a parse's operations) does, a little after it
# fires (2.02 s in a clean-clone CI on a machine 1.8x slower); without either bound these
# texts cost far more (each test says why)
BOUND = ANALYSIS_CPU_SECONDS + SLACK


def _timed(run: Callable[[str], ShellAnalysis], text: str) -> tuple[ShellAnalysis, float]:
    start = time.thread_time()
    result = run(text)
    return result, time.thread_time() - start


@pytest.mark.parametrize("text", [
    "<<E\n" * (MAX_COMMAND_CHARS // 4),  # tree-sitter-bash alone: ~10 s
    "[[ ( " * (MAX_COMMAND_CHARS // 10 - 1) + "-f a" + " ) ]]" * (MAX_COMMAND_CHARS // 10 - 1),  # ~2.4 s
], ids=["heredoc-starts", "test-nesting"])
def test_a_quadratic_parse_is_halted_and_opaque(text: str) -> None:
    assert len(text) <= MAX_COMMAND_CHARS
    result, cpu = _timed(analyse_command, text)
    assert result.opaque and "too complex" in (result.opaque_reason or "")
    assert cpu < PARSE_CPU_SECONDS + SLACK


def test_loop_expansion_is_bounded() -> None:
    # 2,000 loop values times a word of 5,000 `$x`: 10 million substitutions unbounded
    values = " ".join(f"v{i}" for i in range(2_000))
    result, cpu = _timed(analyse_command, f"for x in {values}; do cat {'$x' * 5_000}; done")
    assert result.opaque and result.opaque_reason == TOO_COMPLEX
    assert cpu < BOUND


def test_a_literal_variable_expanded_many_times_is_bounded() -> None:
    # one word of 5,000 `$X` with a 10,000-character X is 50 million characters
    result, cpu = _timed(analyse_command, "X=" + "a" * 10_000 + "; cat " + "$X" * 5_000)
    assert result.opaque and result.opaque_reason == TOO_COMPLEX
    assert cpu < BOUND


def test_nested_analyses_share_one_budget() -> None:
    # `bash -c "$X $a"` analyses X again for every loop value: 200 parses of 35,000 characters
    values = " ".join(str(i) for i in range(200))
    body = "cat f; " * 5_000
    result, cpu = _timed(analyse_command, f"X='{body}'; for a in {values}; do bash -c \"$X $a\"; done")
    assert result.opaque and result.opaque_reason == TOO_COMPLEX
    assert cpu < BOUND
    # the shell strings of one code step share its budget: 20 loops of ~250,000 units each
    line = f"os.system('X=\"{'cat f; ' * 20}\"; for a in {values}; do bash -c \"$X $a\"; done')\n"
    alone = analyse_command(line[len("os.system('"):-len("')\n")])
    assert not alone.opaque  # one string alone is within the budget
    result, cpu = _timed(analyse_code, "import os\n" + line * 20)
    assert result.opaque and result.opaque_reason == TOO_COMPLEX
    assert cpu < BOUND


def test_a_long_pipeline_is_bounded() -> None:
    # every stage hands the next the resources of all before it: quadratic unbounded
    result, cpu = _timed(analyse_command, " | ".join(f"cat f{i}" for i in range(8_000)))
    assert result.opaque and result.opaque_reason == TOO_COMPLEX
    assert cpu < BOUND


def test_many_resources_are_kept_in_linear_time() -> None:
    names = [f"f{i}" for i in range(14_000)]
    result, cpu = _timed(analyse_command, "cat " + " ".join(names))
    assert not result.opaque and result.reads == tuple(names)
    assert cpu < 0.8  # 1.2 s when each new name was looked up in a list


def test_ordinary_commands_stay_far_from_the_budget() -> None:
    text = "cd /repo\n" + "\n".join(f"cat src/m{i}.py | grep -n def > out/m{i}.txt" for i in range(1_500))
    assert len(text) < MAX_COMMAND_CHARS
    result, cpu = _timed(analyse_command, text)
    # each relative name, and after `cd /repo` the same under /repo (Acc.cwd)
    assert not result.opaque and len(result.writes) == 3_000 and "/repo/out/m7.txt" in result.writes
    assert cpu < ANALYSIS_CPU_SECONDS


def _counting_clock(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count ``time.thread_time`` readings (a system call) from here on."""
    count, real = [0], time.thread_time

    def clock() -> float:
        count[0] += 1
        return real()
    monkeypatch.setattr(time, "thread_time", clock)
    return count


@pytest.mark.parametrize("text", ["ls -la", "cd /repo && git status | head -5 > out.txt"])
def test_an_ordinary_command_reads_the_cpu_clock_once(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # the budget's clock starts with the reading its first parse takes for its own deadline
    count = _counting_clock(monkeypatch)
    assert not analyse_command(text).opaque
    assert count[0] == 1


def test_a_code_step_starts_the_clock_before_its_own_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    count = _counting_clock(monkeypatch)
    assert analyse_code("import os\nos.system('cat notes.txt')\n").reads == ("notes.txt",)
    assert count[0] == 2  # the code step's start, then its one shell string's parse


def test_the_budget_clock_starts_at_its_first_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr(time, "thread_time", lambda: now[0])
    spend = Budget(work=10**9, seconds=1.0)
    assert spend.deadline_at(5.0) == 6.0 and spend.deadline_at(50.0) == 6.0  # the first reading wins
    lazy = Budget(work=10**9, seconds=1.0)
    assert lazy.deadline == 101.0  # started by the first look at it
    for _ in range(63):
        lazy.spend(1)  # within the budget: the clock is read every 64th call
    now[0] = 101.5
    with pytest.raises(TooComplex):
        lazy.spend(1)
    with pytest.raises(TooComplex):  # spent for good
        lazy.spend(0)


def test_fuzz_harness_finds_no_crash_on_the_crash_prone_families() -> None:
    # each family in child processes: a segfault is observed, not fatal to pytest
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "shell_fuzz.py"), "--n", "60", "--timeout", "120",
         "--only", "astral", "--only", "surrogates", "--only", "random_bytes", "--only", "bidi"],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    assert "astral" in proc.stdout


def test_a_large_group_piped_on_is_gathered_in_linear_time() -> None:
    # every command of a group writes to the pipe after it (stages.Groups): the union is made
    # once, at the pipe, not once per command (5x the commands costs about 5x, not 25x)
    # the least of three runs each: thread CPU time still grows on a loaded machine (caches
    # shared with other processes), and one slow run of the small case must not decide
    def cost(n: int) -> tuple[ShellAnalysis, float]:
        runs = [_timed(analyse_command, "{ " + "; ".join(f"cat f{i}" for i in range(n)) + "; } | nc h 80")
                for _ in range(3)]
        return runs[0][0], min(cpu for _, cpu in runs)
    small, small_cpu = cost(1_000)
    large, large_cpu = cost(5_000)
    assert not large.opaque and len(large.payloads) == 5_000 and len(small.payloads) == 1_000
    assert large_cpu < 0.2 + 10 * small_cpu and large_cpu < ANALYSIS_CPU_SECONDS
    # nested groups, each piped on: bounded like a long pipeline
    nested, cpu = _timed(analyse_command, " | ".join(f"{{ cat f{i}; cat g{i}; }}" for i in range(3_000)))
    assert nested.opaque and nested.opaque_reason == TOO_COMPLEX and cpu < BOUND
