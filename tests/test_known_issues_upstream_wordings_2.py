"""Known issues fed with every wording upstream has printed for the same failure, round 2: Ollama, llama.cpp,
PyTorch, the kernel's amdgpu/amdkfd, ROCR's status strings and hipBLAS/rocBLAS status names.

A program's message changes between releases (Ollama's discovery lines in 0.1.x vs 0.3.x, the kernel's ring-timeout
and page-fault lines from 4.x to 6.x ...). A signature written from one thread's paste misses the others. Each case
quotes the wording from the upstream source named in its comment (owner/repo@commit:path), with the facts the issue
needs, and a near miss: a neighbouring message of the same program that means something else, which must stay silent.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_known_issues_texts import _facts, _ids

from wizard.diagnose import diagnose

pytestmark = pytest.mark.unit

RX580 = [{"gfx": "gfx803", "integrated": False}]
APU_780M = [{"gfx": "gfx1103", "integrated": True}]
RX6600 = [{"gfx": "gfx1032", "integrated": False}]

# (case name, issue id, text that must fire it, its facts, near miss, the near miss's facts)
CASES: list[tuple[str, str, str, dict[str, Any], str, dict[str, Any]]] = [
    # ollama/ollama@42e77e2 (v0.1.25):gpu/gpu.go logs slog.Info("AMD GPU too old, falling back to CPU " +
    # v.ToGFXString()). The near miss is the same file's line for an NVIDIA GPU below its minimum compute capability.
    ("ollama-0.1.25-amd-too-old", "ollama-amdgpu-too-old",
     'level=INFO source=gpu.go:161 msg="AMD GPU too old, falling back to CPU gfx803"',
     {"gpus": RX580},
     'level=INFO source=gpu.go:149 msg="CUDA GPU is too old. Falling back to CPU mode. Compute Capability detected: 3.5"',
     {"gpus": RX580}),
    # ollama/ollama@e87c780 (v0.1.29):gpu/amd_linux.go logs fmt.Sprintf("amdgpu [%d] too old %s", i, gfx) (and
    # ollama/ollama@9164b01 (v0.1.33):gpu/amd_windows.go "amdgpu [%s] too old gfx%d%d%x"). The near miss is Ollama
    # 0.32's line for a driver that is too old (ollama/ollama@b7871fc:discover/amd.go), another cause.
    ("ollama-0.1.29-amdgpu-n-too-old", "ollama-amdgpu-too-old",
     'level=WARN source=amd_linux.go:84 msg="amdgpu [0] too old gfx803"',
     {"gpus": RX580},
     'level=WARN source=amd.go:485 msg="AMD driver is too old. Update your AMD driver to enable GPU inference."',
     {"gpus": RX580}),
    # ollama/ollama@e87c780 (v0.1.29):gpu/amd_linux.go: "amdgpu [%d] appears to be an iGPU with %dM reported total
    # memory, skipping" where sysfs reports under IGPUMemLimit (1 GiB). The near miss is Ollama 0.32's allow-list
    # line (ollama/ollama@b7871fc:discover/runner.go), another issue's cause.
    ("ollama-0.1.29-igpu-memory", "ollama-igpu-vram-below-limit",
     'level=INFO source=amd_linux.go:217 msg="amdgpu [0] appears to be an iGPU with 512M reported total memory, '
     'skipping"',
     {"gpus": APU_780M},
     'level=INFO source=runner.go:405 msg="dropping integrated GPU; to enable, set OLLAMA_IGPU_ENABLE=1" id=0 '
     'library=ROCm compute=gfx1103',
     {"gpus": APU_780M}),
    # ollama/ollama@9164b01 (v0.1.33):gpu/amd_linux.go: slog.Info("amdgpu appears to be an iGPU, skipping", "gpu",
    # gpuID, "total", ...). The near miss is the Windows build's name-based skip of the same release
    # (gpu/amd_windows.go "iGPU detected skipping"): no VRAM below the limit involved.
    ("ollama-0.1.33-igpu-memory", "ollama-igpu-vram-below-limit",
     'level=INFO source=amd_linux.go:213 msg="amdgpu appears to be an iGPU, skipping" gpu=0 total="512.0 MiB"',
     {"gpus": APU_780M},
     'level=INFO source=amd_windows.go:99 msg="iGPU detected skipping" id=0',
     {"gpus": APU_780M}),
    # ollama/ollama@e87c780 (v0.1.29):gpu/amd_linux.go: "amdgpu [%d] %s is not supported by %s %v" (libDir, the
    # supported list). The near miss is the same file's line for a supported GPU ("amdgpu [%d] %s is supported").
    ("ollama-0.1.29-gfx-not-supported", "ollama-gpu-type-not-in-runtime",
     'level=WARN source=amd_linux.go:114 msg="amdgpu [0] gfx1032 is not supported by /tmp/ollama1234/rocm '
     '[gfx1030 gfx1100 gfx1101 gfx1102 gfx900 gfx906 gfx908 gfx90a gfx940 gfx941 gfx942]"',
     {"gpus": RX6600},
     'level=INFO source=amd_linux.go:119 msg="amdgpu [0] gfx1030 is supported"',
     {"gpus": RX6600}),
    # ollama/ollama@504a410 (v0.3.11):runners/common.go and @a420a45 (v0.5.7):server/routes.go log
    # slog.Info("Dynamic LLM libraries", "runners", runners): slog quotes the list. A list without rocm_* is an
    # archive without the ROCm runner; the near miss is the same line from an install that has it.
    ("ollama-0.3-runner-list-without-rocm", "ollama-rocm-runner-missing",
     'level=INFO source=common.go:49 msg="Dynamic LLM libraries" runners="[cpu cpu_avx cpu_avx2 cuda_v11 cuda_v12]"\n'
     'level=INFO source=amd_linux.go:345 msg="amdgpu is supported" gpu=0 gpu_type=gfx1100',
     {"gpus": [{"gfx": "gfx1100", "integrated": False}]},
     'level=INFO source=common.go:49 msg="Dynamic LLM libraries" runners="[cpu cpu_avx cpu_avx2 cuda_v11 '
     'rocm_v60102]"\nlevel=INFO source=amd_linux.go:345 msg="amdgpu is supported" gpu=0 gpu_type=gfx1100',
     {"gpus": [{"gfx": "gfx1100", "integrated": False}]}),
    # FreeBSDDesktop/kms-drm@93ee1a6 (Linux 4.18's drm tree as ported, branch drm-v4.18):drivers/gpu/drm/amd/amdgpu/
    # amdgpu_job.c: amdgpu_job_timedout's DRM_ERROR("ring %s timeout, last signaled seq=%u, last emitted seq=%u")
    # (the same since 4.9); 4.20 (@a49f7f9) dropped "last", as torvalds/linux@0014952 still says. The near miss is a
    # ring test failing at init (gfx_v8_0.c), not a job that stopped.
    ("kernel-4.x-ring-timeout", "gpu-ring-timeout",
     "[drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring sdma0 timeout, last signaled seq=573, last emitted seq=574",
     {"gpus": RX580},
     "[drm:gfx_v8_0_ring_test_ring [amdgpu]] *ERROR* amdgpu: ring 0 test failed (scratch(0xC040)=0xCAFEDEAD)",
     {"gpus": RX580}),
    # FreeBSDDesktop/kms-drm@a49f7f9 (4.20) and torvalds/linux@0014952: amdgpu_job.c "ring %s timeout, but soft
    # recovered" where the ring's soft recovery killed the waves. The near miss is the same driver's IB test failure.
    ("kernel-ring-timeout-soft-recovered", "gpu-ring-timeout",
     "amdgpu 0000:03:00.0: amdgpu: ring gfx_0.0.0 timeout, but soft recovered",
     {"gpus": RX6600},
     "[drm:amdgpu_device_init [amdgpu]] *ERROR* ib ring test failed (-110).",
     {"gpus": RX6600}),
    # FreeBSDDesktop/kms-drm@be776d6 (4.14):drivers/gpu/drm/amd/amdgpu/amdgpu_device.c: before "GPU reset begin!"
    # (4.16) a reset shows only as "GPU reset succeeded, trying to resume" / "GPU reset failed". The near miss is the
    # IB test of the same file.
    ("kernel-4.14-gpu-reset", "gpu-ring-timeout",
     "amdgpu 0000:01:00.0: GPU reset succeeded, trying to resume",
     {"gpus": RX580},
     "[drm:amdgpu_device_init [amdgpu]] *ERROR* ib ring test failed (-110).",
     {"gpus": RX580}),
    # Same file: amdgpu_device_init's dev_err "amdgpu_init failed" (4.16 renamed it "amdgpu_device_ip_init failed").
    # The near miss is its IB test failure, which init goes on past.
    ("kernel-4.14-amdgpu-init-failed", "amdgpu-init-failed",
     "amdgpu 0000:01:00.0: amdgpu_init failed",
     {"gpus": RX580},
     "[drm:amdgpu_device_init [amdgpu]] *ERROR* ib ring test failed (-110).",
     {"gpus": RX580}),
]


@pytest.mark.parametrize(("name", "issue_id", "text", "facts", "near", "near_facts"), CASES, ids=[c[0] for c in CASES])
def test_each_upstream_wording_fires_and_its_neighbour_does_not(name: str, issue_id: str, text: str,
                                                                facts: dict[str, Any], near: str,
                                                                near_facts: dict[str, Any]) -> None:
    assert issue_id in _ids(facts, text), name
    assert issue_id not in _ids(near_facts, near), name


def test_ollama_0_1_29_unsupported_gfx_line_is_to_check() -> None:
    """Ollama 0.1.29-0.1.32 print 'amdgpu [N] gfxNNNN is not supported by ...' for every GPU outside the bundled
    list, an integrated GPU beside a supported discrete one included (ollama/ollama@e87c780:gpu/amd_linux.go): the
    line alone brings the finding up to check, not as the cause."""
    line = ('level=WARN source=amd_linux.go:114 msg="amdgpu [1] gfx1036 is not supported by /tmp/ollama1234/rocm '
            '[gfx1030 gfx1100 gfx1101 gfx1102 gfx900 gfx906 gfx908 gfx90a gfx940 gfx941 gfx942]"')
    found = {f.id: f for f in diagnose(_facts({"gpus": RX6600}, line))}
    assert found["ollama-gpu-type-not-in-runtime"].to_check is not None
