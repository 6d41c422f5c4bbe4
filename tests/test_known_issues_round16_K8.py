"""Known issues for in-sample causes of the recorded machines of 2026-11-30 (helper K8, session 16).

Each issue rests on upstream source or the thread that found the cause; texts are written here, modelled on what the
tools print, not copied from a fixture; each issue has a near miss that must not fire it.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_known_issues_texts import _found, _ids

pytestmark = pytest.mark.unit

POLARIS: dict[str, Any] = {"gpus": [{"gfx": "gfx803", "integrated": False}]}
NO_FACTS: dict[str, Any] = {}


# ROCm/HIP@2e916d8 (rocm-3.5.0) rocclr/CMakeLists.txt: the HIP-ROCclr runtime is libamdhip64.so, with a
# libhip_hcc.so link to it; before ROCm 3.5 the HIP runtime library itself was libhip_hcc.so (packaging/hip-hcc.txt).
LIBS = "rocm-libraries-not-found"
LIBS_FIRES = {
    "tensorflow dso loader": (
        "2021-03-02 09:11:04.118230: W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load "
        "dynamic library 'libhip_hcc.so'; dlerror: libhip_hcc.so: cannot open shared object file: No such file or "
        "directory\nAborted (core dumped)"),
    "versioned soname": ("ImportError: libhip_hcc.so.3: cannot open shared object file: No such file or directory"),
}
LIBS_NEAR = {
    "opened": ("2021-03-02 09:11:04.118230: I tensorflow/stream_executor/platform/default/dso_loader.cc:44] "
               "Successfully opened dynamic library libhip_hcc.so"),
    "other library": ("Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open "
                      "shared object file: No such file or directory"),
}


@pytest.mark.parametrize("name", sorted(LIBS_FIRES))
def test_libhip_hcc_not_found_is_a_cause(name: str) -> None:
    found = _found(POLARIS, LIBS_FIRES[name])
    assert LIBS in found
    assert found[LIBS].to_check is None


@pytest.mark.parametrize("name", sorted(LIBS_NEAR))
def test_libhip_hcc_near_misses(name: str) -> None:
    assert LIBS not in _ids(POLARIS, LIBS_NEAR[name])


# AUTOMATIC1111/stable-diffusion-webui@80adb69 webui.sh: gpu_info=$(lspci | grep VGA); an "AMD" match with
# TORCH_COMMAND unset sets TORCH_COMMAND to the ROCm torch (AUTOMATIC1111/stable-diffusion-webui#9970).
IGPU = "launcher-picks-rocm-torch-for-amd-igpu"
INSTALL_LOG = ("Installing torch and torchvision\nLooking in indexes: https://download.pytorch.org/whl/rocm5.4.2\n"
               "Collecting torch==2.0.1+rocm5.4.2\n")
IGPU_FIRES = {
    "statement": ("webui.sh saw the Radeon iGPU of my Ryzen laptop and installed the ROCm build of torch, but the "
                  "laptop renders on its GeForce RTX 3060.\n" + INSTALL_LOG
                  + "RuntimeError: Torch is not able to use GPU; add --skip-torch-cuda-test to COMMANDLINE_ARGS"),
    "because": ("It installs ROCm torch because lspci lists the integrated AMD graphics, while my dGPU is an "
                "NVIDIA card.\n" + INSTALL_LOG),
}
IGPU_NEAR = {
    # a desktop whose only GPU is a discrete AMD one: the ROCm torch is the right one
    "discrete amd": ({"gpus": [{"gfx": "gfx1101", "integrated": False}]},
                     INSTALL_LOG + "Launching Web UI with arguments:\nSegmentation fault (core dumped)"),
    # the same words, on a machine detection shows has a discrete AMD GPU
    "statement on a discrete amd machine": ({"gpus": [{"gfx": "gfx1030", "integrated": False}]},
                                            IGPU_FIRES["statement"]),
    # an APU-only laptop: the iGPU is the GPU it computes on, nothing else is named
    "apu only": (NO_FACTS, "The launcher detected my iGPU and installed the ROCm torch, then HIP error: invalid "
                           "device function\n" + INSTALL_LOG),
}


@pytest.mark.parametrize("name", sorted(IGPU_FIRES))
def test_launcher_rocm_torch_for_igpu_is_a_cause(name: str) -> None:
    found = _found(NO_FACTS, IGPU_FIRES[name])
    assert IGPU in found
    assert found[IGPU].to_check is None


@pytest.mark.parametrize("name", sorted(IGPU_NEAR))
def test_launcher_rocm_torch_for_igpu_near_misses(name: str) -> None:
    facts, text = IGPU_NEAR[name]
    assert IGPU not in _ids(facts, text)


def test_launcher_rocm_torch_for_igpu_from_detected_facts_is_to_check() -> None:
    """Detection alone (an AMD iGPU beside an NVIDIA GPU, a ROCm torch in a venv): a risk, listed to check."""
    facts = {"gpus": [{"gfx": "gfx1103", "integrated": True}], "other_gpus": ["10de:28e0 NVIDIA AD107M"],
             "origin": "live", "python_envs": [{"torch": "2.0.1+rocm5.4.2", "build": "rocm"}]}
    found = _found(facts, "")
    assert IGPU in found
    assert found[IGPU].to_check is not None


def test_launcher_rocm_torch_for_igpu_needs_the_other_gpu() -> None:
    """The same iGPU and ROCm torch, detected on a machine with no other vendor's GPU: not this issue."""
    facts = {"gpus": [{"gfx": "gfx1103", "integrated": True}], "origin": "live",
             "python_envs": [{"torch": "2.0.1+rocm5.4.2", "build": "rocm"}]}
    assert IGPU not in _ids(facts, "")


# ROCm/clr@f9f995c rocclr/device/rocm/rocvirtual.cpp: a kernel asking for a hidden hostcall buffer without PCIe
# atomics gets LogError("Pcie atomics not enabled, hostcall not supported"); pytorch/pytorch#94891, #103973, #113098.
HOST = "torch-hostcall-needs-pcie-atomics"
VEGA: dict[str, Any] = {"gpus": [{"gfx": "gfx906", "integrated": False}]}
HOST_FIRES = {
    "runtime log": (":3:rocvirtual.cpp           :2897: 0304631222 us: [pid:16    tid:0x7f54] ShaderName : "
                    "_ZN2at6native13reduce_kernel\n:1:rocvirtual.cpp           :3009: 0304631230 us: [pid:16    "
                    "tid:0x7f54] Pcie atomics not enabled, hostcall not supported\n:1:rocvirtual.cpp           :3344: "
                    "0304631232 us: [pid:16    tid:0x7f54] AQL dispatch failed!"),
    "stated": ("Closing: it was the missing PCIe atomics problem of my old FX board, fixed in the PyTorch nightly "
               "(https://github.com/pytorch/pytorch/pull/113098)."),
}
HOST_NEAR = {
    # KFD drops the GPU itself: pcie-atomics-rejected, not this
    "kfd skipped": ("[    3.481022] kfd kfd: amdgpu: skipped device 1002:699f, PCI rejects atomics 730<0 (or 0<0)\n"
                    "I think it is the missing PCIe atomics problem."),
    "atomics supported": "My board is fine: PCIe atomics supported, AtomicOpsCap: 32bit+ 64bit+ 128bitCAS-",
}


@pytest.mark.parametrize("name", sorted(HOST_FIRES))
def test_hostcall_needs_pcie_atomics_is_a_cause(name: str) -> None:
    found = _found(VEGA, HOST_FIRES[name])
    assert HOST in found
    assert found[HOST].to_check is None
    assert "pcie-atomics-rejected" not in found


@pytest.mark.parametrize("name", sorted(HOST_NEAR))
def test_hostcall_needs_pcie_atomics_near_misses(name: str) -> None:
    assert HOST not in _ids(VEGA, HOST_NEAR[name])


# PaddlePaddle/Paddle#52732: the paddlepaddle-rocm develop wheel fails its first operator on a Hygon Z100 DCU with
# Hygon's DTK; a whl Hygon built for DTK runs. Paddle's ROCm code (paddle/phi/backends/gpu/rocm/rocm_info.cc) names
# Hygon DTK 21.04 and 22.04 as what it is built for.
PADDLE = "paddle-rocm-wheel-not-built-for-hygon-dtk"
PADDLE_FIRES = {
    "run_check": ("DCU: Hygon Z100, DTK 23.04\n$ python -c 'import paddle; paddle.utils.run_check()'\nRunning verify "
                  "PaddlePaddle program ...\nExternalError: Hip error(1), invalid argument. (at "
                  "/paddle/paddle/phi/backends/gpu/rocm/rocm_info.cc:137)\n  [operator < fill_constant > error]"),
}
PADDLE_NEAR = {
    # the same failure on an AMD Radeon with AMD's ROCm: nothing says DTK or a Hygon DCU
    "amd radeon": ("ROCm 5.4.3 on an RX 6800\nExternalError: Hip error(1), invalid argument. (at "
                   "/paddle/paddle/phi/backends/gpu/rocm/rocm_info.cc:137)\n  [operator < fill_constant > error]"),
    # a Hygon DCU in DTK's container whose Paddle sees no GPU: another failure
    "no gpu found": ("DCU: Hygon Z100, DTK 24.04\nUserWarning: You are using GPU version Paddle, but your CUDA device "
                     "is not set properly. CPU device will be used by default."),
}


@pytest.mark.parametrize("name", sorted(PADDLE_FIRES))
def test_paddle_rocm_wheel_on_hygon_dtk_is_a_cause(name: str) -> None:
    found = _found(NO_FACTS, PADDLE_FIRES[name])
    assert PADDLE in found
    assert found[PADDLE].to_check is None


@pytest.mark.parametrize("name", sorted(PADDLE_NEAR))
def test_paddle_rocm_wheel_on_hygon_dtk_near_misses(name: str) -> None:
    assert PADDLE not in _ids(NO_FACTS, PADDLE_NEAR[name])
