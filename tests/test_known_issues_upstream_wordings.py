"""Known issues fed with every wording upstream has printed for the same failure, release by release.

A program's message changes between releases (HIP 4 vs 6 vs 7, rocBLAS built with YAML or MessagePack libraries,
rocminfo before and after it read the group that owns /dev/kfd, Ollama's discovery lines in 0.1.x vs 0.3.x, the
kernel's ring-timeout lines from 4.x to 6.x ...). A signature written from one thread's paste
misses the others. Each case quotes the wording from the upstream source named in its comment (owner/repo@commit:
path), with the facts the issue needs, and a near miss: a neighbouring message of the same program that means
something else, which must stay silent.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_known_issues_texts import _facts, _ids

from wizard.diagnose import SYMPTOM, diagnose

pytestmark = pytest.mark.unit

RX7900 = [{"gfx": "gfx1100", "integrated": False}]
STRIX_HALO = [{"gfx": "gfx1151", "integrated": True}]

# (case name, issue id, text that must fire it, its facts, near miss, the near miss's facts)
CASES: list[tuple[str, str, str, dict[str, Any], str, dict[str, Any]]] = [
    # docker/cli's `docker version` names the context and Docker Desktop's server ("Context: desktop-linux",
    # "Server: Docker Desktop 4.20.0 (109717)": a paste in beeware/briefcase#1082); Docker Desktop for Linux runs its
    # containers in a VM of its own (docker/docs@34b96f7:content/manuals/desktop/faqs/linuxfaqs.md), which has no
    # /dev/kfd. A symptom to check. The near miss is the host's own Docker Engine (context "default").
    ("docker-desktop-linux-context", "docker-desktop-linux-blocks-kfd",
     "Client: Docker Engine - Community\n Version:           24.0.2\n Context:           desktop-linux\n\n"
     "Server: Docker Desktop 4.20.0 (109717)\n Engine:\n  Version:          24.0.2\n"
     "docker: Error response from daemon: error gathering device information while adding custom device "
     "\"/dev/kfd\": no such file or directory.",
     {"gpus": RX7900},
     "Client: Docker Engine - Community\n Version:           24.0.2\n Context:           default\n\n"
     "Server: Docker Engine - Community\n Engine:\n  Version:          24.0.2",
     {"gpus": RX7900}),
    # ROCm/clr@f9f995c:rocclr/device/rocm/rocdevice.cpp Device::create: HIP (ROCclr, ROCm 5.6 on) refuses a device
    # for which the HSA runtime it loaded lists more than one ISA; seen where a distribution's older
    # libhsa-runtime64 was loaded beside AMD's ROCm (ROCm/legacy-rocm-build#6110: Ubuntu's 5.7.1 beside 7.2.1 on a
    # gfx1201). A symptom: the mixed stack is to check. The near miss is the next check's line, a device whose one
    # ISA this HIP does not know (another cause: a HIP too old for the GPU).
    ("hip-two-isas-mixed-runtimes", "distro-rocm-packages-shadow",
     "rocdevice.cpp:590 : HSA device gfx1201 (PCI ID 7551) has 2 ISAs but can only support a single ISA\n"
     "rocdevice.cpp:506 : Error creating new instance of Device.",
     {"gpus": [{"gfx": "gfx1201", "integrated": False}]},
     "Unsupported HSA device gfx1201 (PCI ID 7551) for ISA amdgcn-amd-amdhsa--gfx1201",
     {"gpus": [{"gfx": "gfx1201", "integrated": False}]}),
    # ROCm/rocm-systems@d78123a:projects/clr/hipamd/src/hip_fatbin.cpp FatBinaryInfo::ExtractFatBinaryUsingCOMGR: the
    # HIP 7 runtime's words where a fat binary has neither the device's own nor its generic target nor SPIR-V (it
    # then returns hipErrorInvalidImage, not hipErrorNoBinaryForGpu). The near miss is its info line for a device
    # served by the generic target.
    ("hip7-no-compatible-code-object", "no-binary-for-gpu",
     "No compatible code objects found for: gfx1151, value of HIP_FORCE_SPIRV_CODEOBJECT: 0\n"
     "RuntimeError: HIP error: device kernel image is invalid",
     {"gpus": STRIX_HALO},
     "Using generic code object for device: amdgcn-amd-amdhsa--gfx1151 co: amdgcn-amd-amdhsa--gfx11-generic",
     {"gpus": STRIX_HALO}),
    # ROCm/clr@f9f995c:hipamd/src/hip_error.cpp ihipGetErrorString: hipErrorNoBinaryForGpu's text (HIP 4.5 on; HIP
    # 3.5-4.3, ROCm/HIP@c3eb5cc:rocclr/hip_error.cpp, returned the code's name instead), as torch prints it ("HIP
    # error: %s"). The near miss is the text of hipErrorInvalidImage, another code.
    ("torch-no-kernel-image", "no-binary-for-gpu",
     "RuntimeError: HIP error: no kernel image is available for execution on the device\n"
     "HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be "
     "incorrect.",
     {"gpus": RX7900},
     "RuntimeError: HIP error: device kernel image is invalid",
     {"gpus": RX7900}),
    # The same text as llama.cpp's HIP build prints it: ggml-org/llama.cpp@f6d77a1:ggml/src/ggml-cuda/ggml-cuda.cu
    # ggml_cuda_error prints GGML_CUDA_NAME " error: %s", GGML_CUDA_NAME being "ROCm" under GGML_USE_HIP
    # (ggml-org/llama.cpp@dee003e:ggml/include/ggml-cuda.h). The near miss is the CUDA build's line: an NVIDIA
    # stack, no HIP code object involved.
    ("llama-cpp-no-kernel-image", "no-binary-for-gpu",
     "ROCm error: no kernel image is available for execution on the device",
     {"gpus": RX7900},
     "CUDA error: no kernel image is available for execution on the device",
     {"gpus": RX7900}),
    # The HIP 7 wording on a GPU whose own issue names the missing code object (the APU's gfx1103).
    ("hip7-no-compatible-code-object-gfx1103", "gfx1103-no-binary",
     "No compatible code objects found for: gfx1103, value of HIP_FORCE_SPIRV_CODEOBJECT: 0",
     {"gpus": [{"gfx": "gfx1103", "integrated": True}]},
     "Using native code object for device: amdgcn-amd-amdhsa--gfx1103 co: amdgcn-amd-amdhsa--gfx1103",
     {"gpus": [{"gfx": "gfx1103", "integrated": True}]}),
    # ROCm/rocBLAS@3ce299f:library/src/tensile_host.cpp (rocm-3.5.0): rocBLAS read TensileLibrary.yaml and aborted
    # with "rocBLAS error: Cannot read <path>: <strerror>"; YAML builds of later releases read
    # TensileLibrary_lazy_<gfx>.yaml (ROCm/rocBLAS@54f305c:library/src/tensile_host.cpp). The near misses are the
    # listing rocBLAS 6.x prints of the libraries it does have.
    ("rocblas-yaml-library", "tensile-library-missing",
     "rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary_lazy_gfx1031.yaml: No such file or "
     "directory",
     {"gpus": [{"gfx": "gfx1031", "integrated": False}]},
     " List of available TensileLibrary Files : \n\"/opt/rocm/lib/rocblas/library/TensileLibrary_lazy_gfx1030.yaml\"",
     {"gpus": [{"gfx": "gfx1031", "integrated": False}]}),
    # and rocBLAS 3.5's warning where its code-object glob failed otherwise than by matching nothing.
    ("rocblas-3.5-yaml-library", "tensile-library-missing",
     "rocBLAS error: Cannot read /opt/rocm/rocblas/lib/library/TensileLibrary.yaml: No such file or directory",
     {"gpus": [{"gfx": "gfx1012", "integrated": False}]},
     "rocBLAS warning: glob(\"/opt/rocm/rocblas/lib/library/*gfx1012*co\", ...) returned GLOB_ABORTED.",
     {"gpus": [{"gfx": "gfx1012", "integrated": False}]}),
    # ROCm/hipBLASLt@7d9fb68:library/src/amd_detail/rocblaslt/src/tensile_host.cpp (and rocm-5.5.0 on): hipBLASLt's
    # own "rocblaslt error: Cannot read <path>: <strerror>" when it has no library for the GPU, with rocblaslt_abort()
    # commented out: it goes on. This is hipBLASLt's unsupported architecture (an info note), not rocBLAS's missing
    # kernels; the near miss is its line for a library that loaded.
    ("hipblaslt-no-library-for-gpu", "hipblaslt-unsupported-arch-warning",
     "rocblaslt warning: No paths matched /opt/rocm/lib/hipblaslt/library/*gfx1030*co. Make sure that "
     "HIPBLASLT_TENSILE_LIBPATH is set correctly.\n"
     "rocblaslt error: Cannot read /opt/rocm/lib/hipblaslt/library/TensileLibrary_lazy_gfx1030.dat: No such file or "
     "directory",
     {"gpus": [{"gfx": "gfx1030", "integrated": False}]},
     "rocblaslt error: Could not initialize Tensile host: No devices found",
     {"gpus": [{"gfx": "gfx1030", "integrated": False}]}),
    # ROCm/hipSPARSELt@004dacd (rocm-6.2.2):library/src/hcc_detail/rocsparselt/src/tensile_host.cpp: hipSPARSELt's
    # "hipsparselt_error: Cannot read <path>: <strerror>" (its abort commented out) on a GPU outside its targets
    # (gfx940-gfx942, CMakeLists.txt). A note of its own, not rocBLAS's missing kernels; the near miss is its line for
    # no GPU at all, another matter.
    ("hipsparselt-no-library-for-gpu", "hipsparselt-no-library-for-gpu",
     "rocsparselt warning: No paths matched /opt/rocm/lib/hipsparselt/library/*gfx1100*co. Make sure that "
     "ROCSPARSELT_TENSILE_LIBPATH is set correctly.\n"
     "hipsparselt_error: Cannot read /opt/rocm/lib/hipsparselt/library/TensileLibrary.dat: No such file or directory",
     {"gpus": RX7900},
     "hipsparselt_error: Could not initialize Tensile host: No devices found",
     {"gpus": RX7900}),
    # ROCm/MIOpen@bceeae0:src/ocl/convolutionocl.cpp (rocm-5.4.0; the same since rocm-4.0.0): MIOpen before 5.7 threw
    # "... Convolution cannot be executed due to incorrect params" where the search found no solution (perf_db
    # empty); ROCm/MIOpen@f185a64 (rocm-5.7.0) says "No suitable algorithm was found ...". The near miss is the same
    # file's message for a convolution whose parameters are wrong.
    ("miopen-old-no-solution", "miopen-no-solver",
     "MIOpen Error: Backward Data Convolution cannot be executed due to incorrect params",
     {"gpus": RX7900},
     "MIOpen Error: Invalid filter channel number",
     {"gpus": RX7900}),
    # ROCm/rocm-systems@1b1610f:projects/rocminfo/rocminfo.cc: newer rocminfo reads /sys/module/amdgpu/initstate and
    # says "NOT live" where the module is present but not initialised (it says "NOT loaded" where
    # /sys/module/amdgpu is absent). The near miss is its line for a live module.
    ("rocminfo-module-not-live", "rock-module-not-loaded",
     "ROCk module is NOT live, possibly no GPU devices",
     {"wsl": False, "kernel": "6.8.0-45-generic"},
     "ROCk module is loaded",
     {"wsl": False, "kernel": "6.8.0-45-generic"}),
    # Same file: rocminfo names the group that owns /dev/kfd (render on current distributions) where it once
    # hard-coded "video". The near miss is the membership line that follows a successful look-up.
    ("rocminfo-no-user-name-render", "rocminfo-no-user-name",
     "Unable to open /dev/kfd read-write: Permission denied\n"
     "Failed to get user name to check for render group membership",
     {},
     "Failed to get group info to check for render group membership",
     {}),
]


RX580 = [{"gfx": "gfx803", "integrated": False}]
APU_780M = [{"gfx": "gfx1103", "integrated": True}]
RX6600 = [{"gfx": "gfx1032", "integrated": False}]

# (case name, issue id, text that must fire it, its facts, near miss, the near miss's facts)
# Round 2: Ollama, the kernel's amdgpu/amdkfd (the same method, other programs)
ROUND_2: list[tuple[str, str, str, dict[str, Any], str, dict[str, Any]]] = [
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
    # torvalds/linux@fda795b:drivers/gpu/drm/amd/amdkfd/kfd_device.c lookup_device_info (the same through Linux 5.9:
    # freebsd/drm-kmod@1a4137b, drm_v5.9): dev_warn "DID %04x is missing in supported_devices" for a GPU amdkfd does
    # not list, then "kgd2kfd_probe failed". The near miss is the same file's line for a GPU it added.
    ("kernel-5.4-kfd-did-missing", "kernel-too-old-for-gpu",
     "kfd kfd: DID 7340 is missing in supported_devices\nkfd kfd: kgd2kfd_probe failed",
     {"gpus": [{"gfx": "gfx1012", "integrated": False}], "kernel": "5.4.0-54-generic"},
     "kfd kfd: added device 1002:7340",
     {"gpus": [{"gfx": "gfx1012", "integrated": False}], "kernel": "5.4.0-54-generic"}),
    # torvalds/linux@002c6ca:drivers/gpu/drm/amd/amdkfd/kfd_device.c kgd2kfd_probe: dev_err "GC IP %06x %s not
    # supported in kfd" (%s is "VF" or empty, hence two spaces) for an IP-discovery GPU whose GC version it has no case
    # for. The near miss is the same format for a virtual function: SR-IOV, not the kernel's age.
    ("kernel-6.1-kfd-gc-ip-not-supported", "kernel-too-old-for-gpu",
     "kfd kfd: amdgpu: GC IP 0b0004  not supported in kfd",
     {"gpus": [{"gfx": "gfx1103", "integrated": True}], "kernel": "6.1.20"},
     "kfd kfd: amdgpu: GC IP 0b0004 VF not supported in kfd",
     {"gpus": [{"gfx": "gfx1103", "integrated": True}], "kernel": "6.1.20"}),
    # freebsd/drm-kmod@18764505 (drm_v6.1; the same from drm_v5.16 to drm_v6.11):drivers/gpu/drm/amd/amdgpu/
    # amdgpu_discovery.c amdgpu_discovery_set_gc_ip_blocks: dev_err "Failed to add gfx ip block(GC_HWIP:0x%x)" where
    # amdgpu has no driver for the GPU's GC version, and the probe fails. The near miss is the same file's
    # "amdgpu_discovery_init failed" (the table itself unreadable: another failure).
    ("kernel-amdgpu-unknown-gc-ip", "kernel-too-old-for-gpu",
     "amdgpu 0000:c5:00.0: amdgpu: Failed to add gfx ip block(GC_HWIP:0xb0501)",
     {"gpus": STRIX_HALO, "kernel": "6.8.0-45-generic"},
     "[drm:amdgpu_discovery_set_ip_blocks [amdgpu]] *ERROR* amdgpu_discovery_init failed",
     {"gpus": STRIX_HALO, "kernel": "6.8.0-45-generic"}),
]


BNB = "/home/user/venv/lib/python3.10/site-packages/bitsandbytes/"

# bitsandbytes' "no native library for this torch's ROCm", as each release line printed it (every case fires
# bitsandbytes-no-binary-for-torch-rocm; the status of each wording is checked below).
BITSANDBYTES: list[tuple[str, str, str, dict[str, Any], str, dict[str, Any]]] = [
    # ROCm/bitsandbytes@60d7560:bitsandbytes/cextension.py (April 2024): a HIP torch wants libbitsandbytes_hip.so, or
    # libbitsandbytes_hip_nohipblaslt.so below HIP 6.1, and a missing one is logged as logger.warning("Could not
    # find the bitsandbytes CUDA binary at %r", path) before the CPU library is loaded (seen in ROCm/bitsandbytes#30).
    # The near miss is the same line on a CUDA torch whose cuda118_nocublaslt library is missing.
    ("bnb-2024-04-cuda-wording-hip-library", "bitsandbytes-no-binary-for-torch-rocm",
     f"Could not find the bitsandbytes CUDA binary at PosixPath('{BNB}libbitsandbytes_hip_nohipblaslt.so')",
     {"gpus": RX7900},
     f"Could not find the bitsandbytes CUDA binary at PosixPath('{BNB}libbitsandbytes_cuda118_nocublaslt.so')",
     {"gpus": RX7900}),
    # ROCm/bitsandbytes@a62b9d4:bitsandbytes/cextension.py (July 2024): the library is renamed
    # libbitsandbytes_rocm<major><minor>.so after torch.version.hip; the warning still says CUDA. The near miss is a
    # CUDA torch's libbitsandbytes_cuda121.so missing.
    ("bnb-2024-07-cuda-wording-rocm-library", "bitsandbytes-no-binary-for-torch-rocm",
     f"Could not find the bitsandbytes CUDA binary at PosixPath('{BNB}libbitsandbytes_rocm62.so')",
     {"gpus": RX7900},
     f"Could not find the bitsandbytes CUDA binary at PosixPath('{BNB}libbitsandbytes_cuda121.so')",
     {"gpus": RX7900}),
    # ROCm/bitsandbytes@52ba52e:bitsandbytes/cextension.py (August 2024): logger.warning(f"Could not find the
    # bitsandbytes {BNB_BACKEND} binary at {cuda_binary_path}") with BNB_BACKEND = "ROCM". The near miss is a ROCm
    # library that is there but does not load (an undefined libc++ symbol, ROCm/bitsandbytes#54): another failure.
    ("bnb-2024-08-rocm-upper-fstring", "bitsandbytes-no-binary-for-torch-rocm",
     f"Could not find the bitsandbytes ROCM binary at {BNB}libbitsandbytes_rocm61.so",
     {"gpus": RX7900},
     f"Could not load bitsandbytes native library: {BNB}libbitsandbytes_rocm61.so: undefined symbol: "
     "_ZNSt3__15ctypeIcE2idE",
     {"gpus": RX7900}),
    # bitsandbytes-foundation/bitsandbytes@45b7d14a:bitsandbytes/cextension.py (multi-backend-refactor, September
    # 2024; ROCm/bitsandbytes@6f9cd26 the same with "ROCM"): logger.warning("Could not find the bitsandbytes %s binary
    # at %r", BNB_BACKEND, cuda_binary_path), BNB_BACKEND = "ROCm" (ROCm/bitsandbytes#82). The near miss is the
    # debug line of a library that was found.
    ("bnb-2024-09-rocm-repr", "bitsandbytes-no-binary-for-torch-rocm",
     f"Could not find the bitsandbytes ROCm binary at PosixPath('{BNB}libbitsandbytes_rocm63.so')",
     {"gpus": RX7900},
     f"Loading bitsandbytes native library from: {BNB}libbitsandbytes_rocm63.so",
     {"gpus": RX7900}),
    # bitsandbytes-foundation/bitsandbytes@9da7109:bitsandbytes/cextension.py (0.50.0): get_native_library raises
    # RuntimeError(f"No compatible {BNB_BACKEND} binary found at {cuda_binary_path}") where no library of torch's
    # ROCm major is packaged. The near miss is the same release's fallback to another minor of the same major,
    # which loads ("No prebuilt binary for ROCm 7.1, loading ROCm 7.0 instead. Set BNB_ROCM_VERSION to override.").
    ("bnb-0.50-no-compatible-binary", "bitsandbytes-no-binary-for-torch-rocm",
     f"bitsandbytes library load error: No compatible ROCm binary found at {BNB}libbitsandbytes_rocm80.so\n"
     f"RuntimeError: No compatible ROCm binary found at {BNB}libbitsandbytes_rocm80.so",
     {"gpus": RX7900},
     "No prebuilt binary for ROCm 7.1, loading ROCm 7.0 instead. Set BNB_ROCM_VERSION to override.",
     {"gpus": RX7900}),
    # Same file: the mock library's throw_on_call, on the first GPU function called, raises its report ending in
    # f"Original error: {self.error_msg}" and "Native code method attempted to call: lib.<name>()". The near miss is
    # the CUDA build's report (a CUDA torch, no ROCm library involved).
    ("bnb-0.50-call-original-error", "bitsandbytes-no-binary-for-torch-rocm",
     "RuntimeError: Attempted to use bitsandbytes native library functionality but it's not available.\n\n"
     f"Original error: No compatible ROCm binary found at {BNB}libbitsandbytes_rocm80.so\n\n"
     "Native code method attempted to call: lib.cquantize_blockwise_bf16_nf4()",
     {"gpus": RX7900},
     "RuntimeError: Attempted to use bitsandbytes native library functionality but it's not available.\n\n"
     f"Original error: No compatible CUDA binary found at {BNB}libbitsandbytes_cuda130.so",
     {"gpus": RX7900}),
]


HIPIFY_CUDA = "hipify-clang-needs-cuda-installation"
# llvm/llvm-project@0008bd0:clang/include/clang/Basic/DiagnosticDriverKinds.td err_drv_no_cuda_installation, raised by
# CudaInstallationDetector::AddCudaIncludeArgs (llvm/llvm-project@011616b:clang/lib/Driver/ToolChains/Cuda.cpp) for a
# CUDA compile with no CUDA installation found; hipify-clang runs clang with -x cuda --cuda-host-only
# (ROCm/HIPIFY@014177b:src/main.cpp) and prints nothing of its own after it, so its command names it.
NO_CUDA = ("error: cannot find CUDA installation; provide its path via '--cuda-path', or pass '-nocudainc' to build "
           "without CUDA includes")
# The wording from llvm-mirror/clang@9e96c96 (2016, the error's first version) still at llvm-mirror/clang@aa231e4
# (April 2020), as hipify-clang built against such a clang prints it.
NO_CUDA_OLD = ("error: cannot find CUDA installation.  Provide its path via --cuda-path, or pass -nocudainc to build "
               "without CUDA includes.")
HIPIFY = [
    # The near miss is the next diagnostic of the same file, err_drv_no_cuda_libdevice: a CUDA installation was found
    # and lacks libdevice for the GPU architecture (another matter).
    ("hipify-clang-no-cuda", HIPIFY_CUDA, "$ hipify-clang square.cu -o square.hip\n" + NO_CUDA, {},
     "$ hipify-clang square.cu -o square.hip\nerror: cannot find libdevice for sm_35; provide path to different CUDA "
     "installation via '--cuda-path', or pass '-nocudalib' to build without linking with libdevice", {}),
    # The same for the older wording; its near miss is the older libdevice line (llvm-mirror/clang@aa231e4).
    ("hipify-clang-no-cuda-old-clang", HIPIFY_CUDA, "$ ./hipify-clang intro.cu\n" + NO_CUDA_OLD, {},
     "$ ./hipify-clang intro.cu\nerror: cannot find libdevice for sm_35. Provide path to different CUDA installation "
     "via --cuda-path, or pass -nocudalib to build without linking with libdevice.", {}),
]


@pytest.mark.parametrize(("name", "issue_id", "text", "facts", "near", "near_facts"),
                         CASES + ROUND_2 + BITSANDBYTES + HIPIFY,
                         ids=[c[0] for c in CASES + ROUND_2 + BITSANDBYTES + HIPIFY])
def test_each_upstream_wording_fires_and_its_neighbour_does_not(name: str, issue_id: str, text: str,
                                                                facts: dict[str, Any], near: str,
                                                                near_facts: dict[str, Any]) -> None:
    assert issue_id in _ids(facts, text), name
    assert issue_id not in _ids(near_facts, near), name


def test_hipblaslt_missing_library_is_not_rocblas_missing_kernels() -> None:
    """hipBLASLt's 'rocblaslt error: Cannot read .../hipblaslt/library/TensileLibrary_lazy_gfx1030.dat' named
    rocBLAS's tensile-library-missing as a cause before; rocBLAS's own line on the same GPU still does."""
    gpus = {"gpus": [{"gfx": "gfx1030", "integrated": False}]}
    hipblaslt = ("rocblaslt error: Cannot read /opt/rocm/lib/hipblaslt/library/TensileLibrary_lazy_gfx1030.dat: "
                 "No such file or directory")
    assert "tensile-library-missing" not in _ids(gpus, hipblaslt)
    found = {f.id: f for f in diagnose(_facts(gpus, hipblaslt))}
    assert found["hipblaslt-unsupported-arch-warning"].to_check is not None  # an info note, never the cause
    rocblas = ("rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: No such file or directory "
               "for GPU arch : gfx1030")
    assert "tensile-library-missing" in _ids(gpus, rocblas)


def test_docker_desktop_on_linux_is_to_check_and_not_under_wsl() -> None:
    """Docker Desktop named on a Linux host brings its VM up to check (never as the cause); under WSL (Docker
    Desktop's WSL 2 backend is how ROCm runs there) it is not this issue."""
    line = "This however leads to the following specifically when Docker Desktop is running the background."
    found = {f.id: f for f in diagnose(_facts({"gpus": RX7900}, line))}
    assert found["docker-desktop-linux-blocks-kfd"].to_check is not None
    assert "docker-desktop-linux-blocks-kfd" not in _ids({"gpus": RX7900, "wsl": True}, line)


def test_docker_desktop_denied_or_asked_about_in_words_is_not_its_use() -> None:
    """Docker Desktop in the reporter's words counts where they say it runs or is used, not where they say it does
    not, that they removed it, or ask about it: those brought the VM up to check on a host Docker Engine."""
    kfd = ("\ndocker: Error response from daemon: error gathering device information while adding custom device "
           "\"/dev/kfd\": no such file or directory.")
    for used in ("This however leads to the following specifically when Docker Desktop is running the background.",
                 "I'm running Docker Desktop 4.30 on Ubuntu 22.04.", "I am using Docker Desktop for Linux.",
                 "Installed Docker Desktop on Linux from the .deb."):
        assert "docker-desktop-linux-blocks-kfd" in _ids({"gpus": RX7900}, used + kfd), used
    for not_used in ("I'm not running Docker Desktop, just the docker engine from apt.",
                     "I uninstalled Docker Desktop for Linux and installed docker-ce; same error.",
                     "I do not use Docker Desktop for Linux.", "I don't use Docker Desktop on Linux.",
                     "Is Docker Desktop running? No, I use docker-ce.", "Does this work with Docker Desktop on Linux?"):
        assert "docker-desktop-linux-blocks-kfd" not in _ids({"gpus": RX7900}, not_used + kfd), not_used


def test_hip7_no_compatible_code_object_line_alone_is_a_symptom_to_check() -> None:
    """The HIP 7 runtime logs 'No compatible code objects found for: gfxNNNN' per fat binary without the device's
    target (ROCm/rocm-systems@d78123a:projects/clr/hipamd/src/hip_fatbin.cpp); a library may ship kernels for some
    GPUs only, so the line alone brings the missing-code-object finding up to check, not as the cause."""
    line = "No compatible code objects found for: gfx1151, value of HIP_FORCE_SPIRV_CODEOBJECT: 0"
    found = {f.id: f for f in diagnose(_facts({"gpus": STRIX_HALO}, line))}
    assert found["no-binary-for-gpu"].to_check is not None
    # HIP's error text for a missing code object is the failure itself, shown: a symptom whose cause (a wheel without
    # the GPU's target, a visible iGPU, an RDNA2 variant without its override, a build for other targets) is to find,
    # as for its twin 'invalid device function'; the deeper cause the facts show comes first
    torch = {f.id: f for f in diagnose(_facts({"gpus": RX7900}, "RuntimeError: HIP error: no kernel image is available "
                                                                "for execution on the device"))}
    assert torch["no-binary-for-gpu"].to_check == SYMPTOM and torch["no-binary-for-gpu"].shows_failure
    rx6600 = diagnose(_facts({"gpus": [{"gfx": "gfx1032", "integrated": False}]},
                             "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"))
    assert [f.id for f in rx6600][:2] == ["rdna2-variant-needs-override", "no-binary-for-gpu"], [f.id for f in rx6600]


def test_ollama_0_1_29_unsupported_gfx_line_is_to_check() -> None:
    """Ollama 0.1.29-0.1.32 print 'amdgpu [N] gfxNNNN is not supported by ...' for every GPU outside the bundled
    list, an integrated GPU beside a supported discrete one included (ollama/ollama@e87c780:gpu/amd_linux.go): the
    line alone brings the finding up to check, not as the cause."""
    line = ('level=WARN source=amd_linux.go:114 msg="amdgpu [1] gfx1036 is not supported by /tmp/ollama1234/rocm '
            '[gfx1030 gfx1100 gfx1101 gfx1102 gfx900 gfx906 gfx908 gfx90a gfx940 gfx941 gfx942]"')
    found = {f.id: f for f in diagnose(_facts({"gpus": RX6600}, line))}
    assert found["ollama-gpu-type-not-in-runtime"].to_check is not None


def test_kfd_gc_ip_of_raven_is_not_a_kernel_too_old() -> None:
    """Raven/Picasso (GC 9.1.0 / 9.2.2) sit under KFD_SUPPORT_IOMMU_V2 in torvalds/linux@002c6ca's kgd2kfd_probe: their
    'GC IP 090100 not supported in kfd' is a kernel configuration, not a kernel too old for the GPU."""
    raven = {"gpus": [{"gfx": "gfx902", "integrated": True}], "kernel": "6.1.0"}
    assert "kernel-too-old-for-gpu" not in _ids(raven, "kfd kfd: amdgpu: GC IP 090100  not supported in kfd")
    assert "kernel-too-old-for-gpu" in _ids(raven, "kfd kfd: amdgpu: GC IP 0b0001  not supported in kfd")


def test_kernel_too_old_fix_names_the_first_kernel_for_the_gpu() -> None:
    """The fix is computed for the machine: a Strix Halo (gfx1151) on 6.8 is told amdgpu lists its GC IP from 6.9
    on; on 6.10 that branch is withheld (the kernel is not older), and a gfx1100 on 6.8 gets no Strix Halo line."""
    line = "kfd kfd: amdgpu: GC IP 0b0501  not supported in kfd"
    old = {f.id: f for f in diagnose(_facts({"gpus": STRIX_HALO, "kernel": "6.8.0-45-generic"}, line))}
    assert old["kernel-too-old-for-gpu"].to_check is None
    assert "from 6.9 on" in old["kernel-too-old-for-gpu"].fix
    assert old["kernel-too-old-for-gpu"].fix_plan == "driver"
    new = {f.id: f for f in diagnose(_facts({"gpus": STRIX_HALO, "kernel": "6.10.3"}, line))}
    assert "from 6.9 on" not in new["kernel-too-old-for-gpu"].fix
    rdna3 = {f.id: f for f in diagnose(_facts({"gpus": RX7900, "kernel": "6.8.0-45-generic"}, line))}
    assert "from 6.9 on" not in rdna3["kernel-too-old-for-gpu"].fix


def test_kfd_not_supported_on_asic_is_a_kernel_too_old_only_with_facts() -> None:
    """freebsd/drm-kmod@25fed63 (drm_v5.4):drivers/gpu/drm/amd/amdgpu/amdgpu_amdkfd.c amdgpu_amdkfd_device_probe says
    'kfd not supported on this ASIC' for every ASIC family it does not route to KFD: one a later kernel adds, or a
    GCN1/GCN2 GPU no kernel's KFD supports. Alone it is to check; a GPU the facts show the kernel predates makes it
    the cause; a GCN1 GPU contradicts it (and names kfd-gpu-not-supported)."""
    line = "amdgpu 0000:03:00.0: kfd not supported on this ASIC"
    recent = {f.id: f for f in diagnose(_facts({"gpus": RX7900, "kernel": "6.8.0-45-generic"}, line))}
    assert recent["kernel-too-old-for-gpu"].to_check is not None
    old = {f.id: f for f in diagnose(_facts({"gpus": RX7900, "kernel": "5.15.0-91-generic"}, line))}
    assert old["kernel-too-old-for-gpu"].to_check is None
    tahiti = {f.id: f for f in diagnose(_facts({"gpus": [{"gfx": None, "codename": "Tahiti", "integrated": False}],
                                                "kernel": "5.4.0"}, line))}
    assert tahiti["kernel-too-old-for-gpu"].contradicted is not None
    assert tahiti["kfd-gpu-not-supported"].to_check is None


@pytest.mark.parametrize("line", [
    # ROCm/hipSPARSELt@004dacd:library/src/hcc_detail/rocsparselt/src/tensile_host.cpp (rocm-6.0.0 to 6.2.2)
    "hipsparselt_error: Cannot read /opt/rocm/lib/hipsparselt/library/TensileLibrary.dat: No such file or directory",
    # ROCm/hipSPARSELt@c680e32:library/src/tensile_host.cpp (2022, before its first release)
    "rocsparselt error: Cannot read /opt/rocm/lib/hipsparselt/library/TensileLibrary.dat: No such file or directory",
])
def test_hipsparselt_missing_library_is_not_rocblas_missing_kernels(line: str) -> None:
    """hipSPARSELt's 'Cannot read .../TensileLibrary.dat' named rocBLAS's tensile-library-missing as a cause (and on an
    RDNA2 variant the override issue) before; it is hipSPARSELt's own note now. rocBLAS's line on the same GPU still
    names rocBLAS's issue."""
    gpus = {"gpus": [{"gfx": "gfx1031", "integrated": False}]}
    found = {f.id: f for f in diagnose(_facts(gpus, line))}
    assert "tensile-library-missing" not in found
    assert "rdna2-variant-needs-override" not in found
    assert found["hipsparselt-no-library-for-gpu"].to_check is not None  # a note, never the cause
    rocblas = "rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: No such file or directory"
    assert "tensile-library-missing" in _ids(gpus, rocblas)
    assert "hipsparselt-no-library-for-gpu" not in _ids(gpus, rocblas)


def test_an_old_hip_switch_ignored_by_cmake_is_the_cause_only_where_the_text_names_it() -> None:
    """llama.cpp reads GGML_HIP; CMake only warns that an old GGML_HIPBLAS / LLAMA_HIPBLAS was not used
    (ggml-org/llama.cpp@0014ce6:CMakeLists.txt sets CMAKE_WARN_UNUSED_CLI and keeps no shim for it) and the build
    has no HIP backend. A CPU-only llama.cpp whose text names no old switch is another story."""
    cmake = ("CMake Warning:\n  Manually-specified variables were not used by the project:\n\n    LLAMA_HIPBLAS\n")
    assert "llamacpp-ggml-hipblas-flag-ignored" in _ids({"gpus": RX7900}, cmake)
    cpu_only = "warning: not compiled with GPU offload support, --gpu-layers option will be ignored"
    assert "llamacpp-ggml-hipblas-flag-ignored" not in _ids({"gpus": RX7900}, "cmake -B build -DGGML_HIP=ON\n" + cpu_only)
    # a CPU-only build beside the old switch's name is to check: a llama.cpp older than the rename still read it
    found = {f.id: f for f in diagnose(_facts(
        {"gpus": RX7900}, 'CMAKE_ARGS="-DGGML_HIPBLAS=on" pip install llama-cpp-python\n' + cpu_only))}
    assert found["llamacpp-ggml-hipblas-flag-ignored"].to_check is not None
    assert {f.id: f for f in diagnose(_facts({"gpus": RX7900}, cmake))}["llamacpp-ggml-hipblas-flag-ignored"].to_check is None


def test_miopen_inline_asm_on_gfx115x_is_the_cause_with_its_error_and_to_check_in_words() -> None:
    """MIOpen's batch-norm DPP asm (row_bcast, ROCm/MIOpen@2d1fd99:src/kernels/reduction_functions.h) is built for
    every target but gfx103x/110x/120x (src/kernels/batchnorm_functions.h): on gfx1150/1151 clang's 'not a valid
    operand' over the row_bcast line is the cause; the same failure told in words is to check; an RDNA2 GPU is
    another story."""
    strix = {"gpus": [{"gfx": "gfx1151", "integrated": True}]}
    error = 'error: not a valid operand.\n    "v_add_f32 %0 %0 %0 row_bcast:15 row_mask:0xa\\n"'
    found = {f.id: f for f in diagnose(_facts(strix, error))}
    assert found["miopen-gfx115x-inline-asm-invalid-operand"].to_check is None
    words = "# MIOpen kernel compilation fails with inline assembly errors on Strix Halo"
    found = {f.id: f for f in diagnose(_facts(strix, words))}
    assert found["miopen-gfx115x-inline-asm-invalid-operand"].to_check is not None
    assert "miopen-gfx115x-inline-asm-invalid-operand" not in _ids({"gpus": [{"gfx": "gfx1031"}]}, error)


@pytest.mark.parametrize("name", [c[0] for c in BITSANDBYTES])
def test_bitsandbytes_import_time_wordings_are_to_check_and_the_failed_call_is_the_cause(name: str) -> None:
    """The import-time lines (every release's) are logged whether or not a GPU function is ever called: to check, as
    "Configured ROCm binary not found" is. The report of a failed call ("Original error: ..." from the mock library's
    throw_on_call, bitsandbytes-foundation/bitsandbytes@888788d:bitsandbytes/cextension.py and @9da7109) is the
    cause, as "ROCm VERSION MISMATCH" is."""
    text = next(c[2] for c in BITSANDBYTES if c[0] == name)
    found = {f.id: f for f in diagnose(_facts({"gpus": RX7900}, text))}
    finding = found["bitsandbytes-no-binary-for-torch-rocm"]
    if "Original error:" in text:
        assert finding.to_check is None
    else:
        assert finding.to_check is not None


def test_bitsandbytes_0_47_failed_call_without_mismatch_header_is_the_cause() -> None:
    """0.47-0.49 (bitsandbytes-foundation/bitsandbytes@888788d:bitsandbytes/cextension.py) head a failed call on a
    package without any ROCm library with "Forgot to compile the bitsandbytes library?", not the mismatch header:
    its "Original error: Configured ROCm binary not found at ..." line still shows the call failed."""
    path = f"{BNB}libbitsandbytes_rocm64.so"
    call = ("Forgot to compile the bitsandbytes library?\n1. You're not using the package but checked-out the source "
            f"code\n2. You MUST compile from source\n\nOriginal error: Configured ROCm binary not found at {path}\n"
            "Native code method attempted to call: lib.cget_managed_ptr()")
    found = {f.id: f for f in diagnose(_facts({"gpus": RX7900}, call))}
    assert found["bitsandbytes-no-binary-for-torch-rocm"].to_check is None
    import_only = f"RuntimeError: Configured ROCm binary not found at {path}"
    found = {f.id: f for f in diagnose(_facts({"gpus": RX7900}, import_only))}
    assert found["bitsandbytes-no-binary-for-torch-rocm"].to_check is not None


@pytest.mark.parametrize(("symbol", "fires"), [
    # Quoted in bitsandbytes-foundation/bitsandbytes#1508 (the 0.45.3.dev271 wheel's libbitsandbytes_rocm62.so) and
    # #1519 (a local build of multi-backend-refactor, libbitsandbytes_rocm63.so).
    ("_Z36__device_stub__kOptimizer32bit1StateI12hip_bfloat16Li2EEvPT_S2_PfS3_ffffffiffbi", True),
    # Not quoted in a report: the other stubs bitsandbytes-foundation/bitsandbytes@3fabd1a9's csrc/ops.hip references
    # for hip_bfloat16 (MOMENTUM 1, RMSPROP 2, ADAGRAD 4) and its csrc/kernels.hip never instantiates, mangled from
    # those declarations (c++filt gives them back): kPreconditionOptimizer32bit1State<hip_bfloat16, 4, 4096, 8>,
    # kOptimizerStatic8bit1StateBlockwise<hip_bfloat16, 1, 2048, 8>.
    ("_Z48__device_stub__kPreconditionOptimizer32bit1StateI12hip_bfloat16Li4ELi4096ELi8EEvPT_S2_PfS3_ffffiffi", True),
    ("_Z50__device_stub__kOptimizerStatic8bit1StateBlockwiseI12hip_bfloat16Li1ELi2048ELi8EEvPT_S2_PhfffifPfS4_ffbi",
     True),
    # The same kernel for LION (5) and for __half: kernels.hip at @3fabd1a9 does instantiate them, so a library
    # missing them is another story (not this source).
    ("_Z36__device_stub__kOptimizer32bit1StateI12hip_bfloat16Li5EEvPT_S2_PfS3_ffffffiffbi", False),
    ("_Z36__device_stub__kOptimizer32bit1StateI6__halfLi2EEvPT_S2_PfS3_ffffffiffbi", False),
    # ROCm/bitsandbytes#54: a local build whose library wants libc++ symbols.
    ("_ZNSt3__15ctypeIcE2idE", False),
])
def test_bitsandbytes_multi_backend_refactor_undefined_bf16_optimizer_stub(symbol: str, fires: bool) -> None:
    """An undefined hip_bfloat16 1-state optimizer kernel stub (MOMENTUM, RMSPROP, ADAGRAD) of libbitsandbytes_rocm
    shows a library built from the multi-backend-refactor sources of February-May 2025: alone it is to check (whose
    build it is does not show); with the preview wheel named (#1508) it is the cause. The no-binary issue does not
    fire: the library is there."""
    line = f"Could not load bitsandbytes native library: {BNB}libbitsandbytes_rocm62.so: undefined symbol: {symbol}"
    wheel = ("bitsandbytes from https://github.com/bitsandbytes-foundation/bitsandbytes/releases/download/"
             "continuous-release_multi-backend-refactor/bitsandbytes-0.45.3.dev271-py3-none-manylinux_2_24_x86_64.whl\n")
    alone = {f.id: f for f in diagnose(_facts({"gpus": RX7900}, line))}
    named = {f.id: f for f in diagnose(_facts({"gpus": RX7900}, wheel + line))}
    if fires:
        assert alone["bitsandbytes-rocm-preview-wheel-undefined-symbol"].to_check is not None
        assert named["bitsandbytes-rocm-preview-wheel-undefined-symbol"].to_check is None
        assert "isn't ready yet" in named["bitsandbytes-rocm-preview-wheel-undefined-symbol"].fix
        assert "isn't ready yet" not in alone["bitsandbytes-rocm-preview-wheel-undefined-symbol"].fix
    else:
        assert "bitsandbytes-rocm-preview-wheel-undefined-symbol" not in alone
        assert "bitsandbytes-rocm-preview-wheel-undefined-symbol" not in named
    assert "bitsandbytes-no-binary-for-torch-rocm" not in alone


def test_kernel_too_old_fix_follows_the_gc_ip_the_kernel_names_where_the_gpu_is_unknown() -> None:
    """Where the facts do not say which GPU this is, the kernel's own refusal does: amdkfd's 'GC IP %06x' and amdgpu's
    'GC_HWIP:0x%x' (torvalds/linux@002c6ca kfd_device.c, amdgpu_discovery.c) name the graphics core, so only the
    branch of that core shows; a refusal that names none (the old 'DID ... is missing') withholds nothing."""
    navi32 = {f.id: f for f in diagnose(_facts({"kernel": "5.15.0-91-generic"},
                                               "kfd kfd: amdgpu: GC IP 0b0003  not supported in kfd"))}
    fix = navi32["kernel-too-old-for-gpu"].fix
    assert "GC 11.0.3 (Navi 32) from 6.1 on" in fix
    assert "from 6.9 on" not in fix and "from 5.19 on" not in fix
    halo = {f.id: f for f in diagnose(_facts({"kernel": "6.8.0-45-generic"},
                                             "amdgpu 0000:c3:00.0: amdgpu: Failed to add gfx ip block(GC_HWIP:0xb0501)"))}
    assert "from 6.9 on" in halo["kernel-too-old-for-gpu"].fix
    assert "from 6.11 on" not in halo["kernel-too-old-for-gpu"].fix
    did = {f.id: f for f in diagnose(_facts({"kernel": "5.4.0-150-generic"},
                                            "kfd kfd: DID 744c is missing in supported_devices"))}
    assert "from 5.19 on" in did["kernel-too-old-for-gpu"].fix and "from 6.9 on" in did["kernel-too-old-for-gpu"].fix


def test_rccl_startup_warning_is_a_risk_to_check_and_a_timeout_the_failure() -> None:
    """ROCm/rccl@7383f10:src/init.cc ncclInit warns at every start whose /proc/cmdline lacks iommu=pt ("Missing
    \"iommu=pt\" from kernel command line which can lead to system instablity or hang!"; the same "can lead to ...
    hang!" for HSA_FORCE_FINE_GRAIN_PCIE), on runs that work too: not a hang. It named multi-gpu-iommu as a cause
    through the "NCCL ... hang" signature; now it is the symptom it is (to check), and a collective that timed out
    is the failure."""
    two = {"gpus": RX7900 * 2}
    warning = ("g1064:11143:11143 [0] init.cpp:122 NCCL WARN Missing \"iommu=pt\" from kernel command line which can "
               "lead to system instablity or hang!\ng1064:11143:11143 [0] init.cpp:126 NCCL WARN Missing "
               "\"HSA_FORCE_FINE_GRAIN_PCIE=1\" from environment which can lead to low RCCL performance, system "
               "instablity or hang!")
    found = {f.id: f for f in diagnose(_facts(two, warning))}
    assert found["multi-gpu-iommu"].to_check is not None
    timeout = "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE) ran for 600000 ms"
    hung = "NCCL INFO comm 0x55 rank 0 nranks 8: RCCL hang detected while waiting for peer"
    for text in (timeout, hung):
        assert {f.id: f for f in diagnose(_facts(two, warning + "\n" + text))}["multi-gpu-iommu"].to_check is None, text


MI210 = [{"gfx": "gfx90a", "integrated": False}]
MIGRAPHX_ROCM55 = "migraphx-hiprtc-rocm55-needs-workarounds"
# ROCm/AMDMIGraphX@3c9df3b:src/targets/gpu/compile_ops.cpp (#1859): compile_plan catches whatever a kernel's compile
# throws and benchmark() then throws "No configs to tune" (MIGRAPHX_THROW: "<file>:<line>: <function>: <message>",
# src/include/migraphx/errors.hpp); line 175 in rocm-5.7.0, 164 in rocm-6.2.0, replaced by "No valid tuned
# compilation for ..." in rocm-6.3.0. The failing compile's own exception is swallowed.
NO_CONFIGS_175 = ("    model.compile(migraphx.get_target(\"gpu\"))\n"
                  "RuntimeError: /root/AMDMIGraphX/src/targets/gpu/compile_ops.cpp:175: benchmark: No configs to tune")


def test_migraphx_no_configs_to_tune_on_rocm_5_5_is_hiprtc_to_check() -> None:
    """On ROCm 5.5 hiprtc needs the compile fixes MIGraphX applies only when MIGRAPHX_ENABLE_HIPRTC_WORKAROUNDS is
    1/enable/enabled/yes/true (ROCm/AMDMIGraphX@3c9df3b:src/targets/gpu/compile_hip.cpp, src/env.cpp enabled()); its
    CI dropped the variable on moving to ROCm 5.6 (ROCm/AMDMIGraphX@3216fe5, #1976). The message follows any
    kernel compile failure (MLIR and composable_kernel compiles too), so it is a symptom to check with the fix data
    for the hiprtc cause; on ROCm 5.6 and 6.2 it is another story, and so it is where the variable is already on."""
    found = {f.id: f for f in diagnose(_facts({"gpus": MI210, "rocm_version": "5.5.0"}, NO_CONFIGS_175))}
    finding = found[MIGRAPHX_ROCM55]
    assert finding.to_check == SYMPTOM and finding.shows_failure
    assert ("MIGRAPHX_ENABLE_HIPRTC_WORKAROUNDS", "1") in finding.fix_env
    assert MIGRAPHX_ROCM55 in _ids({"gpus": MI210, "rocm_version": "5.5.1",
                                    "env": {"MIGRAPHX_ENABLE_HIPRTC_WORKAROUNDS": "0"}}, NO_CONFIGS_175)
    for rocm in ("5.4.3", "5.6.0", "5.7.1", "6.2.0"):
        assert MIGRAPHX_ROCM55 not in _ids({"gpus": MI210, "rocm_version": rocm}, NO_CONFIGS_175), rocm
    for on in ("1", "enable", "true"):
        assert MIGRAPHX_ROCM55 not in _ids({"gpus": MI210, "rocm_version": "5.5.0",
                                            "env": {"MIGRAPHX_ENABLE_HIPRTC_WORKAROUNDS": on}}, NO_CONFIGS_175), on
    # rocm-6.2.0's line 164, on the release the maintainers said no longer needs the variable (#2113)
    rocm62 = NO_CONFIGS_175.replace(":175:", ":164:")
    assert MIGRAPHX_ROCM55 not in _ids({"gpus": MI210, "rocm_version": "6.2.0"}, rocm62)
    # ROCm/AMDMIGraphX@fe19455 (rocm-5.4.1):src/targets/gpu/compile_hip.cpp compile_hip_src: a compiler MIGraphX was
    # not built for (#1203), a compile failure of another kind
    unknown = "RuntimeError: /src/AMDMIGraphX/src/targets/gpu/compile_hip.cpp:225: compile_hip_src: Unknown hip " \
              "compiler: /opt/rocm"
    assert MIGRAPHX_ROCM55 not in _ids({"gpus": MI210, "rocm_version": "5.5.0"}, unknown)


def test_migraphx_hiprtc_workarounds_shown_working_make_it_the_cause() -> None:
    """The reporter's own text that the variable was set and the model then compiled says which cause it was."""
    worked = NO_CONFIGS_175 + "\n$ export MIGRAPHX_ENABLE_HIPRTC_WORKAROUNDS=1\nThat fixed it, the model compiles now."
    found = {f.id: f for f in diagnose(_facts({"gpus": MI210, "rocm_version": "5.5.0"}, worked))}
    assert found[MIGRAPHX_ROCM55].to_check is None


def test_hipify_clang_without_cuda_is_the_cause_only_where_hipify_clang_ran() -> None:
    """clang prints "cannot find CUDA installation" for any CUDA compile that finds no CUDA (clang++ -x cuda, clangd,
    an OpenMP offload to NVPTX: llvm/llvm-project@011616b clang/lib/Driver/ToolChains/Cuda.cpp); that hipify-clang is
    what needs CUDA, and that hipify-perl does not, is HIPIFY's (ROCm/HIPIFY@014177b docs/hipify-clang.rst,
    docs/hipify-perl.rst; the maintainer in HIPIFY#1604). So the message is this cause where the machine's text names
    hipify-clang, with the fix's hipify-perl in prose and no command (the docs' forms carry placeholder files)."""
    found = {f.id: f for f in diagnose(_facts({"gpus": MI210}, "$ hipify-clang kernel.cu\n" + NO_CUDA))}
    finding = found[HIPIFY_CUDA]
    assert finding.to_check is None and finding.shows_failure
    assert "hipify-perl" in finding.fix and "--cuda-path" in finding.fix
    assert finding.fix_commands == ()
    # the reporter's prose names the tool the error came from (HIPIFY#1604's form)
    prose = "rocm-pytorch image has provided `hipify-clang` by default, but it always complains:\n" + NO_CUDA
    assert HIPIFY_CUDA in _ids({}, prose)
    # the same clang message from a plain CUDA compile is not hipify-clang's
    for other in ("$ clang++ -x cuda --cuda-gpu-arch=sm_70 axpy.cu -o axpy\n" + NO_CUDA,
                  "$ /opt/rocm/llvm/bin/clang++ -x cuda -c kernel.cu\n" + NO_CUDA_OLD):
        assert HIPIFY_CUDA not in _ids({}, other), other


def test_hipify_clang_given_a_cuda_path_is_another_problem() -> None:
    """With --cuda-path given, clang looks only there (llvm/llvm-project@011616b Cuda.cpp: the one candidate) and
    stops with the same message when that directory is not a CUDA installation it accepts: a CUDA present but not
    accepted (HIPIFY#92's Fedora 42 comment, --cuda-path=./cuda-12.5), which no answer explains; no finding. The
    message's own '--cuda-path' and the option's help line name no directory and silence nothing."""
    for given in ("$ hipify-clang softmax-gpucpu.cu --clang-resource-directory=/usr/lib/clang/19 "
                  "--cuda-path=./cuda-12.5 -v\n" + NO_CUDA,
                  "$ hipify-clang square.cu --cuda-path /usr/local/cuda-12.6 -- -std=c++17\n" + NO_CUDA,
                  "> hipify-clang intro.cu -cuda-path=\"C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v12.6\"\n"
                  + NO_CUDA):
        assert HIPIFY_CUDA not in _ids({}, given), given
    help_line = "$ hipify-clang --help | grep cuda\n  --cuda-path=<directory>         - CUDA installation path\n"
    assert HIPIFY_CUDA in _ids({}, help_line + "$ hipify-clang square.cu\n" + NO_CUDA)
