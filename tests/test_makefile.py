"""The README's two commands start with the Makefile: an interpreter too old for the
package must be refused before a venv exists (a venv made by it would stay behind and
fail every later `make run` the same way, whatever PY says then)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _python_reporting(tmp_path: Path, version: tuple[int, int, int]) -> Path:
    """A stand-in interpreter: runs `-c CODE` with the given sys.version_info; any other
    use (e.g. `-m venv`) is recorded, so the test sees whether make went on."""
    fake = tmp_path / "fakepython"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        "if sys.argv[1:2] != ['-c']:\n"
        f"    open({str(tmp_path / 'went-on')!r}, 'w').write(' '.join(sys.argv[1:]))\n"
        "    sys.exit(0)\n"
        "code = sys.argv[2]\n"
        f"sys.version_info = {version!r}\n"
        "exec(compile(code, '<string>', 'exec'))\n")
    fake.chmod(0o755)
    return fake


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")
@pytest.mark.parametrize(("target", "venv"), [(".venv/bin/python", ".venv"), ("bench", ".venv-bench")])
@pytest.mark.parametrize(("version", "refused"), [((3, 10, 13), True), ((3, 11, 0), False), ((3, 13, 1), False)])
def test_make_refuses_a_python_older_than_3_11_before_making_a_venv(
        tmp_path: Path, version: tuple[int, int, int], refused: bool, target: str, venv: str) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(ROOT / "Makefile", repo / "Makefile")
    fake = _python_reporting(tmp_path, version)
    done = subprocess.run(["make", "-C", str(repo), target, f"PY={fake}"],
                          capture_output=True, text=True, timeout=60)
    if refused:
        assert done.returncode != 0
        assert f"litmus-gate needs Python 3.11 or newer; {fake} is 3.10" in done.stderr
        assert not (tmp_path / "went-on").exists()
    else:
        assert (tmp_path / "went-on").read_text() == f"-m venv {venv}"
