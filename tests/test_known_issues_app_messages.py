"""Older known issues fed with the failure messages applications print, taken from the applications' source.

Each case is a self-written text with the application's message, the facts the issue needs, and a near miss.
A message the application prints for several causes is a symptom signature: it names the issue as a cause only
where the facts establish that issue's condition, and otherwise lists it to check.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_known_issues_texts import _facts, _ids

from wizard.diagnose import diagnose
from wizard.record import replace

pytestmark = pytest.mark.unit

# AUTOMATIC1111/stable-diffusion-webui@208760f:modules/launch_utils.py prepare_environment(): raised when
# `import torch; assert torch.cuda.is_available()` fails, whatever the reason.
A1111 = ("Python 3.10.12 (main, Nov 20 2023, 15:14:05) [GCC 11.4.0]\n"
         "Version: v1.7.0\n"
         "Commit hash: cf2772fab0af5573da775e7437e6acdca424f26e\n"
         "Traceback (most recent call last):\n"
         "  File \"/home/user/stable-diffusion-webui/launch.py\", line 48, in <module>\n"
         "    main()\n"
         "  File \"/home/user/stable-diffusion-webui/modules/launch_utils.py\", line 386, in prepare_environment\n"
         "    raise RuntimeError(\n"
         "RuntimeError: Torch is not able to use GPU; add --skip-torch-cuda-test to COMMANDLINE_ARGS variable "
         "to disable this check")
RX7900 = [{"gfx": "gfx1100", "integrated": False}]


def _found(facts: dict[str, Any], text: str) -> dict[str, Any]:
    """Findings by id; an environment's "build" (rocm/cuda/cpu, which detection reads from the wheel) is set too."""
    made = _facts(facts, text)
    envs = tuple(replace(e, build=spec.get("build")) for e, spec in zip(made.python_envs, facts.get("python_envs", [])))
    return {f.id: f for f in diagnose(replace(made, python_envs=envs))}


def test_a1111_gpu_check_in_a_container_without_dev_kfd_is_that_cause() -> None:
    facts = {"gpus": RX7900, "in_container": True, "wsl": False, "kfd_present": False,
             "python_envs": [{"torch": "2.1.2+rocm5.6", "build": "rocm"}]}
    found = _found(facts, A1111)
    assert found["container-without-kfd-device"].to_check is None
    # the same line on a machine whose facts do not show this cause: not a cause
    plain = _found({"gpus": RX7900, "python_envs": [{"torch": "2.1.2+rocm5.6", "build": "rocm"}]}, A1111)
    assert "container-without-kfd-device" not in plain or plain["container-without-kfd-device"].to_check is not None


def test_a1111_gpu_check_alone_is_only_to_check() -> None:
    facts = {"gpus": RX7900, "python_envs": [{"torch": "2.1.2+rocm5.6", "build": "rocm"}]}
    found = _found(facts, A1111)
    assert found["hip-no-device"].to_check is not None
    assert "torch-not-rocm-build" not in found and "torch-cpu-build" not in found
    assert "hip-no-device" not in _ids(facts, "Launching Web UI with arguments: --skip-torch-cuda-test")


def test_llama_cpp_buffer_allocation_out_of_memory() -> None:
    """ggml-org/llama.cpp@f6d77a1:ggml/src/ggml-cuda/ggml-cuda.cu ggml_backend_cuda_buffer_type_alloc_buffer: the HIP
    build's cudaGetErrorString is hipGetErrorString, 'out of memory' for hipErrorOutOfMemory."""
    text = ("load_tensors: offloading 48 repeating layers to GPU\n"
            "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 18432.00 MiB on device 0: cudaMalloc failed: "
            "out of memory\n"
            "alloc_tensor_range: failed to allocate ROCm0 buffer of size 19327352832\n"
            "llama_model_load: error loading model: unable to allocate ROCm0 buffer")
    assert "hip-out-of-memory" in _ids({"gpus": RX7900}, text)
    near = ("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 18432.00 MiB on device 0: cudaMalloc failed: "
            "invalid device ordinal")
    assert "hip-out-of-memory" not in _ids({"gpus": RX7900}, near)


def test_xla_unsupported_amdgpu_version_for_jax() -> None:
    """openxla/xla@9ea4dd7:xla/service/platform_util.cc IsDeviceSupported, the XLA wording JAX prints."""
    text = ("$ python -c 'import jax; print(jax.devices())'\n"
            "I0000 00:00:1714644672.123456   4242 platform_util.cc:218] StreamExecutor ROCM device (0) is of "
            "unsupported AMDGPU version : gfx1031. The supported AMDGPU versions are gfx900, gfx906, gfx908, gfx90a, "
            "gfx940, gfx941, gfx942, gfx1030, gfx1100.\n"
            "RuntimeError: Unable to initialize backend 'rocm': INTERNAL: no supported devices found for platform ROCM")
    facts = {"gpus": [{"gfx": "gfx1031", "integrated": False}]}
    found = _found(facts, text)
    assert found["tf-xla-gpu-gfx-not-in-build"].to_check is None
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in found["tf-xla-gpu-gfx-not-in-build"].fix
    near = ("I0000 00:00:1714644672.123456   4242 service.cc:145] XLA service 0x55d0 initialized for platform ROCM\n"
            "I0000 00:00:1714644672.123500   4242 service.cc:153]   StreamExecutor device (0): AMD Radeon RX 6700 XT, "
            "AMDGPU ISA version: gfx1030")
    assert "tf-xla-gpu-gfx-not-in-build" not in _ids(facts, near)


def test_tensorflow_list_without_its_comma_ranks_above_the_plain_unsupported_gpu() -> None:
    """The 2.14.0.600 list reading 'gfx1030gfx1100' is the deeper cause of the same 'Ignoring visible gpu device'."""
    text = ("I tensorflow/core/common_runtime/gpu/gpu_device.cc:2266] Ignoring visible gpu device (device: 0, name: "
            "Radeon RX 7900 XTX, pci bus id: 0000:03:00.0) with AMDGPU version : gfx1100. The supported AMDGPU "
            "versions are gfx1030gfx1100, gfx900, gfx906, gfx908, gfx90a, gfx940, gfx941, gfx942.")
    ids = _ids({"gpus": RX7900}, text)
    assert ids.index("tf-rocm-supported-gfx-list-missing-comma") < ids.index("tf-xla-gpu-gfx-not-in-build")


def test_tensorflow_ignoring_a_gpu_is_to_check() -> None:
    """TensorFlow goes on with the GPUs it accepts, so its 'Ignoring visible gpu device' line is listed to check."""
    text = ("I tensorflow/core/common_runtime/gpu/gpu_device.cc:2266] Ignoring visible gpu device (device: 0, name: "
            "AMD Radeon RX 7600, pci bus id: 0000:03:00.0) with AMDGPU version : gfx1102. The supported AMDGPU "
            "versions are gfx900, gfx906, gfx908, gfx90a, gfx940, gfx941, gfx942, gfx1030, gfx1100.")
    found = _found({"gpus": [{"gfx": "gfx1102", "integrated": False}]}, text)
    assert found["tf-xla-gpu-gfx-not-in-build"].to_check is not None


def test_ollama_filtering_a_rocm_device_that_did_not_initialize_is_to_check() -> None:
    """ollama/ollama@02725d3:discover/runner.go: the second discovery pass runs a runner per device and drops the
    ones it cannot start ('Expected during bootstrapping while we filter out unsupported AMD GPUs')."""
    text = ('time=2025-10-20T09:00:00.000Z level=DEBUG source=runner.go:146 msg="verifying if device is supported" '
            'library=/usr/lib/ollama/rocm description="AMD Radeon RX 6600" compute=gfx1032 id=0 pci_id=0000:03:00.0\n'
            'time=2025-10-20T09:00:01.000Z level=DEBUG source=runner.go:151 msg="filtering device which didn\'t fully '
            'initialize" id=0 libdir=/usr/lib/ollama/rocm pci_id=0000:03:00.0 library=ROCm\n'
            'time=2025-10-20T09:00:01.100Z level=INFO source=types.go:131 msg="inference compute" id=cpu library=cpu')
    facts = {"gpus": [{"gfx": "gfx1032", "integrated": False}]}
    found = _found(facts, text)
    assert found["ollama-gpu-type-not-in-runtime"].to_check is not None
    near = ('time=2025-10-20T09:00:01.000Z level=DEBUG source=runner.go:151 msg="filtering device which didn\'t fully '
            'initialize" id=GPU-5a1b libdir=/usr/lib/ollama/cuda_v12 pci_id=0000:01:00.0 library=CUDA')
    assert "ollama-gpu-type-not-in-runtime" not in _ids(facts, near)


def test_bitsandbytes_rocm_version_mismatch_report() -> None:
    """ROCm/bitsandbytes@41f21d4:bitsandbytes/cextension.py ErrorHandlerMockBNBNativeLibrary: the report raised at the
    first native call when the library for torch's ROCm version is absent."""
    text = ("RuntimeError: \n\U0001f6a8 ROCm VERSION MISMATCH \U0001f6a8\n"
            "Requested ROCm version:          6.4\n"
            "Detected PyTorch ROCm version:   6.4\n"
            "Available pre-compiled versions: \n  - 6.1\n  - 6.2\n\n"
            "This means:\nThe version you're trying to use is NOT distributed with this package")
    assert "bitsandbytes-no-binary-for-torch-rocm" in _ids({"gpus": RX7900}, text)
    near = ("RuntimeError: \n\U0001f6a8 CUDA VERSION MISMATCH \U0001f6a8\nRequested CUDA version:          12.8\n"
            "Detected PyTorch CUDA version:   12.8")
    assert "bitsandbytes-no-binary-for-torch-rocm" not in _ids({"gpus": RX7900}, near)


def test_bitsandbytes_import_time_line_alone_is_to_check() -> None:
    text = ("ERROR:bitsandbytes.cextension:bitsandbytes library load error: Configured ROCm binary not found at "
            "/home/user/venv/lib/python3.12/site-packages/bitsandbytes/libbitsandbytes_rocm64.so")
    found = _found({"gpus": RX7900}, text)
    assert found["bitsandbytes-no-binary-for-torch-rocm"].to_check is not None


# vllm-project/vllm@a545f8a:vllm/config/device.py DeviceConfig.__post_init__: no platform plugin found a device.
VLLM = ("(APIServer pid=1) INFO 10-20 09:00:00 [__init__.py:225] No platform detected, vLLM is running on "
        "UnspecifiedPlatform\n"
        "  File \"/usr/local/lib/python3.12/dist-packages/vllm/config/device.py\", line 58, in __post_init__\n"
        "    raise RuntimeError(\n"
        "RuntimeError: Failed to infer device type, please set the environment variable "
        "`VLLM_LOGGING_LEVEL=DEBUG` to turn on verbose logging to help debug the issue.")


def test_vllm_device_type_failure_in_a_container_without_dev_kfd_is_that_cause() -> None:
    facts = {"gpus": RX7900, "in_container": True, "wsl": False, "kfd_present": False}
    assert _found(facts, VLLM)["container-without-kfd-device"].to_check is None
    found = _found({"gpus": RX7900}, VLLM)
    assert found["hip-no-device"].to_check is not None
    assert "container-without-kfd-device" not in found or found["container-without-kfd-device"].to_check is not None


def test_flash_attention_rocm_port_refuses_a_radeon_gpu() -> None:
    """Dao-AILab/flash-attention@02c234b:csrc/flash_attn_rocm/flash_api.cpp mha_fwd: gfx90x or gfx94x only."""
    text = ("  File \"/opt/conda/lib/python3.10/site-packages/flash_attn/flash_attn_interface.py\", line 51, in "
            "_flash_attn_forward\n"
            "    out, q, k, v, out_padded, softmax_lse, S_dmask, rng_state = flash_attn_cuda.fwd(\n"
            "RuntimeError: FlashAttention only supports AMD MI200 GPUs or newer.")
    facts = {"gpus": RX7900}
    assert _found(facts, text)["flash-attention-ck-backend-mi-only"].to_check is None
    near = "RuntimeError: FlashAttention only support fp16 and bf16 data type"
    assert "flash-attention-ck-backend-mi-only" not in _ids(facts, near)


def test_vllm_kv_cache_too_small_for_max_model_len() -> None:
    """vllm-project/vllm@bbf906a:vllm/v1/core/kv_cache_utils.py check_enough_kv_cache_memory, second raise."""
    text = ("ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is "
            "needed, which is larger than the available KV cache memory (5.73 GiB). Based on the available memory, the "
            "estimated maximum model length is 46880. Try increasing `gpu_memory_utilization` or decreasing "
            "`max_model_len` when initializing the engine.")
    assert _found({"gpus": RX7900}, text)["vllm-kv-cache-memory-insufficient"].to_check is None


def test_xla_no_supported_rocm_device_alone_is_to_check() -> None:
    """openxla/xla@9ea4dd7:xla/service/platform_util.cc: raised when no device passed IsDeviceSupported or when none
    could be opened, so on its own it is listed to check."""
    text = "RuntimeError: Unable to initialize backend 'rocm': INTERNAL: no supported devices found for platform ROCM"
    found = _found({"gpus": [{"gfx": "gfx1031", "integrated": False}]}, text)
    assert found["tf-xla-gpu-gfx-not-in-build"].to_check is not None


def test_sdnext_finding_no_rocm_agent() -> None:
    """vladmandic/sdnext@fe96285:installer.py install_rocm_zluda: the ROCm agent enumeration returned no GPU."""
    text = ("09:00:00-123456 INFO     Python: version=3.11.9 platform=Linux\n"
            "09:00:00-234567 WARNING  ROCm: no agent was found\n"
            "09:00:00-345678 INFO     Using CPU-only torch")
    container = {"gpus": RX7900, "in_container": True, "wsl": False, "kfd_present": False}
    assert _found(container, text)["container-without-kfd-device"].to_check is None
    assert _found({"gpus": RX7900}, text)["hip-no-device"].to_check is not None
    assert "hip-no-device" not in _ids({"gpus": RX7900}, "09:00:00-234567 INFO     ROCm: agents=['gfx1100']")
