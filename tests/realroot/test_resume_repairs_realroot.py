"""The half-states real apt and dpkg leave, produced for real in a real root built by ``--root debian12``, and
what ``rocm-wizard resume`` does with them (issue 11, "Repair after real crashes"): each repair is an action
in the run's journal, before the step that drives the package manager goes on.

* another process holds /var/lib/dpkg/lock-frontend: the run waits, bounded, saying who holds it, and goes on
  once it is released; when it never is, the run stops before any change, naming ``--lock-wait``;
* dpkg killed mid-unpack: ``dpkg --configure -a`` (and ``apt-get -f install`` for the half-installed package);
* broken dependencies: ``apt-get -f install``;
* ``apt-mark hold`` on a package the plan changes: refused, naming the ``apt-mark unhold`` the user must
  decide on; nothing is removed until they do.

Every scenario starts from a run that stopped before changing anything (the lock refusal), so the repair
is resume's, as after a crash.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from tests.realroot.helpers import wizard_cli
from wizard.mirror.apt_repo import AptRepo, add_to_pool, write_indexes
from wizard.mirror.debs import DebFile, DebSpec, build_deb
from wizard.mirror.keys import signing_key
from wizard.mirror.server import MirrorServer
from wizard.realroot import repair
from wizard.realroot.endstate import dpkg_status
from wizard.realroot.machine import RealRoot, open_root

pytestmark = [pytest.mark.system, pytest.mark.realroot]

PLAN = "downgrade-6.2"
NONINTERACTIVE = {"DEBIAN_FRONTEND": "noninteractive"}
LOCK = "var/lib/dpkg/lock-frontend"
BIG = 64  # x 1 MiB: dpkg takes long enough to unpack it that the test can kill it half-way
HOLD = ("import fcntl, sys, time; f = open(sys.argv[1], 'r+'); fcntl.lockf(f, fcntl.LOCK_EX); "
        "print('locked', flush=True); time.sleep(float(sys.argv[2]))")


class LockHolder:
    """A process of the host holding dpkg's frontend lock of a root, as unattended-upgrades would."""

    def __init__(self, d: Path, seconds: float = 600) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", HOLD, str(d / LOCK), str(seconds)],
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "locked"

    def release(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def holders() -> Iterator[list[LockHolder]]:
    made: list[LockHolder] = []
    yield made
    for h in made:
        h.release()


def journal(d: Path) -> list[dict[str, Any]]:
    status = json.loads(wizard_cli("--sandbox", str(d), "status", "--json").stdout)
    return [json.loads(ln) for ln in Path(str(status["journal"])).read_text().splitlines()]


def ran(records: list[dict[str, Any]], argv: str) -> list[dict[str, Any]]:
    """The action-ends of ``argv`` that really ran (a done-check that passed is an action-skip)."""
    return [r for r in records if r["event"] == "action-end" and r.get("argv", "").startswith(argv)]


def stopped_before_any_change(d: Path, holders: list[LockHolder]) -> None:
    """Start the plan while another process holds the dpkg lock and never lets go: the run stops in its
    preflight after the bounded wait (exit 1), before any change, and is left for ``resume``."""
    holder = LockHolder(d)
    holders.append(holder)
    before = dpkg_status(d)
    started = time.monotonic()
    r = wizard_cli("--sandbox", str(d), "--plan", PLAN, "--yes", "--lock-wait", "3")
    assert r.returncode == 1, r.stdout[-2000:]
    assert 3 <= time.monotonic() - started
    assert f"/{LOCK} is still locked by pid" in r.stdout and "after 3 s" in r.stdout, r.stdout[-2000:]
    assert "give the run more time with --lock-wait S" in r.stdout and "nothing was changed" in r.stdout
    assert "Traceback" not in r.stdout + r.stderr
    assert dpkg_status(d) == before
    status = json.loads(wizard_cli("--sandbox", str(d), "status", "--json").stdout)
    assert (status["plan"], status["state"]) == (PLAN, "failed")
    holder.release()


def finish(d: Path) -> subprocess.CompletedProcess[str]:
    """resume --yes, then once more after the reboot; returns the first resume's output."""
    first = wizard_cli("--sandbox", str(d), "resume", "--yes", "-v")  # -v: each command as it runs, with its output
    assert first.returncode == 3, first.stdout[-3000:]
    again = wizard_cli("--sandbox", str(d), "resume", "--yes")
    assert again.returncode == 0, again.stdout[-3000:]
    return first


def survey(r: RealRoot) -> tuple[repair.Finding, ...]:
    return repair.survey(r.path, lambda argv: r.run(argv))


@pytest.mark.realroot
def test_a_held_lock_is_waited_for_and_the_run_goes_on_when_it_is_released(
        cli_root: Callable[[str], Path], holders: list[LockHolder]) -> None:
    d = cli_root("seed-7900xt")
    holder = LockHolder(d)
    holders.append(holder)
    threading.Timer(6, holder.release).start()
    r = wizard_cli("--sandbox", str(d), "--plan", PLAN, "--yes", "--lock-wait", "120", "-v")  # -v: the output too
    assert r.returncode == 3, r.stdout[-2000:]  # reboot-pending: it went on after the lock was released
    assert f"waiting for /{LOCK}, locked by pid" in r.stdout and "of at most 120 s" in r.stdout
    waits = [x for x in ran(journal(d), "python3 -c 'import fcntl") if x["step"] == 0]
    assert waits and waits[0]["outcome"] == "ok" and 3 <= waits[0]["duration"] < 60  # released 6 s after start


@pytest.mark.realroot
def test_a_lock_never_released_stops_the_run_before_any_change_then_resume_goes_on(
        cli_root: Callable[[str], Path], holders: list[LockHolder]) -> None:
    d = cli_root("seed-7900xt")
    stopped_before_any_change(d, holders)
    finish(d)
    assert json.loads(wizard_cli("--sandbox", str(d), "status", "--json").stdout)["state"] == "done"


def _big_package_repo(d: Path, tmp: Path, base_url: str) -> None:
    """A signed repository served at ``base_url`` (from ``tmp``) with one big package, its key trusted by
    signed-by in the root."""
    spec = DebSpec("rehearsal-big", "1.0", "all", "a big test payload (dpkg is killed while unpacking it)",
                   files=tuple(DebFile(f"opt/rehearsal-big/part{i:03d}.dat", os.urandom(1 << 20)) for i in range(BIG)))
    repo = AptRepo(tmp / "extra", "jammy", "rehearsal", "a test repository")
    add_to_pool(repo, build_deb(spec, tmp))
    with signing_key("rehearsal extra <extra@localhost>") as key:
        write_indexes(repo, key)
        (d / "etc/apt/keyrings").mkdir(parents=True, exist_ok=True)
        (d / "etc/apt/keyrings/rehearsal-extra.gpg").write_bytes(key.public_keyring())
    (d / "etc/apt/sources.list.d/rehearsal-extra.list").write_text(
        f"deb [signed-by=/etc/apt/keyrings/rehearsal-extra.gpg] {base_url}/extra jammy main\n")


def _dpkg_pids(root: Path) -> list[int]:
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if os.readlink(f"/proc/{pid}/root") == str(root) and \
                        Path(f"/proc/{pid}/comm").read_text().strip() == "dpkg":
                    out.append(int(pid))
            except OSError:
                pass
    return out


@pytest.mark.realroot
def test_dpkg_killed_mid_unpack_is_repaired_by_resume(cli_root: Callable[[str], Path], holders: list[LockHolder],
                                                      tmp_path: Path, request: pytest.FixtureRequest) -> None:
    d = cli_root("seed-7900xt")
    r = open_root(d)
    stopped_before_any_change(d, holders)
    served = tmp_path / "served"
    (served / "build").mkdir(parents=True)
    server = MirrorServer(served, idle_timeout=900)
    server.__enter__()
    request.addfinalizer(lambda: server.__exit__(None, None, None))
    _big_package_repo(d, served / "build", server.base_url)
    shutil.move(str(served / "build" / "extra"), str(served / "extra"))
    # only the new source is read (the mirror is served by the wizard's commands, not now); the others' lists stay
    up = r.run(["apt-get", "update", "-o", "Dir::Etc::sourcelist=sources.list.d/rehearsal-extra.list",
                "-o", "Dir::Etc::sourceparts=-", "-o", "APT::Get::List-Cleanup=false"], env=NONINTERACTIVE)
    assert up.returncode == 0, up.stderr
    lib = d / "opt/rehearsal-big"
    apt = subprocess.Popen(r.argv(["apt-get", "install", "-y", "rehearsal-big"], env=NONINTERACTIVE),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    killed: list[int] = []
    deadline = time.monotonic() + 120
    while not killed and time.monotonic() < deadline and apt.poll() is None:
        if lib.is_dir() and any(p.name.endswith(".dpkg-new") for p in lib.iterdir()):  # unpacking, not done
            for pid in _dpkg_pids(d):
                os.kill(pid, 9)
                killed.append(pid)
        time.sleep(0.002)
    out = apt.communicate(timeout=120)[0]
    assert killed and apt.returncode == 100 and "Sub-process /usr/bin/dpkg exited unexpectedly" in out
    assert r.run(["dpkg-query", "-W", "-f", "${Status}", "rehearsal-big"]).stdout == "install reinstreq half-installed"
    assert [f.state for f in survey(r)] == [repair.HalfState.INTERRUPTED_DPKG]

    first = finish(d)
    assert "$ dpkg --configure -a" in first.stdout
    records = journal(d)
    configure, fix = ran(records, "dpkg --configure -a"), ran(records, "apt-get -f install -y")
    reinstall = [r for r in records if r["event"] == "action-end" and "apt-get install --reinstall" in r.get("argv", "")]
    assert configure and fix and reinstall and all(x["outcome"] == "ok" for x in configure + fix + reinstall)
    purge = ran(records, "apt-get -y purge")
    # repaired in the purge step, in that order, before it removed anything
    assert configure[0]["step"] == fix[0]["step"] == purge[0]["step"] == 2
    assert configure[0]["seq"] < fix[0]["seq"] < purge[0]["seq"]
    assert survey(r) == ()
    assert r.run(["dpkg-query", "-W", "-f", "${Status}", "rehearsal-big"]).stdout == "install ok installed"
    assert len(list(lib.iterdir())) == BIG


@pytest.mark.realroot
def test_broken_dependencies_are_repaired_by_resume(cli_root: Callable[[str], Path],
                                                    holders: list[LockHolder]) -> None:
    d = cli_root("seed-7900xt")
    r = open_root(d)
    stopped_before_any_change(d, holders)
    forced = r.run(["dpkg", "--remove", "--force-depends", "hip-runtime-amd"])
    assert forced.returncode == 0 and "dependency problems, but removing anyway" in forced.stderr
    assert [f.state for f in survey(r)] == [repair.HalfState.BROKEN_DEPENDENCIES]
    finish(d)
    records = journal(d)
    (fix,) = ran(records, "apt-get -f install -y")
    assert fix["outcome"] == "ok"
    assert not ran(records, "dpkg --configure -a")  # its done-check passed: nothing to configure
    assert survey(r) == ()


def test_a_held_package_is_refused_with_the_unhold_to_decide_on(cli_root: Callable[[str], Path]) -> None:
    d = cli_root("seed-7900xt")
    r = open_root(d)
    assert r.run(["apt-mark", "hold", "rocm-hip-runtime"]).returncode == 0
    before = dpkg_status(d)
    first = wizard_cli("--sandbox", str(d), "--plan", PLAN, "--yes")
    assert first.returncode == 1, first.stdout[-2000:]
    assert "held packages the plan changes: rocm-hip-runtime" in first.stdout
    assert "run: sudo apt-mark unhold rocm-hip-runtime (then rocm-wizard resume)" in first.stdout
    assert "Traceback" not in first.stdout + first.stderr
    assert {k: v for k, v in dpkg_status(d).items() if k.startswith(("rocm", "hip"))} == \
        {k: v for k, v in before.items() if k.startswith(("rocm", "hip"))}  # nothing removed
    again = wizard_cli("--sandbox", str(d), "resume", "--yes")  # still held: refused again, never forced
    assert again.returncode == 1 and "apt-mark unhold rocm-hip-runtime" in again.stdout
    assert r.run(["apt-mark", "unhold", "rocm-hip-runtime"]).returncode == 0  # the user decided
    finish(d)
    held = [x for x in ran(journal(d), "sh -c 'held=") if x["step"] == 2]
    assert [x["outcome"] for x in held] == ["failed", "failed", "ok"]
