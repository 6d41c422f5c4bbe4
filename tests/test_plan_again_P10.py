"""Helper P10: a finished plan asked again changes nothing. The machine's state is the one truth: where the target
release is already the installed one (same stream, same version, the only install of its stream, its rocm-core
installed), the purge keeps it, the install step, the pip step and the reboot find nothing to do, and ``plans`` says
the machine is already at the plan's end state. Near misses still purge: the same version of another stream, the
target beside an older release of its stream, a target whose rocm-core dpkg does not list as installed.

Unit: the step plans built from Facts records (the seed 7900 XT pair as it is after ``upgrade-6.4``). Integration:
the whole plan in the sandbox through the engine and the dry-run script, asked again after it finished.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from runner_helpers import calls, end_state, wizard

from wizard import record
from wizard.host import BUILTIN_EXAMPLES, BundleHost
from wizard.model import KERNEL_DRIVER, Facts, PythonEnv, ResolvedPlan, RocmInstall, StepPlan
from wizard.planner import recommend, resolve_plan

STATE_DIR = "/var/lib/rocm-wizard"
VENV = "/home/user/pytorch_venv-upgrade-6.4"
# the packages the sandbox's amdgpu-install 6.4.4 leaves (detect --json after the plan finished there)
PKGS_644 = ("amdgpu-install", "hip-runtime-amd", "rocm", "rocm-core", "rocm-hip-runtime", "rocm-language-runtime",
            "rocm-opencl-runtime", "rocm-smi-lib", "rocminfo")


def _seed() -> Facts:
    f = __import__("wizard.probes", fromlist=["detect"]).detect(BundleHost(BUILTIN_EXAMPLES / "seed-7900xt"))
    return record.replace(f, origin="recorded:seed-7900xt", driver=record.replace(f.driver, user="user"))


def finished(*installs: RocmInstall) -> Facts:
    """seed-7900xt as upgrade-6.4 leaves it: ROCm 6.4.4 with its DKMS driver, the plan's venv with torch 2.9.1."""
    f = _seed()
    installs = installs or (RocmInstall("6.4.4", "legacy", "/opt/rocm-6.4.4", "version-file", PKGS_644),)
    venv = PythonEnv(path=VENV, python=f"{VENV}/bin/python", python_version="3.10", torch="2.9.1+rocm6.4",
                     torchvision="0.24.1+rocm6.4", torchaudio="2.9.1+rocm6.4", build="rocm",
                     gfx_targets=("gfx1030", "gfx1100", "gfx1101", "gfx1102", "gfx1200", "gfx1201"), kind="venv")
    return record.replace(
        f, rocm=record.replace(f.rocm, version="6.4.4", stream="legacy", installs=installs),
        driver=record.replace(f.driver, kind="dkms", dkms_packages=("amdgpu-dkms 1:6.4.4-sandbox",)),
        python_envs=(*f.python_envs, venv))


def plan(facts: Facts) -> ResolvedPlan:
    return resolve_plan("upgrade-6.4", facts, state_dir=STATE_DIR, wizard_python="python3")


def step(rp: ResolvedPlan, kind: str) -> StepPlan:
    return next(s for s in rp.steps if s.kind == kind)


def purged(rp: ResolvedPlan) -> tuple[str, ...]:
    return tuple(step(rp, "purge").param("packages") or ())


def changing_without_check(sp: StepPlan) -> list[str]:
    return [a.shown()[:80] for a in sp.actions if (a.changes or a.destructive) and a.check is None]


# --------------------------------------------------------------------------- unit: the finished machine


@pytest.mark.unit
def test_the_purge_keeps_the_installed_target() -> None:
    rp = plan(finished())
    purge = step(rp, "purge")
    assert not purge.actions and purge.skipped_reason is not None
    assert "ROCm 6.4.4, the target, is already installed: kept" in purge.skipped_reason
    assert "nothing to purge" in purge.notes


@pytest.mark.unit
def test_the_install_step_skips_every_change_by_its_check_and_needs_no_reboot() -> None:
    rp = plan(finished())
    inst = step(rp, "rocm_install")
    assert not changing_without_check(inst), changing_without_check(inst)
    assert KERNEL_DRIVER not in inst.effects  # nothing it runs here loads a new kernel module
    assert inst.param("at_end")
    # its preflight asks for nothing it would only need to install (the package's URL, disk under /opt)
    assert not [a for a in rp.preflight if a.name in ("package-url", "disk-rocm", "secure-boot", "wheel", "disk-venv")]
    assert step(rp, "reboot").skipped_reason is not None
    assert not [s for s in rp.steps if s.reboot and not s.skipped_reason]


@pytest.mark.unit
def test_the_pip_step_is_at_its_end_when_the_pinned_stack_is_there() -> None:
    pip = step(plan(finished()), "pip_pin")
    assert not changing_without_check(pip), changing_without_check(pip)  # the constraints file too
    assert pip.param("at_end")


@pytest.mark.unit
def test_plans_shows_the_finished_plan_as_applicable_with_a_note() -> None:
    row = next(c for c in recommend(finished(), state_dir=STATE_DIR) if c.plan.name == "upgrade-6.4")
    assert row.applicable and not row.reasons
    assert any("already at this plan's end state" in n for n in row.notes), row.notes


# --------------------------------------------------------------------------- unit: near misses still purge


@pytest.mark.unit
def test_near_miss_a_fresh_machine_gets_no_end_state_note() -> None:
    row = next(c for c in recommend(_seed(), state_dir=STATE_DIR) if c.plan.name == "upgrade-6.4")
    assert row.applicable and not row.notes
    rp = plan(_seed())
    assert "rocm-core" in purged(rp) and not step(rp, "rocm_install").param("at_end")


@pytest.mark.unit
def test_near_miss_the_target_version_of_another_stream_is_purged() -> None:
    distro = RocmInstall("6.4.4", "distro", None, "package", ("rocminfo", "hipcc"))
    rp = plan(finished(distro))
    assert {"rocminfo", "hipcc"} <= set(purged(rp))
    assert not step(rp, "rocm_install").param("at_end")
    row = next(c for c in recommend(finished(distro), state_dir=STATE_DIR) if c.plan.name == "upgrade-6.4")
    assert not row.notes


@pytest.mark.unit
def test_near_miss_the_target_beside_an_older_release_of_its_stream_is_purged_with_it() -> None:
    old = RocmInstall("6.2.0", "legacy", "/opt/rocm-6.2.0", "version-file", ("hsa-rocr",))
    new = RocmInstall("6.4.4", "legacy", "/opt/rocm-6.4.4", "version-file", PKGS_644)
    rp = plan(finished(old, new))
    assert {"hsa-rocr", "rocm-core", "amdgpu-install", "amdgpu-dkms"} <= set(purged(rp))
    assert KERNEL_DRIVER in step(rp, "rocm_install").effects
    assert step(rp, "reboot").skipped_reason is None


@pytest.mark.unit
def test_near_miss_a_half_installed_target_is_purged() -> None:
    """dpkg does not list its rocm-core installed (a status other than ``ii``: the probe leaves it out), though the
    version file is there: the purge removes it all, rocm-core included, and the install runs."""
    half = RocmInstall("6.4.4", "legacy", "/opt/rocm-6.4.4", "version-file", tuple(p for p in PKGS_644
                                                                                  if p != "rocm-core"))
    rp = plan(finished(half))
    purge = step(rp, "purge")
    assert {"rocminfo", "amdgpu-install"} <= set(purged(rp))
    assert any("rocm-core" in a.argv and a.destructive for a in purge.actions)
    assert not step(rp, "rocm_install").param("at_end")
    assert step(rp, "reboot").skipped_reason is None


@pytest.mark.unit
def test_other_streams_are_still_purged_beside_the_kept_target() -> None:
    distro = RocmInstall("5.7.1", "distro", None, "package", ("rocminfo-distro", "hipcc"))
    keep = RocmInstall("6.4.4", "legacy", "/opt/rocm-6.4.4", "version-file", PKGS_644)
    rp = plan(finished(keep, distro))
    pkgs = set(purged(rp))
    assert {"rocminfo-distro", "hipcc"} <= pkgs and not pkgs & set(PKGS_644) and "amdgpu-dkms" not in pkgs
    purge = step(rp, "purge")
    assert any("ROCm 6.4.4, the target, is already installed: kept" in n for n in purge.notes)
    # the kept release's repo lists, pin and key stay
    assert not [a for a in purge.actions if "/etc/apt/sources.list.d/rocm.list" in a.argv]
    assert step(rp, "rocm_install").param("at_end")


# --------------------------------------------------------------------------- integration: the sandbox


def _run(*args: str, rc: tuple[int, ...] = (0, 3)) -> str:
    r = wizard(list(args))
    assert r.returncode in rc, r.stdout[-3000:] + r.stderr[-2000:]
    return r.stdout


def _finish(root: Path) -> None:
    _run("--sandbox", str(root), "--profile", "seed-7900xt", "--plan", "upgrade-6.4", "--yes", rc=(3,))
    _run("--sandbox", str(root), "resume", "--yes", rc=(0,))


def _new_calls(root: Path, before: int) -> list[dict]:  # type: ignore[type-arg]
    lines = (root / ".sandbox/calls.log").read_text().splitlines()[before:]
    return [json.loads(x) for x in lines]


def _calls_count(root: Path) -> int:
    return len((root / ".sandbox/calls.log").read_text().splitlines())


def _changes_made(new: list[dict]) -> list[str]:  # type: ignore[type-arg]
    """The calls among ``new`` that change the machine: a package installed or removed, a download, a reboot, a pip
    install or uninstall."""
    out = []
    for c in new:
        tool, argv = c["tool"].rsplit("/", 1)[-1], c["argv"]
        if (tool == "amdgpu-install" or (tool == "apt-get" and argv[:1] != ["-s"] and argv[:1] != ["check"])
                or (tool == "dpkg" and argv[:1] in (["-i"], ["-r"], ["-P"], ["--purge"], ["--remove"]))
                or (tool == "systemctl" and "reboot" in argv) or (tool == "wget" and "--spider" not in argv
                                                                  and argv[-2:-1] != ["-"])
                or ("pip" in argv and ("install" in argv or "uninstall" in argv))):
            out.append(f"{tool} {' '.join(argv)[:100]}")
    return out


@pytest.mark.integration
def test_the_engine_asked_again_after_the_plan_finished_changes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "m"
    _finish(root)
    state = end_state(root)
    plans = json.loads(_run("--sandbox", str(root), "plans", "--json", rc=(0,)))["plans"]
    row = next(p for p in plans if p["name"] == "upgrade-6.4")
    assert row["applicable"] and not row["reasons"]
    assert any("already at this plan's end state" in n for n in row["notes"]), row
    before = _calls_count(root)
    out = _run("--sandbox", str(root), "--plan", "upgrade-6.4", "--yes", rc=(0, 3))
    assert "REBOOT" not in out and "reboot-pending" not in out, out[-3000:]
    assert "ROCm 6.4.4, the target, is already installed: kept" in out
    assert end_state(root) == state
    assert not _changes_made(_new_calls(root, before)), _changes_made(_new_calls(root, before))
    # every action the run started is one that changes nothing (a read: a lock wait, a hold check, an assert)
    from wizard.runner.planfile import load

    run = sorted((root / "var/lib/rocm-wizard/runs").iterdir())[-1]
    rp = load(run / "plan.json")
    ran = [json.loads(x) for x in (run / "journal.jsonl").read_text().splitlines()]
    started = [rp.steps[e["step"]].actions[e["action"]] for e in ran if e["event"] == "action-start"]
    assert started and not [a.shown()[:80] for a in started if a.changes or a.destructive]
    # a run that changed nothing leaves the finished run current: status and rollback act on that one
    first = sorted((root / "var/lib/rocm-wizard/runs").iterdir())[0].name
    assert (root / "var/lib/rocm-wizard/current").read_text().strip() == first


@pytest.mark.integration
def test_near_miss_a_run_that_changed_something_is_the_current_one(tmp_path: Path) -> None:
    """The plan asked again on a machine whose venv was removed after it finished: the pip step installs again, and
    that run is the one status, resume and rollback act on."""
    import shutil

    root = tmp_path / "m"
    _finish(root)
    shutil.rmtree(root / VENV.lstrip("/"))
    _run("--sandbox", str(root), "--plan", "upgrade-6.4", "--yes", rc=(0,))
    last = sorted((root / "var/lib/rocm-wizard/runs").iterdir())[-1].name
    assert (root / "var/lib/rocm-wizard/current").read_text().strip() == last
    assert (root / VENV.lstrip("/") / "bin").is_dir()


@pytest.mark.integration
def test_the_script_asked_again_after_the_engine_finished_changes_nothing(tmp_path: Path) -> None:
    from test_script_resume import machine_state, run_script

    root = tmp_path / "m"
    _finish(root)
    # machine_state: the script run here maps the machine's paths under the sandbox, so the activate block its env
    # check looks for names the mapped venv, which the engine's block does not (on a machine it is the same text)
    state = machine_state(root)
    script = _run("--sandbox", str(root), "--plan", "upgrade-6.4", "--dry-run", rc=(0,))
    assert "systemctl reboot" not in script and "apt-get -y purge" not in script
    before = _calls_count(root)
    cut = script.split("# ---- step 10/")[0] + "\nexit 0\n"  # all but verify (it needs a torch to run the suite)
    s = run_script(root, cut, "/nonexistent")
    assert s.returncode == 0, s.stderr[-3000:]
    assert not _changes_made(_new_calls(root, before)), _changes_made(_new_calls(root, before))
    assert machine_state(root) == state


@pytest.mark.integration
def test_the_role_of_the_finished_machine_purges_nothing_and_does_not_reboot(tmp_path: Path) -> None:
    from wizard.fleet.export import PlanGroup, export
    from wizard.script import machine_summary

    f = finished()
    export([PlanGroup(plan(f), machine=tuple(machine_summary(f)))], tmp_path / "out")
    text = "".join(p.read_text() for p in sorted((tmp_path / "out").rglob("*.yml")))
    assert "ansible.builtin.reboot" not in text
    assert "- purge\n" not in text.replace("'", "") and "Step 3/10 purge:" not in text
    assert "--usecase=rocm" in text  # the install is there, each change behind its check


@pytest.mark.integration
def test_near_miss_a_half_installed_target_in_the_sandbox_is_purged_and_installed_again(tmp_path: Path) -> None:
    root = tmp_path / "m"
    _finish(root)
    status = root / "var/lib/dpkg/status"
    text = status.read_text()
    head, rest = text.split("Package: rocm-core\nStatus: install ok installed\n", 1)
    status.write_text(head + "Package: rocm-core\nStatus: install ok half-configured\n" + rest)
    before = _calls_count(root)
    out = _run("--sandbox", str(root), "--plan", "upgrade-6.4", "--yes", rc=(3,))
    assert "kept" not in out.split("(purge)")[1].split("== step 4")[0]
    new = _new_calls(root, before)
    assert any(c["argv"][:2] == ["-y", "purge"] for c in new if c["tool"].endswith("apt-get"))
    assert any(c["tool"].endswith("amdgpu-install") and "--usecase=rocm" in c["argv"] for c in new)
    _run("--sandbox", str(root), "resume", "--yes", rc=(0,))
    assert end_state(root)["dpkg"].get("rocm-core", "").startswith("6.4.60404")
    assert calls(root, "systemctl")


@pytest.mark.unit
def test_the_tuis_choose_detail_shows_the_end_state_note() -> None:
    """Both front ends say it: the TUI's Choose detail carries the planner's note as `plans` does (PlanOption had
    no notes: the TUI showed the finished plan as a plain fit)."""
    from wizard.session import PlanOption
    from wizard.tui.screens.plans import option_detail

    row = next(c for c in recommend(finished(), state_dir=STATE_DIR) if c.plan.name == "upgrade-6.4")
    shown = option_detail(PlanOption.of(row)).plain
    assert "already at this plan's end state" in shown
    fresh = recommend(_seed(), state_dir=STATE_DIR)  # the machine before the upgrade
    assert "end state" not in option_detail(PlanOption.of(next(c for c in fresh if c.plan.name == "upgrade-6.4"))).plain
