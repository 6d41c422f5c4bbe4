"""Known issues for causes that recur across users' threads (helper R2).

Each cause was confirmed in at least two independent threads (the issue's sources). Texts below are written
after those threads, not copied from them, and each issue has a near miss that must not fire.
"""

from __future__ import annotations


import pytest
from test_known_issues_texts import _found


pytestmark = pytest.mark.unit

RX6800 = {"gpus": [{"gfx": "gfx1030", "integrated": False}]}
R9700 = {"gpus": [{"gfx": "gfx1201", "integrated": False}]}


# ggml's CU_CHECK for HIP (ggml-org/llama.cpp@026f95b:ggml/src/ggml-cuda/vendors/hip.h):
# GGML_ABORT("HipVMM Failure: %s\n", hipGetErrorString(err)).
VMM_OOM = (
    "ggml_cuda_init: found 1 ROCm devices:\n"
    "  Device 0: AMD Radeon RX 6800, compute capability 10.3, VMM: yes\n"
    "llm_load_tensors: offloaded 33/33 layers to GPU\n"
    "/build/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:444: HipVMM Failure: out of memory\n"
    "Aborted (core dumped)")
VMM_INVALID = (
    "ggml/src/ggml-cuda/ggml-cuda.cu:648: HipVMM Failure: invalid argument\n"
    "ggml_cuda_pool_vmm::alloc()               libggml-hip.so\n")


def test_hip_vmm_failure_out_of_memory_is_a_cause() -> None:
    found = _found(RX6800, VMM_OOM)
    f = found["ggml-hip-vmm-pool-failure"]
    assert f.to_check is None
    assert any("GGML_HIP_NO_VMM=ON" in c for c in f.fix_commands)


def test_hip_vmm_failure_invalid_argument_fires() -> None:
    assert "ggml-hip-vmm-pool-failure" in _found(R9700, VMM_INVALID)


def test_vmm_words_without_the_abort_do_not_fire() -> None:
    quiet = ("ggml_cuda_init: found 1 ROCm devices:\n"
             "  Device 0: AMD Radeon AI PRO R9700, gfx1201 (0x1201), VMM: no, Wave Size: 32\n"
             "system_info: ROCm : NO_VMM = 1 | PEER_MAX_BATCH_SIZE = 128\n"
             "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 573.07 MiB on device 0: "
             "cudaMalloc failed: out of memory")
    assert "ggml-hip-vmm-pool-failure" not in _found(R9700, quiet)
    cuda = "ggml-cuda.cu:476: CUDA error: out of memory\n  cuMemAddressReserve(&pool_addr, CUDA_POOL_VMM_MAX_SIZE, 0, 0, 0)"
    assert "ggml-hip-vmm-pool-failure" not in _found(R9700, cuda)


# ROCm/Tensile@e0417a4:Tensile/Source/lib/source/ContractionSolution.cpp throws
# "Alpha value <x> doesn't match that set in problem: <y>"; rocBLAS prints it after its own line.
ALPHA = (
    "Processing Prompt (24 / 24 tokens)\n"
    "rocBLAS error: Tensile solution found, but exception thrown for { a_type: \"f16_r\", b_type: \"f16_r\", "
    "c_type: \"f16_r\", d_type: \"f16_r\", compute_type: \"f16_r\", transA: 'T', transB: 'N', M: 4096, N: 24, "
    "K: 4096, alpha: 1, beta: 0, batch_count: 1 }\n"
    "Alpha value 7.21875 doesn't match that set in problem: 1\n"
    "This message will be only be displayed once, unless the ROCBLAS_VERBOSE_TENSILE_ERROR environment "
    "variable is set.\n"
    "ROCm error: CUBLAS_STATUS_INTERNAL_ERROR\n"
    "  current device: 0, in function ggml_cuda_op_mul_mat_cublas at ggml/src/ggml-cuda/ggml-cuda.cu:1287")


def test_fp16_alpha_mismatch_is_to_check() -> None:
    f = _found(RX6800, ALPHA)["rocblas-fp16-alpha-mismatch-source-build"]
    assert f.to_check is not None  # the line does not show how the installed rocBLAS was built
    assert f.shows_failure
    assert "Docker" in f.fix


def test_other_tensile_exceptions_and_a_bare_internal_error_do_not_fire() -> None:
    beta = ALPHA.replace("Alpha value 7.21875 doesn't match that set in problem: 1",
                         "Beta value 2 doesn't match that set in problem: 0")
    assert "rocblas-fp16-alpha-mismatch-source-build" not in _found(RX6800, beta)
    bare = ("ROCm error: CUBLAS_STATUS_INTERNAL_ERROR\n"
            "  current device: 0, in function ggml_cuda_op_mul_mat_cublas at ggml/src/ggml-cuda/ggml-cuda.cu:1287")
    assert "rocblas-fp16-alpha-mismatch-source-build" not in _found(RX6800, bare)
    no_solution = ("rocBLAS error: No Tensile solution found for { a_type: \"f16_r\", b_type: \"f16_r\", "
                   "alpha: 1 }")
    assert "rocblas-fp16-alpha-mismatch-source-build" not in _found(RX6800, no_solution)
