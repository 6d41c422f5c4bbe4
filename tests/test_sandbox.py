"""The sandbox: profiles, stand-ins that change the root like the real tools, the full reboot cycle."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from runner_helpers import PY, calls, end_state, wizard

from wizard.sandbox import open_sandbox, profile_names

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("name", ["seed-7900xt", "seed-5600xt", "rx9070xt-noble", "strix-halo", "mi300x-rhel9"])
def test_profiles_are_detected_as_described(tmp_path: Path, name: str) -> None:
    from wizard.probes import detect

    host = open_sandbox(tmp_path / "m", name)
    f = detect(host)
    want = {"seed-7900xt": ("ubuntu", ["gfx1100", "gfx1100"], "6.2.0"), "seed-5600xt": ("ubuntu", ["gfx1010"], "6.2.4"),
            "rx9070xt-noble": ("ubuntu", ["gfx1201"], None), "strix-halo": ("ubuntu", ["gfx1151"], None),
            "mi300x-rhel9": ("rhel", ["gfx942", "gfx942"], None)}[name]
    assert (f.os.id, [g.gfx for g in f.gpus], f.rocm.version) == want
    if name == "seed-7900xt":
        assert [e.torch for e in f.python_envs if e.path == "/home/user/pytorch_venv"] == ["2.5.1+rocm6.2"]
    assert set(profile_names()) >= {"seed-7900xt", "seed-5600xt", "rx9070xt-noble", "strix-halo", "mi300x-rhel9"}


def test_state_is_kept_and_profile_mismatch_refused(tmp_path: Path) -> None:
    from wizard.host import HostError

    open_sandbox(tmp_path / "m", "rx9070xt-noble")
    (tmp_path / "m/home/user/note").write_text("kept")
    host = open_sandbox(tmp_path / "m")
    assert host.read_text("/home/user/note") == "kept"
    with pytest.raises(HostError):
        open_sandbox(tmp_path / "m", "seed-7900xt")


def _run(root: Path, *argv: str) -> subprocess.CompletedProcess:
    host = open_sandbox(root)
    exe = str(root) + argv[0] if argv[0].startswith("/") else host.which(argv[0])
    assert exe, argv[0]
    return subprocess.run([exe, *argv[1:]], capture_output=True, text=True, env=dict(host.environ),
                          stdin=subprocess.DEVNULL)


def test_standins_change_the_root_and_fail_like_the_real_tools(tmp_path: Path) -> None:
    root = tmp_path / "m"
    open_sandbox(root, "rx9070xt-noble")
    r = _run(root, "apt-get", "install", "-y", "no-such-package")
    assert r.returncode == 100 and "Unable to locate package no-such-package" in r.stderr
    assert _run(root, "amdgpu-install", "-y", "--usecase=rocm").returncode == 127  # not installed yet
    r = _run(root, "usermod", "-aG", "nosuchgroup", "user")
    assert r.returncode == 6 and "group 'nosuchgroup' does not exist" in r.stderr
    assert _run(root, "usermod", "-aG", "render,video", "user").returncode == 0
    assert "render:x:110:user" in (root / "etc/group").read_text()
    url = "https://repo.radeon.com/amdgpu-install/6.4.4/ubuntu/noble/amdgpu-install_6.4.60404-1_all.deb"
    assert _run(root, "wget", "-O", "/tmp/a.deb", url).returncode == 0
    assert (root / "tmp/a.deb").is_file()
    assert _run(root, "apt-get", "install", "-y", "/tmp/a.deb").returncode == 0
    assert "repo.radeon.com/rocm/apt/6.4.4 noble" in (root / "etc/apt/sources.list.d/rocm.list").read_text()
    assert _run(root, "amdgpu-install", "-y", "--usecase=rocm").returncode == 0
    assert (root / "opt/rocm-6.4.4/.info/version").read_text().strip() == "6.4.4"
    assert "rocm-core" in (root / "var/lib/dpkg/status").read_text()
    assert _run(root, "python3", "-m", "venv", "/home/user/v").returncode == 0
    r = _run(root, "/home/user/v/bin/pip", "install", "--index-url", "https://download.pytorch.org/whl/rocm6.2",
             "torch==2.4.1")
    assert r.returncode == 1 and "No matching distribution found for torch==2.4.1" in r.stderr
    r = _run(root, "/home/user/v/bin/pip", "install", "--index-url", "https://download.pytorch.org/whl/rocm6.2",
             "torch==2.5.1")
    assert r.returncode == 0
    assert (root / "home/user/v/lib/python3.12/site-packages/torch-2.5.1+rocm6.2.dist-info/METADATA").is_file()
    r = _run(root, "systemctl", "enable", "nothing.service")
    assert r.returncode == 1 and "does not exist" in r.stderr
    before = (root / "proc/sys/kernel/random/boot_id").read_text()
    assert _run(root, "reboot").returncode == 0
    assert (root / "proc/sys/kernel/random/boot_id").read_text() != before
    assert calls(root, "reboot") == [[]]


def test_sudo_password_required_makes_yes_refuse_in_one_line(tmp_path: Path) -> None:
    root = tmp_path / "m"
    open_sandbox(root, "rx9070xt-noble")
    (root / ".sandbox/sudo-password").write_text("")
    r = wizard(["--sandbox", str(root), "--plan", "pip-only", "--yes"])
    if r.returncode == 5:
        pytest.skip("pip-only refused on this profile: " + r.stderr.strip())
    assert r.returncode == 1
    assert r.stderr.strip().count("\n") == 0 and "--yes needs root or passwordless sudo" in r.stderr


def _sudo(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The sandbox's sudo stand-in, as a child with no terminal (a new session: no /dev/tty to prompt on)."""
    host = open_sandbox(root)
    return subprocess.run([str(root / ".sandbox/bin/sudo"), *args], env=dict(host.environ), start_new_session=True,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)


def test_sudo_stand_in_with_a_password_needs_a_ticket(tmp_path: Path) -> None:
    import os
    import time

    root = tmp_path / "m"
    open_sandbox(root, "seed-7900xt")
    assert _sudo(root, "-n", "--", "true").returncode == 0  # passwordless by default
    (root / ".sandbox/sudo-password").write_text("s3cret\n")
    r = _sudo(root, "-n", "-v")
    assert r.returncode == 1 and r.stderr.strip() == "sudo: a password is required"
    r = _sudo(root, "-v")  # would prompt, but there is no terminal
    assert r.returncode == 1 and "a terminal is required to read the password" in r.stderr
    assert not (root / ".sandbox/sudo-ticket").exists()

    (root / ".sandbox/sudo-ticket").write_text("")  # what a good password leaves
    r = _sudo(root, "-n", "--", "touch", "/etc/made-as-root")
    assert r.returncode == 0, r.stderr
    assert (root / "etc/made-as-root").exists()
    old = time.time() - 16 * 60  # sudo's default timestamp_timeout is 15 minutes
    os.utime(root / ".sandbox/sudo-ticket", (old, old))
    assert _sudo(root, "-n", "--", "true").returncode == 1
    (root / ".sandbox/sudo-ticket").write_text("")
    assert _sudo(root, "-n", "-v").returncode == 0
    assert _sudo(root, "-k").returncode == 0 and not (root / ".sandbox/sudo-ticket").exists()
    assert _sudo(root, "-n", "--", "true").returncode == 1


def test_run_service_asks_for_sudo_only_when_the_sandbox_has_a_password(tmp_path: Path) -> None:
    from wizard import machines
    from wizard.model import Action, ResolvedPlan, StepPlan
    from wizard.runner.service import RunService

    root = tmp_path / "m"
    host = open_sandbox(root, "seed-7900xt")
    service = RunService(machines.sandbox(host, root))
    as_root = ResolvedPlan("p", "p", "", (), (StepPlan("x", "x", (Action(("apt-get", "update"), root=True),)),))
    as_user = ResolvedPlan("p", "p", "", (), (StepPlan("x", "x", (Action(("true",)),)),))
    assert not service.needs_authentication(as_root)
    (root / ".sandbox/sudo-password").write_text("pw")
    assert service.needs_authentication(as_root) and not service.needs_authentication(as_user)


def test_reboot_cycle_with_the_resume_unit_and_its_command(tmp_path: Path) -> None:
    root = tmp_path / "m"
    r = wizard(["--sandbox", str(root), "--profile", "seed-7900xt", "--plan", "downgrade-6.2", "--yes"])
    assert r.returncode == 3, r.stdout[-3000:] + r.stderr
    unit = root / "etc/systemd/system/rocm-wizard-resume.service"
    text = unit.read_text()
    assert (root / "etc/systemd/system/multi-user.target.wants/rocm-wizard-resume.service").is_symlink()
    assert "After=network-online.target" in text and "Type=oneshot" in text
    notice = (root / "etc/profile.d/rocm-wizard.sh").read_text()
    out = subprocess.run(["sh", "-c", notice], capture_output=True, text=True)
    assert "a GPU stack migration is waiting" in out.stderr
    st = wizard(["status", "--sandbox", str(root), "--json"])
    import json

    d = json.loads(st.stdout)
    assert d["state"] == "reboot-pending" and d["plan"] == "downgrade-6.2" and d["step"] is not None
    # the boot: systemd runs ExecStartPre (removes the trigger), then ExecStart
    cond = next(l.split("=", 1)[1] for l in text.splitlines() if l.startswith("ConditionPathExists="))
    assert Path(cond).exists()
    pre = shlex.split(next(l.split("=", 1)[1] for l in text.splitlines() if l.startswith("ExecStartPre=")))
    start = shlex.split(next(l.split("=", 1)[1] for l in text.splitlines() if l.startswith("ExecStart=")))
    assert subprocess.run(pre).returncode == 0 and not Path(cond).exists()
    res = subprocess.run(start, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert res.returncode == 0, res.stdout[-3000:]
    assert not unit.exists() and not (root / "etc/profile.d/rocm-wizard.sh").exists()
    assert "skipped, not passed" in res.stdout  # verify without --verify-python is not a pass
    assert (root / "opt/rocm/.info/version").read_text().strip() == "6.2.4"
    d = json.loads(wizard(["status", "--sandbox", str(root), "--json"]).stdout)
    assert d["state"] == "done" and "10" in d["skipped"]


def test_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    exe = shutil.which("systemd-analyze")
    if exe is None:
        pytest.skip("systemd-analyze is not installed (apt-get install systemd)")
    from wizard.runner.resume_unit import unit_text, wizard_command

    d = tmp_path / "units"
    d.mkdir()
    trigger = tmp_path / "resume-pending"
    (d / "rocm-wizard-resume.service").write_text(unit_text([*wizard_command(), "resume", "--yes"], trigger))
    r = subprocess.run([exe, "verify", str(d / "rocm-wizard-resume.service")], capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin", "SYSTEMD_LOG_LEVEL": "warning"})
    assert r.returncode == 0, r.stderr
    assert "rocm-wizard-resume.service" not in r.stderr


def test_second_wizard_is_refused_with_exit_4(tmp_path: Path) -> None:
    root = tmp_path / "m"
    open_sandbox(root, "rx9070xt-noble")
    held = subprocess.Popen([PY, "-c", (
        "import time\nfrom pathlib import Path\nfrom wizard.runner.lock import Lock\n"
        f"Lock(Path({str(root / 'var/lib/rocm-wizard/lock')!r}), 'rocm-wizard --plan pip-only --yes').acquire()\n"
        "print('held', flush=True)\ntime.sleep(60)")], stdout=subprocess.PIPE, text=True)
    try:
        assert held.stdout.readline().strip() == "held"
        for args in (["--plan", "pip-only", "--yes"], ["resume", "--yes"], ["rollback", "--yes"]):
            r = wizard([*args, "--sandbox", str(root)] if args[0] != "--plan" else ["--sandbox", str(root), *args])
            assert r.returncode == 4, (args, r.stderr)
            assert f"pid {held.pid}" in r.stderr and "rocm-wizard --plan pip-only --yes" in r.stderr
    finally:
        held.kill()
        held.wait()


def test_rollback_after_failed_install_restores_env_and_packages(tmp_path: Path) -> None:
    root = tmp_path / "m"
    open_sandbox(root, "seed-7900xt")
    before = end_state(root)
    (root / ".sandbox/fail").mkdir()
    (root / ".sandbox/fail/amdgpu-install").write_text(
        "--usecase\nE: Unable to correct problems, you have held broken packages.\n")
    r = wizard(["--sandbox", str(root), "--plan", "downgrade-6.2", "--yes"])
    assert r.returncode == 1, r.stdout[-2000:]
    assert "held broken packages" in r.stdout and "rocm_install" in r.stdout
    mid = end_state(root)
    assert mid["dpkg"] != before["dpkg"]  # the purge ran: there is something to roll back
    (root / ".sandbox/fail/amdgpu-install").unlink()
    r = wizard(["rollback", "--yes", "--sandbox", str(root)])
    assert r.returncode in (0, 1), r.stdout + r.stderr
    after = end_state(root)
    assert after["dpkg"] == before["dpkg"]
    assert after["venvs"] == before["venvs"]
    assert after["rocm"] == before["rocm"]


def test_resolved_plan_file_replays_on_an_identical_machine(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    r = wizard(["--sandbox", str(a), "--profile", "rx9070xt-noble", "--plan", "upgrade-7.2", "--yes"])
    assert r.returncode == 0, r.stdout[-2000:]
    cur = (a / "var/lib/rocm-wizard/current").read_text().strip()
    plan_file = tmp_path / "plan.json"
    shutil.copy(a / "var/lib/rocm-wizard/runs" / cur / "plan.json", plan_file)
    r = wizard(["--sandbox", str(b), "--profile", "rx9070xt-noble", "--plan", str(plan_file), "--yes"])
    assert r.returncode == 0, r.stdout[-2000:]
    assert end_state(a) == end_state(b)


def test_rpm_stand_in_answers_queries_from_the_package_database(tmp_path: Path) -> None:
    from wizard.sandbox import machine as m

    root = tmp_path / "m"
    host = open_sandbox(root, "mi300x-rhel9")
    m.install_package(root, "amdgpu-install", "6.2.60204-2109965")

    def rpm(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(root / ".sandbox/bin/rpm"), *args], env=dict(host.environ),
                              capture_output=True, text=True, timeout=60)

    r = rpm("-qa", "--qf", r"%{NAME}\t%{VERSION}-%{RELEASE}\t%{ARCH}\n")
    assert r.returncode == 0 and "amdgpu-install\t6.2.60204-2109965\tx86_64\n" in r.stdout
    r = rpm("-q", "amdgpu-install", "rocm")
    assert r.returncode == 1
    assert r.stdout.splitlines() == ["amdgpu-install-6.2.60204-2109965.x86_64", "package rocm is not installed"]
    r = rpm("-i", "x.rpm")
    assert r.returncode == 1 and "queries only" in r.stderr
