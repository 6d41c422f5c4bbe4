"""Step invariants over every resolved plan on every machine: argv shape, root/user scope, destructive
after backup, exact package names, override rules, done-checks."""

from __future__ import annotations

from test_plan_golden import STATE_DIR, built_machines, machines
import pytest

from wizard import record
from wizard.model import RocmInstall
from wizard.plan_file import builtin_plan_names
from wizard.planner import PlanRefused, resolve_plan
from wizard.steps import kind, registry
from wizard.steps._common import StepKind
from wizard.steps.pip_pin import override_gfx

pytestmark = pytest.mark.unit


def resolved():
    for mname, facts in machines().items():
        for plan in builtin_plan_names():
            try:
                yield mname, plan, resolve_plan(plan, facts, state_dir=STATE_DIR, wizard_python="python3")
            except PlanRefused:
                continue


def test_every_kind_is_one_module_that_declares_everything_about_it() -> None:
    import importlib

    kinds = registry()
    assert set(kinds) >= {"backup", "purge", "rocm_install", "secure_boot", "groups", "pip_pin", "env", "docker",
                          "reboot", "verify"}
    for name, k in kinds.items():
        mod = importlib.import_module(f"wizard.steps.{name}")
        assert mod.KIND is k and isinstance(k, StepKind) and k.name == name
        assert record.is_record(k.params) and callable(k.plan) and callable(k.undo) and callable(k.preflight)
        k.params()  # every parameter has a default


def test_action_shape_and_scope() -> None:
    count = 0
    for mname, plan, rp in resolved():
        for s in rp.steps:
            for a in s.actions:
                count += 1
                assert isinstance(a.argv, tuple) and a.argv and all(isinstance(x, str) for x in a.argv), a
                assert not (a.root and a.as_user), (mname, plan, a.argv)
                assert a.check is None or (isinstance(a.check, tuple) and a.check)
                if "pip" in a.argv[:4] and "-m" in a.argv[:3]:
                    assert a.as_user and not a.root, (mname, plan, a.argv)
                if a.argv[0] in ("apt-get", "dnf", "amdgpu-install", "usermod", "systemctl") and \
                        a.argv[:2] != ("apt-get", "-s") and "--assumeno" not in a.argv:
                    assert a.root, a.argv
    assert count > 200


def test_nothing_destructive_before_the_backup_finished() -> None:
    for mname, plan, rp in resolved():
        seen_backup = False
        for s in rp.steps:
            if s.kind == "backup":
                seen_backup = True
            if s.destructive or any(a.destructive for a in s.actions):
                assert seen_backup, (mname, plan, s.kind)
            assert s.kind == "preflight" or not kind(s.kind).destructive or seen_backup


def test_purge_removes_exact_installed_names_never_globs() -> None:
    facts = machines()["seed-7900xt"]
    rp = resolve_plan("upgrade-7.2", facts, state_dir=STATE_DIR)
    purge = next(s for s in rp.steps if s.kind == "purge")
    installed = set(facts.rocm.installs[0].packages)
    removal = [a for a in purge.actions if a.argv[:3] == ("apt-get", "-y", "purge")][0]
    assert set(removal.argv[3:]) == installed
    assert not any(ch in x for x in removal.argv for ch in "*?[")
    sim_index = next(i for i, a in enumerate(purge.actions) if a.argv[:3] == ("apt-get", "-s", "purge"))
    real_index = purge.actions.index(removal)
    assert sim_index < real_index and purge.actions[sim_index].argv[3:] == removal.argv[3:]
    uninstall = [a for a in purge.actions if a.argv[0] == "amdgpu-install"]
    assert [a.argv for a in uninstall] == [("amdgpu-install", "-y", "--uninstall", "--rocmrelease=all")]
    guards = purge.actions[:purge.actions.index(uninstall[0])]
    assert guards and all(a.repeat for a in guards)  # the package-manager guards come first and re-run on resume


def test_purge_on_rhel_simulates_with_dnf_assumeno() -> None:
    rp = resolve_plan("downgrade-6.2", built_machines()["rhel9-mi300x"], state_dir=STATE_DIR)
    purge = next(s for s in rp.steps if s.kind == "purge")
    sim = next(a for a in purge.actions if "--assumeno" in a.argv)
    assert sim.ok_codes == (0, 1) and not sim.root
    install = next(s for s in rp.steps if s.kind == "rocm_install")
    assert any(a.argv[:3] == ("dnf", "-y", "install") for a in install.actions)
    assert any("/el/9.4/" in x for a in install.actions for x in a.argv)


def test_purge_skipped_when_nothing_is_installed() -> None:
    rp = resolve_plan("upgrade-7.2", built_machines()["rx9070xt-noble-fresh"], state_dir=STATE_DIR)
    purge = next(s for s in rp.steps if s.kind == "purge")
    assert purge.skipped_reason and not purge.actions


def test_purge_without_package_list_only_audits() -> None:
    base = built_machines()["rx9070xt-noble-fresh"]
    facts = record.replace(base, rocm=record.replace(base.rocm, version="6.3.0", stream="legacy", installs=(
        RocmInstall(version="6.3.0", stream="legacy", path="/opt/rocm-6.3.0", how="version-file"),)))
    rp = resolve_plan("upgrade-7.2", facts, state_dir=STATE_DIR)
    purge = next(s for s in rp.steps if s.kind == "purge")
    assert not any(a.argv[0] == "apt-get" for a in purge.actions)
    assert any("package list" in n for n in purge.notes)


def test_rocm_install_pins_key_fingerprint_and_apt_pin_600() -> None:
    rp = resolve_plan("upgrade-7.2", built_machines()["rx9070xt-noble-fresh"], state_dir=STATE_DIR)
    inst = next(s for s in rp.steps if s.kind == "rocm_install")
    argvs = [a.argv for a in inst.actions]
    assert any("CA8BB4727A47B4D09B4EE8969386B48A1A693C5C" in a for a in argvs)
    pin = next(a for a in inst.actions if "/etc/apt/preferences.d/rocm-pin-600" in a.argv)
    assert "Pin-Priority: 600" in pin.argv[-1] and pin.root and pin.check is not None
    final = next(a for a in argvs if a[0] == "amdgpu-install")
    assert final == ("amdgpu-install", "-y", "--usecase=rocm", "--no-dkms")  # in-tree driver: no DKMS
    url_i = next(i for i, a in enumerate(argvs) if a[0] == "wget" or "wget -q -c" in " ".join(a[:3]))
    assert argvs[url_i][-1].endswith("/7.2.4/ubuntu/noble/amdgpu-install_7.2.4.70204-1_all.deb")


def test_groups_only_when_missing_and_no_reboot() -> None:
    rp = resolve_plan("pip-only", built_machines()["rx9070xt-noble-fresh"], state_dir=STATE_DIR)
    g = next(s for s in rp.steps if s.kind == "groups")
    assert g.actions[0].argv == ("usermod", "-a", "-G", "render,video", "user") and not g.reboot
    assert any("log out" in n for n in g.notes)
    rp2 = resolve_plan("pip-only", machines()["seed-7900xt"], state_dir=STATE_DIR)
    assert next(s for s in rp2.steps if s.kind == "groups").skipped_reason


def test_pip_pin_new_venv_then_uninstall_install_constraints_assert() -> None:
    rp = resolve_plan("pip-only", built_machines()["rx9070xt-noble-fresh"], state_dir=STATE_DIR)
    pp = next(s for s in rp.steps if s.kind == "pip_pin")
    descs = [a.argv[:4] for a in pp.actions]
    assert descs[0] == ("python3", "-m", "venv", "/home/user/rocm-wizard-venv")
    assert pp.actions[1].argv[3] == "uninstall" and "pytorch-triton-rocm" in pp.actions[1].argv
    assert pp.actions[2].argv[3] == "install"
    assert pp.actions[3].argv[-1].endswith("rocm-wizard-constraints.txt")
    assert pp.actions[4].argv[-1] == "gfx1201"
    assert pp.actions[2].check == pp.actions[4].argv  # already at target -> skipped on resume


def test_env_never_writes_an_empty_override() -> None:
    for mname, plan, rp in resolved():
        for s in rp.steps:
            if s.kind == "env":
                for a in s.actions:
                    assert "HSA_OVERRIDE_GFX_VERSION=\n" not in a.argv[4] and "HSA_OVERRIDE_GFX_VERSION=''" not in a.argv[4]


def test_override_gfx_mapping() -> None:
    assert override_gfx("10.3.0") == "gfx1030"
    assert override_gfx("11.0.0") == "gfx1100"
    assert override_gfx("9.0.10") == "gfx90a"


def test_reboot_only_with_dkms_or_mok() -> None:
    for mname, plan, rp in resolved():
        reboot = next((s for s in rp.steps if s.kind == "reboot"), None)
        if reboot is None:
            continue
        needs = any(s.kind == "secure_boot" and s.actions for s in rp.steps) or any(
            s.kind in ("rocm_install", "kernel_driver") and dict(s.params).get("dkms") for s in rp.steps) or any(
            s.kind == "purge" and "amdgpu-dkms" in dict(s.params).get("packages", ()) for s in rp.steps)
        assert bool(reboot.actions) == needs, (mname, plan)


def test_verify_runs_the_wizard_suite_in_the_target() -> None:
    for mname, plan, rp in resolved():
        if plan == "driver":  # it installs no torch to verify with: it ends in the reboot that loads the driver
            continue
        v = rp.steps[-1]
        assert v.kind == "verify"
        argv = v.actions[0].argv
        assert argv[1:4] == ("-m", "wizard", "verify") and argv[-1] == "--json"
        assert argv[4] in ("--python", "--image")


def test_preflight_has_the_checks_the_plan_needs() -> None:
    rp = resolve_plan("downgrade-6.2", machines()["seed-7900xt"], state_dir=STATE_DIR)
    assert rp.steps[0].kind == "preflight" and rp.steps[0].actions == rp.preflight
    names = [a.name for a in rp.preflight]
    # the machine it was made for first; an in-tree driver: no DKMS, so no Secure Boot check; a new venv beside
    # the old one: venv-path checks it
    assert names == ["machine", "ssh", "root", "package-lock", "package-url", "venv-path", "python-version", "pip-config", "wheel",
                     "disk-rocm", "disk-venv"]
    descs = " | ".join(a.description for a in rp.preflight)
    for needle in ("ssh", "root", "package manager's lock", "amdgpu-install package for this distro exists",
                   "torch 2.5.1 exists", "disk space for ROCm", "disk space for the venv"):
        assert needle in descs, needle
    pip_only = resolve_plan("pip-only", machines()["seed-7900xt"], state_dir=STATE_DIR)
    assert not any(a.name in ("package-lock", "package-url", "disk-rocm") for a in pip_only.preflight)
