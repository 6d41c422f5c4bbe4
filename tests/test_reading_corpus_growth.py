"""Issue 21, the 28 machines recorded in the corpus's growth (383a38e..4762b57): the evidence those threads show,
read by general rules, each with the case that must not be read that way."""

from __future__ import annotations

from pathlib import Path

import pytest

from reading_helpers import detect_paste, said

pytestmark = pytest.mark.unit


def test_vllm_collect_env_padded_python_platform_names_the_kernel() -> None:
    # vLLM's collect_env pads its keys to one column; torch's writes "Python platform: ..."
    assert said("Python platform              : Linux-7.1.1-070101-generic-x86_64-with-glibc2.39", "kernel") == [
        "7.1.1-070101-generic"]
    assert said("Python platform   : Linux-6.12.0-124.29.1.el10_1.x86_64-x86_64-with-glibc2.39", "kernel") == [
        "6.12.0-124.29.1.el10_1.x86_64"]
    assert said("Python platform: Linux-5.15.0-113-generic-x86_64-with-glibc2.35", "kernel") == ["5.15.0-113-generic"]
    # a platform that is not Linux names no kernel
    assert said("Python platform              : macOS-14.5-arm64-arm-64bit", "kernel") == []


def test_amd_smi_version_squashed_proc_version_names_the_kernel(tmp_path: Path) -> None:
    # amd-smi version prints an in-tree driver's "amdgpu version" as /proc/version with its blanks dropped
    line = ("AMDSMI Tool: 25.3.0+ede62f2 | AMDSMI Library version: 25.3.0 | ROCm version: 6.4.0 | amdgpu version: "
            "Linuxversion6.8.0-79-generic(buildd@lcy02-amd64-049)(x86_64-linux-gnu-gcc-13(Ubuntu13.3.0-6ubuntu2~24.04)"
            "13.3.0,GNUld(GNUBinutilsforUbuntu)2.42)#79-UbuntuSMPPREEMPT_DYNAMICTueAug1214:42:46UTC2025 | "
            "amd_hsmp version: N/A")
    assert said(line, "kernel") == ["6.8.0-79-generic"]
    # /proc/version as it is printed stays read
    assert said("Linux version 6.8.0-48-generic (buildd@lcy02-amd64-010) (x86_64-linux-gnu-gcc-13)", "kernel") == [
        "6.8.0-48-generic"]
    facts = detect_paste(tmp_path, "**`amd-smi version`**\n```\n" + line + "\n```\n")
    assert facts.os.kernel == "6.8.0-79-generic"


def test_a_bare_radeon_ai_pro_model_is_a_gpu() -> None:
    # AMD's Radeon AI PRO cards are named by their model alone in threads ("mismatch on R9700")
    assert said("# AMDGPU SMU driver interface version mismatch on R9700 - fan does not spin", "gpu_prose") == ["R9700"]
    assert said("the Radeon AI PRO R9600D here", "gpu_prose") == ["Radeon AI PRO R9600D"]
    # Ryzen Embedded R-series processors (R1505G, R2314) and the R9 390 are not it
    assert said("a Ryzen Embedded R1505G box", "gpu_prose") == []
    assert said("an R9 390 card", "gpu_prose") == ["R9 390"]


# a stored thread whose opening post is missing: its title names what the thread is about
HEADLESS = ("ROCm/ROCm · issue #5908 · closed · Shell\n"
            "labels: status: triage\n"
            "# [Issue]: ROCm 7.2 SMU mismatch on Ubuntu 24.04.3 w/ AMD AI Pro R9700 GPU\n\n"
            "someone · comment · 2026-02-12\n"
            "I ended up uninstalling the amdgpu package. Here's a new readout of rocminfo:\n\n"
            "ROCk module is loaded\n")


def test_the_title_of_a_thread_without_its_opening_post_names_the_gpu_when_the_posts_name_none(tmp_path: Path) -> None:
    facts = detect_paste(tmp_path, HEADLESS)
    assert [(g.gfx, g.integrated) for g in facts.gpus] == [("gfx1201", False)]
    # the title gives only the GPU: the commenter's distribution is not read from it
    assert facts.os.version is None


def test_a_post_present_with_no_facts_read_still_takes_the_titles_gpu(tmp_path: Path) -> None:
    text = HEADLESS.split("someone")[0] + "someone · comment · 2026-05-04\nincluding requested info below\n\n" \
        "ME feature version: 29, firmware version: 0x00000b9a\n"
    facts = detect_paste(tmp_path, text)
    assert [g.gfx for g in facts.gpus] == ["gfx1201"]


def test_a_commenter_who_names_another_gpu_is_not_given_the_titles(tmp_path: Path) -> None:
    text = HEADLESS.replace("I ended up", "Same here on my RX 7900 XTX. I ended up")
    facts = detect_paste(tmp_path, text)
    assert [g.gfx for g in facts.gpus] == ["gfx1100"]



# therock-missing-device-package is a cause only where the environment's device packages were seen
def _therock_findings(env: object, error: str | None = None) -> dict[str, str | None]:
    from wizard.diagnose import diagnose
    from wizard.model import Facts, Gpu, PythonEnv

    assert isinstance(env, PythonEnv)
    facts = Facts(gpus=(Gpu(name="AMD Radeon 8060S Graphics", gfx="gfx1151", integrated=True),), python_envs=(env,))
    return {f.id: f.to_check for f in diagnose(facts, error)}


def test_a_therock_torch_version_alone_is_no_evidence_of_a_missing_device_package() -> None:
    from wizard.model import PythonEnv

    # collect_env names torch 2.11.0+rocm7.14.0 and nothing of its device packages
    recorded = PythonEnv(path=None, torch="2.11.0+rocm7.14.0", hip="7.14.60850", build="rocm", kind="recorded")
    assert "therock-missing-device-package" not in _therock_findings(recorded)
    # the failure it causes, shown on such a machine, is only to check
    found = _therock_findings(recorded, "torch.AcceleratorError: HIP error: hipErrorInvalidImage")
    assert found.get("therock-missing-device-package") is not None
    # device packages seen (`rocm-sdk targets`, a listing with TheRock's rocm packages, an environment read on the
    # machine) that lack the GPU's: a cause
    listed = PythonEnv(path=None, torch="2.11.0+rocm7.14.0", build="rocm", kind="recorded", rocm_sdk_targets=("gfx1100",))
    assert _therock_findings(listed).get("therock-missing-device-package", "absent") is None
    listing = PythonEnv(path=None, torch="2.11.0+rocm7.14.0", build="rocm", kind="recorded", rocm_sdk="7.14.0")
    assert _therock_findings(listing).get("therock-missing-device-package", "absent") is None
    live = PythonEnv(path="/home/u/venv", torch="2.11.0+rocm7.14.0", build="rocm", kind="venv")
    assert _therock_findings(live).get("therock-missing-device-package", "absent") is None


# issue 21 point 5: a shared library missing from a ROCm wheel or tarball, named with what provides it and the fix
AMDFLANG = ("ERROR: testConsoleScripts (rocm_sdk.tests.core_test.ROCmCoreTest.testConsoleScripts) "
            "[Check console-script amdflang]\n"
            "/home/rocm/.venv/bin/amdflang: error while loading shared libraries: libquadmath.so.0: cannot open shared "
            "object file: No such file or directory\n")


@pytest.mark.parametrize("os_id, shown, hidden", [
    ("rhel", "sudo dnf install libquadmath", "sudo apt install libquadmath0"),
    ("ubuntu", "sudo apt install libquadmath0", "sudo dnf install libquadmath"),
])
def test_amdflang_without_libquadmath_is_named_with_the_distributions_package(os_id: str, shown: str,
                                                                              hidden: str) -> None:
    from wizard.diagnose import diagnose
    from wizard.model import EvidenceText, Facts, OsInfo

    facts = Facts(os=OsInfo(id=os_id), texts=(EvidenceText("paste.txt", AMDFLANG, 1, "text", True),), origin="test")
    found = diagnose(facts)
    assert found[0].id == "therock-libquadmath-missing" and found[0].to_check is None
    assert shown in found[0].fix_commands and hidden not in found[0].fix_commands
    assert "libquadmath.so.0" in found[0].cause and "amdflang" in found[0].cause
    # the generic "a ROCm library is not found" finding does not claim it
    assert "rocm-libraries-not-found" not in [f.id for f in found]


# amdgpu_top -J: each device's "DevicePath" object holds its PCI device id (decimal) and its PCI address
AMDGPU_TOP = ('[{"ASIC Name":"GFX1151/Strix Halo","Chip Class":"GFX11_5","DeviceID":5510,"DeviceName":"Radeon 8060S '
              'Graphics","DevicePath":{"DeviceID":5510,"DeviceName":"Radeon 8060S Graphics","RevisionID":209,"card":'
              '"/dev/dri/card1","pci":"0000:c3:00.0","render":"/dev/dri/renderD128"},"Firmware info":[{"feature":35,'
              '"fw_type":"GFX_ME","index":0,"ip_instance":0,"ver')


def test_amdgpu_top_json_names_the_device_id_and_its_place(tmp_path: Path) -> None:
    assert said(AMDGPU_TOP, "pci_id") == ["1002:1586"] and said(AMDGPU_TOP, "bdf") == ["0000:c3:00.0"]
    facts = detect_paste(tmp_path, "amdgpu_top -d -J\n" + AMDGPU_TOP + "\n")
    assert [(g.gfx, g.integrated, g.pci_id, g.bdf) for g in facts.gpus] == [
        ("gfx1151", True, "1002:1586", "0000:c3:00.0")]
    # two devices on one line are not one GPU's claims: neither id is taken from that line
    two = AMDGPU_TOP.replace('"Firmware info"', '"x":[{"DevicePath":{"DeviceID":29772,"pci":"0000:03:00.0"}}],'
                                                '"Firmware info"')
    assert said(two, "pci_id") == [] and said(two, "bdf") == []


def test_a_torch_build_written_in_backticks_is_read() -> None:
    assert said("The image ships torch `2.13.0a0+rocm7.14.0a20260612`. The 0609 nightlies crash", "torch") == [
        "2.13.0a0+rocm7.14.0a20260612"]
    assert said("INFO     Torch 2.3.0+rocm6.0", "torch") == ["2.3.0+rocm6.0"]
    # a version an install should show stays not the machine's; a torch without its build tag is not read this way
    assert said("collect_env should show torch `2.1.2+rocm6.1.3`", "torch") == []
    assert said("the image ships torch `2.13.0` only", "torch") == []
