"""Entering a real root: its own programs, a clean environment, namespaces that end with the command,
a boot id the reboot stand-in controls, stand-ins only for what needs a kernel."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable

import pytest

from wizard.realroot import enter, standins
from wizard.realroot.machine import RealRoot

pytestmark = [pytest.mark.system, pytest.mark.realroot]


def processes_in(root: Path) -> list[int]:
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if os.readlink(f"/proc/{pid}/root") == str(root):
                    out.append(int(pid))
            except OSError:
                pass
    return out


def mounts_under(root: Path) -> list[str]:
    text = Path("/proc/self/mountinfo").read_text()
    return [line.split()[4] for line in text.splitlines() if line.split()[4].startswith(str(root))]


def test_runs_the_roots_own_programs_as_root_and_as_the_user(seeded: Callable[[str], RealRoot]) -> None:
    r = seeded("seed-7900xt")
    assert r.run(["id", "-un"]).stdout.strip() == "root"
    ident = r.run(["id"], as_user=True).stdout
    assert "uid=1000(user)" in ident and "(video)" in ident and "(render)" in ident
    os.environ["ROCM_WIZARD_TEST_LEAK"] = "host"
    try:
        env = dict(line.split("=", 1) for line in r.run(["env"], as_user=True).stdout.splitlines())
    finally:
        del os.environ["ROCM_WIZARD_TEST_LEAK"]
    assert env == {"PATH": enter.PATH, "HOME": "/home/user", "USER": "user", "LOGNAME": "user", "LANG": "C.UTF-8"}
    assert r.run(["pwd"], as_user=True).stdout.strip() == "/home/user"
    # Debian 12's own python3 and dpkg, not the host's
    py = r.run(["python3", "-c", "import os, sys; print(sys.version.split()[0], os.path.realpath(sys.executable))"])
    assert py.stdout.split() == ["3.11.2", "/usr/bin/python3.11"]
    owners = r.run(["dpkg", "-S", "/usr/bin/apt-get", "/usr/bin/dpkg", "/usr/bin/wget", "/usr/bin/gpg",
                    "/usr/bin/python3.11", "/usr/bin/setpriv"])
    assert owners.returncode == 0, owners.stderr
    assert {line.split(":")[0] for line in owners.stdout.splitlines()} == {"apt", "dpkg", "wget", "gpg",
                                                                          "python3.11-minimal", "util-linux"}
    osr = r.run(["cat", "/etc/os-release"]).stdout
    assert 'ID=debian' in osr and 'VERSION_ID="12"' in osr
    claims = json.loads((r.path / ".realroot/machine.json").read_text())["profile_claims"]
    assert claims["os_release"]["ID"] == "ubuntu" and claims["os_release"]["VERSION_ID"] == "22.04"


def test_namespaces_end_with_the_command_and_leave_no_mounts(seeded: Callable[[str], RealRoot]) -> None:
    r = seeded("seed-7900xt")
    out = r.run(["sh", "-c", "echo $$; cat /proc/1/comm; sleep 300 & echo started"]).stdout.split()
    assert out == ["1", "sh", "started"]  # the command is PID 1 of its own namespace
    assert processes_in(r.path) == []  # the background sleep died with it
    assert mounts_under(r.path) == []  # procfs, devpts and the boot-id bind were the namespace's only
    tty = r.run(["python3", "-c", "import os, pty; m, s = pty.openpty(); print(os.ttyname(s))"])
    assert tty.stdout.strip().startswith("/dev/pts/")


def test_boot_id_is_a_file_the_reboot_stand_in_rewrites(seeded: Callable[[str], RealRoot]) -> None:
    r = seeded("strix-halo")
    reboots = r.path / standins.LOG_DIR / "reboots.log"
    earlier = reboots.read_text().split() if reboots.exists() else []
    before = r.boot_id()
    assert r.run(["cat", "/proc/sys/kernel/random/boot_id"]).stdout.strip() == before
    out = r.run(["reboot"])
    assert out.returncode == 0 and "new boot id" in out.stdout
    after = r.boot_id()
    assert after != before and r.run(["cat", "/proc/sys/kernel/random/boot_id"]).stdout.strip() == after
    (r.path / enter.BOOT_ID).write_text("00000000-0000-0000-0000-000000000001\n")  # a test sets it from outside
    assert r.run(["cat", "/proc/sys/kernel/random/boot_id"]).stdout.strip() == "00000000-0000-0000-0000-000000000001"
    assert reboots.read_text().split() == [*earlier, after]


def test_stand_ins_are_only_what_a_root_without_a_kernel_lacks(seeded: Callable[[str], RealRoot]) -> None:
    r = seeded("strix-halo")
    calls_before = len(standins.calls(r.path))
    for path in standins.STANDINS:
        text = (r.path / path.lstrip("/")).read_text()
        assert standins.MARK in text
        assert r.run(["dpkg", "-S", path]).returncode == 1  # no package of the root owns a stand-in
    where = r.run(["sh", "-c", "for p in dkms modprobe systemctl reboot apt-get dpkg pip3 python3; do command -v $p; done"]
                  ).stdout.split()
    assert where == ["/usr/sbin/dkms", "/usr/sbin/modprobe", "/usr/bin/systemctl", "/usr/sbin/reboot",
                     "/usr/bin/apt-get", "/usr/bin/dpkg", "/usr/bin/pip3", "/usr/bin/python3"]
    assert r.run(["modprobe", "amdgpu"]).returncode == 0
    bad = r.run(["modprobe", "nvidia"])
    assert bad.returncode == 1 and "Module nvidia not found" in bad.stderr
    assert r.run(["mokutil", "--sb-state"]).stdout.strip() == "SecureBoot disabled"
    (r.path / "etc/systemd/system").mkdir(parents=True, exist_ok=True)
    (r.path / "etc/systemd/system/x.service").write_text("[Service]\nExecStart=/bin/true\n")
    assert r.run(["systemctl", "enable", "x.service"]).returncode == 0
    assert r.run(["systemctl", "is-enabled", "x.service"]).stdout.strip() == "enabled"
    tools = [c["tool"] for c in standins.calls(r.path)[calls_before:]]
    assert tools == ["modprobe", "modprobe", "mokutil", "systemctl", "systemctl"]


def test_profile_machine_is_laid(seeded: Callable[[str], RealRoot]) -> None:
    r = seeded("seed-7900xt")
    props = sorted((r.path / "sys/class/kfd/kfd/topology/nodes").glob("*/properties"))
    assert len(props) == 3 and "gfx_target_version 110000" in props[1].read_text()
    st = (r.path / "dev/kfd").stat()
    assert oct(st.st_mode & 0o777) == "0o660" and st.st_uid == 0
    ls = r.run(["stat", "-c", "%U:%G %a", "/dev/kfd", "/dev/dri/renderD128", "/dev/dri/renderD129"]).stdout.split()
    assert ls == ["root:render", "660"] * 3
    assert r.run(["test", "-r", "/dev/kfd", "-a", "-w", "/dev/kfd"], as_user=True).returncode == 0
    assert "deb " not in (r.path / "etc/apt/sources.list").read_text()
    halo = seeded("strix-halo")  # its user is in video only: /dev/kfd is not theirs
    assert halo.run(["test", "-w", "/dev/kfd"], as_user=True).returncode == 1


def test_entering_needs_a_command() -> None:
    try:
        enter.enter_argv(Path("/nonexistent"), [])
    except ValueError as exc:
        assert "empty command" in str(exc)
    else:
        raise AssertionError("no error")
    argv = enter.enter_argv(Path("/r"), ["id"], user=enter.User("user", "/home/user"), env={"X": "1"})
    assert argv[:5] == ["unshare", "--mount", "--pid", "--fork", "--kill-child"]
    assert argv[-6:] == ["/usr/bin/setpriv", "--reuid=user", "--regid=user", "--init-groups", "--", "id"]
    assert argv[argv.index("/r") + 1:argv.index("/r") + 5] == ["/usr/bin/env", "-i", "-C", "/home/user"]
    assert "X=1" in argv
    root = enter.enter_argv(Path("/r"), ["id"])
    assert "/usr/bin/setpriv" not in root and root[-1] == "id" and "HOME=/root" in root
