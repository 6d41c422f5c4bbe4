"""Each half-state produced for real in a real root (dpkg killed mid-unpack, broken dependencies, a process
holding the dpkg lock, a held package), detected by repair.survey and repaired by its own commands."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Callable

import pytest

from wizard.realroot import repair
from wizard.realroot.machine import RealRoot
from wizard.realroot.repair import HalfState, RepairKind

pytestmark = [pytest.mark.system, pytest.mark.realroot]

NONINTERACTIVE = {"DEBIAN_FRONTEND": "noninteractive"}


def survey(r: RealRoot, **kw: object) -> tuple[repair.Finding, ...]:
    return repair.survey(r.path, lambda argv: r.run(argv), **kw)  # type: ignore[arg-type]


def apply(r: RealRoot, finding: repair.Finding) -> None:
    assert finding.repair.kind is RepairKind.RUN
    for argv in finding.repair.commands:
        done = r.run(argv, env=NONINTERACTIVE, timeout=900)
        assert done.returncode == 0, (argv, done.stderr[-500:])


def test_clean_root_has_no_half_states(seeded: Callable[[str], RealRoot]) -> None:
    assert survey(seeded("seed-7900xt")) == ()


def test_held_package_is_refused_with_the_unhold_the_user_must_decide(new_root: Callable[..., RealRoot]) -> None:
    r = new_root("seed-7900xt")
    assert r.run(["apt-mark", "hold", "rocm-hip-runtime"]).returncode == 0
    (f,) = survey(r)
    assert f.state is HalfState.HELD_PACKAGE and f.packages == ("rocm-hip-runtime",)
    assert f.repair.kind is RepairKind.REFUSE and f.repair.commands == (("apt-mark", "unhold", "rocm-hip-runtime"),)
    assert "apt-mark unhold rocm-hip-runtime" in f.repair.message
    assert survey(r, touches={"torch"}) == ()  # a hold on something the plan does not touch is not in the way
    # what the purge step runs: purging rocm-core would take the held rocm-hip-runtime with it
    blocked = r.run(["amdgpu-install", "-y", "--uninstall"], env=NONINTERACTIVE)
    assert blocked.returncode == 100
    assert "pkgProblemResolver::Resolve generated breaks, this may be caused by held packages." in blocked.stderr
    assert r.run(list(f.repair.commands[0])).returncode == 0  # the user decided
    assert survey(r) == ()
    assert r.run(["amdgpu-install", "-y", "--uninstall"], env=NONINTERACTIVE).returncode == 0


def _dpkg_pids(root: Path) -> list[int]:
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if os.readlink(f"/proc/{pid}/root") == str(root) and Path(f"/proc/{pid}/comm").read_text().strip() == "dpkg":
                    out.append(int(pid))
            except OSError:
                pass
    return out


@pytest.mark.realroot
def test_dpkg_killed_mid_unpack_is_detected_and_repaired(new_root: Callable[..., RealRoot]) -> None:
    r = new_root("seed-7900xt")
    lib = r.path / "opt/rocm-6.2.0/lib/rocblas/library"
    apt = subprocess.Popen(r.argv(["apt-get", "install", "-y", "rocblas"], env=NONINTERACTIVE),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    killed: list[int] = []
    deadline = time.monotonic() + 120
    while not killed and time.monotonic() < deadline and apt.poll() is None:
        if lib.is_dir() and any(p.name.endswith(".dpkg-new") for p in lib.iterdir()):  # unpacking, not done
            for pid in _dpkg_pids(r.path):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        time.sleep(0.002)
    out = apt.communicate(timeout=120)[0]
    assert killed, "dpkg was never seen unpacking"
    assert apt.returncode == 100 and "Sub-process /usr/bin/dpkg exited unexpectedly" in out
    assert r.run(["dpkg-query", "-W", "-f", "${Status}", "rocblas"]).stdout == "install reinstreq half-installed"
    stuck = r.run(["apt-get", "install", "-y", "wget"], env=NONINTERACTIVE)
    assert "dpkg was interrupted, you must manually run 'dpkg --configure -a'" in stuck.stderr
    (f,) = survey(r)
    assert f.state is HalfState.INTERRUPTED_DPKG and f.packages == ("rocblas",)
    assert f.repair.commands == (("dpkg", "--configure", "-a"), ("apt-get", "-f", "install", "-y"))
    assert any("rocblas: install reinstreq half-installed" == e for e in f.evidence)
    apply(r, f)
    assert survey(r) == ()
    assert r.run(["dpkg-query", "-W", "-f", "${Status}", "rocblas"]).stdout == "install ok installed"
    assert len(list(lib.iterdir())) == 128


@pytest.mark.realroot
def test_broken_dependencies_are_detected_and_repaired(new_root: Callable[..., RealRoot]) -> None:
    r = new_root("seed-7900xt")
    forced = r.run(["dpkg", "--remove", "--force-depends", "hip-runtime-amd"])
    assert forced.returncode == 0 and "dependency problems, but removing anyway" in forced.stderr
    (f,) = survey(r)
    assert f.state is HalfState.BROKEN_DEPENDENCIES and f.packages == ("rocm-hip-runtime",)
    assert f.repair.commands == (("apt-get", "-f", "install", "-y"),)
    apply(r, f)
    assert survey(r) == ()
    assert r.run(["dpkg-query", "-W", "-f", "${Status}", "hip-runtime-amd"]).stdout == "install ok installed"


@pytest.mark.realroot
def test_a_held_dpkg_lock_is_waited_for(new_root: Callable[..., RealRoot]) -> None:
    r = new_root("seed-7900xt")
    holder = subprocess.Popen(r.argv(["python3", "-c", "import fcntl, time; f = open('/var/lib/dpkg/lock-frontend', 'w'); "
                                      "fcntl.lockf(f, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(600)"]),
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        findings = survey(r, lock_wait=30)
        (f,) = findings
        assert f.state is HalfState.LOCK_HELD and f.repair.kind is RepairKind.WAIT and f.repair.wait_seconds == 30
        assert "/var/lib/dpkg/lock-frontend is held by process" in f.message and "(python3)" in f.message
        blocked = r.run(["apt-get", "install", "-y", "wget"], env=NONINTERACTIVE)
        assert "Could not get lock /var/lib/dpkg/lock-frontend" in blocked.stderr
        seen: list[float] = []
        started = time.monotonic()
        assert not repair.wait_for_locks(r.path, timeout=1.0, poll=0.2, on_wait=lambda h, w: seen.append(w))
        assert 1.0 <= time.monotonic() - started < 3 and seen
    finally:
        holder.kill()
        holder.wait()
    assert repair.wait_for_locks(r.path, timeout=10)
    assert survey(r) == ()


def test_a_package_left_reinstall_required_after_its_unpack_is_reinstalled_by_the_step_guards(
        new_root: Callable[..., RealRoot]) -> None:
    """A kill as dpkg finished unpacking leaves "install reinstreq unpacked" (benchmarks/realroot_crash.py
    --profile debian-real, seed 26): dpkg --configure -a and apt-get -f install refuse that package on every
    resume. The step guards (steps/_common.package_guards, in their order, each skipped when its done-check
    passes) leave it to the reinstall guard, which reinstalls it and configures the rest."""
    from wizard.steps._common import package_guards

    r = new_root("seed-7900xt")
    status = r.path / "var/lib/dpkg/status"
    text = status.read_text()
    stanza = "Package: rocminfo\nStatus: install ok installed\n"
    assert stanza in text
    status.write_text(text.replace(stanza, "Package: rocminfo\nStatus: install reinstreq unpacked\n"))
    refused = r.run(["dpkg", "--configure", "-a"], env=NONINTERACTIVE)
    assert refused.returncode != 0 and "reinstall it before attempting configuration" in refused.stderr
    ran = []
    for guard in package_guards("apt", 5):
        if guard.check is None or r.run(list(guard.check), env=NONINTERACTIVE).returncode == 0:
            continue
        ran.append(guard.description)
        done = r.run(list(guard.command()), env=NONINTERACTIVE, timeout=900)
        assert done.returncode == 0, (guard.description, done.stderr[-500:])
    assert ran == [g.description for g in package_guards("apt", 5) if "--reinstall" in g.description]
    assert r.run(["dpkg-query", "-W", "-f", "${Status}", "rocminfo"]).stdout == "install ok installed"
    assert r.run(["dpkg", "--audit"]).stdout == ""
