"""The README's quick start, run as a newcomer would: a fresh clone, the venv commands exactly as written
(HOME is a temporary directory), and what the README says they show."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.system

REPO = Path(__file__).resolve().parent.parent


def readme_block(after: str) -> list[str]:
    """The lines of the first ```bash block after the paragraph that starts with ``after``."""
    text = (REPO / "README.md").read_text()
    i = text.index(after)
    m = re.search(r"```bash\n(.*?)```", text[i:], re.S)
    assert m is not None
    return [x for x in m.group(1).splitlines() if x.strip()]


def test_readme_quick_start_in_a_fresh_clone(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is needed for a fresh clone")
    checkout = tmp_path / "rocm-wizard"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(checkout)], check=True)
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "XDG_STATE_HOME": str(home / ".local/state")}
    env.pop("VIRTUAL_ENV", None)
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not p.startswith(str(REPO)))
    lines = readme_block("Without pipx or uv")
    assert lines[0].startswith("python3 -m venv ~/.rocm-wizard")
    outputs = {}
    for line in lines:
        if line.strip() == "~/.rocm-wizard/bin/rocm-wizard":
            continue  # the interactive wizard: tests/tui/test_e2e_tmux.py drives it on a terminal
        res = subprocess.run(["bash", "-c", line], cwd=checkout, env=env, capture_output=True, text=True,
                             timeout=900)
        assert res.returncode == 0, (line, res.stdout[-2000:], res.stderr[-2000:])
        outputs[line] = res.stdout
    assert (home / ".rocm-wizard/bin/rocm-wizard").exists()
    version = next(v for k, v in outputs.items() if k.endswith("--version"))
    assert version.startswith("rocm-wizard ")
    diagnosis = next(v for k, v in outputs.items() if "diagnose --from seed-7900xt" in k)
    assert "HIPBLAS_STATUS_ALLOC_FAILED" in diagnosis  # what the README says this example shows
    # the wizard itself without a terminal: one line, exit 2, as the README's exit codes say
    res = subprocess.run([str(home / ".rocm-wizard/bin/rocm-wizard")], cwd=checkout, env=env, capture_output=True,
                         text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert res.returncode == 2 and "needs a terminal" in res.stderr
