"""mypy --strict on the wizard, as it is installed (wizard.steps and wizard.plans mapped from the top-level
steps/ and plans/ by pyproject's package-dir: mypy does not follow an editable install's import hook, so
the check runs on a tree of links laid out like the installed package). Exceptions and their reasons are
in pyproject.toml [tool.mypy]."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent


def test_mypy_strict_passes_on_the_wizard(tmp_path: Path) -> None:
    if shutil.which("mypy") is None and subprocess.run([sys.executable, "-m", "mypy", "--version"],
                                                      capture_output=True).returncode != 0:
        pytest.fail("mypy is not installed: pip install -e '.[test]'")
    pkg = tmp_path / "src" / "wizard"
    pkg.mkdir(parents=True)
    for entry in (ROOT / "wizard").iterdir():
        if entry.name != "__pycache__":
            (pkg / entry.name).symlink_to(entry)
    (pkg / "steps").symlink_to(ROOT / "steps")
    (pkg / "plans").symlink_to(ROOT / "plans")
    res = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                          "--cache-dir", str(ROOT / ".mypy_cache"), "-p", "wizard"],
                         cwd=tmp_path / "src", capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-2000:]
