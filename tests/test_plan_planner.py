"""The planner against the knowledge base: the notes' machines, refusals, overrides, recommendation."""

from __future__ import annotations

import pytest

from test_plan_golden import STATE_DIR, built_machines, machines
from wizard import record
from wizard.kb import load_kb
from wizard.model import Driver, Facts, Gpu, OsInfo, PythonEnv
from wizard.plan_file import builtin_plan_names
from wizard.planner import PlanRefused, recommend, resolve_plan

pytestmark = pytest.mark.unit

UPSTREAM_WHEEL_PLANS = ("downgrade-6.2", "upgrade-6.4", "upgrade-7.2", "pip-only")


def resolve(plan: str, facts: Facts, **kw):
    return resolve_plan(plan, facts, state_dir=STATE_DIR, wizard_python="python3", **kw)


def all_resolved():
    for mname, facts in machines().items():
        for plan in builtin_plan_names():
            try:
                yield mname, plan, resolve(plan, facts)
            except PlanRefused:
                continue


def test_seed_7900xt_downgrade_backs_up_purges_installs_pins_verifies() -> None:
    rp = resolve("downgrade-6.2", machines()["seed-7900xt"])
    kinds = [s.kind for s in rp.steps if s.actions]
    assert kinds == ["preflight", "backup", "purge", "rocm_install", "pip_pin", "env", "verify"]
    argvs = [a.argv for s in rp.steps for a in s.actions]
    url = "https://repo.radeon.com/amdgpu-install/6.2.4/ubuntu/jammy/amdgpu-install_6.2.60204-1_all.deb"
    assert any(url in a for a in argvs)
    install = next(a for a in argvs if "install" in a and "--index-url" in a)
    assert install[install.index("--index-url") + 1] == "https://download.pytorch.org/whl/rocm6.2"
    assert {"torch==2.5.1", "torchvision==0.20.1", "torchaudio==2.5.1"} <= set(install)
    assert install[0] == "/home/user/pytorch_venv-downgrade-6.2/bin/python"  # new, beside the old one
    verify = rp.steps[-1].actions[0].argv
    assert verify[1:] == ("-m", "wizard", "verify", "--python", "/home/user/pytorch_venv-downgrade-6.2/bin/python", "--json")
    purge = next(s for s in rp.steps if s.kind == "purge")
    assert any(a.argv[:3] == ("apt-get", "-s", "purge") for a in purge.actions)
    assert dict(rp.target)["rocm"] == "6.2.4"


def test_seed_5600xt_every_upstream_wheel_plan_refused_and_therock_pip_warns() -> None:
    # gfx1010: no upstream wheel, so every upstream plan is refused and each refusal says why; AMD documents
    # no device-gfx1010 extra either, but TheRock's publishing manifest puts its device packages on the stable
    # whl-next stream (audit 2026-11b T2), so therock-pip takes them and says they are undocumented
    facts = machines()["seed-5600xt"]
    for plan in UPSTREAM_WHEEL_PLANS:
        with pytest.raises(PlanRefused) as exc:
            resolve(plan, facts)
        text = "\n".join(exc.value.reasons)
        assert "gfx1010" in text and "therock-pip" in text and "nightly" not in text, (plan, text)  # the way forward
    rp = resolve("therock-pip", facts)
    assert dict(rp.target)["index"] == "amd-whl-next"
    notes = [n for s in rp.steps for n in s.notes]
    assert any("device-gfx1010 is published, not in AMD's documented list" in n for n in notes)


def test_every_emitted_wheel_combination_is_in_the_kb_matrix() -> None:
    kb = load_kb()
    seen = 0
    for mname, plan, rp in all_resolved():
        for s in rp.steps:
            for a in s.actions:
                if "--index-url" not in a.argv or "pip" not in a.argv:
                    continue
                url = a.argv[a.argv.index("--index-url") + 1]
                pins = {k.split("[")[0]: v for k, v in (x.split("==", 1) for x in a.argv if "==" in x)}
                amd = kb.wheel_index(url)
                if amd is not None and amd.vendor == "amd":  # AMD's own torch: a vendor_wheels row of that index
                    rows = [v for v in kb.vendor_wheels() if v.index == amd.name and v.torch == pins["torch"]]
                    assert rows and amd.stable, (mname, plan, pins, url)
                    assert pins.get("torchvision") == rows[0].torchvision
                    assert pins.get("torchaudio") == rows[0].torchaudio
                    assert all(f"torch[device-{g}" in " ".join(a.argv) or "device-" in " ".join(a.argv)
                               for g in dict(rp.target)["gfx"].split(","))
                    continue
                index = url.rsplit("/", 1)[-1]
                row = kb.wheel(pins["torch"], index)
                assert row is not None and row.index_url == url, (mname, plan, pins, index)
                assert pins.get("torchvision") == row.torchvision
                assert pins.get("torchaudio") == row.torchaudio
                assert not (pins["torch"].startswith("2.4.") and index == "rocm6.2")
                assert not (pins["torch"].startswith(("2.6.", "2.7.")) and index == "rocm6.2")
                seen += 1
    assert seen >= 20


def test_never_a_gfx_the_wheel_lacks_without_a_kb_override() -> None:
    kb = load_kb()
    for mname, plan, rp in all_resolved():
        t = dict(rp.target)
        if "index" not in t or (kb.wheel_index(t["index"]) or kb.indexes()[0]).vendor == "amd":
            continue  # AMD's indexes: checked against their device extras in test_plan_core_sdk_driver
        row = kb.wheel(t["torch"], t["index"])
        for g in t["gfx"].split(","):
            if g not in row.gfx:
                assert t.get("HSA_OVERRIDE_GFX_VERSION") == kb.override_for(g, row) is not None, (mname, plan, g)
            else:
                assert "HSA_OVERRIDE_GFX_VERSION" not in t or any(x not in row.gfx for x in t["gfx"].split(","))


def _override_in_activate(rp) -> str | None:
    env = next((s for s in rp.steps if s.kind == "env"), None)
    return dict(env.params).get("HSA_OVERRIDE_GFX_VERSION") if env else None


def test_override_rdna2_variant_gets_10_3_0_written_into_the_venv() -> None:
    rp = resolve("pip-only", built_machines()["rdna2-gfx1031-dkms-secureboot"])
    assert _override_in_activate(rp) == "10.3.0"
    env = next(s for s in rp.steps if s.kind == "env")
    assert env.actions[0].argv[3] == "/home/user/venv-pip-only/bin/activate"
    assert "export HSA_OVERRIDE_GFX_VERSION=10.3.0" in env.actions[0].argv[4]
    assert_argv = next(a.argv for s in rp.steps for a in s.actions if a.description.startswith("assert"))
    assert assert_argv[-1] == "gfx1030"  # the override's target is what the wheel must carry


@pytest.mark.parametrize("machine", ["rx9070xt-noble-fresh", "seed-7900xt", "rdna3-gfx1102-venv"])
def test_no_override_on_native_cards_and_a_stale_one_is_unset(machine: str) -> None:
    rp = resolve("pip-only", machines()[machine])
    value = _override_in_activate(rp)
    assert value in (None, "")  # never a value on a natively supported card; "" means "unset"
    if machine == "rdna3-gfx1102-venv":  # 11.0.0 in ~/.bashrc: unset inside the venv
        env = next(s for s in rp.steps if s.kind == "env")
        assert "unset HSA_OVERRIDE_GFX_VERSION" in env.actions[0].argv[4]


def test_gfx1101_on_torch_2_5_1_uses_the_documented_override() -> None:
    facts = record.replace(built_machines()["rdna3-gfx1102-venv"], gpus=(
        Gpu(name="AMD Radeon RX 7800 XT", gfx="gfx1101", integrated=False, hip_index=0),), env=())
    rp = resolve("downgrade-6.2", facts)
    assert dict(rp.target)["HSA_OVERRIDE_GFX_VERSION"] == "11.0.0"


def test_hidden_igpu_gets_hip_visible_devices() -> None:
    rp = resolve("pip-only", machines()["strixhalo-r9700-egpu"])
    env = next(s for s in rp.steps if s.kind == "env")
    assert dict(env.params).get("HIP_VISIBLE_DEVICES") == "0"
    assert dict(rp.target)["gfx"] == "gfx1201"


def test_refusals_list_every_reason() -> None:
    facts = Facts(
        os=OsInfo(id="ubuntu", version="24.10", codename="oracular", package_manager="apt", secure_boot=True),
        gpus=(Gpu(name="AMD Radeon 860M", gfx="gfx1152", integrated=True),),
        driver=Driver(kind="dkms", kfd_present=True, user="u", in_render_group=True, in_video_group=True),
        disk_free_bytes=1 << 30, home_free_bytes=1 << 30)
    with pytest.raises(PlanRefused) as exc:
        resolve("upgrade-7.2", facts)
    text = "\n".join(exc.value.reasons)
    for needle in ("gfx1152", "only an integrated GPU", "oracular", "not enough disk"):
        assert needle in text, needle
    assert len(exc.value.reasons) >= 4


def test_secure_boot_dkms_without_mok_path_is_refused() -> None:
    rhel = built_machines()["rhel9-mi300x"]
    facts = record.replace(rhel, os=record.replace(rhel.os, secure_boot=True))
    with pytest.raises(PlanRefused) as exc:
        resolve("downgrade-6.2", facts)
    assert any("MOK" in r for r in exc.value.reasons)


def test_secure_boot_dkms_on_ubuntu_enrols_the_mok_and_reboots() -> None:
    rp = resolve("downgrade-6.2", built_machines()["rdna2-gfx1031-dkms-secureboot"])
    kinds = {s.kind: s for s in rp.steps}
    assert kinds["secure_boot"].actions and kinds["reboot"].actions and not kinds["reboot"].skipped_reason
    install = [a.argv for a in kinds["rocm_install"].actions if a.argv[0] == "amdgpu-install"][0]
    assert "--no-dkms" not in install


def test_no_reboot_when_nothing_needs_one() -> None:
    rp = resolve("downgrade-6.2", machines()["seed-7900xt"])
    reboot = next(s for s in rp.steps if s.kind == "reboot")
    assert reboot.skipped_reason and not reboot.actions


def test_cuda_venv_on_a_multi_vendor_machine_is_not_replaced() -> None:
    base = built_machines()["rx9070xt-noble-fresh"]
    facts = record.replace(base, other_gpus=("10de:2684 NVIDIA AD102",), python_envs=(
        PythonEnv(path="/home/user/cuda", python_version="3.12", torch="2.5.1+cu124", build="cuda", kind="venv"),))
    assert dict(resolve("pip-only", facts).target)["venv"] == "/home/user/cuda-pip-only"  # a new one beside it
    with pytest.raises(PlanRefused) as exc:
        resolve("pip-only", facts, venv="/home/user/cuda")
    assert any("CUDA" in r for r in exc.value.reasons)
    rp = resolve("pip-only", facts, venv="/home/user/rocm")
    assert dict(rp.target)["venv"] == "/home/user/rocm"


def test_no_amd_gpu_is_refused() -> None:
    with pytest.raises(PlanRefused) as exc:
        resolve("pip-only", Facts(driver=Driver(user="u")))
    assert any("no AMD GPU" in r for r in exc.value.reasons)


@pytest.mark.parametrize("machine", sorted(built_machines()) + ["seed-7900xt", "seed-5600xt"])
def test_recommend_marks_exactly_one(machine: str) -> None:
    choices = recommend(machines()[machine], state_dir=STATE_DIR)
    assert [c.plan.name for c in choices][:2] == ["driver", "pip-only"]
    rec = [c for c in choices if c.recommended]
    if any(c.applicable and not (c.reasons and c.reasons[0].startswith("nothing to do:")) for c in choices):
        assert len(rec) == 1 and rec[0].applicable and rec[0].reasons[0].startswith("recommended:")
    for c in choices:
        assert c.applicable or c.reasons


def test_docker_image_is_a_real_kb_tag_and_launcher_has_amd_flags() -> None:
    kb = load_kb()
    rp = resolve("docker", machines()["rx9070xt-noble-fresh"])
    tag = dict(rp.target)["image"]
    im = kb.docker_image(tag)
    assert im is not None and im.exists is True
    launcher = next(a for s in rp.steps for a in s.actions if a.description.startswith("launcher"))
    text = launcher.argv[5]
    for flag in kb.docker_run_flags():
        assert flag in text
    pull = next(a for s in rp.steps for a in s.actions if a.argv[1:2] == ("pull",))
    assert pull.root  # the user is not in the docker group


def test_kfd_missing_refuses_wheel_plans() -> None:
    base = built_machines()["rx9070xt-noble-fresh"]
    facts = record.replace(base, driver=record.replace(base.driver, kfd_present=False))
    with pytest.raises(PlanRefused) as exc:
        resolve("pip-only", facts)
    assert any("/dev/kfd" in r for r in exc.value.reasons)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from wizard.model import EnvSetting, Rocm, RocmInstall  # noqa: E402
from wizard.script import render  # noqa: E402

_gfx = st.sampled_from([None, "gfx1010", "gfx1030", "gfx1031", "gfx1033", "gfx1100", "gfx1101", "gfx1103", "gfx1151",
                        "gfx1201", "gfx906", "gfx942", "gfx9999", ""])
_facts = st.builds(
    Facts,
    os=st.builds(OsInfo, id=st.sampled_from([None, "ubuntu", "rhel", "debian", "arch", ""]),
                 version=st.sampled_from([None, "22.04", "24.04", "9.4", "12", "x"]),
                 codename=st.sampled_from([None, "jammy", "noble", "bookworm"]),
                 package_manager=st.sampled_from([None, "apt", "dnf", "pacman"]),
                 secure_boot=st.sampled_from([None, True, False])),
    gpus=st.lists(st.builds(Gpu, name=st.sampled_from([None, "X"]), gfx=_gfx,
                            integrated=st.sampled_from([None, True, False]),
                            hip_index=st.sampled_from([None, 0, 1])), max_size=3).map(tuple),
    driver=st.builds(Driver, kind=st.sampled_from([None, "dkms", "in-tree"]),
                     kfd_present=st.sampled_from([None, True, False]), user=st.sampled_from([None, "u", "root"]),
                     in_render_group=st.sampled_from([None, True, False]),
                     dkms_packages=st.sampled_from([(), ("amdgpu-dkms 1:6.8",), ("",)])),
    rocm=st.builds(Rocm, installs=st.lists(st.builds(
        RocmInstall, version=st.sampled_from([None, "6.2.0", "10.0.0"]),
        stream=st.sampled_from(["legacy", "core-sdk", "distro", "pip"]),
        path=st.sampled_from([None, "/opt/rocm-6.2.0", "/opt/rocm/core-10.0"]),
        packages=st.lists(st.sampled_from(["rocm-core", "amdgpu-install", "bad name*", "rocminfo"]),
                          max_size=3).map(tuple)), max_size=2).map(tuple)),
    python_envs=st.lists(st.builds(
        PythonEnv, path=st.sampled_from([None, "/home/u/v", "/opt/venv", "relative"]),
        python_version=st.sampled_from([None, "3.8", "3.12", "3.15"]),
        torch=st.sampled_from([None, "2.5.1+rocm6.2", "2.5.1+cu124", "garbage"]),
        build=st.sampled_from([None, "rocm", "cuda"]), kind=st.sampled_from([None, "venv", "system", "conda"]),
        rocm_sdk_targets=st.sampled_from([(), ("gfx1100",)])), max_size=2).map(tuple),
    env=st.lists(st.builds(EnvSetting, name=st.sampled_from(["HSA_OVERRIDE_GFX_VERSION", "ROCM_PATH"]),
                           value=st.sampled_from(["", "10.3.0", "x"]), where=st.just("environment")),
                 max_size=2).map(tuple),
    other_gpus=st.sampled_from([(), ("10de:2684 NVIDIA",)]),
    disk_free_bytes=st.sampled_from([None, 0, 1 << 40]),
)


@settings(max_examples=150, deadline=None)
@given(facts=_facts, plan=st.sampled_from(builtin_plan_names()))
def test_fuzzed_facts_resolve_or_refuse_never_crash(facts: Facts, plan: str) -> None:
    try:
        rp = resolve(plan, facts)
    except PlanRefused as exc:
        assert exc.reasons and all(r and "\n" not in r for r in exc.reasons)
    else:
        assert render(rp, facts).startswith("#!/usr/bin/env bash")


def test_default_venv_is_new_beside_the_old_one_which_stays_untouched() -> None:
    rp = resolve("pip-only", machines()["seed-7900xt"])
    assert dict(rp.target)["venv"] == "/home/user/pytorch_venv-pip-only"
    pin = next(s for s in rp.steps if s.kind == "pip_pin")
    assert any("/home/user/pytorch_venv stays as it is" in n for n in pin.notes)
    touched = [a for s in rp.steps for a in s.actions if any(c == "venv:/home/user/pytorch_venv" for c in a.changes)]
    assert touched == []
    # an earlier run's venv beside it is reused, not nested
    facts = record.replace(machines()["seed-7900xt"], python_envs=(
        *machines()["seed-7900xt"].python_envs,
        PythonEnv(path="/home/user/pytorch_venv-pip-only", python_version="3.10", torch="2.11.0+rocm7.2",
                  build="rocm", kind="venv"),))
    assert dict(resolve("pip-only", facts).target)["venv"] == "/home/user/pytorch_venv-pip-only"


def test_unknown_home_targets_the_documented_default_in_the_script() -> None:
    facts = record.replace(machines()["seed-7900xt"], python_envs=(), driver=Driver())
    rp = resolve("pip-only", facts)
    assert dict(rp.target)["venv"] == "~/rocm-wizard-venv"
    from wizard.script import render

    text = render(rp, facts)
    assert "python3 -m venv ~/rocm-wizard-venv" in text
    assert "'~" not in text  # never a quoted literal ~ path
