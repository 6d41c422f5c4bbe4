"""The exported role through real ansible-playbook on sandbox hosts (the wizard's sandbox connection): a
finished host whose new venv was deleted reports the drift and gets the venv back; a host whose progress
cannot be read or does not parse fails with a message naming the file and nothing changes (the backup stays
byte-identical); the export made for seed-7900xt stops on an rx9070xt-noble host at the machine assert,
naming the differences, before any change. Slow: marked ``fleet`` (ROCM_WIZARD_FLEET_ALL=1)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wizard.fleet import FleetError, ansible_program
from wizard.fleet.ansible_run import environment

pytestmark = [pytest.mark.system, pytest.mark.fleet, pytest.mark.timeout(1800)]

VENV = "home/user/pytorch_venv-pip-only"
STATE = "home/user/.local/state/rocm-wizard"  # pip-only changes nothing system-wide: the user's state dir
PROGRESS = f"{STATE}/script/pip-only.progress"


def wizard(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wizard", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=900, env={**os.environ, "HOME": str(cwd / "home")})


def playbook(base: Path, book: Path, host: str, root: Path) -> subprocess.CompletedProcess[str]:
    inv = base / f"{host}.ini"
    torch = (base / "torch-python").read_text()
    inv.write_text(f"{host} ansible_connection=rocm_wizard_sandbox rocm_wizard_sandbox_root={root} "
                   f"ansible_python_interpreter={sys.executable} rocm_wizard_reboot_command={root}/.sandbox/bin/reboot"
                   + (f" rocm_wizard_verify_python={torch}" if torch else "") + "\n")
    env = {**environment(base / "fleet"), "ANSIBLE_STDOUT_CALLBACK": "default", "HOME": str(base / "home"),
           "ANSIBLE_REMOTE_TEMP": str(base / "ansible-tmp")}
    return subprocess.run([ansible_program(), "-i", str(inv), "-e", "rocm_wizard_hosts=all", str(book)], capture_output=True, text=True, env=env,
                          timeout=1500, stdin=subprocess.DEVNULL)


def changed_on_host(out: str, host: str) -> bool:
    """A task changed the host itself (the verify JSON copied to the controller, ``host -> localhost``, is not)."""
    return f"changed: [{host}]" in out


def tree_digest(d: Path) -> dict[str, str]:
    return {str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.fixture()
def base(tmp_path: Path, torch_python: str) -> Path:
    if os.geteuid() != 0:
        pytest.skip("the sandbox connection needs root (unshare --mount)")
    try:
        ansible_program()
    except FleetError:
        pytest.skip("ansible-playbook is not installed")
    (tmp_path / "torch-python").write_text(torch_python)  # the CPU torch that plays the venv's in the verify step
    return tmp_path


def test_the_role_repairs_drift_and_stops_on_a_record_it_cannot_read(base: Path) -> None:
    root = base / "seed"
    assert wizard("--sandbox", str(root), "--profile", "seed-7900xt", "--plan", "pip-only", "--export", "ansible",
                  str(base / "export"), cwd=base).returncode == 0
    book = base / "export" / "pip-only.yml"
    first = playbook(base, book, "seed", root)
    assert first.returncode == 0, first.stdout[-4000:]
    assert (root / VENV / "bin/activate").is_file()
    second = playbook(base, book, "seed", root)  # a finished host: nothing changes
    assert second.returncode == 0 and not changed_on_host(second.stdout, "seed"), second.stdout[-4000:]

    shutil.rmtree(root / VENV)  # the machine no longer has what the role made
    third = playbook(base, book, "seed", root)
    assert third.returncode == 0, third.stdout[-4000:]
    assert "drift: step 4 is recorded as done, but the machine says otherwise" in third.stdout
    assert changed_on_host(third.stdout, "seed") and (root / VENV / "bin/activate").is_file()

    backup = root / STATE / "backup/pip-only"
    kept = tree_digest(backup)
    for damage in ("corrupt", "unreadable"):
        progress = root / PROGRESS
        if progress.is_dir():
            progress.rmdir()
        if damage == "corrupt":
            progress.write_text("1\n2\n<<<<<<< merge\n")
        else:
            progress.unlink()
            progress.mkdir()  # exists, cannot be read (as the user, a 0700 state dir is the same)
        shutil.rmtree(root / VENV, ignore_errors=True)
        n_calls = len((root / ".sandbox/calls.log").read_text().splitlines())
        res = playbook(base, book, "seed", root)
        assert res.returncode != 0
        assert ("does not parse" if damage == "corrupt" else "cannot read the record") in res.stdout
        assert "pip-only.progress" in res.stdout
        later = [json.loads(x) for x in (root / ".sandbox/calls.log").read_text().splitlines()[n_calls:]]
        assert not any(c["argv"][:2] in (["-m", "pip"], ["-m", "venv"]) for c in later)  # nothing redone
        assert not (root / VENV).exists() and tree_digest(backup) == kept


def test_the_export_for_another_machine_stops_at_the_machine_assert(base: Path) -> None:
    seed, other = base / "seed", base / "other"
    assert wizard("--sandbox", str(seed), "--profile", "seed-7900xt", "--plan", "downgrade-6.2", "--export",
                  "ansible", str(base / "export"), cwd=base).returncode == 0
    assert wizard("--sandbox", str(other), "--profile", "rx9070xt-noble", "detect", cwd=base).returncode == 0
    res = playbook(base, base / "export" / "downgrade-6.2.yml", "other", other)
    assert res.returncode != 0
    for d in ("os: the plan was made for ubuntu 22.04, this machine has ubuntu 24.04",
              "gfx: the plan was made for gfx1100,gfx1100, this machine has gfx1201"):
        assert d in res.stdout, res.stdout[-4000:]
    calls = [json.loads(x) for x in (other / ".sandbox/calls.log").read_text().splitlines()]
    assert not any(c["tool"].endswith(("apt-get", "dpkg", "amdgpu-install", "reboot")) for c in calls)
    assert not (other / "var/lib/rocm-wizard/backup").exists()
