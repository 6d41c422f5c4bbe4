"""The standalone export run by real ``ansible-playbook``: its verify step copies the suite file to the host and
runs it with the venv's python (nothing of the wizard there), and ``--check --diff`` against a real root reports
what each module would change (the directories, files and packages, as diffs) and changes nothing.

System tier: the suite runs a CPU torch (ROCM_WIZARD_TEST_TORCH_PYTHON); the real root is built by
``--sandbox DIR --profile seed-7900xt --root debian12`` (minutes; also marked ``realroot``, with
ROCM_WIZARD_REALROOT_ALL=1)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wizard.fleet.export import PlanGroup, export
from wizard.fleet.run import verify_result
from wizard.planner import resolve_plan
from wizard.record import replace

pytestmark = [pytest.mark.system, pytest.mark.fleet, pytest.mark.timeout(1800)]

ANSIBLE = shutil.which("ansible-playbook", path=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
needs_ansible = pytest.mark.skipif(ANSIBLE is None, reason="ansible-core is not installed (pip install '.[fleet]')")


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "ANSIBLE_HOME": str(tmp_path / ".ansible"), "HOME": str(tmp_path / "home"),
            "ANSIBLE_LOCAL_TEMP": str(tmp_path / ".tmp"), "ANSIBLE_REMOTE_TEMP": str(tmp_path / ".rt"),
            "TMPDIR": str(tmp_path / "host-tmp")}


@needs_ansible
def test_verify_runs_the_suite_file_copied_to_the_host(tmp_path: Path, torch_python: str) -> None:
    """Only the verify step (its tag) on a local host whose venv python is a CPU torch: the suite file comes from
    the role, runs with that python (no ``python3 -m wizard``), its JSON lines come back as verify.json and read as
    a pass, and its temporary directory on the host is gone afterwards."""
    from test_plan_golden import machines

    rp = resolve_plan("pip-only", machines()["seed-7900xt"], state_dir=str(tmp_path / "state"), wizard_python="python3")
    k = next(i for i, s in enumerate(rp.steps, 1) if s.kind == "verify")
    step = rp.steps[k - 1]
    a = step.actions[0]
    argv = tuple(torch_python if x.endswith("/bin/python") else x for x in a.argv)
    assert argv != a.argv
    rp = replace(rp, steps=tuple(replace(step, actions=(replace(a, argv=argv),)) if s is step else s for s in rp.steps))
    book = export([PlanGroup(rp, ("h1",))], tmp_path / "out")
    (tmp_path / "host-tmp").mkdir()
    inv = tmp_path / "inventory.ini"
    inv.write_text(f"h1 ansible_connection=local ansible_python_interpreter={sys.executable}\n")
    results = tmp_path / "results"
    res = subprocess.run([str(ANSIBLE), "-i", str(inv), "-e", "rocm_wizard_hosts=all", str(book), "--tags", f"step-{k}",
                          "-e", json.dumps({"rocm_wizard_results": str(results)}), "-v"],
                         capture_output=True, text=True, timeout=1200, env=_env(tmp_path))
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    out = (results / "h1" / "verify.json").read_text()
    assert json.loads(out.splitlines()[0])["type"] == "suite"  # the suite's own JSON lines, not wizard verify's
    v = verify_result(results / "h1" / "verify.json")
    assert v["status"] == "pass" and v["checks"] >= 1, v
    assert "-m wizard" not in res.stdout and "suite.py" in res.stdout
    assert list((tmp_path / "host-tmp").iterdir()) == []  # the suite's temporary directory is removed


REALROOT = pytest.mark.skipif(os.environ.get("ROCM_WIZARD_REALROOT_ALL") != "1",
                              reason="builds a real root (minutes): ROCM_WIZARD_REALROOT_ALL=1")


@needs_ansible
@REALROOT
@pytest.mark.realroot
def test_check_diff_on_a_real_root_shows_each_modules_change_and_changes_nothing(tmp_path: Path) -> None:
    """``fleet plan upgrade-6.4 --export`` for a seed-7900xt real root, then ``ansible-playbook --check --diff`` of the
    export over the real-root connection (its mirror served): the read-only preflight runs and passes, the
    backup directory, the leftover files and directories of ROCm 6.2 and the pin file are reported as diffs, the
    host ends changed-but-not-failed, and the root's dpkg status, apt sources and state directory are as before.
    Then the preflight and backup steps for real: the directory, its mode and the manifest as the plan makes them."""
    from wizard.fleet import realroots
    from wizard.realroot import base as rb
    from wizard.realroot.endstate import dpkg_status

    if os.geteuid() != 0:
        pytest.skip("a real root needs root on the host (unshare, chroot)")
    if rb.mmdebstrap() is None:
        pytest.skip("mmdebstrap is not installed: apt-get install mmdebstrap")
    root = tmp_path / "seed"
    env = {**_env(tmp_path)}
    env.pop("TMPDIR")
    env.pop("ANSIBLE_REMOTE_TEMP")  # the root's own (~/.ansible/tmp inside it)
    env["ANSIBLE_CONNECTION_PLUGINS"] = str(Path(realroots.__file__).parent / "plugins" / "connection")

    def wizard(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "wizard", *args], capture_output=True, text=True, cwd=tmp_path,
                              timeout=1500, env=env)

    built = wizard("--sandbox", str(root), "--profile", "seed-7900xt", "--root", "debian12", "detect", "--json")
    assert built.returncode == 0, built.stderr[-2000:]
    inv = tmp_path / "inventory.ini"
    inv.write_text(f"[gpus]\nseed ansible_connection={realroots.CONNECTION} {realroots.ROOT_VAR}={root} "
                   "ansible_python_interpreter=/usr/bin/python3 rocm_wizard_reboot_command=/usr/sbin/reboot "
                   "ansible_remote_tmp=/tmp\n")  # a task as root and one as the user each make their own directory there
    planned = wizard("fleet", "plan", "upgrade-6.4", "-i", str(inv), "--fleet-dir", str(tmp_path / "fleet"),
                     "--export", "ansible", str(tmp_path / "export"))
    assert planned.returncode == 0, planned.stdout[-2000:] + planned.stderr[-2000:]
    before = (dpkg_status(root), sorted(p.name for p in (root / "etc/apt/sources.list.d").iterdir()))
    assert not (root / "var/lib/rocm-wizard/backup/upgrade-6.4").exists()
    with realroots.serving({"seed": root}):
        res = subprocess.run([str(ANSIBLE), "-i", str(inv), str(tmp_path / "export" / "upgrade-6.4.yml"),
                              "-e", "rocm_wizard_hosts=all", "--check", "--diff",
                              "-e", json.dumps({"rocm_wizard_unavailable": realroots.unavailable({"seed": root})})],
                             capture_output=True, text=True, timeout=1500, env=env)
    out = res.stdout
    (tmp_path / "check-diff.log").write_text(out)  # kept with the test's directory, for the reader
    assert res.returncode == 0, out[-6000:] + res.stderr[-2000:]
    recap = next(ln for ln in out.splitlines() if ln.startswith("seed ") and "failed=" in ln)
    assert "failed=0" in recap and "changed=0" not in recap, recap
    assert "Step 1/10 preflight: this is the machine the plan was made for" in out  # the preflight ran in check mode
    assert "Step 1/10 preflight: package-url" in out
    # the modules' own diffs: the backup directory made, ROCm 6.2's leftovers removed, AMD's pin written
    assert '"path": "/var/lib/rocm-wizard/backup/upgrade-6.4",\n-    "state": "absent"\n+    "state": "directory"' in out
    assert '"path": "/etc/apt/sources.list.d/rocm.list",\n-    "state": "file"\n+    "state": "absent"' in out
    assert '"path": "/opt/rocm-6.2.0",' in out and '+    "state": "absent"' in out
    assert "+++ after: /etc/apt/preferences.d/rocm-pin-600" in out and "+Pin-Priority: 600" in out
    after = (dpkg_status(root), sorted(p.name for p in (root / "etc/apt/sources.list.d").iterdir()))
    assert after == before
    assert not (root / "var/lib/rocm-wizard/backup/upgrade-6.4").exists()
    assert (root / "opt/rocm-6.2.0").is_dir()
    # then for real, the preflight and the backup only: the modules make what the plan's commands make (apt, which
    # the purge needs, would want python3-apt, which a real root lacks and cannot fetch: no further)
    with realroots.serving({"seed": root}):
        real = subprocess.run([str(ANSIBLE), "-i", str(inv), str(tmp_path / "export" / "upgrade-6.4.yml"),
                               "-e", "rocm_wizard_hosts=all", "--tags", "step-1,step-2"],
                              capture_output=True, text=True, timeout=1500, env=env)
    assert real.returncode == 0, real.stdout[-6000:]
    backup = root / "var/lib/rocm-wizard/backup/upgrade-6.4"
    assert backup.stat().st_mode & 0o777 == 0o700  # mkdir -m 0700, then chmod -R go-rwx
    manifest = json.loads((backup / "manifest.json").read_text())
    assert manifest["plan"] == "upgrade-6.4" and manifest["backup_dir"] == "/var/lib/rocm-wizard/backup/upgrade-6.4"
    assert (backup / "manifest.json").stat().st_mode & 0o777 == 0o600
    assert (backup / "dpkg-selections.txt").is_file() and (backup / "etc-files.tar.gz").is_file()
    assert dpkg_status(root) == before[0]
