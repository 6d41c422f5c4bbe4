"""A system plan on a machine with the distribution's own ROCm (issue 22, point 3): the purge removes Debian's
ROCm packages the detection found (never python3-torch), and first checks with apt's own simulation that no
other installed package depends on them, stopping with their names when one does. The check's shell runs here
against an apt-get that prints apt's simulation lines (``Purg NAME [VERSION]``); the real roots run it with
the real apt (tests/realroot/test_distro_roots.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from test_plan_golden import STATE_DIR, built_machines, machines

from wizard import record
from wizard.model import RocmInstall
from wizard.planner import resolve_plan
from wizard.steps.purge import NO_DEPENDENTS

pytestmark = pytest.mark.integration

DEBIAN = ("libamdhip64-5", "libhsa-runtime64-1", "librocblas0", "rocminfo", "rocm-smi")


def _apt(tmp: Path, lines: str) -> dict[str, str]:
    bin_ = tmp / "bin"
    bin_.mkdir()
    (bin_ / "apt-get").write_text(f"#!/bin/sh\ncat <<'END'\n{lines}END\n")
    (bin_ / "apt-get").chmod(0o755)
    return {"PATH": f"{bin_}:/usr/bin:/bin", "LC_ALL": "C"}


def _run(env: dict[str, str], *pkgs: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", "-c", NO_DEPENDENTS, "sh", *pkgs], capture_output=True, text=True, env=env, timeout=60)


def test_a_dependent_package_stops_the_purge_naming_it(tmp_path: Path) -> None:
    env = _apt(tmp_path, "Reading package lists...\nPurg hipcc [5.7.1-6+deb13u1]\n"
                         "Purg libamdhip64-5:amd64 [5.7.1-6+deb13u1]\nPurg my-hip-app [1.0]\nPurg rocminfo [6.1.2-2]\n")
    res = _run(env, "libamdhip64-5", "rocminfo")
    assert res.returncode == 1
    assert "apt would remove them too: hipcc my-hip-app;" in res.stderr, res.stderr


def test_exactly_the_listed_packages_pass(tmp_path: Path) -> None:
    env = _apt(tmp_path, "Purg libamdhip64-5 [5.7.1-6+deb13u1]\nPurg rocminfo [6.1.2-2]\nInst nothing-else [1]\n")
    res = _run(env, "libamdhip64-5:amd64", "rocminfo")
    assert res.returncode == 0 and "apt removes exactly these packages" in res.stdout, res.stderr


def test_a_system_plan_purges_debians_rocm_first_and_keeps_python3_torch() -> None:
    base = built_machines()["rx9070xt-noble-fresh"]
    facts = record.replace(base, rocm=record.replace(base.rocm, version="6.1.2", stream="distro", installs=(
        RocmInstall(version="6.1.2", stream="distro", path=None, how="package", packages=DEBIAN),)))
    rp = resolve_plan("upgrade-7.2", facts, state_dir=STATE_DIR)
    purge = next(s for s in rp.steps if s.kind == "purge")
    argvs = [a.argv for a in purge.actions]
    guard = next(i for i, a in enumerate(argvs) if a[:3] == ("sh", "-c", NO_DEPENDENTS))
    removal = next(i for i, a in enumerate(argvs) if a[:3] == ("apt-get", "-y", "purge"))
    assert guard < removal and argvs[guard][4:] == argvs[removal][3:] == DEBIAN
    destructive = [i for i, a in enumerate(purge.actions) if a.destructive]
    assert destructive and guard < destructive[0]  # checked before anything is removed
    assert not any("python3-torch" in a for argv in argvs for a in argv)
    install = next(i for i, s in enumerate(rp.steps) if s.kind == "rocm_install")
    assert rp.steps.index(purge) < install  # the distribution's ROCm goes before AMD's comes
    # AMD's own stream alone: no dependents check (amdgpu-install --uninstall owns those)
    legacy = resolve_plan("upgrade-7.2", machines()["seed-7900xt"], state_dir=STATE_DIR)
    assert not any(a.argv[:3] == ("sh", "-c", NO_DEPENDENTS) for s in legacy.steps for a in s.actions)


def test_the_refusal_names_the_consent_that_would_let_them_go(tmp_path: Path) -> None:
    env = _apt(tmp_path, "Purg libtorch2.6 [2.6.0+dfsg-7]\nPurg librocblas0 [5.5.1+dfsg-7]\nPurg python3-torch [2.6.0]\n")
    res = _run(env, "librocblas0")
    assert res.returncode == 1
    assert "--allow-remove libtorch2.6,python3-torch" in res.stderr, res.stderr
    allowed = _run(env, "librocblas0", "libtorch2.6", "python3-torch")  # what the plan passes once allowed
    assert allowed.returncode == 0 and "apt removes exactly these packages" in allowed.stdout, allowed.stderr


def test_allowed_dependents_are_purged_with_the_distributions_rocm_and_only_then() -> None:
    base = built_machines()["rx9070xt-noble-fresh"]
    facts = record.replace(base, rocm=record.replace(base.rocm, version="6.1.2", stream="distro", installs=(
        RocmInstall(version="6.1.2", stream="distro", path=None, how="package", packages=DEBIAN),)))
    allowed = ("python3-torch", "libtorch2.6")
    rp = resolve_plan("upgrade-7.2", facts, state_dir=STATE_DIR, allow_remove=allowed)
    purge = next(s for s in rp.steps if s.kind == "purge")
    argvs = [a.argv for a in purge.actions]
    guard = next(a for a in argvs if a[:3] == ("sh", "-c", NO_DEPENDENTS))
    removal = next(a for a in argvs if a[:3] == ("apt-get", "-y", "purge"))
    assert guard[4:] == removal[3:] == (*DEBIAN, *allowed)
    assert any("because you allowed it (--allow-remove): python3-torch libtorch2.6" in n for n in purge.notes)
    # no distribution ROCm to purge: the consent removes nothing (AMD's own stream, or nothing installed)
    for machine in (machines()["seed-7900xt"], base):
        plain = resolve_plan("upgrade-7.2", machine, state_dir=STATE_DIR, allow_remove=allowed)
        assert not any("python3-torch" in a for s in plain.steps for act in s.actions for a in act.argv)


def test_allow_remove_takes_package_names_only() -> None:
    from wizard.commands.options import package_list

    assert package_list("python3-torch,libtorch2.6, python3-torch") == ("python3-torch", "libtorch2.6")
    for bad in ("", "python3-torch,", "Python3-Torch", "a;rm -rf /", "-o"):
        with pytest.raises(Exception, match="not a comma-separated list of package names"):
            package_list(bad)
