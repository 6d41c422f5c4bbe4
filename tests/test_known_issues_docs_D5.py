"""Known issues from PyTorch's own ROCm messages in its source (helper D5, session 14).

Each text quotes the message as PyTorch prints it: the AOTriton SDPA "still experimental" warning
(aten/src/ATen/native/transformers/cuda/sdp_utils.cpp), the allocator's "expandable_segments not supported on this
platform" (c10/cuda/CUDAAllocatorConfig.h, hipified to c10/hip/HIPAllocatorConfig.h) and torch.utils.cpp_extension's
"No ROCm runtime is found, using ROCM_HOME=..."; each with a near miss that must not fire: another attention
message, the variable already set, another allocator warning, the same words about no ROCm install at all.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_known_issues_texts import _found, _ids

from wizard.kb import load_kb

pytestmark = pytest.mark.unit

RX7900: dict[str, Any] = {"gpus": [{"gfx": "gfx1100", "integrated": False}]}
STRIX_HALO: dict[str, Any] = {"gpus": [{"gfx": "gfx1151", "integrated": True}]}


# pytorch/pytorch@21c3369:aten/src/ATen/native/transformers/cuda/sdp_utils.cpp (arch == "gfx1100"):
# TORCH_WARN_ONCE("Flash attention support on Navi31 GPU is still experimental." " Enable it with
# TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1.") and "Memory Efficient attention on Navi31 GPU is still experimental.";
# @001f694 (aotriton::isArchExperimentallySupported): "Flash Efficient attention on Current AMD GPU is still
# experimental." / "Mem Efficient attention on Current AMD GPU is still experimental." c10/util/env.cpp@27cc360
# check_env(): only "1" is true.
AOTRITON_FIRES = {
    "navi31 flash": (RX7900, "/home/user/venv/lib/python3.10/site-packages/transformers/models/llama/modeling_llama.py:"
                             "566: UserWarning: Flash attention support on Navi31 GPU is still experimental. Enable it "
                             "with TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1. (Triggered internally at /pytorch/aten/src/"
                             "ATen/native/transformers/hip/sdp_utils.cpp:207.)"),
    "navi31 mem efficient": (RX7900, "UserWarning: Memory Efficient attention on Navi31 GPU is still experimental. "
                                     "Enable it with TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1."),
    "current gpu flash": (STRIX_HALO, "UserWarning: Flash Efficient attention on Current AMD GPU is still "
                                      "experimental. Enable it with TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1."),
    "current gpu mem efficient": (STRIX_HALO, "torch/nn/modules/transformer.py:902: UserWarning: Mem Efficient "
                                              "attention on Current AMD GPU is still experimental. Enable it with "
                                              "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1."),
}
AOTRITON_NEAR = {
    # The same function's other refusal: the GPU is not in the AOTriton build at all (a different failure).
    "not compiled for the gpu": (STRIX_HALO, "UserWarning: Flash attention was not compiled for current AMD GPU "
                                             "architecture. Attempting to run on architecture gfx1151"),
    # The variable is already 1: this warning cannot be from the run whose environment was read.
    "variable already set": ({**RX7900, "env": {"TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL": "1"}},
                             "UserWarning: Flash attention support on Navi31 GPU is still experimental. Enable it "
                             "with TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1."),
    "cuda flash range": (RX7900, "UserWarning: Flash attention only supports gpu architectures in the range "
                                 "[sm80, sm90]. Attempting to run on a sm 7.5 gpu."),
}


@pytest.mark.parametrize("name", sorted(AOTRITON_FIRES))
def test_aotriton_experimental_note_on_pytorchs_words(name: str) -> None:
    spec, text = AOTRITON_FIRES[name]
    found = _found(spec, text)
    assert "torch-aotriton-experimental-attention-off" in found
    assert found["torch-aotriton-experimental-attention-off"].severity == "info"


@pytest.mark.parametrize("name", sorted(AOTRITON_NEAR))
def test_aotriton_experimental_near_misses(name: str) -> None:
    spec, text = AOTRITON_NEAR[name]
    assert "torch-aotriton-experimental-attention-off" not in _ids(spec, text)


def test_aotriton_experimental_fix_sets_the_variable_to_1() -> None:
    issue = load_kb().known_issue("torch-aotriton-experimental-attention-off")
    assert issue is not None
    assert issue.fix.env == {"TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL": "1"}


# pytorch/pytorch@5e8d0b1:c10/cuda/CUDAAllocatorConfig.h expandable_segments(): #ifndef
# PYTORCH_C10_DRIVER_API_SUPPORTED TORCH_WARN_ONCE("expandable_segments not supported on this platform"); the ROCm
# build hipifies it to c10/hip/HIPAllocatorConfig.h, and c10/hip/CMakeLists.txt@01d5c2c does not define the macro.
EXPANDABLE_FIRES = {
    "python warning": ("/home/user/.venv/lib/python3.11/site-packages/invokeai/backend/model_manager/load/"
                       "model_cache/cached_model/cached_model_with_partial_load.py:219: UserWarning: "
                       "expandable_segments not supported on this platform (Triggered internally at "
                       "/pytorch/c10/hip/HIPAllocatorConfig.h:29.)"),
    "c10 log line": ("[W1001 01:18:06.108184462 HIPAllocatorConfig.h:28] Warning: expandable_segments not supported "
                     "on this platform (function operator())"),
}
EXPANDABLE_NEAR = {
    "setting it": "export PYTORCH_HIP_ALLOC_CONF=expandable_segments:True",
    "oom advice": ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. If reserved but unallocated "
                   "memory is large try setting PYTORCH_HIP_ALLOC_CONF=expandable_segments:True to avoid "
                   "fragmentation."),
    "another allocator warning": ("UserWarning: Ignoring invalid value for boolean flag "
                                  "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL: truevalid values are 0 or 1."),
}


@pytest.mark.parametrize("name", sorted(EXPANDABLE_FIRES))
def test_expandable_segments_unsupported_note(name: str) -> None:
    found = _found(RX7900, EXPANDABLE_FIRES[name])
    assert "torch-expandable-segments-unsupported" in found
    assert found["torch-expandable-segments-unsupported"].severity == "info"


@pytest.mark.parametrize("name", sorted(EXPANDABLE_NEAR))
def test_expandable_segments_near_misses(name: str) -> None:
    assert "torch-expandable-segments-unsupported" not in _ids(RX7900, EXPANDABLE_NEAR[name])


# ROCm/pytorch@29f9112:torch/utils/cpp_extension.py _find_rocm_home(): if rocm_home and torch.version.hip is None:
# print(f"No ROCm runtime is found, using ROCM_HOME='{rocm_home}'"); ROCM_HOME is computed when the module loads.
NO_HIP_FIRES = {
    "vllm start": ("$ vllm serve ./models/qwen\nNo ROCm runtime is found, using ROCM_HOME='/opt/rocm'\n"
                   "INFO 02-06 00:35:51 api_server.py:651] vLLM API server version 0.6.5"),
    "versioned install": ("cpu = _conversion_method_template(device=torch.device(\"cpu\"))\n"
                          "No ROCm runtime is found, using ROCM_HOME='/opt/rocm-6.4.1'"),
}
NO_HIP_NEAR = {
    # Another project's logger prints the same words when it finds no ROCm at all: the opposite situation.
    "no rocm at all": "WARNING No ROCm runtime is found, using ROCM_HOME='None'",
    "found": "INFO ROCm runtime is found at /opt/rocm",
    "cuda twin": "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'",
}


@pytest.mark.parametrize("name", sorted(NO_HIP_FIRES))
def test_no_hip_runtime_is_the_cause(name: str) -> None:
    found = _found(RX7900, NO_HIP_FIRES[name])
    assert "torch-no-hip-runtime-rocm-home" in found
    assert found["torch-no-hip-runtime-rocm-home"].to_check is None


@pytest.mark.parametrize("name", sorted(NO_HIP_NEAR))
def test_no_hip_runtime_near_misses(name: str) -> None:
    assert "torch-no-hip-runtime-rocm-home" not in _ids(RX7900, NO_HIP_NEAR[name])


def test_no_hip_runtime_fix_reinstalls_the_rocm_wheel() -> None:
    issue = load_kb().known_issue("torch-no-hip-runtime-rocm-home")
    assert issue is not None
    assert issue.fix.plan == "pip-only"
