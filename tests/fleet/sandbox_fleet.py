"""The inventory lines of a fleet of sandboxes, shared by the fleet tests that run Ansible on them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Callable, Mapping


def sandbox_hosts(base: Path, profiles: Mapping[str, str], torch_python: str,
                  wizard: Callable[..., subprocess.CompletedProcess[str]]) -> list[str]:
    """One inventory line per host: its sandbox laid under ``base`` from its profile (by ``detect``), reached
    through the project's sandbox connection, verified with ``torch_python``, rebooted by its stand-in."""
    lines = []
    for host, profile in profiles.items():
        root = base / host
        res = wizard("--sandbox", str(root), "--profile", profile, "detect", "--json", cwd=base)
        assert res.returncode == 0, res.stderr
        lines.append(f"{host} ansible_connection=rocm_wizard_sandbox rocm_wizard_sandbox_root={root} "
                     f"ansible_python_interpreter={sys.executable} rocm_wizard_verify_python={torch_python} "
                     f"rocm_wizard_reboot_command={root}/.sandbox/bin/reboot")
    return lines
