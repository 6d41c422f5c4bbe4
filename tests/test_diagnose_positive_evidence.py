"""A finding is a cause only on positive evidence (issue 21): a failure line that shows a symptom is not evidence
of a cause that the recording cannot show (which ROCm/Ubuntu pair a WSL machine runs, whether the installed stack
supports the GPU natively), and an override within one LLVM generic target is not another instruction set."""

from __future__ import annotations

import pytest

from wizard.diagnose import NOT_KNOWN, diagnose
from wizard.kb import load_kb
from wizard.kb.families import generic_target, one_generic_target
from wizard.model import Driver, EnvSetting, EvidenceText, Facts, Gpu, PythonEnv, Rocm

pytestmark = pytest.mark.unit

_FAULT = "Memory access fault by GPU node-1 (Agent handle: 0x1) on address 0x7f76. Reason: Page not present or " \
         "supervisor privilege."
_WSL_OOR = ("WSL environment detected.\nhsa api call failure at: ./rocminfo.cc:1324\n"
            "Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources.")


def _gpu(gfx: str, family: str, integrated: bool = False) -> Gpu:
    return Gpu(name=f"AMD {gfx}", gfx=gfx, gfx_reported=gfx, integrated=integrated, family=family, hip_index=0)


def _facts(gpu: Gpu, text: str, override: str | None = None, **kw: object) -> Facts:
    env = (EnvSetting("HSA_OVERRIDE_GFX_VERSION", override, "paste.txt:3"),) if override else ()
    return Facts(gpus=(gpu,), env=env, origin="test", texts=(EvidenceText("paste.txt", text, 1, "text", True),),
                 **kw)  # type: ignore[arg-type]


def _by_id(facts: Facts) -> dict[str, object]:
    return {f.id: f for f in diagnose(facts)}


def test_generic_targets_follow_llvm_table() -> None:
    assert generic_target("gfx1151") == "gfx11-generic" == generic_target("gfx1100")
    assert generic_target("gfx90a:sramecc+:xnack-") is None and generic_target("gfx950") == "gfx9-4-generic"
    assert one_generic_target("gfx1151", "gfx1100") and one_generic_target("gfx1032", "gfx1030")
    assert not one_generic_target("gfx1010", "gfx1030") and not one_generic_target("gfx90a", "gfx1030")
    assert not one_generic_target("gfx803", "gfx803")  # no generic target covers it: nothing is known in common


def test_an_override_within_one_generic_target_is_not_a_family_mismatch() -> None:
    # RDNA3.5 under 11.0.0: another product family, the same GFX11 instruction set (LLVM's gfx11-generic)
    strix = _by_id(_facts(_gpu("gfx1151", "RDNA3.5", integrated=True), _FAULT, "11.0.0"))
    assert "override-family-mismatch" not in strix
    # another instruction set is still a mismatch the facts show
    for gfx, family, value in (("gfx1010", "RDNA1", "10.3.0"), ("gfx90a", "CDNA2", "10.3.0"),
                               ("gfx1100", "RDNA3", "10.3.0")):
        f = _by_id(_facts(_gpu(gfx, family), _FAULT, value))["override-family-mismatch"]
        assert getattr(f, "to_check") is None, gfx


def test_an_override_on_a_gpu_is_leftover_only_where_the_installed_stack_supports_it() -> None:
    gpu = _gpu("gfx1151", "RDNA3.5", integrated=True)
    # nothing shows what is installed: that some ROCm release supports gfx1151 says nothing about this machine
    unknown = _by_id(_facts(gpu, _FAULT, "11.0.0"))["override-on-supported-gpu"]
    assert getattr(unknown, "to_check") and "not known from the evidence" in getattr(unknown, "to_check")
    # the installed release does not list the GPU: the override is the usual workaround, not a leftover
    old = next(r.version for r in load_kb().releases() if r.gfx is not None and "gfx1151" not in r.gfx.official)
    assert "override-on-supported-gpu" not in _by_id(_facts(gpu, _FAULT, "11.0.0", rocm=Rocm(version=old)))
    # the installed release lists it, or the installed torch carries its code: a cause, with that evidence
    new = next(r.version for r in load_kb().releases() if r.gfx is not None and "gfx1151" in r.gfx.official)
    cause = _by_id(_facts(gpu, _FAULT, "11.0.0", rocm=Rocm(version=new)))["override-on-supported-gpu"]
    assert getattr(cause, "to_check") is None and any(f"system ROCm {new} supports gfx1151" in e
                                                      for e in getattr(cause, "evidence"))
    env = PythonEnv(path="/v", torch="2.9.0+rocm7.0", build="rocm", gfx_targets=("gfx1100", "gfx1151"))
    carried = _by_id(_facts(gpu, _FAULT, "11.0.0", python_envs=(env,)))["override-on-supported-gpu"]
    assert getattr(carried, "to_check") is None
    # no override in the evidence at all: the finding has nothing to stand on
    assert "override-on-supported-gpu" not in _by_id(_facts(gpu, _FAULT))


def test_a_symptom_line_is_not_evidence_of_an_unsupported_wsl_pair() -> None:
    wsl = _gpu("gfx1200", "RDNA4")
    symptom = _by_id(_facts(wsl, _WSL_OOR, os=_wsl_os()))["wsl-rocm-release-unsupported"]
    assert getattr(symptom, "to_check") and "several possible causes" in getattr(symptom, "to_check")
    # the repository lacking the WSL runtime for this release is the pair's own evidence
    missing = _by_id(_facts(wsl, "E: Unable to locate package hsa-runtime-rocr4wsl-amdgpu", os=_wsl_os()))
    assert getattr(missing["wsl-rocm-release-unsupported"], "to_check") is None


def _wsl_os() -> object:
    from wizard.model import OsInfo

    return OsInfo(id="ubuntu", version="24.04", wsl=True)


def test_a_container_without_kfd_is_not_told_to_load_the_driver() -> None:
    text = "ROCk module is loaded\nUnable to open /dev/kfd read-write: No such file or directory"
    driver = Driver(loaded=True, kfd_present=False, user="rocm-user", in_render_group=False, in_video_group=True)
    facts = _facts(_gpu("gfx1030", "RDNA2"), text, driver=driver, in_container=True)
    f = _by_id(facts)["kfd-inaccessible"]
    assert "load the amdgpu driver" not in getattr(f, "fix") and getattr(f, "fix_plan") != "driver"
    assert "--device=/dev/kfd" in getattr(f, "fix")
    assert any("inside a container: it was not passed in" in e for e in getattr(f, "evidence"))
    host = _facts(_gpu("gfx1030", "RDNA2"), text, driver=Driver(loaded=False, kfd_present=False), in_container=False)
    host_fix = getattr(_by_id(host)["kfd-inaccessible"], "fix")
    assert "/dev/kfd is missing" in host_fix and "load it (or install it with the driver plan)" in host_fix


_IDF = "RuntimeError: HIP error: invalid device function"


def _env_read(text: str) -> tuple[EvidenceText, ...]:
    """The machine's failure text and an env.txt read of its environment (HSA_OVERRIDE_GFX_VERSION not in it)."""
    return (EvidenceText("paste.txt", text, 1, "text", True), EvidenceText("env.txt", "ROCM_PATH=/opt/rocm\n", 1,
                                                                              "env.txt", True))


def test_a_wheel_not_seen_is_not_a_wheel_lacking_the_gpu() -> None:
    # "invalid device function" on a Strix Halo whose torch the text never names: which targets the wheel carries
    # is the cause itself, and nothing shows it
    gpu = _gpu("gfx1151", "RDNA3.5", integrated=True)
    unseen = _by_id(_facts(gpu, _IDF))
    for issue in ("gfx1151-old-wheel", "wheel-lacks-gpu-gfx"):
        why = getattr(unseen[issue], "to_check")
        assert why and "the installed torch lacks the GPU's target" in why and NOT_KNOWN in why, issue
    # the torch read, its gfx list without gfx1151: a cause, with that evidence
    env = PythonEnv(path="/v", torch="2.5.1+rocm6.2", build="rocm", gfx_targets=("gfx1100", "gfx1030"))
    seen = _by_id(_facts(gpu, _IDF, python_envs=(env,)))
    for issue in ("gfx1151-old-wheel", "wheel-lacks-gpu-gfx"):
        assert getattr(seen[issue], "to_check") is None, issue
        assert any("needs gfx1151" in e for e in getattr(seen[issue], "evidence")), issue


def test_an_override_not_seen_is_not_an_override_missing() -> None:
    # an RX 6700 XT's failure in a paste that does not show the environment: whether the override is set is unknown
    gpu = _gpu("gfx1031", "RDNA2")
    unseen = getattr(_by_id(_facts(gpu, _IDF))["rdna2-variant-needs-override"], "to_check")
    assert unseen and "HSA_OVERRIDE_GFX_VERSION is set" in unseen and NOT_KNOWN in unseen
    # the environment was read and has no override: the cause, with that evidence
    read = Facts(gpus=(gpu,), origin="test", texts=_env_read(_IDF))
    found = _by_id(read)["rdna2-variant-needs-override"]
    assert getattr(found, "to_check") is None
    assert "HSA_OVERRIDE_GFX_VERSION is not set" in getattr(found, "evidence")


def test_an_rdna1_override_naming_its_own_target_is_not_a_spoof() -> None:
    gpu = _gpu("gfx1010", "RDNA1")
    # 10.1.0 is gfx1010's own target: no other code runs, nothing to break
    assert "rdna1-override-breaks" not in _by_id(_facts(gpu, "python mnist.py\nTest set: Accuracy: 98%", "10.1.0"))
    assert "rdna1-override-breaks" not in _by_id(_facts(gpu, _FAULT, "10.1.0"))
    # 10.3.0 runs gfx1030 code on RDNA1: the cause, predicted from the facts alone and on the fault
    for text in ("python mnist.py", _FAULT):
        f = _by_id(_facts(gpu, text, "10.3.0"))["rdna1-override-breaks"]
        assert getattr(f, "to_check") is None
        assert any("runs gfx1030 code" in e for e in getattr(f, "evidence"))
    # the fault with the environment unseen: to check, not a cause
    unseen = getattr(_by_id(_facts(gpu, _FAULT))["rdna1-override-breaks"], "to_check")
    assert unseen and NOT_KNOWN in unseen


_ROCR_UNSUPPORTED = ("ROCR: unsupported GPU\nhsa api call failure at: ./sources/wsl/tools/rocminfo/rocminfo.cc:1087\n"
                     "Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary "
                     "resources.")


def test_the_wsl_runtime_saying_unsupported_gpu_is_the_cause_whatever_the_gpu_list_says() -> None:
    # an RDNA3 card that today's WSL list names, refused by the WSL runtime of the release installed
    rdna3 = _gpu("gfx1101", "RDNA3")
    f = _by_id(_facts(rdna3, _ROCR_UNSUPPORTED, os=_wsl_os()))["wsl-gpu-not-supported"]
    assert getattr(f, "to_check") is None
    assert getattr(f, "matched_text") == "ROCR: unsupported GPU"
    assert any("the software's own words decide it" in e for e in getattr(f, "evidence"))
    # an ordinary signature still needs the GPU list: "No HIP GPUs" on a listed card has other causes
    assert "wsl-gpu-not-supported" not in _by_id(_facts(rdna3, "RuntimeError: No HIP GPUs are available",
                                                        os=_wsl_os()))
    # the words name WSL's runtime: off WSL the condition that is not about the GPU still decides
    from wizard.model import OsInfo

    assert "wsl-gpu-not-supported" not in _by_id(_facts(rdna3, _ROCR_UNSUPPORTED, os=OsInfo(id="ubuntu", wsl=False)))


def test_an_evidence_line_another_one_repeats_and_extends_is_said_once() -> None:
    from wizard.diagnose import _said_once

    gpu = "GPU 0 AMD Radeon RX 5700 XT (gfx1010)"
    assert _said_once([gpu, gpu, f"{gpu} runs gfx1030 code under HSA_OVERRIDE_GFX_VERSION=10.3.0 (~/.bashrc:2)"]) == (
        f"{gpu} runs gfx1030 code under HSA_OVERRIDE_GFX_VERSION=10.3.0 (~/.bashrc:2)",)
    assert _said_once(["GPU 0 a", "GPU 0 ab"]) == ("GPU 0 a", "GPU 0 ab")  # a longer word is another line


def test_an_error_text_without_the_machines_facts_states_no_gpu_specific_cause() -> None:
    # a failed step's output or a verify check's error, diagnosed with no facts: an issue that holds only for some GPUs
    # (its `when` conditions) is "to check", listed after the causes the text itself shows; the run log keeps the causes
    from wizard.diagnose import SYMPTOM, diagnose_error_text
    from wizard.runner.engine import default_diagnose

    seg = "Error: llama runner process has terminated: signal: segmentation fault (core dumped)"
    assert all(f.to_check for f in diagnose_error_text(seg)) and default_diagnose(seg) == []
    nobin = "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"
    found = {f.id: f for f in diagnose_error_text(nobin)}
    # the failure shown is a symptom (several causes); the run log still names it with its fix's ways
    assert found["no-binary-for-gpu"].to_check == SYMPTOM
    assert {"gfx803-dropped", "vega-igpu-unsupported"} <= {i for i, f in found.items() if f.to_check != SYMPTOM}
    assert [f.id for f in default_diagnose(nobin)] == ["no-binary-for-gpu"]


# --- a failure line whose causes are the fix's branches: a cause only where the facts establish a branch

_DENIED = "Unable to open /dev/kfd read-write: Permission denied"


def test_kfd_denied_alone_is_to_check_until_the_facts_say_why() -> None:
    from wizard.diagnose import UNDECIDED_BRANCH

    gpu = _gpu("gfx1100", "RDNA3")
    # the line shows the failure; nothing shows whether groups, a container or a sandbox is why
    alone = _by_id(_facts(gpu, _DENIED, driver=Driver(kfd_present=True, kfd_accessible=False)))["kfd-inaccessible"]
    assert getattr(alone, "to_check") == UNDECIDED_BRANCH
    # the user is shown to be outside render and video on the host: the group branch is the cause
    groups = Driver(kfd_present=True, kfd_accessible=False, user="ann", in_render_group=False,
                    in_video_group=False, groups=("ann", "sudo"))
    cause = _by_id(_facts(gpu, _DENIED, driver=groups, in_container=False))["kfd-inaccessible"]
    assert getattr(cause, "to_check") is None and "add the user to the render and video groups" in getattr(cause, "fix")
    # a member of render still refused: no branch is established, the finding stays to check (and no group advice)
    member = Driver(kfd_present=True, kfd_accessible=False, user="ann", in_render_group=True, in_video_group=True)
    still = _by_id(_facts(gpu, _DENIED, driver=member, in_container=False))["kfd-inaccessible"]
    assert getattr(still, "to_check") == UNDECIDED_BRANCH and "usermod" not in " ".join(getattr(still, "fix_commands"))
    # inside a container, or a Flatpak app given its override: that is why
    # inside a container: /dev/kfd not passed in, or passed in to a user shown outside its group, is why; passed in
    # with nothing read about the user's groups, which of them holds is to check (its advice still shown)
    missing = Driver(kfd_present=False, kfd_accessible=False)
    not_passed = _by_id(_facts(gpu, _DENIED, driver=missing, in_container=True))["kfd-inaccessible"]
    assert getattr(not_passed, "to_check") is None
    outside = Driver(kfd_present=True, kfd_accessible=False, user="ann", in_render_group=False, in_video_group=False)
    boxed = _by_id(_facts(gpu, _DENIED, driver=outside, in_container=True))["kfd-inaccessible"]
    assert getattr(boxed, "to_check") is None and "--group-add video --group-add render" in getattr(boxed, "fix")
    unread = _by_id(_facts(gpu, _DENIED, driver=Driver(kfd_present=True, kfd_accessible=False), in_container=True))
    assert getattr(unread["kfd-inaccessible"], "to_check") == UNDECIDED_BRANCH
    assert "--group-add" in getattr(unread["kfd-inaccessible"], "fix")
    flatpak = _by_id(_facts(gpu, "$ flatpak run com.jeffser.Alpaca\n" + _DENIED))["kfd-inaccessible"]
    assert getattr(flatpak, "to_check") is None and "Flatpak sandbox" in getattr(flatpak, "fix")
    narrow = _by_id(_facts(gpu, "flatpak override --user --device=dri com.jeffser.Alpaca\n" + _DENIED))
    assert getattr(narrow["kfd-inaccessible"], "to_check") is None
    # the override the fix gives, already made and still refused: the sandbox is not shown to be why
    tried = _by_id(_facts(gpu, "flatpak override --user --device=all com.jeffser.Alpaca\nstill:\n" + _DENIED))
    assert getattr(tried["kfd-inaccessible"], "to_check") == UNDECIDED_BRANCH
    worked = _by_id(_facts(gpu, _DENIED + "\nflatpak override --user --device=all com.jeffser.Alpaca\nthat worked"))
    assert getattr(worked["kfd-inaccessible"], "to_check") is None
    # `flatpak run` beside the --device=all override already made and still refused: not the sandbox either
    ran = _by_id(_facts(gpu, "$ flatpak run com.jeffser.Alpaca\nflatpak override --user --device=all "
                        "com.jeffser.Alpaca\nstill the same:\n" + _DENIED))["kfd-inaccessible"]
    assert getattr(ran, "to_check") == UNDECIDED_BRANCH
    # the device node itself is root's only
    node = _by_id(_facts(gpu, "$ ls -l /dev/kfd\ncrw------- 1 root root 238, 0 Mar  2 10:01 /dev/kfd\n" + _DENIED))
    node_finding = node["kfd-inaccessible"]
    assert getattr(node_finding, "to_check") is None and "udev rule" in getattr(node_finding, "fix")
    root_group = _by_id(_facts(gpu, "crw-rw---- 1 root root 238, 0 Mar  2 10:01 /dev/kfd\n" + _DENIED))
    assert getattr(root_group["kfd-inaccessible"], "to_check") is None  # only root's group may open it
    assert "udev rule" in getattr(root_group["kfd-inaccessible"], "fix")
    group_owned = _by_id(_facts(gpu, "crw-rw---- 1 root render 238, 0 Mar  2 10:01 /dev/kfd\n" + _DENIED))
    assert getattr(group_owned["kfd-inaccessible"], "to_check") == UNDECIDED_BRANCH
    # a bare host without /dev/kfd whose driver is not loaded: the driver branch
    host = _by_id(_facts(gpu, "Unable to open /dev/kfd read-write: No such file or directory",
                         driver=Driver(loaded=False, kfd_present=False), in_container=False))["kfd-inaccessible"]
    assert getattr(host, "to_check") is None and getattr(host, "fix_plan") == "driver"


def test_invalid_isa_alone_is_a_symptom_to_check() -> None:
    line = ("Callback: Queue 0x7f aborting with error : HSA_STATUS_ERROR_INVALID_ISA: The instruction set "
            "architecture is invalid. code: 0x100f")
    f = _by_id(_facts(_gpu("gfx90a", "CDNA2"), line))["invalid-isa"]
    assert getattr(f, "to_check") and "several possible causes" in getattr(f, "to_check")
    # MIOpen's Winograd workaround is the RDNA3 APUs' case: not offered to an Instinct card
    assert "MIOPEN_DEBUG_AMD_WINOGRAD_FURY_RXS_F2X3" not in dict(getattr(f, "fix_env"))
    apu = _by_id(_facts(_gpu("gfx1103", "RDNA3", integrated=True), line))["invalid-isa"]
    assert dict(getattr(apu, "fix_env")).get("MIOPEN_DEBUG_AMD_WINOGRAD_FURY_RXS_F2X3") == "0"
    # an override making the GPU run another instruction set is the cause the facts show
    spoofed = _by_id(_facts(_gpu("gfx1102", "RDNA3"), line, "10.3.0"))
    assert any(getattr(x, "to_check") is None for k, x in spoofed.items() if k.startswith("override"))


def test_a_dkms_build_failure_line_alone_does_not_say_the_kernel_is_too_new() -> None:
    line = "Error! Bad return status for module build on kernel: 6.8.0-45-generic (x86_64)\n" \
           "Consult /var/lib/dkms/amdgpu/6.8.5-2009582.24.04/build/make.log for more information."
    f = _by_id(_facts(_gpu("gfx1100", "RDNA3"), line))["dkms-build-fails-new-kernel"]
    assert getattr(f, "to_check") and "several possible causes" in getattr(f, "to_check")
    # the thread's own words that the module does not build on that kernel are the cause stated
    said = _by_id(_facts(_gpu("gfx1100", "RDNA3"), line + "\namdgpu-dkms does not build on kernel 6.11, "
                         "I had to boot 6.8"))["dkms-build-fails-new-kernel"]
    assert getattr(said, "to_check") is None


def test_a_dkms_build_failure_on_a_kernel_newer_than_the_release_documents_is_the_cause() -> None:
    from wizard.kb import load_kb
    from wizard.model import OsInfo

    # the release's documented kernels for this distribution, else the newest it documents for any
    r610, r1000 = load_kb().release("6.1.0"), load_kb().release("10.0.0")
    assert r610 is not None and r1000 is not None
    assert r610.newest_documented_kernel("ubuntu", "22.04") == "6.5" == r610.newest_documented_kernel("ubuntu", None)
    assert r1000.newest_documented_kernel("ubuntu", "24.04") == "6.17"
    assert r1000.newest_documented_kernel("arch", None) == "7.0"  # not listed: the newest it documents at all
    r630 = load_kb().release("6.3.0")
    assert r630 is not None and r630.newest_documented_kernel("ubuntu", "24.04") is None  # none recorded
    line = "Error! Bad return status for module build on kernel: 6.8.0-11-generic (x86_64)\n" \
           "Consult /var/lib/dkms/amdgpu/6.3.6-1697589.22.04/build/make.log for more information."

    def finding(kernel: str, rocm: str | None, text: str = line) -> object:
        facts = _facts(_gpu("gfx1100", "RDNA3"), text, os=OsInfo(id="ubuntu", kernel=kernel),
                       rocm=Rocm(version=rocm))
        return _by_id(facts)["dkms-build-fails-new-kernel"]

    newer = finding("6.8.0-11-generic", "6.0.0")  # ROCm 6.0.0 documents kernels up to 6.6
    assert getattr(newer, "to_check") is None and "newer than every kernel" in getattr(newer, "fix")
    assert any("newer than every kernel ROCm 6.0.0 documents" in e for e in getattr(newer, "evidence"))
    for kernel, rocm in (("6.8.0-45-generic", "6.2.0"),  # 6.2.0 documents 6.8: the build failed for another reason
                         ("6.8.0-45-generic", "6.3.0"),  # no kernel list recorded for 6.3.0
                         ("6.8.0-45-generic", None)):  # the release not read
        f = finding(kernel, rocm)
        assert getattr(f, "to_check") and "newer than every kernel" not in getattr(f, "fix"), (kernel, rocm)
    # the build that failed names its kernel: after an upgrade the new one, not the running one
    upgraded = line.replace("6.8.0-11-generic", "6.11.0-19-generic")
    assert getattr(finding("6.8.0-45-generic", "6.2.0", upgraded), "to_check") is None
    assert getattr(finding("6.11.0-19-generic", "6.2.0", line.replace("6.8.0-11", "6.8.0-45")), "to_check")
    # the release DKMS builds is the installed amdgpu-dkms package's (its build code), not the user-space ROCm's
    def dkms_finding(package: str, rocm: str) -> object:
        facts = _facts(_gpu("gfx1100", "RDNA3"), line, os=OsInfo(id="ubuntu", kernel="6.8.0-11-generic"),
                       rocm=Rocm(version=rocm), driver=Driver(kind="dkms", dkms_packages=(package,)))
        return _by_id(facts)["dkms-build-fails-new-kernel"]

    old_driver = dkms_finding("amdgpu-dkms 1:6.3.6.60000-1697589.22.04", "6.2.0")
    assert getattr(old_driver, "to_check") is None
    assert any("newer than every kernel ROCm 6.0.0 documents" in e for e in getattr(old_driver, "evidence"))
    assert getattr(dkms_finding("amdgpu-dkms 1:6.8.5.60200-2009582.22.04", "6.0.0"), "to_check")
    # a build code of a release the knowledge base does not hold: the user-space release still decides
    assert getattr(dkms_finding("amdgpu-dkms 1:6.3.6.59900-1.22.04", "6.0.0"), "to_check") is None
    # DKMS says the same of any module: another module's failed build (or one the text does not name) is not amdgpu's
    other = line.replace("/dkms/amdgpu/6.3.6-1697589.22.04/", "/dkms/nvidia/550.120/")
    for text in (other, line.splitlines()[0]):
        assert getattr(finding("6.8.0-11-generic", "6.0.0", text), "to_check"), text


def test_the_documented_kernel_series_are_the_numbered_kernel_lines() -> None:
    import re

    from wizard.kb import load_kb

    # "Ryzen APUs need the OEM kernel 6.14 or newer", "the inbox kernel driver of Ubuntu 26.04": a minimum and a
    # distribution's version, neither a kernel the release documents; a numbered line "ubuntu 22.04.4/22.04.3: 5.15 GA,
    # 6.5/6.2 HWE" gives its series to its distribution's version
    one = r"\d+\.\d+(?:/\d+\.\d+)*(?:\s+(?:GA|HWE))?"
    numbered = re.compile(rf"^\s*{one}(?:\s*,\s*{one})*\s*$")
    checked = 0
    for r in load_kb().releases():
        for line in r.kernels or ():
            head, _, kernels = line.partition(":")
            os_id, versions = head.split(" ", 1)
            for v in versions.split("/"):
                key = f"{os_id} {'.'.join(v.split('.')[:2])}"
                if numbered.match(kernels):
                    listed = set(r.kernel_series.get(key, ()))
                    assert set(re.findall(r"\b\d+\.\d+\b", kernels)) <= listed, (r.version, line)
                    checked += 1
                else:
                    assert not any(s in r.kernel_series.get(key, ()) for s in re.findall(r"\b\d+\.\d+\b", kernels)
                                   if s.startswith(("2", "3"))), (r.version, line)  # no "26.04" read as a kernel
    assert checked >= 20
    worded = [r for r in load_kb().releases() if r.version.startswith("7.14")]
    assert worded and all(r.newest_documented_kernel("ubuntu", "24.04") is None for r in worded)


def test_a_missing_kfd_where_nothing_says_whether_a_container_is_used_is_to_check() -> None:
    from wizard.diagnose import UNDECIDED_BRANCH

    gpu, missing = _gpu("gfx1100", "RDNA3"), "ls: cannot access '/dev/kfd': No such file or directory"
    # inside a container without --device=/dev/kfd the node is missing too: the host's driver is not established
    unknown = _by_id(_facts(gpu, missing, driver=Driver(kfd_present=False)))["kfd-inaccessible"]
    assert getattr(unknown, "to_check") == UNDECIDED_BRANCH
    assert "not in a container" not in getattr(unknown, "evidence")
    host = _by_id(_facts(gpu, missing, driver=Driver(kfd_present=False), in_container=False))["kfd-inaccessible"]
    assert getattr(host, "to_check") is None and "not in a container" in getattr(host, "evidence")


def test_root_outside_the_render_group_is_no_cause_and_gets_no_group_advice() -> None:
    from wizard.diagnose import UNDECIDED_BRANCH

    gpu = _gpu("gfx1100", "RDNA3")
    root = Driver(kfd_present=True, kfd_accessible=False, user="root", groups=("root",), in_render_group=False,
                  in_video_group=False)
    kfd = _by_id(_facts(gpu, _DENIED, driver=root, in_container=False))["kfd-inaccessible"]
    assert getattr(kfd, "to_check") == UNDECIDED_BRANCH and "usermod" not in " ".join(getattr(kfd, "fix_commands"))
    hip = _by_id(_facts(gpu, "RuntimeError: HIP error: hipErrorInvalidDevice", driver=root))["hip-invalid-device"]
    assert "usermod" not in " ".join(getattr(hip, "fix_commands"))
    assert "root is not in the render group" not in getattr(hip, "evidence")


def test_cause_in_branches_needs_branches() -> None:
    import json

    from wizard.kb.parse import Problems, parse_issues

    entry = {"id": "x-y", "severity": "error", "title": "t", "signatures": ["zzz"], "when": [], "predict": False,
             "cause": "c", "fix": {"summary": "s"}, "sources": ["https://rocm.docs.amd.com/"],
             "cause_in_branches": True}
    problems = Problems("known_issues.json")
    parse_issues(json.loads(json.dumps({"issues": [entry]})), problems)
    assert any("'cause_in_branches': true needs fix branches" in line for line in problems.lines), problems.lines


def _session_host(root: object, session: tuple[str, ...] | None, uid: int = 1000) -> object:
    """A sandbox root whose login session holds the given groups (what LiveHost reads on the running machine)."""
    from wizard.host import LiveHost

    class Host(LiveHost):
        def session_groups(self) -> tuple[str, ...] | None:
            return session

        def uid(self) -> int | None:
            return uid

    return Host(str(root), environ={"USER": "ann", "PATH": "/usr/bin:/bin"})


def test_groups_added_after_the_login_began_are_pending_and_the_cause(tmp_path: object) -> None:
    from pathlib import Path

    from wizard.probes.driver import probe_driver

    root = Path(str(tmp_path))
    (root / "etc").mkdir()
    (root / "etc/passwd").write_text("ann:x:1000:1000::/home/ann:/bin/bash\n")
    (root / "etc/group").write_text("ann:x:1000:\nvideo:x:44:ann\nrender:x:110:ann\n")
    (root / "dev").mkdir()
    (root / "dev/kfd").write_text("")
    before = probe_driver(_session_host(root, ("ann",)), (), None, False)  # type: ignore[arg-type]
    assert before.in_render_group is True and before.groups_pending == ("render", "video")
    half = probe_driver(_session_host(root, ("ann", "video")), (), None, False)  # type: ignore[arg-type]
    assert half.groups_pending == ("render",)
    for session in (("ann", "video", "render"), None):  # a new login; a session not read
        assert probe_driver(_session_host(root, session), (), None, False).groups_pending == ()  # type: ignore[arg-type]
    # a root shell acting for ann (`su` without `-` keeps USER=ann): root's groups are not ann's session
    assert probe_driver(_session_host(root, ("root",), uid=0), (), None, False).groups_pending == ()  # type: ignore[arg-type]
    # a session holding render that /etc/group does not list for ann (LDAP/sssd through nss): ann is in render
    (root / "etc/group").write_text("ann:x:1000:\nvideo:x:44:\nrender:x:110:\n")
    ldap = probe_driver(_session_host(root, ("ann", "render")), (), None, False)  # type: ignore[arg-type]
    assert ldap.in_render_group is True and ldap.in_video_group is False and ldap.groups_pending == ()
    assert probe_driver(_session_host(root, ("root", "render"), uid=0), (), None, False).in_render_group is False  # type: ignore[arg-type]
    # the finding: a member of render in /etc/group, refused by /dev/kfd, whose session began before: log in again
    drv = Driver(kfd_present=True, kfd_accessible=False, user="ann", in_render_group=True, in_video_group=True,
                 groups_pending=("render",))
    f = _by_id(_facts(_gpu("gfx1100", "RDNA3"), _DENIED, driver=drv, in_container=False))["kfd-inaccessible"]
    assert getattr(f, "to_check") is None and "log out and in again" in getattr(f, "fix")
    assert not any("usermod" in c for c in getattr(f, "fix_commands"))
    # only video pending beside a render the session holds: /dev/kfd's group is there, the new login is not why
    video = Driver(kfd_present=True, kfd_accessible=False, user="ann", in_render_group=True, in_video_group=True,
                   groups_pending=("video",))
    v = _by_id(_facts(_gpu("gfx1100", "RDNA3"), _DENIED, driver=video, in_container=False))["kfd-inaccessible"]
    assert getattr(v, "to_check") is not None and "log out and in again" not in getattr(v, "fix")


def test_a_missing_tensile_library_is_a_cause_only_where_the_facts_say_which() -> None:
    from wizard.diagnose import UNDECIDED_BRANCH

    def line(gfx: str) -> str:
        return (f"rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: No such file or "
                f"directory for GPU arch : {gfx}")

    # a target no ROCm release supports: no AMD rocBLAS carries its kernels
    rdna1 = _by_id(_facts(_gpu("gfx1010", "RDNA1"), line("gfx1010")))["tensile-library-missing"]
    assert getattr(rdna1, "to_check") is None
    assert "No ROCm release supports this target" in getattr(rdna1, "fix")
    # a supported Instinct card on a release nothing read: a missing target, or a broken install, is to check
    mi100 = _by_id(_facts(_gpu("gfx908", "CDNA1"), line("gfx908")))["tensile-library-missing"]
    assert getattr(mi100, "to_check") == UNDECIDED_BRANCH
    # the installed release supports it: its kernel files are missing or looked for elsewhere
    broken = _by_id(_facts(_gpu("gfx908", "CDNA1"), line("gfx908"), rocm=Rocm(version="6.2.0")))
    assert getattr(broken["tensile-library-missing"], "to_check") is None
    assert "ROCBLAS_TENSILE_LIBPATH" in getattr(broken["tensile-library-missing"], "fix")
    assert "No ROCm release supports this target" not in getattr(broken["tensile-library-missing"], "fix")
    # the installed torch is shown to lack it: that is why
    wheel = PythonEnv(path="/venv", torch="2.0.0+rocm5.4.2", build="rocm",
                      gfx_targets=("gfx900", "gfx906", "gfx908", "gfx90a", "gfx1030"))
    rdna3 = _by_id(_facts(_gpu("gfx1100", "RDNA3"), line("gfx1100"), python_envs=(wheel,)))["tensile-library-missing"]
    assert getattr(rdna3, "to_check") is None and "does not carry this target" in getattr(rdna3, "fix")
    # the same on a symptom line (Tensile did not start): the installed stack shown to lack it is the cause, a target
    # no release lists (which GPU this is) alone is not
    start = "rocBLAS error: Could not initialize Tensile library"
    assert getattr(_by_id(_facts(_gpu("gfx1100", "RDNA3"), start, python_envs=(wheel,)))["tensile-library-missing"],
                   "to_check") is None
    assert getattr(_by_id(_facts(_gpu("gfx1010", "RDNA1"), start))["tensile-library-missing"], "to_check")
    # rocBLAS's own line names the target it looked for, over the GPU's (an override not in force where it ran)
    named = _by_id(_facts(_gpu("gfx1030", "RDNA2"), "rocBLAS warning: No paths matched "
                          "/opt/rocm/lib/rocblas/library/*gfx1031*co. Make sure that ROCBLAS_TENSILE_LIBPATH is set"))
    assert getattr(named["tensile-library-missing"], "to_check") is None


def test_a_release_list_read_from_the_compatibility_matrix_decides_for_instinct_targets_only() -> None:
    """ROCm 6.4.0's gfx list is the one AMD's compatibility matrix gives (rocm_releases.json writes none): it decides
    for an Instinct target, while a Radeon one it lacks stays unknown (AMD's Radeon pages list more)."""
    from wizard.diagnose import UNDECIDED_BRANCH

    def line(gfx: str) -> str:
        return (f"rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: No such file or "
                f"directory for GPU arch : {gfx}")

    rocm = Rocm(version="6.4.0")
    # MI350 (gfx950) is not on 6.4.0's list (some later release lists it): the installed ROCm lacks it
    mi350 = _by_id(_facts(_gpu("gfx950", "CDNA4"), line("gfx950"), rocm=rocm))["tensile-library-missing"]
    assert getattr(mi350, "to_check") is None and "does not carry this target" in getattr(mi350, "fix")
    # gfx1100 is on it: the kernels should be there
    rdna3 = _by_id(_facts(_gpu("gfx1100", "RDNA3"), line("gfx1100"), rocm=rocm))["tensile-library-missing"]
    assert getattr(rdna3, "to_check") is None and "ROCBLAS_TENSILE_LIBPATH" in getattr(rdna3, "fix")
    # near miss: the RX 7800 XT (gfx1101) is not on the matrix's 6.4.0 list, but the matrix leaves Radeon targets to
    # AMD's Radeon pages: not known to be unsupported, so still to check
    navi32 = _by_id(_facts(_gpu("gfx1101", "RDNA3"), line("gfx1101"), rocm=rocm))["tensile-library-missing"]
    assert getattr(navi32, "to_check") == UNDECIDED_BRANCH
    assert "does not carry this target" not in str(getattr(navi32, "fix"))


def test_rev_ff_alone_is_to_check_a_laptop_dgpu_asleep_answers_it_too() -> None:
    from wizard.diagnose import UNDECIDED_BRANCH

    lspci = ("03:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Navi 23 [Radeon RX 6600M] "
             "(rev ff)")
    alone = _by_id(_facts(_gpu("gfx1032", "RDNA2"), lspci))["gpu-not-responding-rev-ff"]
    assert getattr(alone, "to_check") == UNDECIDED_BRANCH and "power/control" in getattr(alone, "fix")
    # the kernel log shows it hung or became inaccessible: that is why it does not answer
    for line in ("[ 812.5] amdgpu 0000:03:00.0: amdgpu: GPU reset begin!",
                 "[ 9.1] amdgpu 0000:03:00.0: Unable to change power state from D3cold to D0, device inaccessible",
                 "[ 77.0] [drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 timeout, signaled seq=1"):
        hung = _by_id(_facts(_gpu("gfx1032", "RDNA2"), lspci + "\n" + line))["gpu-not-responding-rev-ff"]
        assert getattr(hung, "to_check") is None and "full power cycle" in getattr(hung, "fix"), line
    # near miss: the ring's ordinary start-up line is no timeout
    ok = _by_id(_facts(_gpu("gfx1032", "RDNA2"), lspci + "\n[ 5.0] amdgpu: ring gfx_0.0.0 uses VM inv eng 0"))
    assert getattr(ok["gpu-not-responding-rev-ff"], "to_check") == UNDECIDED_BRANCH


def test_a_source_build_gets_the_rebuild_branch_and_a_wheel_does_not() -> None:
    """'invalid device function' from a program built from source (llama.cpp's -DGPU_TARGETS, hipcc
    --offload-arch, koboldcpp's make LLAMA_HIPBLAS=1) gets the advice to rebuild for the target the GPU runs as
    (ggml-org/llama.cpp@00fd518:docs/build.md); the same line from a torch wheel does not."""
    gpu = _gpu("gfx1100", "rdna3")
    for build in ("cmake -S . -B build -DGGML_HIP=ON -DGPU_TARGETS=gfx1030 && cmake --build build",
                  "make LLAMA_HIPBLAS=1 -j16", "hipcc --offload-arch=gfx906 kernel.cpp -o kernel"):
        found = {f.id: f for f in diagnose(_facts(gpu, build + "\nhipErrorInvalidDeviceFunction: invalid device function"))}
        assert "Rebuild it for the target the GPU runs as" in found["invalid-device-function"].fix, build
    wheel = {f.id: f for f in diagnose(_facts(gpu, "CMake version: version 3.28.1\n"
                                                   "RuntimeError: HIP error: invalid device function"))}
    assert "Rebuild it for the target" not in wheel["invalid-device-function"].fix  # torch's collect_env line
    # a build shown says which software this is, not that it lacks the target: a symptom stays to check
    symptom = "make LLAMA_HIPBLAS=1 -j16\nHIP error: shared object initialization failed"
    found = {f.id: f for f in diagnose(_facts(gpu, symptom))}
    assert found["no-binary-for-gpu"].to_check is not None


def test_hipcc_asked_its_version_is_no_build_from_source() -> None:
    """`hipcc --version` (what bug templates ask for, e.g. vllm's collect_env reads its "HIP version:") builds
    nothing: a torch wheel's 'invalid device function' beside it gets no advice to rebuild; a hipcc line that
    compiles still does."""
    gpu = _gpu("gfx1100", "rdna3")
    failure = "\nRuntimeError: HIP error: invalid device function"
    for asked in ("$ hipcc --version\nHIP version: 6.2.41133-dd7f95766\nAMD clang version 18.0.0git",
                  "hipcc --help", "hipcc -v"):
        fix = {f.id: f for f in diagnose(_facts(gpu, asked + failure))}["invalid-device-function"].fix
        assert "Rebuild it for the target" not in fix, asked
    for build in ("$ hipcc -O3 kernel.cpp -o kernel", "hipcc --version && hipcc kernel.cpp -o kernel"):
        fix = {f.id: f for f in diagnose(_facts(gpu, build + failure))}["invalid-device-function"].fix
        assert "Rebuild it for the target" in fix, build
