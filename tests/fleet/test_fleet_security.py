"""Second security review on a fleet: B1 through ``fleet detect`` and ``fleet plan --export`` (a managed
host's venv directory named with a template), B14 (host names that leave the fleet directory) and B15 (the fleet
directory readable by others). One sandbox host through the wizard's own connection plugin; needs root. Slow: with
the other fleet tests (``pytest -m fleet tests/fleet`` or ROCM_WIZARD_FLEET_ALL=1)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.system, pytest.mark.fleet, pytest.mark.timeout(1800),
              pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox connection needs root (unshare --mount)")]

JINJA = "{{lookup('pipe','id>pwn-fleet')}}"


def wizard(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wizard", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=1700, env={**os.environ, "HOME": str(cwd / "home"),
                                             "ANSIBLE_REMOTE_TEMP": str(cwd / "ansible-tmp")})


def test_a_host_name_that_leaves_the_fleet_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "victim" / "bundle").mkdir(parents=True)
    (tmp_path / "victim" / "bundle" / "important.txt").write_text("keep")
    inv = tmp_path / "inv.yml"
    inv.write_text("all:\n  hosts:\n    ../../victim:\n      ansible_connection: local\n")
    res = wizard("fleet", "detect", "-i", str(inv), "--fleet-dir", str(tmp_path / "fl" / "fleet"), cwd=tmp_path)
    assert res.returncode != 0 and "host name '../../victim'" in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert (tmp_path / "victim" / "bundle" / "important.txt").read_text() == "keep"
    assert not (tmp_path / "victim" / "facts.json").exists()


def test_fleet_detect_on_a_host_with_a_template_for_a_venv_renders_nothing_and_stays_private(tmp_path: Path) -> None:
    host = tmp_path / "h1"
    res = wizard("--sandbox", str(host), "--profile", "seed-7900xt", "detect", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    home = host / "home" / "user"
    (home / "pytorch_venv").rename(home / ("v" + JINJA))
    inv = tmp_path / "inv.ini"
    inv.write_text(f"h1 ansible_connection=rocm_wizard_sandbox rocm_wizard_sandbox_root={host} "
                   f"ansible_python_interpreter={sys.executable}\n")
    fleet = tmp_path / "fleet"
    res = wizard("fleet", "detect", "-i", str(inv), "--fleet-dir", str(fleet), cwd=tmp_path)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert JINJA in (fleet / "hosts" / "h1" / "facts.json").read_text()
    assert stat.S_IMODE(fleet.stat().st_mode) == 0o700
    res = wizard("fleet", "plan", "pip-only", "-i", str(inv), "--fleet-dir", str(fleet), "--export", "ansible",
                 str(fleet / "exp"), cwd=tmp_path)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert "!unsafe" in "".join(p.read_text() for p in (fleet / "exp").rglob("*.yml"))
    assert sorted(str(p) for p in tmp_path.rglob("pwn-*")) == []
