"""Review of three known issues that stated a cause or advice the machine can contradict (helper L6).

Each test is a text (and facts) on which an issue fired, or advised, where its source does not justify it, with the
near miss that must still fire.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_known_issues_texts import _facts, _found

from wizard.diagnose import Finding, diagnose
from wizard.record import replace

pytestmark = pytest.mark.unit

MIXED = "rocm-single-and-multi-version-packages-mixed"


def _dpkg(deb: str, path: str, other: str, version: str) -> str:
    """dpkg's words on a file clash, as apt shows them: the archive it was unpacking, then the clash
    (dpkg src/main/archives.c: "trying to overwrite '%.250s', which is also in package %.250s %.250s")."""
    return (f"Preparing to unpack .../{deb} ...\n"
            f"dpkg: error processing archive /var/cache/apt/archives/{deb} (--unpack):\n"
            f" trying to overwrite '{path}', which is also in package {other} {version}\n"
            "Errors were encountered while processing:\n"
            f" /var/cache/apt/archives/{deb}\n")


# a versioned (multi-version) package unpacked over the single-version install, and the other way round
VERSIONED_OVER_PLAIN = _dpkg("rocblas6.0.0_4.0.0.60000-91~22.04_amd64.deb", "/opt/rocm-6.0.0/lib/librocblas.so.4",
                             "rocblas", "4.0.0.60000-91~22.04")
PLAIN_OVER_VERSIONED = _dpkg("rocblas_4.0.0.60000-91~22.04_amd64.deb", "/opt/rocm-6.0.0/lib/librocblas.so.4",
                             "rocblas6.0.0", "4.0.0.60000-91~22.04")


@pytest.mark.parametrize("text", [VERSIONED_OVER_PLAIN, PLAIN_OVER_VERSIONED])
def test_single_and_multi_version_clash_is_a_cause(text: str) -> None:
    found = _found({}, text)
    assert MIXED in found and found[MIXED].to_check is None


# Two versioned packages of two releases, or two single-version packages, writing one path are no mix of the kinds:
# the advice to keep one kind does not touch them.
@pytest.mark.parametrize("text", [
    _dpkg("rocblas6.1.0_4.1.0.60100-82~22.04_amd64.deb", "/opt/rocm-6.1.0/lib/librocblas.so.4", "rocblas6.0.0",
          "4.0.0.60000-91~22.04"),
    _dpkg("hipblaslt-dev_0.8.0.60200-66~22.04_amd64.deb", "/opt/rocm-6.2.0/lib/libhipblaslt.so", "hipblaslt",
          "0.8.0.60200-66~22.04"),
])
def test_two_versioned_or_two_plain_packages_are_not_the_mix(text: str) -> None:
    assert MIXED not in _found({}, text)


def test_mixed_kinds_advice_does_not_remove_every_release() -> None:
    """AMD's uninstall steps remove one kind (rocm-core, or one release's rocm-coreX.Y.Z), not every release
    (ROCm/rocm-install-on-linux docs/install/install-methods/package-manager/package-manager-ubuntu.rst)."""
    for text in (VERSIONED_OVER_PLAIN, PLAIN_OVER_VERSIONED):
        f = _found({}, text)[MIXED]
        assert not any("--rocmrelease=all" in c for c in f.fix_commands)
        # named only as what not to run, with what it does
        assert "rocmrelease=all" not in f.fix or "would remove every ROCm release" in f.fix
    # the versioned package was being installed: the multi-version guide removes the single-version install first
    assert "sudo apt autoremove rocm-core" in _found({}, VERSIONED_OVER_PLAIN)[MIXED].fix_commands
    # the single-version package was being installed: removing the single-version install is not what it wants
    assert "sudo apt autoremove rocm-core" not in _found({}, PLAIN_OVER_VERSIONED)[MIXED].fix_commands


RX7900: dict[str, Any] = {"gpus": [{"gfx": "gfx1100", "integrated": False}]}
NO_HIP = "No ROCm runtime is found, using ROCM_HOME='/opt/rocm'\n"
NO_HIP_ID = "torch-no-hip-runtime-rocm-home"
CT2 = "RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA runtime version\n"
CT2_ID = "ctranslate2-cuda-build-on-amd-gpu"
NVIDIA_SMI = ("+-----------------------------------------------------------------------------+\n"
              "| NVIDIA-SMI 470.223.02   Driver Version: 470.223.02   CUDA Version: 11.4     |\n")


def _nvidia_only(text: str) -> dict[str, Finding]:
    """A machine whose GPUs detection enumerated: an NVIDIA card, no AMD GPU (a CUDA torch, a leftover /opt/rocm)."""
    facts = replace(_facts({}, text), origin="live", other_gpus=("10de:2684 NVIDIA Corporation AD102",))
    return {f.id: f for f in diagnose(facts)}


@pytest.mark.parametrize("issue_id, text", [(NO_HIP_ID, NO_HIP), (CT2_ID, CT2)])
def test_cuda_lines_are_no_cause_on_an_nvidia_only_machine(issue_id: str, text: str) -> None:
    found = _nvidia_only(text)
    assert issue_id not in found or found[issue_id].to_check is not None
    assert issue_id not in _found({}, NVIDIA_SMI + text)  # its text shows the NVIDIA driver


@pytest.mark.parametrize("issue_id, text", [(NO_HIP_ID, NO_HIP), (CT2_ID, CT2)])
def test_cuda_lines_are_a_cause_where_an_amd_gpu_is_detected(issue_id: str, text: str) -> None:
    found = _found(RX7900, text)
    assert issue_id in found and found[issue_id].to_check is None
    assert any("gfx1100" in e for e in found[issue_id].evidence)  # the AMD GPU is what makes it this machine's


def test_an_archive_apt_numbered_in_its_temporary_folder_is_read_by_its_name() -> None:
    """apt hands dpkg /tmp/apt-dpkg-install-XXXX/NN-name_version_arch.deb: the name after the number decides."""
    text = ("dpkg: error processing archive /tmp/apt-dpkg-install-Qx1/13-rocblas-dev_4.0.0.60000-91~22.04_amd64.deb "
            "(--unpack):\n trying to overwrite '/opt/rocm-6.0.0/include/rocblas/internal/rocblas-types.h', which is "
            "also in package rocblas-dev6.0.0 4.0.0.60000-91~22.04\n")
    assert MIXED in _found({}, text)
    assert MIXED not in _found({}, text.replace("rocblas-dev_", "rocblas-dev6.1.0_"))


STALL_ID = "gfx1201-rocm70-stall"
R9070: dict[str, Any] = {"gpus": [{"gfx": "gfx1201", "integrated": False}]}
STALL = "ComfyUI: KSampler stuck, the GPU stays at 100% busy with no progress\n"
IMAGE70 = "docker run -it --device=/dev/kfd --device=/dev/dri rocm/pytorch:rocm7.0_ubuntu24.04_py3.12_pytorch_release_2.8.0\n"


@pytest.mark.parametrize("spec, text", [
    ({**R9070, "rocm_version": "7.0.2"}, STALL),
    ({**R9070, "rocm_version": "7.1.1"}, STALL),
    (R9070, IMAGE70 + STALL),
    ({**R9070, "python_envs": [{"torch": "2.8.0+rocm7.0.0.git64359f59"}]}, STALL),
])
def test_gfx1201_stall_is_a_cause_where_rocm_70_or_71_shows(spec: dict[str, Any], text: str) -> None:
    found = _found(spec, text)
    assert STALL_ID in found and found[STALL_ID].to_check is None


@pytest.mark.parametrize("spec", [
    {**R9070, "rocm_version": "6.4.4"},
    {**R9070, "rocm_version": "7.2.0"},
    {**R9070, "python_envs": [{"torch": "2.10.0+rocm7.10.0"}]},  # 7.10 is no 7.1
])
def test_gfx1201_stall_is_no_cause_on_another_rocm(spec: dict[str, Any]) -> None:
    assert STALL_ID not in _found(spec, STALL)


def test_gfx1201_stall_is_only_to_check_where_no_rocm_version_shows() -> None:
    found = _found(R9070, STALL)
    assert STALL_ID in found and found[STALL_ID].to_check is not None
