"""What real-root tests share besides fixtures: the wizard's own CLI run as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def wizard_cli(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """``python -m wizard ARGS`` (no test state dir: a rehearsal keeps its state in the root)."""
    env = {k: v for k, v in os.environ.items() if k != "ROCM_WIZARD_STATE_DIR"}
    return subprocess.run([sys.executable, "-m", "wizard", *args], capture_output=True, text=True, cwd=REPO, env=env,
                          stdin=subprocess.DEVNULL, timeout=timeout)
