"""Known issues from application documentation and the messages the applications print (helper D3).

Each case quotes the upstream message (Ollama's troubleshooting guide and discovery code, PyTorch's SDPA
checks that ComfyUI's README points at) in a self-written log, and pairs it with a
near miss that must not fire: the same words in another context, another library, or another message.
"""

from __future__ import annotations


import pytest
from test_known_issues_texts import _found


pytestmark = pytest.mark.unit

RX7900 = {"gpus": [{"gfx": "gfx1100", "integrated": False}]}
RX6700 = {"gpus": [{"gfx": "gfx1031", "integrated": False}]}


# ollama/ollama@2f9a68f:docs/troubleshooting.mdx "AMD Driver Version Mismatch"; the line as
# ollama@bcf6d55 (v0.18.1):discover/runner.go logs it, its error from ml/device.go GetDevicesFromRunner.
OLLAMA_TIMEOUT = (
    'time=2026-03-20T09:12:01.512Z level=INFO source=runner.go:67 msg="discovering available GPUs..."\n'
    'time=2026-03-20T09:12:31.514Z level=INFO source=runner.go:464 msg="failure during GPU discovery" '
    'OLLAMA_LIBRARY_PATH="[/usr/local/lib/ollama /usr/local/lib/ollama/rocm]" extra_envs=map[] '
    'error="failed to finish discovery before timeout"\n'
    'time=2026-03-20T09:12:31.600Z level=INFO source=types.go:60 msg="inference compute" id=cpu library=cpu')


def test_ollama_rocm_discovery_timeout_is_to_check() -> None:
    found = _found(RX7900, OLLAMA_TIMEOUT)
    f = found["ollama-rocm7-driver-too-old-discovery-timeout"]
    assert f.to_check is not None  # the guide says "typically": the loaded driver is not shown by the line
    assert "cat /sys/module/amdgpu/version" in f.fix_commands


def test_ollama_debug_bootstrap_line_of_thirty_seconds_is_to_check() -> None:
    text = ('time=2026-03-20T09:12:31.514Z level=DEBUG source=runner.go:437 msg="bootstrap discovery took" '
            'duration=30.001853021s OLLAMA_LIBRARY_PATH="[/usr/local/lib/ollama /usr/local/lib/ollama/rocm]" '
            'extra_envs=map[]')
    assert "ollama-rocm7-driver-too-old-discovery-timeout" in _found(RX7900, text)


def test_ollama_discovery_timeout_of_another_library_or_a_quick_bootstrap_does_not_fire() -> None:
    cuda = OLLAMA_TIMEOUT.replace("/usr/local/lib/ollama/rocm", "/usr/local/lib/ollama/cuda_v13")
    assert "ollama-rocm7-driver-too-old-discovery-timeout" not in _found(RX7900, cuda)
    crashed = OLLAMA_TIMEOUT.replace("failed to finish discovery before timeout", "runner crashed")
    assert "ollama-rocm7-driver-too-old-discovery-timeout" not in _found(RX7900, crashed)
    quick = ('time=2026-03-20T09:12:02.100Z level=DEBUG source=runner.go:437 msg="bootstrap discovery took" '
             'duration=301.5ms OLLAMA_LIBRARY_PATH="[/usr/local/lib/ollama /usr/local/lib/ollama/rocm]"')
    assert "ollama-rocm7-driver-too-old-discovery-timeout" not in _found(RX7900, quick)


# ollama/ollama@fb30760:discover/amd.go filterUnsupportedROCmDevices (Ollama 0.30 and later).
OLLAMA_DROPPING = (
    'time=2026-08-30T10:00:00.000Z level=WARN source=amd.go:470 msg="dropping ROCm device \u2014 no rocblas support '
    'for gfx target" device="AMD Radeon RX 6700 XT" gfx_target=gfx1031 '
    'supported="map[gfx1030:true gfx1100:true gfx1101:true gfx1102:true gfx1200:true gfx1201:true]" '
    'hint="set HSA_OVERRIDE_GFX_VERSION to map to a supported target"')


def test_ollama_030_dropping_a_rocm_device_without_rocblas_kernels_is_the_cause() -> None:
    f = _found(RX6700, OLLAMA_DROPPING)["ollama-gpu-type-not-in-runtime"]
    assert f.to_check is None
    assert ("HSA_OVERRIDE_GFX_VERSION", "10.3.0") in f.fix_env


def test_ollama_dropping_another_device_kind_does_not_fire() -> None:
    near = 'level=INFO source=runner.go:405 msg="dropping integrated GPU; to enable, set OLLAMA_IGPU_ENABLE=1"'
    assert "ollama-gpu-type-not-in-runtime" not in _found(RX6700, near)


# pytorch/pytorch@21c3369:aten/src/ATen/native/transformers/cuda/sdp_utils.cpp (PyTorch 2.5, gfx1100 only) and
# pytorch/pytorch@001f694 (the later check that asks AOTriton); ComfyUI's README names the variable.
@pytest.mark.parametrize("message", [
    "Flash attention support on Navi31 GPU is still experimental. Enable it with "
    "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1.",
    "Memory Efficient attention on Navi31 GPU is still experimental. Enable it with "
    "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1.",
    "Flash Efficient attention on Current AMD GPU is still experimental. Enable it with "
    "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1.",
    "Mem Efficient attention on Current AMD GPU is still experimental. Enable it with "
    "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1.",
])
def test_aotriton_experimental_attention_is_an_info_note(message: str) -> None:
    text = ("/home/user/ComfyUI/comfy/ldm/modules/attention.py:456: UserWarning: " + message +
            " (Triggered internally at /pytorch/aten/src/ATen/native/transformers/hip/sdp_utils.cpp:207.)\n"
            "  out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)")
    f = _found(RX7900, text)["torch-aotriton-experimental-attention-off"]
    assert f.severity == "info" and f.to_check is not None
    assert ("TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL", "1") in f.fix_env


def test_attention_not_compiled_for_the_arch_is_not_the_experimental_note() -> None:
    near = ("UserWarning: Flash attention was not compiled for current AMD GPU architecture. Attempting to run on "
            "architecture gfx1031")
    assert "torch-aotriton-experimental-attention-off" not in _found(RX6700, near)
