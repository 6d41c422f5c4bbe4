"""Real Ansible against three different real roots (Debian 12 userlands built by the wizard's own
``--sandbox DIR --profile NAME --root debian12``: seed-7900xt, rx9070xt-noble, seed-5600xt) reached through
the wizard's ``rocm_wizard_realroot`` connection: every command Ansible runs is entered into the root
(unshare + chroot), so the root's own sh, python3, apt-get, dpkg and pip do the work, installing from
each root's rehearsal mirror, which the fleet commands serve on 127.0.0.1 while the playbook runs.

upgrade-6.4 fits the 7900 XT (ROCm 6.2 with DKMS: through a reboot) and the 9070 XT, and is refused on the
5600 XT (gfx1010). A real root has no GPU: its verify step is skipped and reported so, never passed.
Expectations come from the knowledge base and the plan file, not from the run.

Marked ``fleet`` and ``realroot``: runs with ROCM_WIZARD_REALROOT_ALL=1 and ``-m fleet`` (or ROCM_WIZARD_FLEET_ALL=1).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wizard.kb import load_kb
from wizard.mirror import catalogue as cat
from wizard.plan_file import load_plan
from wizard.profiles import PROFILES
from wizard.realroot import enter
from wizard.realroot.endstate import dpkg_status, end_state

pytestmark = [pytest.mark.system, pytest.mark.fleet, pytest.mark.realroot, pytest.mark.timeout(3600),
              pytest.mark.skipif(os.environ.get("ROCM_WIZARD_REALROOT_ALL") != "1",
                                 reason="slow real-root fleet test: ROCM_WIZARD_REALROOT_ALL=1 ROCM_WIZARD_FLEET_ALL=1 "
                                        "pytest tests/fleet")]

HOSTS = ("seed-7900xt", "rx9070xt-noble", "seed-5600xt")  # host name = its profile
PLAN = "upgrade-6.4"
NO_GPU = "no GPU"
TIMINGS: dict[str, float] = {}


def wizard(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wizard", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=3000, env={**os.environ, "HOME": str(cwd / "home"),
                                             "ANSIBLE_REMOTE_TEMP": str(cwd / "ansible-tmp")})


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from wizard.realroot import base as rb

    if os.geteuid() != 0:
        pytest.skip("a real root needs root on the host (unshare, chroot)")
    if rb.mmdebstrap() is None:
        pytest.skip("mmdebstrap is not installed: apt-get install mmdebstrap")
    base = tmp_path_factory.mktemp("realfleet")
    lines = ["[gpus]"]
    for host in HOSTS:
        root = base / host
        t = time.monotonic()
        res = wizard("--sandbox", str(root), "--profile", host, "--root", "debian12", "detect", "--json", cwd=base)
        assert res.returncode == 0, res.stderr[-2000:]
        TIMINGS[f"build {host}"] = time.monotonic() - t
        lines.append(f"{host} ansible_connection=rocm_wizard_realroot rocm_wizard_realroot={root} "
                     "ansible_python_interpreter=/usr/bin/python3 rocm_wizard_reboot_command=/usr/sbin/reboot")
    inv = base / "inventory.ini"
    inv.write_text("\n".join(lines) + "\n")
    return {"base": base, "inv": inv, "fleet": base / "fleet"}


def host_changes(stderr: str) -> list[str]:
    """The progress lines of tasks that changed something on a host (not the controller's copies)."""
    return [ln for ln in stderr.splitlines() if len(ln.split()) > 1 and ln.split()[1] == "changed"
            and "controller" not in ln]


def test_detect_finds_each_roots_gpus(fleet: dict[str, Path]) -> None:
    res = wizard("fleet", "detect", "-i", str(fleet["inv"]), "--fleet-dir", str(fleet["fleet"]), "--json",
                 cwd=fleet["base"])
    assert res.returncode == 0, res.stderr[-3000:]
    rows = {r["host"]: r for r in json.loads(res.stdout)["hosts"]}
    assert {h: r["status"] for h, r in rows.items()} == {h: "ok" for h in HOSTS}
    assert rows["seed-7900xt"]["gpus"] == [{"gfx": "gfx1100", "count": 2}]
    assert rows["rx9070xt-noble"]["gpus"] == [{"gfx": "gfx1201", "count": 1}]
    assert rows["seed-5600xt"]["gpus"] == [{"gfx": "gfx1010", "count": 1}]
    # read inside each root by its own python3 (the wizard copied in), from what its real dpkg installed
    assert rows["seed-7900xt"]["rocm"] == PROFILES["seed-7900xt"].rocm and rows["rx9070xt-noble"]["rocm"] is None
    assert rows["seed-7900xt"]["torch"] == [{"env": "/home/user/pytorch_venv", "torch": "2.5.1+rocm6.2"}]
    assert len({r["alike"] for r in rows.values()}) == 3


def test_plan_refuses_the_5600xt_and_groups_the_others(fleet: dict[str, Path]) -> None:
    out = fleet["base"] / "plan-export"
    res = wizard("fleet", "plan", PLAN, "-i", str(fleet["inv"]), "--fleet-dir", str(fleet["fleet"]), "--json",
                 "--export", "ansible", str(out), cwd=fleet["base"])
    assert res.returncode == 0, res.stderr[-3000:]
    doc = json.loads(res.stdout)
    assert sorted(sorted(g["hosts"]) for g in doc["groups"]) == [["rx9070xt-noble"], ["seed-7900xt"]]
    (refused,) = doc["refused"]
    assert refused["host"] == "seed-5600xt" and any("gfx1010" in r for r in refused["reasons"])
    # each root's plan installs from its own mirror, never from an upstream host
    for host in ("seed-7900xt", "rx9070xt-noble"):
        mirror = json.loads((fleet["base"] / host / ".realroot/machine.json").read_text())["mirror"]
        assert mirror in "".join(p.read_text() for p in out.glob("roles/*/tasks/main.yml"))


def test_run_migrates_through_the_reboot_skips_verify_and_a_rerun_changes_nothing(fleet: dict[str, Path]) -> None:
    inv, fdir, base = str(fleet["inv"]), str(fleet["fleet"]), fleet["base"]
    roots = {h: base / h for h in HOSTS}
    boot0 = {h: enter.boot_id(r) for h, r in roots.items()}
    refused_before = end_state(roots["seed-5600xt"])
    t = time.monotonic()
    first = wizard("fleet", "run", PLAN, "-i", inv, "--fleet-dir", fdir, "--json", "--progress", cwd=base)
    TIMINGS["fleet run"] = time.monotonic() - t
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    rows = {r["host"]: r for r in json.loads(first.stdout)["hosts"]}
    for host in ("seed-7900xt", "rx9070xt-noble"):
        row = rows[host]
        assert row["failed"] is None and row["steps_done"] == row["steps"] > 0, row
        assert row["verify"]["status"] == "skipped" and NO_GPU in row["verify"]["reason"], row["verify"]
    assert rows["seed-7900xt"]["reboot"] == "rebooted"
    assert enter.boot_id(roots["seed-7900xt"]) != boot0["seed-7900xt"]  # the root's reboot stand-in ran
    assert rows["rx9070xt-noble"]["reboot"] == "not needed"
    assert rows["seed-5600xt"]["refused"]
    assert end_state(roots["seed-5600xt"]) == refused_before and enter.boot_id(roots["seed-5600xt"]) == boot0["seed-5600xt"]

    # the end state, read from each root's real dpkg database: AMD's packages of the target release
    kb, target = load_kb(), load_plan(PLAN).target
    assert target.rocm is not None
    for host in ("seed-7900xt", "rx9070xt-noble"):
        codename = PROFILES[host].codename
        assert codename is not None
        want = cat.legacy_release(kb, target.rocm, codename).package_version
        status = dpkg_status(roots[host])
        assert status["rocm-core"] == f"{want} install ok installed", (host, status.get("rocm-core"))
    assert not (roots["seed-7900xt"] / f"opt/rocm-{PROFILES['seed-7900xt'].rocm}").exists()
    report = json.loads((fleet["fleet"] / "report.json").read_text())
    assert {r["host"]: r["verify"]["status"] for r in report["hosts"]} == {
        "seed-7900xt": "skipped", "rx9070xt-noble": "skipped", "seed-5600xt": "-"}

    dpkg_before = {h: (r / "var/lib/dpkg/status").read_bytes() for h, r in roots.items()}
    states = {h: end_state(r) for h, r in roots.items()}
    boots = {h: enter.boot_id(r) for h, r in roots.items()}
    t = time.monotonic()
    again = wizard("fleet", "run", PLAN, "-i", inv, "--fleet-dir", fdir, "--json", "--progress", cwd=base)
    TIMINGS["fleet run again"] = time.monotonic() - t
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert host_changes(again.stderr) == []
    assert {h: (r / "var/lib/dpkg/status").read_bytes() for h, r in roots.items()} == dpkg_before
    assert {h: end_state(r) for h, r in roots.items()} == states
    assert {h: enter.boot_id(r) for h, r in roots.items()} == boots  # no second reboot
    rows = {r["host"]: r for r in json.loads(again.stdout)["hosts"]}
    assert rows["seed-7900xt"]["reboot"] == "earlier" and rows["seed-7900xt"]["verify"]["status"] == "skipped"


def test_verify_everywhere_is_skipped_not_passed(fleet: dict[str, Path]) -> None:
    res = wizard("fleet", "verify", "-i", str(fleet["inv"]), "--fleet-dir", str(fleet["fleet"]), "--json",
                 cwd=fleet["base"])
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    rows = {r["host"]: r for r in json.loads(res.stdout)["hosts"]}
    assert {h: r["verify"]["status"] for h, r in rows.items()} == {h: "skipped" for h in HOSTS}
    assert all(NO_GPU in r["verify"]["reason"] for r in rows.values())
    print("\nreal-root fleet timings (s): " + ", ".join(f"{k} {v:.0f}" for k, v in TIMINGS.items()))
