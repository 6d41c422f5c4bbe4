"""Known issues for causes that recur across users' threads in the application ecosystem (helper R4, session 14).

Each issue rests on at least two threads whose cause a maintainer or the reporter's fix confirmed. Texts are modelled
on those threads, not copied; each issue has near misses that must not fire.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_known_issues_texts import _found, _ids


pytestmark = pytest.mark.unit

RX6800: dict[str, Any] = {"gpus": [{"gfx": "gfx1030", "integrated": False}]}
HX370: dict[str, Any] = {"gpus": [{"gfx": "gfx1150", "integrated": True}]}
MI50: dict[str, Any] = {"gpus": [{"gfx": "gfx906", "integrated": False}]}


# LM Studio's ROCm llama.cpp engine carries a fixed target list and its survey says so (lmstudio-ai/lms#228, LM
# Studio staff: gfx906 not supported on the ROCm runtime, use Vulkan; lmstudio-bug-tracker#1903, #1394 for gfx1150).
LMS = "lmstudio-rocm-runtime-gpu-not-in-targets"
LMS_FIRES = {
    "targets listed": (HX370, '      "compatibility": {\n        "status": "noSupportedGpus",\n        "message": '
                               '"No ROCm GPUs detected of supported targets: gfx1030, gfx1100, gfx1101, gfx1102, '
                               'gfx1151, gfx1200, gfx1201"\n      },'),
    "older engine": (MI50, '[\n  {\n    "status": "No supported GPUs",\n    "message": "No compatible ROCm GPUs '
                           'found on device"\n  }\n]'),
}
LMS_NEAR = {
    # the survey itself failed (a driver or runtime problem, not the target list)
    "survey failed": (RX6800, "Backend 'llama.cpp-win-x86_64-amd-rocm-avx2' requires gpu acceleration, but GPU survey "
                              "on hardware was unsuccessful with message 'Error trying to query ROCm gpus: No hip "
                              "devices found!'"),
    "compatible": (RX6800, '"compatibility": {\n  "status": "Compatible"\n}'),
}


@pytest.mark.parametrize("name", sorted(LMS_FIRES))
def test_lmstudio_target_list_is_a_cause(name: str) -> None:
    spec, text = LMS_FIRES[name]
    found = _found(spec, text)
    assert LMS in found
    assert found[LMS].to_check is None
    assert "Vulkan" in found[LMS].fix


@pytest.mark.parametrize("name", sorted(LMS_NEAR))
def test_lmstudio_target_list_near_misses(name: str) -> None:
    spec, text = LMS_NEAR[name]
    assert LMS not in _ids(spec, text)


# CTranslate2's PyPI wheels are CUDA-only; on a ROCm torch the application hands it device="cuda" and NVIDIA's
# runtime finds no driver (debpalash/VoiceStudio#1539, ellite/anchor-sub-sync#2, absadiki/subsai#67,
# WEIFENG2333/VideoCaptioner#796; CTranslate2's src/cuda/utils.h prints "CUDA failed with error " + the string).
CT2 = "ctranslate2-cuda-build-on-amd-gpu"
CT2_FIRES = {
    "whisperx": ("  File \"/home/user/venv/lib/python3.11/site-packages/faster_whisper/transcribe.py\", line 663, in "
                 "__init__\n    self.model = ctranslate2.models.Whisper(\nRuntimeError: CUDA failed with error CUDA "
                 "driver version is insufficient for CUDA runtime version"),
    "xxl log": ("Standalone Faster-Whisper-XXL r245.2 running on: CUDA\n2025-09-04 00:21:30 - faster_whisper - ERROR - "
                "RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA runtime version"),
}
CT2_NEAR = {
    # a ROCm build of CTranslate2 says ROCm-capable: it is HIP's device lookup, another cause
    "rocm build": "RuntimeError: CUDA failed with error no ROCm-capable device is detected",
    "oom": "RuntimeError: CUDA failed with error out of memory",
}


@pytest.mark.parametrize("name", sorted(CT2_FIRES))
def test_ctranslate2_cuda_build_is_a_cause(name: str) -> None:
    found = _found(RX6800, CT2_FIRES[name])
    assert CT2 in found
    assert found[CT2].to_check is None
    assert 'device="cpu"' in found[CT2].fix


@pytest.mark.parametrize("name", sorted(CT2_NEAR))
def test_ctranslate2_cuda_build_near_misses(name: str) -> None:
    assert CT2 not in _ids(RX6800, CT2_NEAR[name])


def test_ctranslate2_cuda_line_beside_nvidia_smi_is_no_cause() -> None:
    """An NVIDIA driver with an old CUDA prints the same words: beside an AMD GPU the line may be either GPU's (to
    check, tests/test_known_issues_review_K7.py); with no AMD GPU known it is not listed."""
    text = ("| NVIDIA-SMI 510.85.02    Driver Version: 510.85.02    CUDA Version: 11.6     |\n"
            "RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA runtime version")
    found = _found(RX6800, text)
    assert CT2 in found and found[CT2].to_check is not None
    assert CT2 not in _ids({}, text)


# Windows HIP 7 runtimes do not enumerate gfx1030 where HIP 6.4 does (ROCm/hip#3899, 'fix submitted'; ROCm/TheRock#2157;
# LM Studio's ROCm 7 engine: lmstudio-ai/lms#625, lmstudio-bug-tracker#2050, #2277 fixed with TheRock 7.14 gfx103X DLLs).
W7 = "windows-hip7-gfx1030-not-enumerated"
W7_FIRES = {
    "hipinfo": ('PS C:\\> & "C:\\Program Files\\AMD\\ROCm\\7.1\\bin\\hipInfo.exe"\ncheckHipErrors() HIP API error = 0100 '
                '"no ROCm-capable device is detected"'),
    "lm studio": ("Backend 'llama.cpp-win-x86_64-amd-rocm-avx2' requires gpu acceleration, but GPU survey on hardware "
                  "was unsuccessful with message 'Error trying to query ROCm gpus: No hip devices found!'"),
}
W7_NEAR = {
    # HIP 6 on Windows, or a Linux HIP: not this regression
    "hip 6.4": ('PS C:\\> & "C:\\Program Files\\AMD\\ROCm\\6.4\\bin\\hipInfo.exe"\ncheckHipErrors() HIP API error = 0100 '
                '"no ROCm-capable device is detected"'),
    "linux": "ggml_cuda_init: failed to initialize ROCm: no ROCm-capable device is detected",
}


@pytest.mark.parametrize("name", sorted(W7_FIRES))
def test_windows_hip7_gfx1030_is_a_cause(name: str) -> None:
    found = _found(RX6800, W7_FIRES[name])
    assert W7 in found
    assert found[W7].to_check is None
    assert "TheRock" in found[W7].fix


def test_windows_hip7_needs_gfx1030() -> None:
    # the same words on a gfx1100 are HIP's general no-device failure, not this regression
    assert W7 not in _ids({"gpus": [{"gfx": "gfx1100", "integrated": False}]}, W7_FIRES["hipinfo"])


@pytest.mark.parametrize("name", sorted(W7_NEAR))
def test_windows_hip7_gfx1030_near_misses(name: str) -> None:
    assert W7 not in _ids(RX6800, W7_NEAR[name])
