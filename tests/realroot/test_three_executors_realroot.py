"""One plan, three executors, three real roots (issue 20): downgrade-6.2 on seed-7900xt run by the engine
(``rocm-wizard --sandbox R1 --plan downgrade-6.2 --yes``, then ``resume --yes`` after the reboot), by its
``--dry-run`` script executed inside R2 by the root's user (run again after the reboot it asks for), and by
its ``--export ansible`` role through ``ansible-playbook`` against R3 over the ``rocm_wizard_realroot``
connection. The three roots are copies of one root built by the wizard's own ``--root debian12``.

They end in the same dpkg status (byte-identical), apt sources and venvs; a second run of each changes
nothing (no second reboot); with the new venv deleted, a third run of each recreates it and reports the
drift. The same plan taken to an rx9070xt-noble root stops each executor before the first change, naming
the differences.

A real root has no GPU: the engine and the role skip the verify step and say so; the script has no such
knowledge and runs it, and the rehearsal mirror's placeholder torch fails its import check there, so the
script's runs after the reboot end at step 10 with exit 1 (everything before it is recorded done).

The root has no sudo (a minbase userland): the script's ``sudo --`` is a test stand-in in /usr/local/bin
that execs a setuid-root copy of the root's own setpriv (``--reuid=0 --regid=0``); nothing of it is in the
end state compared. Marked ``realroot`` and ``fleet``: ROCM_WIZARD_REALROOT_ALL=1 (or ``-m system``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Callable, Iterator, TypeVar

import pytest

from tests.realroot.helpers import wizard_cli
from wizard.realroot import base as rb
from wizard.realroot import enter
from wizard.realroot.endstate import end_state
from wizard.realroot.machine import USER

pytestmark = [pytest.mark.system, pytest.mark.realroot, pytest.mark.fleet, pytest.mark.timeout(3600),
              pytest.mark.skipif(os.environ.get("ROCM_WIZARD_REALROOT_ALL") != "1",
                                 reason="slow real-root test: ROCM_WIZARD_REALROOT_ALL=1 pytest "
                                        "tests/realroot/test_three_executors_realroot.py")]

PROFILE, OTHER, PLAN = "seed-7900xt", "rx9070xt-noble", "downgrade-6.2"
VENV = f"home/user/pytorch_venv-{PLAN}"
SCRIPT = "home/user/plan.sh"
PROGRESS = f"var/lib/rocm-wizard/script/{PLAN}.progress"
SUDO = ('#!/bin/sh\n# test stand-in: the root has no sudo\n[ "$1" = -- ] && shift\n'
        'exec /usr/local/libexec/rocm-wizard-test-sudo --reuid=0 --regid=0 --clear-groups -- "$@"\n')
PLACEHOLDER = "is a placeholder: it has the real wheel's name"
DRIFT_SCRIPT = "drift: step 7 is recorded as done, but the machine says otherwise"
DRIFT_ENGINE = "DRIFT: recorded as done, but the machine says otherwise"
TIMINGS: dict[str, float] = {}
T = TypeVar("T")


def _ok(r: subprocess.CompletedProcess[str], want: int = 0) -> None:
    assert r.returncode == want, f"exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"


def _timed(name: str, fn: Callable[[], T]) -> T:
    t = time.monotonic()
    out = fn()
    TIMINGS[name] = TIMINGS.get(name, 0.0) + time.monotonic() - t
    return out


# ------------------------------------------------------------------------------ the three executors

def engine(d: Path, *args: str) -> tuple[int, str]:
    r = wizard_cli("--sandbox", str(d), *args)
    return r.returncode, r.stdout + r.stderr


def give_sudo(d: Path) -> None:
    """The script's ``sudo --`` inside the root: a setuid-root copy of the root's own setpriv."""
    priv = d / "usr/local/libexec/rocm-wizard-test-sudo"
    priv.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(d / "usr/bin/setpriv", priv)
    os.chown(priv, 0, 0)
    os.chmod(priv, 0o4755)
    sudo = d / "usr/local/bin/sudo"
    sudo.write_text(SUDO)
    sudo.chmod(0o755)


def script(d: Path, text: str) -> tuple[int, str, str]:
    """The dry-run script executed inside the root by its user (the root's mirror served meanwhile; the
    wizard copied in for the script's ``python3 -m wizard verify``, as the fleet commands do)."""
    from wizard.fleet import realroots

    (d / SCRIPT).write_text(text)
    with realroots.serving({"r": d}):
        r = enter.run(d, ["/bin/bash", f"/{SCRIPT}"], user=USER, timeout=1800)
    return r.returncode, r.stdout, r.stderr


def playbook(d: Path, book: Path, work: Path) -> tuple[int, list[str], list[str]]:
    """``ansible-playbook`` through the real-root connection: exit code, progress lines and the messages of
    failed tasks, and the tasks that changed the host (not the controller's own records)."""
    from wizard.fleet.ansible_run import run_playbook

    inv = work / f"{d.name}.ini"
    inv.write_text(f"{d.name} ansible_connection=rocm_wizard_realroot rocm_wizard_realroot={d} "
                   "ansible_python_interpreter=/usr/bin/python3 rocm_wizard_reboot_command=/usr/sbin/reboot\n")
    lines: list[str] = []
    res = run_playbook(book, str(inv), work / "fleet", on_line=lines.append,
                       extra_vars={"rocm_wizard_hosts": "all"})  # the export names no hosts of its own
    changed = [e.task for e in res.events if e.status == "changed" and "controller" not in e.task]
    return res.rc, lines + [e.message for e in res.events if e.message], changed


# ------------------------------------------------------------------------------ the roots

@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory, monkeypatch_module: pytest.MonkeyPatch) -> Path:
    from wizard.fleet import FleetError, ansible_program

    if os.geteuid() != 0:
        pytest.skip("a real root needs root on the host (unshare, chroot)")
    if rb.mmdebstrap() is None:
        pytest.skip("mmdebstrap is not installed: apt-get install mmdebstrap")
    try:
        ansible_program()
    except FleetError:
        pytest.skip("ansible-playbook is not installed (pip install '.[fleet]')")
    w = tmp_path_factory.mktemp("threeway")
    monkeypatch_module.setenv("HOME", str(w / "home"))
    monkeypatch_module.setenv("ANSIBLE_REMOTE_TEMP", str(w / "ansible-tmp"))
    return w


@pytest.fixture(scope="module")
def monkeypatch_module() -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def _built(work: Path, profile: str) -> Path:
    d = work / f"template-{profile}"
    r = _timed(f"build {profile} (--root debian12)",
               lambda: wizard_cli("--sandbox", str(d), "--profile", profile, "--root", "debian12", "detect", "--json"))
    _ok(r)
    return d


@pytest.fixture(scope="module")
def roots(work: Path) -> dict[str, Path]:
    """R1 (engine), R2 (script), R3 (role): copies of one seed-7900xt root, before any run."""
    template = _built(work, PROFILE)
    out = {}
    for name in ("engine", "script", "role"):
        out[name] = work / name
        rb.copy(template, out[name])
    give_sudo(out["script"])
    return out


@pytest.fixture(scope="module")
def made(work: Path, roots: dict[str, Path]) -> dict[str, Path]:
    """The script and the role, made by the wizard from their own roots."""
    r = wizard_cli("--sandbox", str(roots["script"]), "--plan", PLAN, "--dry-run")
    _ok(r)
    (work / "plan.sh").write_text(r.stdout)
    _ok(wizard_cli("--sandbox", str(roots["role"]), "--plan", PLAN, "--export", "ansible", str(work / "export")))
    return {"script": work / "plan.sh", "book": work / "export" / f"{PLAN}.yml"}


def _progress(d: Path) -> list[str]:
    return (d / PROGRESS).read_text().split()


# ------------------------------------------------------------------------------ the proof

def test_three_executors_end_alike_rerun_changes_nothing_and_repair_drift(
        work: Path, roots: dict[str, Path], made: dict[str, Path]) -> None:
    r1, r2, r3 = roots["engine"], roots["script"], roots["role"]
    boot0 = {k: enter.boot_id(d) for k, d in roots.items()}
    text = made["script"].read_text()

    # 1. the first run of each, through the reboot
    rc, out = _timed("engine: run", lambda: engine(r1, "--plan", PLAN, "--yes"))
    assert rc == 3 and "REBOOT" in out, out[-3000:]
    rc, out = _timed("engine: run", lambda: engine(r1, "resume", "--yes"))
    assert rc == 0 and "verify skipped: real root: no GPU" in out, out[-3000:]

    rc, out, err = _timed("script: run", lambda: script(r2, text))
    assert rc == 0 and "rebooting now: run this script again after the reboot" in err, err[-3000:]
    assert enter.boot_id(r2) != boot0["script"]  # the root's reboot stand-in ran
    rc, out, err = _timed("script: run", lambda: script(r2, text))
    assert rc == 1 and PLACEHOLDER in out + err, out[-2000:] + err[-2000:]  # no GPU: its verify fails
    assert _progress(r2) == ["1", "2", "3", "4", "7", "8", "9"]  # all before verify (5, 6: skipped, not recorded)

    rc, lines, changed = _timed("role: run", lambda: playbook(r3, made["book"], work))
    assert rc == 0, "\n".join(lines[-60:])
    assert any("Step 9/10 reboot: reboot" in t for t in changed), changed

    for k, d in roots.items():
        assert enter.boot_id(d) != boot0[k], k  # each went through one reboot
    states = {k: end_state(d) for k, d in roots.items()}
    assert states["script"] == states["engine"] and states["role"] == states["engine"]
    dpkg = {k: (d / "var/lib/dpkg/status").read_bytes() for k, d in roots.items()}
    assert dpkg["script"] == dpkg["engine"] and dpkg["role"] == dpkg["engine"]
    assert states["engine"]["dpkg"]["rocm-core"].startswith("6.2.4")  # the target, not the start's 6.2.0 left
    assert f"{VENV}/bin/activate" in states["engine"]["venvs"]
    boots = {k: enter.boot_id(d) for k, d in roots.items()}

    # 2. a second run of each: nothing changes, no second reboot
    rc, out = _timed("engine: again", lambda: engine(r1, "resume", "--yes"))
    assert rc == 0 and "every step's check passes on the machine" in out, out[-3000:]
    rc, out, err = _timed("script: again", lambda: script(r2, text))
    assert rc == 1 and PLACEHOLDER in out + err and "drift" not in err, err[-3000:]  # only verify ran again
    rc, lines, changed = _timed("role: again", lambda: playbook(r3, made["book"], work))
    assert rc == 0 and changed == [], changed
    assert {k: (d / "var/lib/dpkg/status").read_bytes() for k, d in roots.items()} == dpkg
    assert {k: end_state(d) for k, d in roots.items()} == states
    assert {k: enter.boot_id(d) for k, d in roots.items()} == boots

    # 3. the new venv deleted: a third run of each reports the drift and recreates it
    for d in roots.values():
        shutil.rmtree(d / VENV)
    status = json.loads(wizard_cli("--sandbox", str(r1), "status", "--json").stdout)
    assert "7" in status["drift"] and "resume" in status["next"], status
    assert "DRIFT" in wizard_cli("--sandbox", str(r1), "status").stdout
    rc, out = _timed("engine: drift", lambda: engine(r1, "resume", "--yes"))
    assert rc == 0 and DRIFT_ENGINE in out, out[-3000:]
    rc, out, err = _timed("script: drift", lambda: script(r2, text))
    assert DRIFT_SCRIPT in err, err[-3000:]
    assert rc == 1 and PLACEHOLDER in out + err  # recreated, then its verify fails as before
    rc, lines, changed = _timed("role: drift", lambda: playbook(r3, made["book"], work))
    assert rc == 0, "\n".join(lines[-60:])
    # the state dir is the system's: one task reads the progress and runs each finished step's check (drift said once)
    assert "Drift: steps recorded as done that the machine says are not: they run again" in changed, changed
    assert any("create the venv" in t for t in changed), changed
    assert {k: (d / "var/lib/dpkg/status").read_bytes() for k, d in roots.items()} == dpkg
    assert {k: end_state(d) for k, d in roots.items()} == states  # recreated the same in each
    assert {k: enter.boot_id(d) for k, d in roots.items()} == boots
    print("\nthree executors, real roots (s): " + ", ".join(f"{k} {v:.0f}" for k, v in TIMINGS.items()))


def test_the_plan_taken_to_another_machine_stops_each_executor_before_any_change(
        work: Path, roots: dict[str, Path], made: dict[str, Path]) -> None:
    plan_json = next((roots["engine"] / "var/lib/rocm-wizard/runs").glob("*/plan.json"), None)
    if plan_json is None:  # the first test did not run the engine (run alone): make the plan here
        _ok(wizard_cli("--sandbox", str(roots["engine"]), "--plan", PLAN, "--yes"), want=3)
        plan_json = next((roots["engine"] / "var/lib/rocm-wizard/runs").glob("*/plan.json"))
    other = work / "other"
    rb.copy(_built(work, OTHER), other)
    give_sudo(other)
    before, dpkg, boot = end_state(other), (other / "var/lib/dpkg/status").read_bytes(), enter.boot_id(other)
    differences = ("os: the plan was made for ubuntu 22.04, this machine has ubuntu 24.04",
                   "gfx: the plan was made for gfx1100,gfx1100, this machine has gfx1201")

    def unchanged() -> None:
        assert end_state(other) == before and (other / "var/lib/dpkg/status").read_bytes() == dpkg
        assert enter.boot_id(other) == boot and not (other / "var/lib/rocm-wizard/backup").exists()

    rc, out = engine(other, "--plan", str(plan_json), "--yes")
    rocm = "rocm: the plan was made for 6.2.0, this machine has none"
    assert rc != 0 and all(d in out for d in (*differences, rocm)), out[-3000:]
    unchanged()

    r = wizard_cli("--sandbox", str(other), "--plan", str(plan_json), "--dry-run")
    _ok(r)
    rc, out, err = script(other, r.stdout)
    assert rc == 5 and all(d in err for d in differences), err[-3000:]  # refused for this machine, as the engine
    unchanged()

    rc, lines, changed = playbook(other, made["book"], work)
    text = "\n".join(lines)
    assert rc != 0 and all(d in text for d in differences), text[-4000:]
    assert changed == [], changed
    unchanged()
