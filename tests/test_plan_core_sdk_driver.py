"""Issue 13's plans: core-sdk (AMD's package repository), driver (kernel driver only), channels, and a
fresh machine without /dev/kfd getting a way forward. Every value asserted comes from the knowledge base."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from kb_helpers import kb_files_only

from test_plan_golden import STATE_DIR, built_machines, machines
from wizard import record
from wizard.kb import load_kb
from wizard.model import Driver, Facts
from wizard.fix_plans import PLANS_DIR
from wizard.plan_file import PlanError, load_plan_file
from wizard.planner import PlanRefused, recommend, resolve_plan

pytestmark = pytest.mark.integration

FRESH = Path(__file__).resolve().parent / "fixtures" / "machines" / "rdna4-9070xt-noble-fresh-no-kfd"


def resolve(plan: str, facts: Facts, **kw):  # type: ignore[no-untyped-def]
    return resolve_plan(plan, facts, state_dir=STATE_DIR, wizard_python="python3", **kw)


def fresh() -> Facts:
    return built_machines()["rx9070xt-noble-fresh"]


def no_kfd(facts: Facts) -> Facts:
    return record.replace(facts, driver=record.replace(facts.driver, kfd_present=False, loaded=False,
                                                                 kind=None))


def actions(rp, kind: str):  # type: ignore[no-untyped-def]
    return [a for s in rp.steps if s.kind == kind for a in s.actions]


def plan_copy(tmp_path: Path, name: str, edit: dict[str, str]) -> str:
    text = (PLANS_DIR / f"{name}.toml").read_text()
    for old, new in edit.items():
        assert old in text
        text = text.replace(old, new)
    p = tmp_path / f"{name}-copy.toml"
    p.write_text(text)
    return str(p)


# --- core-sdk ------------------------------------------------------------------------------------------


def test_core_sdk_uses_the_kbs_repository_key_and_per_gfx_package() -> None:
    kb = load_kb()
    rel = kb.release("10.0.0")
    assert rel is not None and rel.routes is not None and rel.routes.apt is not None
    rp = resolve("core-sdk", fresh())
    t = dict(rp.target)
    assert t["rocm"] == "10.0.0"  # 10.1.0 is newer but AMD's torch for it is not in the KB: noted, not guessed
    step = next(s for s in rp.steps if s.kind == "core_sdk_install")
    assert any("10.1.0 is newer" in n and "AMD's torch build" in n for n in step.notes)
    argvs = [a.argv for a in step.actions]
    assert ("wget", "-q", "-O", f"{STATE_DIR}/downloads/amdrocm-10.0.0.key", rel.routes.apt.key_url) in argvs
    source = next(a for a in argvs if "/etc/apt/sources.list.d/amdrocm.sources" in a)
    text = source[-1]
    assert f"URIs: {rel.routes.apt.repos['ubuntu2404']}\n" in text
    assert f"Signed-By: {rel.routes.apt.keyring}\n" in text and "Suites: stable\n" in text
    assert ("apt-get", "install", "-y", "amdrocm10.0-gfx1201") in argvs
    # the package manager's half-states are repaired on every entry
    assert argvs.index(("dpkg", "--configure", "-a")) < argvs.index(("apt-get", "install", "-y", "amdrocm10.0-gfx1201"))
    # AMD's own torch build, pinned, with the mandatory device extra, from the release's own index
    pin = next(a for a in actions(rp, "pip_pin") if "--index-url" in a.argv).argv
    assert pin[pin.index("--index-url") + 1] == "https://stable.repo.amd.com/rocm/whl-next/"
    assert "torch[device-gfx1201]==2.13.0+rocm10.0.0" in pin
    assert "torchvision[device-gfx1201]==0.28.0+rocm10.0.0" in pin and "torchaudio==2.11.0.2+rocm10.0.0" in pin
    assert "rocm[libraries,device-gfx1201]==10.0.0" in pin
    assert t["torch"] == "2.13.0+rocm10.0.0" and t["index"] == "amd-whl-next"


def test_core_sdk_purges_the_legacy_line_first_as_amd_says() -> None:
    rp = resolve("core-sdk", machines()["seed-7900xt"])  # ROCm 6.2.0 installed
    kinds = [s.kind for s in rp.steps if s.actions]
    assert kinds.index("purge") < kinds.index("core_sdk_install")
    purge = next(s for s in rp.steps if s.kind == "purge")
    assert any(a.argv[:3] == ("apt-get", "-y", "purge") for a in purge.actions)


def test_core_sdk_without_a_purge_step_is_refused_when_legacy_is_installed(tmp_path: Path) -> None:
    plan = plan_copy(tmp_path, "core-sdk", {'[[steps]]\nkind = "purge"\nstreams = ["legacy", "distro"]\n\n': ""})
    with pytest.raises(PlanRefused) as exc:
        resolve(plan, machines()["seed-7900xt"])
    text = "\n".join(exc.value.reasons)
    assert "6.2.0" in text and "<=7.2.4" in text and "no purge step" in text


def _kb_without(tmp_path: Path, version: str, route: str) -> str:
    from wizard.kb import KB_DIR

    d = tmp_path / "kb"
    shutil.copytree(KB_DIR, d, ignore=kb_files_only)
    data = json.loads((d / "rocm_releases.json").read_text())
    for r in data["releases"]:
        if r["version"] == version:
            r["routes"][route] = None
    (d / "rocm_releases.json").write_text(json.dumps(data, indent=1))
    return str(d)


def test_a_missing_fact_refuses_and_names_it(tmp_path: Path) -> None:
    kb = load_kb(_kb_without(tmp_path, "10.0.0", "apt"))
    assert kb.release("10.0.0").routes.apt is None  # type: ignore[union-attr]
    with pytest.raises(PlanRefused) as exc:  # a plan naming 10.0.0
        resolve(plan_copy(tmp_path, "core-sdk", {'rocm = "newest"': 'rocm = "10.0.0"'}), fresh(), kb=kb)
    assert any("10.0.0" in r and "routes.apt" in r for r in exc.value.reasons), exc.value.reasons
    # "newest" falls back to the newest release that has the facts (7.14.1's one-line repository, read from AMD's
    # 7.14.1 install page source; 10.1.0 has no AMD torch build in the KB)
    rp = resolve("core-sdk", fresh(), kb=kb)
    assert dict(rp.target)["rocm"] == "7.14.1"
    step = next(s for s in rp.steps if s.kind == "core_sdk_install")
    assert ("apt-get", "install", "-y", "amdrocm7.14-gfx1201") in [a.argv for a in step.actions]
    assert any("/etc/apt/sources.list.d/amdrocm.list" in a.argv for a in step.actions)


def test_newest_skips_a_release_without_amds_torch_build(tmp_path: Path) -> None:
    """The core-sdk plan installs AMD's torch for its release: "newest" is the newest release whose install facts
    and torch build the knowledge base both has; a newer one without that build is noted, not planned into a
    refusal. The driver plan (no torch) is not held back by it."""
    from wizard.kb import KB_DIR

    d = tmp_path / "kb"
    shutil.copytree(KB_DIR, d, ignore=kb_files_only)
    data = json.loads((d / "torch_wheels.json").read_text())
    data["vendor_wheels"] = [v for v in data["vendor_wheels"] if v["sdk"] != "10.0.0"]
    (d / "torch_wheels.json").write_text(json.dumps(data, indent=1))
    kb = load_kb(str(d))
    assert kb.vendor_wheels("10.0.0") == () and kb.vendor_wheels("7.14.0")
    rp = resolve("core-sdk", fresh(), kb=kb)
    assert dict(rp.target)["rocm"] != "10.0.0"
    step = next(s for s in rp.steps if s.kind == "core_sdk_install")
    assert any("10.0.0 is newer" in n and "AMD's torch build" in n for n in step.notes), step.notes
    drv = resolve("driver", no_kfd(fresh()), kb=kb)
    assert not any("AMD's torch build" in n for s in drv.steps for n in s.notes)


def test_core_sdk_refuses_a_gpu_without_a_package_naming_the_targets() -> None:
    with pytest.raises(PlanRefused) as exc:
        resolve("core-sdk", machines()["seed-5600xt"])
    assert any("no package for gfx1010" in r for r in exc.value.reasons)


# --- channels: published-but-undocumented targets on stable, nightly-only ones refused on stable ------------


def test_rdna1_rdna2_get_the_stable_whl_next_device_packages_with_a_warning() -> None:
    """Audit 2026-11b T2: TheRock's publishing manifest puts gfx1010-1012 and gfx1030-1036 device packages on
    the stable whl-next stream; AMD's install page does not document them, so the plan says so."""
    kb = load_kb()
    stable = kb.wheel_index("amd-whl-next")
    assert stable is not None and "gfx1031" not in (stable.device_extras or ())
    published = kb.published_devices(stable)
    for g in ("gfx1010", "gfx1011", "gfx1012", "gfx1030", "gfx1031", "gfx1036", "gfx1250"):
        assert g in published
    for g in ("gfx900", "gfx906", "gfx90c"):  # dev and nightly streams only
        assert g not in published
    nightly = kb.wheel_index("amd-nightly-whl-next")
    assert nightly is not None and {"gfx900", "gfx906", "gfx90c"} <= set(kb.published_devices(nightly))
    for machine in ("seed-5600xt", "rdna2-gfx1031-dkms-secureboot"):
        facts = machines()[machine] if machine in machines() else built_machines()[machine]
        rp = resolve("therock-pip", facts)
        t = dict(rp.target)
        assert (t["index"], t["index_url"]) == ("amd-whl-next", "https://stable.repo.amd.com/rocm/whl-next/")
        assert "channel" not in t
        pip = next(s for s in rp.steps if s.kind == "pip_pin")
        gfx = t["gfx"]
        warn = [n for n in pip.notes if n.startswith(f"warning: device-{gfx} is published, not in AMD's documented")]
        assert warn and "rocm_whl_next_ownership.yaml" in warn[0] and "89553ce3" in warn[0]
        pin = next(a for a in actions(rp, "pip_pin") if "--index-url" in a.argv).argv
        assert f"torch[device-{gfx}]==2.13.0+rocm10.0.0" in pin and f"rocm[libraries,device-{gfx}]==10.0.0" in pin
    # a documented target gets no such warning
    pip = next(s for s in resolve("therock-pip", fresh()).steps if s.kind == "pip_pin")
    assert not [n for n in pip.notes if "published, not in AMD's documented" in n]


def test_nightly_only_targets_are_named_and_refused_on_stable(tmp_path: Path) -> None:
    from wizard.model import Gpu

    facts = machines()["seed-5600xt"]
    vega = record.replace(facts, gpus=tuple(record.replace(g, gfx="gfx906", family="GCN5.1", name="Radeon VII")
                                            for g in facts.gpus))
    with pytest.raises(PlanRefused) as exc:
        resolve("therock-pip", vega)
    text = "\n".join(exc.value.reasons)
    assert "device-gfx906" in text and "not a stable release" in text
    nightly = plan_copy(tmp_path, "therock-pip", {'[target]\n': '[target]\nchannel = "nightly"\n'})
    rp = resolve(nightly, vega)
    t = dict(rp.target)
    assert t["index_url"] in ("https://rocm.nightlies.amd.com/whl-multi-arch/", "https://nightly.repo.amd.com/rocm/whl-next/")
    assert t["channel"].startswith("nightly") and "not a stable release" in t["channel"]
    assert Gpu  # the record type the machines carry


def test_therock_pip_names_the_newest_stable_amd_build() -> None:
    rp = resolve("therock-pip", fresh())
    t = dict(rp.target)
    assert (t["index"], t["torch"]) == ("amd-whl-next", "2.13.0+rocm10.0.0")
    assert "channel" not in t


def test_channel_is_validated(tmp_path: Path) -> None:
    p = tmp_path / "weekly.toml"
    p.write_text((PLANS_DIR / "therock-pip.toml").read_text().replace("[target]\n", '[target]\nchannel = "weekly"\n'))
    with pytest.raises(PlanError) as exc:
        load_plan_file(p)
    assert "target.channel" in exc.value.message


# --- driver ------------------------------------------------------------------------------------------


def test_driver_installs_only_amdgpu_dkms_from_amds_driver_repository_and_reboots() -> None:
    """Audit 2026-11b A7: AMD's driver-only route (amdgpu-dkms with the kernel headers, dkms status), never
    amdgpu-install's --usecase lines, which AMD documents as the full ROCm and graphics install.
    The newest Core SDK release with every driver fact is 10.1.0: amdgpu-install 31.60 as AMD's 10.1.0 install page
    source prints it (ROCm/rocm-docs f47eb2f8, docs/install/include/200-install.rst)."""
    facts = no_kfd(fresh())
    rp = resolve("driver", facts)
    assert dict(rp.target)["rocm"] == "10.1.0"
    argvs = [a.argv for a in actions(rp, "kernel_driver")]
    url = "https://repo.radeon.com/amdgpu-install/31.60/ubuntu/noble/amdgpu-install_31.60.316000-1_all.deb"
    assert any(url in a for a in argvs)
    assert not [a for a in argvs if a[0] == "amdgpu-install"]  # no usecase: no ROCm, no graphics stack
    install = ("sh", "-c", 'apt-get install -y "linux-headers-$(uname -r)" "linux-modules-extra-$(uname -r)" '
               "amdgpu-dkms")
    assert argvs.index(("apt-get", "update")) < argvs.index(install)
    assert any(a[:2] == ("sh", "-c") and "dkms status amdgpu" in a[2] for a in argvs)
    step = next(s for s in rp.steps if s.kind == "kernel_driver")
    assert any("/dev/kfd must exist" in n for n in step.notes)
    assert not any(s.actions for s in rp.steps if s.kind == "purge")  # nothing legacy installed
    reboot = next(s for s in rp.steps if s.kind == "reboot")
    assert reboot.actions and reboot.reboot


def test_driver_refuses_a_distribution_the_release_does_not_list() -> None:
    facts = no_kfd(fresh())
    questing = record.replace(facts, os=record.replace(facts.os, version="25.10", codename="questing"))
    with pytest.raises(PlanRefused) as exc:
        resolve("driver", questing)
    assert any("questing" in r or "25.10" in r for r in exc.value.reasons), exc.value.reasons


def test_driver_refuses_a_mainline_kernel() -> None:
    facts = no_kfd(fresh())
    mainline = record.replace(facts, os=record.replace(facts.os, kernel="6.19.0-061900-generic"))
    with pytest.raises(PlanRefused) as exc:
        resolve("driver", mainline)
    assert any("mainline" in r for r in exc.value.reasons), exc.value.reasons


def test_driver_removes_legacy_rocm_first_as_amd_says(tmp_path: Path) -> None:
    seed = machines()["seed-7900xt"]  # ROCm 6.2.0 installed (<= 7.2.4: AMD says uninstall it first)
    rp = resolve("driver", no_kfd(seed))
    kinds = [s.kind for s in rp.steps if s.actions]
    assert kinds.index("purge") < kinds.index("kernel_driver")
    purge = next(s for s in rp.steps if s.kind == "purge")
    assert any(a.argv[:3] == ("apt-get", "-y", "purge") for a in purge.actions)
    step = next(s for s in rp.steps if s.kind == "kernel_driver")
    assert any("6.2.0 is removed first" in n for n in step.notes)
    # where the kernel's driver is enough the legacy install stays: the driver plan removes nothing
    kept = resolve("driver", seed)
    assert not any(s.actions for s in kept.steps if s.kind == "purge")
    # a copy without the purge step is refused, naming AMD's instruction
    plan = plan_copy(tmp_path, "driver", {'[[steps]]\nkind = "purge"\nstreams = ["legacy"]\n\n': ""})
    with pytest.raises(PlanRefused) as exc:
        resolve(plan, no_kfd(seed))
    assert any("6.2.0" in r and "<=7.2.4" in r and "no purge step" in r for r in exc.value.reasons)


def test_driver_has_nothing_to_do_where_the_kernels_driver_is_enough() -> None:
    facts = record.replace(fresh(), driver=record.replace(fresh().driver, in_render_group=True,
                                                                    in_video_group=True))
    rp = resolve("driver", facts)
    assert not any(s.actions for s in rp.steps)
    step = next(s for s in rp.steps if s.kind == "kernel_driver")
    assert "/dev/kfd is present" in (step.skipped_reason or "")
    choice = next(c for c in recommend(facts, state_dir=STATE_DIR) if c.plan.name == "driver")
    assert choice.applicable and not choice.recommended and choice.reasons[0].startswith("nothing to do:")


def test_driver_refusals_ryzen_kernel_container_unknown() -> None:
    apu = built_machines()["apu-gfx1103-only"]  # Ubuntu 24.04, kernel 6.8: the KB says 6.14+ for Ryzen APUs
    with pytest.raises(PlanRefused) as exc:
        resolve("driver", apu)
    assert any("6.14" in r and "linux-oem-24.04d" in r for r in exc.value.reasons)
    with pytest.raises(PlanRefused) as exc:
        resolve("driver", record.replace(no_kfd(fresh()), in_container=True))
    assert any("container" in r for r in exc.value.reasons)
    unknown = record.replace(fresh(), driver=Driver(user="user"))
    with pytest.raises(PlanRefused) as exc:
        resolve("driver", unknown)
    assert any("not known" in r for r in exc.value.reasons)


def test_pip_plans_without_kfd_point_at_the_driver_plan() -> None:
    with pytest.raises(PlanRefused) as exc:
        resolve("pip-only", no_kfd(fresh()))
    assert any("run the driver plan first" in r for r in exc.value.reasons)
    # where the driver plan cannot help either, the refusal says why instead of pointing at it
    boxed = record.replace(no_kfd(fresh()), in_container=True)
    with pytest.raises(PlanRefused) as exc:
        resolve("pip-only", boxed)
    text = "\n".join(exc.value.reasons)
    assert "driver plan cannot install one here either" in text and "run the driver plan first" not in text


def test_fresh_9070xt_recording_recommends_driver_then_pip() -> None:
    out = subprocess.run([sys.executable, "-m", "wizard", "plans", "--from", str(FRESH), "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    plans = {p["name"]: p for p in json.loads(out.stdout)["plans"]}
    rec = [n for n, p in plans.items() if p["recommended"]]
    assert rec == ["driver"]
    why = plans["driver"]["reasons"][0]
    assert "/dev/kfd is missing" in why and "pip-only" in why
    for name in ("pip-only", "therock-pip", "docker"):
        assert not plans[name]["applicable"]
        assert any("run the driver plan first" in r for r in plans[name]["reasons"]), plans[name]["reasons"]


def test_kb_check_passes() -> None:
    out = subprocess.run([sys.executable, "-m", "wizard.kb", "check"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


def test_kb_check_catches_a_fix_pointing_at_a_plan_that_cannot_serve_its_gpus(tmp_path: Path) -> None:
    from wizard.kb import KB_DIR
    from wizard.kb.consistency import cross_problems

    d = tmp_path / "kb"
    shutil.copytree(KB_DIR, d, ignore=kb_files_only)
    data = json.loads((d / "known_issues.json").read_text())
    issue = next(i for i in data["issues"] if any("gpu_gfx_in" in w for w in i.get("when", [])))
    issue["when"] = [{"gpu_gfx_in": ["gfx1010"]}]
    issue["fix"]["plan"] = "core-sdk"
    (d / "known_issues.json").write_text(json.dumps(data, indent=1))
    problems = cross_problems(load_kb(str(d)))
    assert any(issue["id"] in p and "core-sdk" in p for p in problems), problems


def test_diagnose_points_only_at_plans_that_fit() -> None:
    from wizard.diagnose import diagnose
    from wizard.planner import fitting_fix_plans

    # the fresh machine without /dev/kfd: its finding's fix names the driver plan, which fits
    out = subprocess.run([sys.executable, "-m", "wizard", "diagnose", "--from", str(FRESH), "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    # a recording that does not say whether it ran in a container: the finding is to check, its fix still the plan
    findings = doc["findings"] + doc["to_check"]
    assert any(f["id"] == "kfd-inaccessible" and f["fix_plan"] == "driver" for f in findings), findings
    # a fix whose plan is refused here loses the plan and says why
    facts = no_kfd(fresh())
    found = diagnose(facts, "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!")
    fitted = {f.id: f for f in fitting_fix_plans(found, facts)}
    assert {f.id: f.fix_plan for f in found}["wheel-lacks-gpu-gfx"] == "pip-only"
    lacks = fitted["wheel-lacks-gpu-gfx"]
    assert lacks.fix_plan is None and "the pip-only plan does not fit this machine" in lacks.fix
    assert "run the driver plan first" in lacks.fix
    assert fitted["kfd-inaccessible"].fix_plan == "driver"


def test_wheel_preflight_accepts_a_pure_wheel_only_for_amds_builds() -> None:
    def wheel_check(rp):  # type: ignore[no-untyped-def]
        return next(a for a in rp.preflight if a.name == "wheel").argv[-1]

    amd = wheel_check(resolve("core-sdk", fresh()))
    upstream = wheel_check(resolve("pip-only", fresh()))
    assert "(@TAG@|py3-none)" in amd and "py3-none" not in upstream
    page = "torch-2.13.0%2Brocm10.0.0-py3-none-linux_x86_64.whl"
    script = ('re=$(echo "$1" | sed "s/@TAG@/cp312/g"); printf "%s\\n" "$2" | grep -qE -- "$re"')
    assert subprocess.run(["sh", "-c", script, "sh", amd, page]).returncode == 0
    assert subprocess.run(["sh", "-c", script, "sh", amd, page.replace("2.13.0", "2.12.0")]).returncode == 1


def test_driver_refuses_a_kernel_newer_than_the_release_lists() -> None:
    """The driver plan's release (10.1.0) lists the kernel series supported per distribution (ROCm/rocm-docs 9bcf25db
    docs/data/os-support.yaml, Ubuntu 24.04.5: GA 6.8, HWE 7.0; 10.0.0's release notes: GA 6.8, HWE/OEM 6.17): a
    newer distribution kernel is refused, a listed one is planned, a distribution without a list is not refused on
    that ground."""
    facts = no_kfd(fresh())
    assert facts.os.id == "ubuntu" and facts.os.version == "24.04"
    newer = record.replace(facts, os=record.replace(facts.os, kernel="7.2.0-10-generic"))
    with pytest.raises(PlanRefused) as exc:
        resolve("driver", newer)
    assert any("7.2.0-10-generic" in r and "newer than" in r and "6.8, 7.0" in r for r in exc.value.reasons), \
        exc.value.reasons
    for listed in ("7.0.0-14-generic", "6.17.0-14-generic", "6.8.0-90-generic"):
        ok = record.replace(facts, os=record.replace(facts.os, kernel=listed))
        assert [a for a in actions(resolve("driver", ok), "kernel_driver")], listed
    from steps.kernel_driver import kernel_too_new

    rel = load_kb().release("10.0.0")
    assert rel is not None and kernel_too_new(rel, newer) is not None
    assert kernel_too_new(rel, record.replace(facts, os=record.replace(facts.os, kernel="6.20.0-10-generic")))
    assert kernel_too_new(record.replace(rel, kernel_series={}), newer) is None  # no list: not refused on that ground


# --- 7.14.1 and 10.1.0 from AMD's own install page sources ------------------------------------------


def test_7141_is_planned_when_named(tmp_path: Path) -> None:
    """7.14.1's routes, packages and amdgpu-install file are the ones AMD's 7.14.1 install page source prints
    (ROCm/rocm-docs 50600d8d, docs/install/include/200-install.rst): a plan naming it installs from them."""
    rel = load_kb().release("7.14.1")
    assert rel is not None and rel.remove_first == "<=7.2.4"  # "If you have ROCm 7.2.4 or older installed, ..."
    rp = resolve(plan_copy(tmp_path, "core-sdk", {'rocm = "newest"': 'rocm = "7.14.1"'}), fresh())
    assert dict(rp.target)["rocm"] == "7.14.1"
    argvs = [a.argv for a in actions(rp, "core_sdk_install")]
    assert ("wget", "-q", "-O", f"{STATE_DIR}/downloads/amdrocm-7.14.1.key",
            "https://repo.amd.com/rocm/packages-multi-arch/gpg/rocm.gpg") in argvs
    source = next(a for a in argvs if "/etc/apt/sources.list.d/amdrocm.list" in a)
    assert "https://repo.amd.com/rocm/packages-multi-arch/ubuntu2404 stable main" in source[-1]
    assert ("apt-get", "install", "-y", "amdrocm7.14-gfx1201") in argvs
    pin = next(a for a in actions(rp, "pip_pin") if "--index-url" in a.argv).argv
    assert pin[pin.index("--index-url") + 1] == "https://repo.amd.com/rocm/whl-multi-arch/"
    assert "rocm[libraries,device-gfx1201]==7.14.1" in pin
    driver = resolve(plan_copy(tmp_path, "driver", {'rocm = "newest"': 'rocm = "7.14.1"'}), no_kfd(fresh()))
    url = "https://repo.radeon.com/amdgpu-install/31.40.1/ubuntu/noble/amdgpu-install_31.40.1.314001-1_all.deb"
    assert any(url in a for a in (a.argv for a in actions(driver, "kernel_driver")))


def test_1010_core_sdk_install_is_planned_when_named_on_rhel(tmp_path: Path) -> None:
    """10.1.0 named on RHEL 9.6: AMD's 10.1.0 RPM repository and per-gfx package; its pip requirement is the
    page's; without AMD's torch build for 10.1.0 in the knowledge base the torch half is refused, named."""
    facts = fresh()
    rhel = record.replace(facts, os=record.replace(facts.os, id="rhel", version="9.6", codename=None, like=("fedora",),
                                                   pretty_name="Red Hat Enterprise Linux 9.6",
                                                   package_manager="dnf"))
    kb = load_kb()
    rel = kb.release("10.1.0")
    assert rel is not None and rel.routes is not None and rel.routes.rpm is not None
    assert rel.routes.rpm.repos["rhel9"] == "https://stable.repo.amd.com/rocm/core/packages/rhel9/x86_64"
    assert rel.routes.pip_requirement == "rocm[libraries,device-{gfx}]==10.1.0"
    from steps.core_sdk_install import release_facts

    assert release_facts(rel, rhel) == []  # every install fact is there
    with pytest.raises(PlanRefused) as exc:
        resolve(plan_copy(tmp_path, "core-sdk", {'rocm = "newest"': 'rocm = "10.1.0"'}), rhel)
    assert any("no AMD torch build for ROCm Core SDK 10.1.0" in r for r in exc.value.reasons), exc.value.reasons
    assert not any("routes" in r or "10.1.0 is not in" in r for r in exc.value.reasons), exc.value.reasons
