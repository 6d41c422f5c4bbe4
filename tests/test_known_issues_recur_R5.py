"""Known issues for causes that recur across users' threads (helper R5, session 14: WSL, containers, Kubernetes).

Each issue rests on at least two threads whose cause a maintainer, a merged fix or the reporter's fix confirmed, and
where it exists on the upstream source that states the mechanism: AMD's Kubernetes device plugin never registering
amd.com/gpu on a node without /sys/class/kfd, rocprofiler-sdk aborting the process when the KFD sysfs topology holds
fewer agents than the HSA runtime (WSL2), and Apptainer/Singularity runs whose contained /dev lacks ROCm's device
nodes. Texts are modelled on those threads, not copied; each issue has near misses that must not fire.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_known_issues_texts import _found, _ids

pytestmark = pytest.mark.unit

RX7800: dict[str, Any] = {"gpus": [{"gfx": "gfx1101", "integrated": False}]}
RX7800_WSL: dict[str, Any] = {"gpus": [{"gfx": "gfx1101", "integrated": False}], "wsl": True}
NO_GPU: dict[str, Any] = {}


# ROCm/k8s-device-plugin cmd/k8s-device-plugin/main.go sends the resource list to the plugin manager only when
# /sys/class/kfd exists; ROCm/k8s-device-plugin#148 (k3s in WSL2) and siderolabs/extensions#307 (Talos, no kfd
# device) show the log stopping at the manager's 'Handling incoming signals'.
K8S = "k8s-device-plugin-no-kfd-on-node"
K8S_LOG = ("I0301 10:02:11.100001       1 main.go:120] AMD GPU device plugin for Kubernetes\n"
           "I0301 10:02:11.100050       1 main.go:120] ./k8s-device-plugin version v1.25.2.7-98-g763445e1\n"
           "I0301 10:02:11.100090       1 manager.go:42] Starting device plugin manager\n"
           "I0301 10:02:11.100120       1 manager.go:52] Registering for notifications of filesystem changes\n"
           "I0301 10:02:11.100200       1 manager.go:60] Starting Discovery on new plugins\n"
           "I0301 10:02:11.100210       1 manager.go:66] Handling incoming signals\n")
K8S_FIRES = {
    "bare node": K8S_LOG,
    "with kubectl": ("$ kubectl logs -n kube-system amdgpu-device-plugin-daemonset-x7k2p\n" + K8S_LOG
                     + "$ kubectl get nodes -o custom-columns=NAME:.metadata.name,GPU:\"status.capacity.amd\\.com/gpu\"\n"
                     "NAME     GPU\nnode-1   <none>\n"),
}
K8S_NEAR = {
    "registered": (K8S_LOG + "I0301 10:02:11.100300       1 manager.go:71] Received new list of plugins: [gpu]\n"
                   "I0301 10:02:11.100310       1 manager.go:110] Adding a new plugin \"gpu\"\n"),
    "found gpus": K8S_LOG + "I0301 10:02:12.200000       1 plugin.go:136] Found 8 AMDGPUs\n",
    "other plugin": ("I0301 10:02:11.100001       1 main.go:50] Intel GPU device plugin started\n"
                     "I0301 10:02:11.100210       1 manager.go:66] Handling incoming signals\n"),
}


@pytest.mark.parametrize("name", sorted(K8S_FIRES))
def test_k8s_plugin_without_kfd_fires(name: str) -> None:
    assert K8S in _ids(NO_GPU, K8S_FIRES[name])


def test_k8s_plugin_without_kfd_on_wsl_fires() -> None:
    assert K8S in _ids(RX7800_WSL, K8S_LOG)


def test_k8s_plugin_without_kfd_is_to_check() -> None:
    # what shows it is a line missing from the log, which a log cut short also misses: never stated as the cause
    assert _found(NO_GPU, K8S_LOG)[K8S].to_check is not None


@pytest.mark.parametrize("name", sorted(K8S_NEAR))
def test_k8s_plugin_without_kfd_near_misses(name: str) -> None:
    assert K8S not in _ids(NO_GPU, K8S_NEAR[name])


# rocprofiler-sdk agent.cpp: ROCP_FATAL_IF when HSA agents have node ids its KFD-sysfs topology lacks;
# rocprofiler-register returns before loading any tool when ROCPROFILER_REGISTER_ENABLED=0.
# ROCm/rocm-systems#4935, #7016, #11423 (WSL2: no /sys/class/kfd).
PROF = "rocprofiler-sdk-agent-mismatch-abort"
PROF_FIRES = {
    "torch on wsl": (">>> torch.cuda.device_count()\n"
                     "W20260301 10:00:00.000000 1234 agent.cpp:608] sysfs nodes path '/sys/class/kfd/kfd/topology/nodes'"
                     " does not exist\nF20260301 10:00:00.000100 1234 agent.cpp:1093] Found 0 rocprofiler agents and 2 HSA "
                     "agents. HSA agents contained 2 internal node ids not found by rocprofiler: 0, 1\n"
                     "Aborted (core dumped)"),
    "rocprofv3 one gpu": ("F agent.cpp:706] Found 1 rocprofiler agents and 2 HSA agents.\n"
                          "HSA agents contained 1 internal node ids not found by rocprofiler: 1\n*** Aborted ***"),
}
PROF_NEAR = {
    "warning only": ("W agent.cpp:608] sysfs nodes path '/sys/class/kfd/kfd/topology/nodes' does not exist\n"
                     "I rocprofiler-register disabled via ROCPROFILER_REGISTER_ENABLED=0"),
    "agents listed": "rocprofv3-avail: found 2 rocprofiler agents (1 CPU, 1 GPU)",
}


@pytest.mark.parametrize("name", sorted(PROF_FIRES))
def test_rocprofiler_agent_mismatch_fires(name: str) -> None:
    found = _found(RX7800_WSL, PROF_FIRES[name])
    assert PROF in found
    assert dict(found[PROF].fix_env) == {"ROCPROFILER_REGISTER_ENABLED": "0"}


@pytest.mark.parametrize("name", sorted(PROF_NEAR))
def test_rocprofiler_agent_mismatch_near_misses(name: str) -> None:
    assert PROF not in _ids(RX7800_WSL, PROF_NEAR[name])


# apptainer/singularity#5696 (--rocm with --contain gave no /dev/kfd), apptainer/apptainer#752 (-c --rocm lacked the
# renderD* nodes): a contained run has a minimal /dev without ROCm's device nodes unless they are bound.
APT = "apptainer-contain-no-rocm-devices"
APT_FIRES = {
    "containall": ("$ apptainer exec --containall pytorch_rocm.sif python3 -c 'import torch; torch.zeros(1).cuda()'\n"
                   "RuntimeError: No HIP GPUs are available"),
    "singularity -c": ("$ singularity run -c --rocm tf.sif rocminfo\nROCk module is loaded\n"
                       "Unable to open /dev/kfd read-write: No such file or directory"),
}
APT_NEAR = {
    "bound": ("$ apptainer exec --containall --bind /dev/kfd,/dev/dri pytorch_rocm.sif python3 train.py\n"
              "RuntimeError: No HIP GPUs are available"),
    "not contained": ("$ apptainer exec --rocm pytorch_rocm.sif python3 train.py\n"
                      "RuntimeError: No HIP GPUs are available"),
    "contained, works": "$ apptainer exec --containall --rocm pytorch_rocm.sif rocminfo\n  Name:                    gfx1101",
    "docker": ("$ docker run -c 4 rocm/pytorch python3 train.py\nRuntimeError: No HIP GPUs are available"),
}


@pytest.mark.parametrize("name", sorted(APT_FIRES))
def test_apptainer_contain_fires(name: str) -> None:
    assert APT in _ids(RX7800, APT_FIRES[name])


@pytest.mark.parametrize("name", sorted(APT_NEAR))
def test_apptainer_contain_near_misses(name: str) -> None:
    assert APT not in _ids(RX7800, APT_NEAR[name])
