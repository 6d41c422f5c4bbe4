"""Second security review, B2 in a real root: root inside a real root kept almost every capability, so a ``.pth``
planted by the root's user (host uid 1000) in its venv, once run by a root action, left the chroot
(``chroot(subdir)``, ``chdir('..')`` x 64, ``chroot('.')``) and wrote on the host as root. Root actions (and done
checks) now run with a reduced bounding set (wizard.realroot.enter.CONFINED_CAPS: no sys_chroot, sys_admin,
dac_read_search, ...), and no root action runs the user's venv interpreter (the env step uses the system
``python3 -I``)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from tests.realroot.helpers import wizard_cli
from wizard.model import Action
from wizard.realroot.executor import RealRootExecutor

pytestmark = [pytest.mark.system, pytest.mark.realroot]

# The review's escape, run as a program: leave the chroot if the capabilities allow it, then write on the host.
ESCAPE = """\
import os, sys
marker = sys.argv[1]
try:
    os.makedirs("/tmp/.esc", exist_ok=True)
    os.chroot("/tmp/.esc")
    for _ in range(64):
        os.chdir("..")
    os.chroot(".")
    open(marker, "w").write(f"escaped uid={os.getuid()}\\n")
    print("ESCAPED")
except OSError as exc:
    print("CONFINED", exc.errno)
print(open("/proc/self/status").read().split("CapEff:")[1].split()[0])
"""


def _plant(root: Path, venv: str, host_marker: Path) -> Path:
    """The review's ``.pth`` in the user's venv: records who ran it; as uid 0 it tries the escape."""
    (site,) = (root / venv.lstrip("/")).glob("lib/python3*/site-packages")
    inside = "/home/user/pth-ran"
    escape = ESCAPE.replace("sys.argv[1]", repr(str(host_marker)))
    code = f"import os; open({inside!r}, 'a').write(f'uid={{os.getuid()}}\\n'); os.getuid() == 0 and exec({escape!r})"
    (site / "zz_user.pth").write_text(f"import os; exec({code!r})\n")
    return root / inside.lstrip("/")


def test_a_root_action_in_a_real_root_cannot_leave_it(cli_root: Callable[[str], Path], tmp_path: Path) -> None:
    root = cli_root("seed-7900xt")
    marker = tmp_path / "host-marker"
    res = RealRootExecutor(root)
    import subprocess

    out = subprocess.run(res.argv(Action(("python3", "-c", ESCAPE, str(marker)), "escape", root=True)),
                         capture_output=True, text=True, timeout=120)
    assert "CONFINED" in out.stdout and "ESCAPED" not in out.stdout, out.stdout + out.stderr
    caps = int(out.stdout.split()[-1], 16)
    sys_chroot, sys_admin, dac_read_search = 18, 21, 2
    assert not caps & (1 << sys_chroot) and not caps & (1 << sys_admin) and not caps & (1 << dac_read_search)
    assert caps & (1 << 0) and caps & (1 << 1)  # chown, dac_override: what apt and dpkg need
    assert not marker.exists()


def test_a_pth_planted_in_the_users_venv_never_runs_as_root(cli_root: Callable[[str], Path], tmp_path: Path) -> None:
    """The review's reproduction 3: an override in /etc/environment (the env step comments it out, a root action),
    a ``.pth`` planted in /home/user/pytorch_venv, and the pip-only plan run with ``--yes``. The ``.pth`` runs only
    as the user (pip, verify), never as root, and nothing is written on the host."""
    root = cli_root("seed-7900xt")
    marker = tmp_path / "host-marker"
    (root / "etc/environment").write_text("HSA_OVERRIDE_GFX_VERSION=11.0.0\n")
    ran = _plant(root, "/home/user/pytorch_venv", marker)
    r = wizard_cli("--sandbox", str(root), "--root", "debian12", "--plan", "pip-only",
                   "--venv", "/home/user/pytorch_venv", "--yes")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    env_lines = (root / "etc/environment").read_text().splitlines()
    assert env_lines and not any(line.startswith("HSA_OVERRIDE_GFX_VERSION=") for line in env_lines)  # commented out
    assert not marker.exists()
    uids = set(ran.read_text().split()) if ran.exists() else set()
    assert "uid=1000" in uids and "uid=0" not in uids, uids  # planted and run, by the user's pip only
