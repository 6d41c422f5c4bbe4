"""Adversarial review of the known issues added in session 14 (helper V5).

Each test is a text (and facts) on which a new issue fired, or advised, where its source does not justify it, with the
near miss that must still fire.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_known_issues_texts import _found

from wizard.diagnose import against_detection

pytestmark = pytest.mark.unit

R9700X2: dict[str, Any] = {"gpus": [{"gfx": "gfx1201", "integrated": False}, {"gfx": "gfx1201", "integrated": False}]}
TP_HANG = ("vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2\n"
           "The server hangs at TP=2 during CUDA graph capture, both GPUs at 100%\n")


# ROCm/rocm-systems#5480, the maintainer: rcclGetProtoForGfx12() picks LL "whenever NCCL_PROTO isn't set explicitly";
# the reporter's fix was NCCL_PROTO=Simple. A hang with NCCL_PROTO=Simple already in force is not this one, and the
# advice to set it is what the machine already does.
def test_rccl_gfx12_ll_not_advised_where_nccl_proto_simple_is_set() -> None:
    spec = {**R9700X2, "env": {"NCCL_PROTO": "Simple"}}
    assert "rccl-gfx12-ll-protocol-deadlock" not in _found(spec, TP_HANG)


def test_rccl_gfx12_ll_still_to_check_without_nccl_proto() -> None:
    """The near misses: NCCL_PROTO unset, or set to LL (which forces the protocol this issue is about)."""
    assert "rccl-gfx12-ll-protocol-deadlock" in _found(R9700X2, TP_HANG)
    assert "rccl-gfx12-ll-protocol-deadlock" in _found({**R9700X2, "env": {"NCCL_PROTO": "LL"}}, TP_HANG)


RX7900: dict[str, Any] = {"gpus": [{"gfx": "gfx1100", "integrated": False}]}


# The radeon driver prints the same words (freebsd/drm-kmod@ef1bbd5:drivers/gpu/drm/radeon/radeon_bios.c,
# radeon_get_bios: DRM_ERROR("Unable to locate a BIOS ROM\n")), and so does the vendor-reset module on a vfio-bound
# GPU (gnif/vendor-reset@68ca481:src/amd/amdgpu/amdgpu_bios.c, its own amdgpu_get_bios: "vendor-reset-drm: Unable to
# locate a BIOS ROM"): neither is amdgpu failing to bring a GPU up for ROCm.
@pytest.mark.parametrize("line", [
    "[drm:radeon_get_bios [radeon]] *ERROR* Unable to locate a BIOS ROM",
    "[  602.952000] vendor-reset-drm: Unable to locate a BIOS ROM",
])
def test_vbios_not_found_is_amdgpus_not_radeons(line: str) -> None:
    assert "amdgpu-vbios-not-found" not in _found(RX7900, line + "\n")


@pytest.mark.parametrize("line", [
    "[    3.250937] [drm:amdgpu_get_bios [amdgpu]] *ERROR* Unable to locate a BIOS ROM",
    "amdgpu 0000:03:00.0: amdgpu: Unable to locate a BIOS ROM",
    "Unable to locate a BIOS ROM",
])
def test_vbios_not_found_still_fires_on_amdgpus_line(line: str) -> None:
    found = _found(RX7900, line + "\namdgpu 0000:03:00.0: Fatal error during GPU init\n")
    assert "amdgpu-vbios-not-found" in found and found["amdgpu-vbios-not-found"].to_check is None


# NixOS keeps no /usr/share/libdrm (wiki.nixos.org/wiki/Translations:NixOS/41/en: /lib and /usr/lib do not exist, every
# library, binary and data file is in the Nix store): linking /usr/share/libdrm/amdgpu.ids makes a dangling link.
def test_libdrm_ids_link_not_advised_on_nixos() -> None:
    found = _found({**RX7900, "os_id": "nixos"}, "amdgpu.ids: No such file or directory\n")
    assert not any("/usr/share/libdrm" in c and "ln " in c for c in found["libdrm-amdgpu-ids-missing"].fix_commands)


def test_libdrm_ids_link_still_advised_on_arch() -> None:
    found = _found({**RX7900, "os_id": "arch"}, "amdgpu.ids: No such file or directory\n")
    assert any("ln -s /usr/share/libdrm/amdgpu.ids" in c for c in found["libdrm-amdgpu-ids-missing"].fix_commands)


LMS_SURVEY = ("[LMSHardwareSurvey] No ROCm GPUs detected of supported targets: "
              "gfx1030, gfx1100, gfx1101, gfx1102, gfx1151, gfx1200, gfx1201\n")


# lmstudio-bug-tracker#1903: the survey line lists the targets the engine carries. Where the machine's GPU runs as one
# of them, "the engine is not built for this GPU's gfx" is what the line itself contradicts: the runtime found no GPU
# (windows-hip7-gfx1030-not-enumerated on an RX 6800 with HIP 7, a driver problem), not a missing target.
def test_lmstudio_targets_finding_contradicted_where_the_line_lists_the_gpu() -> None:
    found = _found(RX7900, LMS_SURVEY)
    assert "lmstudio-rocm-runtime-gpu-not-in-targets" in found
    assert against_detection(found["lmstudio-rocm-runtime-gpu-not-in-targets"])


def test_lmstudio_hip7_gfx1030_blames_the_runtime_not_the_target_list() -> None:
    text = ("[LMSHardwareSurvey] Error trying to query ROCm gpus: No hip devices found!\n"
            "C:\\Users\\u\\.lmstudio\\extensions\\backends\\vendor\\win-llama-rocm-vendor-v3\\bin\\amdhip64_7.dll\n"
            + LMS_SURVEY)
    found = _found({"gpus": [{"gfx": "gfx1030", "integrated": False}]}, text)
    assert found["windows-hip7-gfx1030-not-enumerated"].to_check is None
    assert against_detection(found["lmstudio-rocm-runtime-gpu-not-in-targets"])


@pytest.mark.parametrize("spec", [{"gpus": [{"gfx": "gfx906", "integrated": False}]}, {}])
def test_lmstudio_targets_finding_still_a_cause_for_a_gpu_outside_the_list(spec: dict[str, Any]) -> None:
    """The near misses: an MI50 (gfx906, outside the list), and a paste whose GPU is not known."""
    found = _found(spec, LMS_SURVEY)
    finding = found["lmstudio-rocm-runtime-gpu-not-in-targets"]
    assert finding.to_check is None and not against_detection(finding)
