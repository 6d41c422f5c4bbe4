"""Known issues for causes that recur across users' threads (helper R1, session 14).

Each issue rests on at least two threads whose cause a maintainer or the reporter's fix confirmed: ROCm's
versioned and non-versioned packages mixed (dpkg 'trying to overwrite /opt/rocm-X.Y.Z/...'), rock-dkms against the
graphics driver's amdgpu-dkms, torchvision built for another torch ('operator torchvision::nms does not exist'), and
pip finding no torch on a ROCm index for this Python. Texts are modelled on those threads, not copied; each issue has
a near miss that must not fire.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_known_issues_texts import _found, _ids

from wizard.kb import load_kb

pytestmark = pytest.mark.unit

RX9070: dict[str, Any] = {"gpus": [{"gfx": "gfx1201", "integrated": False}]}
MI210: dict[str, Any] = {"gpus": [{"gfx": "gfx90a", "integrated": False}]}


# torchvision/_meta_registrations.py registers @torch.library.register_fake("torchvision::nms"); torch's library.py
# raises "operator torchvision::nms does not exist" when torchvision's compiled library did not register it
# (huggingface/diffusers#9109, ComfyUI-Impact-Pack#958, pytorch/torchtitan#3022, vllm-ascend#479).
TV = "torchvision-ops-not-registered-torch-mismatch"
TV_FIRES = {
    "import": ("  File \"/home/user/ComfyUI/venv/lib/python3.12/site-packages/torchvision/_meta_registrations.py\", "
               "line 163, in <module>\n    @torch.library.register_fake(\"torchvision::nms\")\n"
               "RuntimeError: operator torchvision::nms does not exist"),
    "cpu-only op": ("NotImplementedError: Could not run 'torchvision::nms' with arguments from the 'CUDA' backend. "
                    "This could be because the operator doesn't exist for this backend"),
}
TV_NEAR = {
    "works": "torchvision.ops.nms returned 12 boxes on cuda:0",
    "other op": "RuntimeError: operator aten::_flash_attention_forward does not exist",
}


@pytest.mark.parametrize("name", sorted(TV_FIRES))
def test_torchvision_mismatch_is_to_check(name: str) -> None:
    found = _found(RX9070, TV_FIRES[name])
    assert TV in found
    # the line does not show which torchvision is installed; a broken torchvision build gives the same words
    assert found[TV].to_check is not None


@pytest.mark.parametrize("name", sorted(TV_NEAR))
def test_torchvision_mismatch_near_misses(name: str) -> None:
    assert TV not in _ids(RX9070, TV_NEAR[name])


# AMD's multi-version install guide: single-version and multi-version ROCm packages cannot be installed together;
# ROCm/ROCm#1502 (AMD support), #2310, ROCm/MIOpen#2706 show dpkg's words both ways round.
MV = "rocm-single-and-multi-version-packages-mixed"
MV_FIRES = {
    "versioned owner": ("dpkg: error processing archive /tmp/apt-dpkg-install-Qx1/13-rocblas-dev_4.0.0.60000-91~22.04"
                        "_amd64.deb (--unpack):\n trying to overwrite '/opt/rocm-6.0.0/include/rocblas/internal/"
                        "rocblas-types.h', which is also in package rocblas-dev6.0.0 4.0.0.60000-91~22.04"),
    "plain owner": ("dpkg: error processing archive /tmp/apt-dpkg-install-a9/38-rocm-language-runtime5.4.1_5.4.1.50401"
                    "-84~20.04_amd64.deb (--unpack):\n trying to overwrite '/opt/rocm-5.4.1/.info/version-lrt', which "
                    "is also in package rocm-language-runtime 5.4.1.50401-84~20.04"),
}
MV_NEAR = {
    # one plain package over another plain one (e.g. two packages of one kind shipping one header): not this cause
    "both plain": ("dpkg: error processing archive /var/cache/apt/archives/hipfort_0.4-0_amd64.deb (--unpack):\n "
                   "trying to overwrite '/opt/rocm-3.9.0/bin/gputable.txt', which is also in package openmp-extras "
                   "12.9-0"),
    "outside /opt/rocm": ("dpkg: error processing archive /tmp/x/rocm-llvm6.0.0_17.0.0_amd64.deb (--unpack):\n "
                          "trying to overwrite '/usr/share/doc/foo/LICENSE', which is also in package foo 1.0"),
}


@pytest.mark.parametrize("name", sorted(MV_FIRES))
def test_mixed_single_and_multi_version_packages_is_the_cause(name: str) -> None:
    found = _found(MI210, MV_FIRES[name])
    assert MV in found
    assert found[MV].to_check is None


@pytest.mark.parametrize("name", sorted(MV_NEAR))
def test_mixed_package_kinds_near_misses(name: str) -> None:
    assert MV not in _ids(MI210, MV_NEAR[name])


# ROCm/ROCm-docker#44 (AMD: amdgpu-dkms conflicts with rock-dkms), ROCm/ROCm#1044, #860, #1543, #1107.
RD = "rock-dkms-conflicts-amdgpu-dkms"
RD_FIRES = {
    "module": ("Unpacking rock-dkms (3.1-44) ...\ndpkg: error processing archive /var/cache/apt/archives/"
               "rock-dkms_3.1-44_all.deb (--unpack):\n trying to overwrite '/usr/share/dkms/modules_to_force_install/"
               "amdgpu', which is also in package amdgpu-dkms 19.50-967956"),
    "firmware, wrapped": ("dpkg: error processing archive /var/cache/apt/archives/rock-dkms-firmware_1%3a4.\n3-52_all"
                          ".deb (--unpack):\n trying to overwrite '/usr/share/doc/amdgpu-dkms-firmware/LICENSE', which "
                          "is als\no in package amdgpu-dkms-firmware 1:5.11.5.26-1271047"),
}
RD_NEAR = {
    "another package": ("dpkg: error processing archive /var/cache/apt/archives/compute-firmware_1.0_all.deb "
                        "(--unpack):\n trying to overwrite '/lib/firmware/radeon/tonga_sdma1.bin', which is also in "
                        "package radeon-firmware 410-604"),
    "dkms build": "Error! Bad return status for module build on kernel: 6.8.0-45-generic (x86_64) amdgpu-dkms",
}


@pytest.mark.parametrize("name", sorted(RD_FIRES))
def test_rock_dkms_against_amdgpu_dkms_is_the_cause(name: str) -> None:
    found = _found(RX9070, RD_FIRES[name])
    assert RD in found
    assert found[RD].to_check is None


@pytest.mark.parametrize("name", sorted(RD_NEAR))
def test_rock_dkms_near_misses(name: str) -> None:
    assert RD not in _ids(RX9070, RD_NEAR[name])


def test_rock_dkms_fix_removes_the_graphics_drivers_module() -> None:
    issue = load_kb().known_issue(RD)
    assert issue is not None
    # its firmware package too: amdgpu-dkms-firmware holds the files rock-dkms-firmware installs (ROCm/ROCm#1543),
    # and purging amdgpu-dkms alone leaves it behind
    assert "sudo dpkg --purge amdgpu-dkms amdgpu-dkms-firmware" in issue.fix.commands


# amd/playbooks#315 and aqarooni02/Comfyui-AMD-Windows-Install-Script#1: Python 3.14 against AMD's ROCm index.
PY = "rocm-torch-index-no-wheel-for-python"
PY_FIRES = ("Looking in indexes: https://repo.amd.com/rocm/whl/gfx1151/\n"
            "ERROR: Could not find a version that satisfies the requirement torch (from versions: none)\n"
            "ERROR: No matching distribution found for torch")


def test_no_torch_on_a_rocm_index_is_to_check() -> None:
    found = _found({"gpus": [{"gfx": "gfx1151", "integrated": True}]}, PY_FIRES)
    assert PY in found
    assert found[PY].to_check is not None  # several causes: Python version, index URL, platform


@pytest.mark.parametrize("text", [
    # PyPI, not a ROCm index
    "Looking in indexes: https://pypi.org/simple\nERROR: Could not find a version that satisfies the requirement "
    "torch (from versions: none)",
    # a version pin the ROCm index lacks: the index did offer torch
    "Looking in indexes: https://download.pytorch.org/whl/rocm6.2\nERROR: Could not find a version that satisfies "
    "the requirement torch==2.4.1 (from versions: 2.5.0+rocm6.2, 2.5.1+rocm6.2)",
])
def test_no_torch_near_misses(text: str) -> None:
    assert PY not in _ids({"gpus": [{"gfx": "gfx1151", "integrated": True}]}, text)
