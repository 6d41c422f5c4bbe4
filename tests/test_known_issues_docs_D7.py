"""Known issues from container tooling's own messages (helper D7, session 14).

Each text quotes the message as upstream source prints it: Docker's daemon when `--gpus` finds no device driver
or `--runtime=amd` names a runtime it does not know, the CDI library when `--device amd.com/gpu=...` has no spec
entry, and AMD's Kubernetes device plugin / amd-ctk when the amdgpu driver is not loaded. Each has a near miss that
must not fire: the same words for another vendor, another runtime, a tool's normal output.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_known_issues_texts import _found, _ids

from wizard.kb import load_kb

pytestmark = pytest.mark.unit

RX7900: dict[str, Any] = {"gpus": [{"gfx": "gfx1100", "integrated": False}]}
MI300: dict[str, Any] = {"gpus": [{"gfx": "gfx942", "integrated": False}]}


# moby/moby@b985e23:daemon/errors.go incompatibleDeviceRequest.Error(): "could not select device driver %q with
# capabilities: %v"; `--gpus all` sends driver "" and capabilities [[gpu]]. daemon/devices_amd_linux.go registers the
# AMD driver only where amd-container-runtime is on PATH (or an AMD CDI spec exists); ROCm/container-toolkit@192fe8e
# docs/container-runtime/requirements.rst: Docker 28.3.0+ for --gpus.
GPUS_FIRES = {
    "docker run": ("$ docker run -it --gpus all rocm/pytorch:latest\n"
                   "docker: Error response from daemon: could not select device driver \"\" with capabilities: "
                   "[[gpu]].\nSee 'docker run --help'."),
    "compose": ("Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]]"),
    "json escaped": "{\"message\":\"could not select device driver \\\"\\\" with capabilities: [[gpu]]\"}",
}
GPUS_NEAR = {
    "nvidia named": ("docker: Error response from daemon: could not select device driver \"nvidia\" with "
                     "capabilities: [[gpu]]."),
    "an nvidia host": ("+-----------------------------------------------------------------------------+\n"
                       "| NVIDIA-SMI 470.141.03   Driver Version: 470.141.03   CUDA Version: 11.4     |\n"
                       "docker: Error response from daemon: could not select device driver \"\" with capabilities: "
                       "[[gpu]]."),
    "it worked": "$ docker run --rm --gpus all rocm/rocm-terminal rocm-smi\n========= ROCm System Management Interface",
}


@pytest.mark.parametrize("name", sorted(GPUS_FIRES))
def test_gpus_flag_without_an_amd_device_driver_is_the_cause(name: str) -> None:
    found = _found(RX7900, GPUS_FIRES[name])
    assert "docker-gpus-flag-no-amd-device-driver" in found
    assert found["docker-gpus-flag-no-amd-device-driver"].to_check is None


@pytest.mark.parametrize("name", sorted(GPUS_NEAR))
def test_gpus_flag_near_misses(name: str) -> None:
    assert "docker-gpus-flag-no-amd-device-driver" not in _ids(RX7900, GPUS_NEAR[name])


def test_gpus_flag_fix_passes_the_devices() -> None:
    issue = load_kb().known_issue("docker-gpus-flag-no-amd-device-driver")
    assert issue is not None
    # off WSL (a branch: WSL has no /dev/kfd, its own route is /dev/dxg, tests/test_known_issues_review_K7.py)
    assert any("--device=/dev/kfd --device=/dev/dri" in c for b in issue.fix.branches if ("wsl", False) in b.when
               for c in b.commands)


# moby/moby@b985e23:daemon/runtime_unix.go: "unknown or invalid runtime name: %s"; moby/moby@5d6db84 (v20.10.24)
# daemon/daemon_unix.go: "Unknown runtime specified %s". ROCm/container-toolkit@192fe8e quick-start-guide.rst:
# `sudo amd-ctk runtime configure` then `sudo systemctl restart docker`.
RUNTIME_FIRES = {
    "docker 23+": ("$ docker run --rm --runtime=amd -e AMD_VISIBLE_DEVICES=all rocm/rocm-terminal rocm-smi\n"
                   "docker: Error response from daemon: unknown or invalid runtime name: amd.\n"
                   "See 'docker run --help'."),
    "docker 20.10": "docker: Error response from daemon: Unknown runtime specified amd.",
}
RUNTIME_NEAR = {
    "another runtime": "docker: Error response from daemon: unknown or invalid runtime name: nvidia.",
    "a longer name": "docker: Error response from daemon: unknown or invalid runtime name: amdgpu-runc.",
    "configured": ("$ sudo amd-ctk runtime configure\nLoading configuration from: /etc/docker/daemon.json\n"
                   "Updated the config file: /etc/docker/daemon.json\nPlease restart docker daemon"),
}


@pytest.mark.parametrize("name", sorted(RUNTIME_FIRES))
def test_amd_runtime_not_registered_is_the_cause(name: str) -> None:
    found = _found(MI300, RUNTIME_FIRES[name])
    assert "docker-amd-runtime-not-registered" in found
    assert found["docker-amd-runtime-not-registered"].to_check is None


@pytest.mark.parametrize("name", sorted(RUNTIME_NEAR))
def test_amd_runtime_near_misses(name: str) -> None:
    assert "docker-amd-runtime-not-registered" not in _ids(MI300, RUNTIME_NEAR[name])


def test_amd_runtime_fix_registers_it() -> None:
    issue = load_kb().known_issue("docker-amd-runtime-not-registered")
    assert issue is not None
    assert issue.fix.commands[:2] == ("sudo amd-ctk runtime configure", "sudo systemctl restart docker")


# moby/moby@b985e23:vendor/tags.cncf.io/container-device-interface/pkg/cdi/cache.go InjectDevices():
# "unresolvable CDI devices %s" (joined with ", "); daemon/cdi.go wraps it in "CDI device injection failed: %w".
CDI_FIRES = {
    "docker": ("$ docker run --rm --device amd.com/gpu=all rocm/rocm-terminal rocm-smi\n"
               "docker: Error response from daemon: CDI device injection failed: unresolvable CDI devices "
               "amd.com/gpu=all."),
    "second of two": "Error: setting up CDI devices: unresolvable CDI devices amd.com/gpu=0, amd.com/gpu=1",
}
CDI_NEAR = {
    "another vendor": ("docker: Error response from daemon: CDI device injection failed: unresolvable CDI devices "
                       "nvidia.com/gpu=all."),
    "cdi list": "$ amd-ctk cdi list\nFound 2 AMD GPU devices\namd.com/gpu=all\namd.com/gpu=0\n  /dev/dri/renderD128",
}


@pytest.mark.parametrize("name", sorted(CDI_FIRES))
def test_unresolvable_amd_cdi_device_is_the_cause(name: str) -> None:
    found = _found(MI300, CDI_FIRES[name])
    assert "amd-cdi-device-unresolvable" in found
    assert found["amd-cdi-device-unresolvable"].to_check is None


@pytest.mark.parametrize("name", sorted(CDI_NEAR))
def test_unresolvable_cdi_near_misses(name: str) -> None:
    assert "amd-cdi-device-unresolvable" not in _ids(MI300, CDI_NEAR[name])


def test_cdi_fix_generates_the_spec() -> None:
    issue = load_kb().known_issue("amd-cdi-device-unresolvable")
    assert issue is not None
    assert "sudo amd-ctk cdi generate" in issue.fix.commands


# ROCm/k8s-device-plugin@ed76468:internal/pkg/amdgpu/amdgpu.go GetAMDGPUs(): glog.Fatalf("amdgpu driver unavailable.
# exiting with exit code 2. error: %s", err) where os.Stat("/sys/module/amdgpu/drivers/") fails;
# ROCm/container-toolkit@192fe8e:internal/amdgpu/amdgpu.go: fmt.Errorf("amdgpu driver unavailable: %w", err), printed
# by `amd-ctk cdi list` as "failed to list AMD devices: %v".
DRIVER_FIRES = {
    "device plugin": ("F0312 09:14:03.512345       1 amdgpu.go:159] amdgpu driver unavailable. exiting with exit code 2. "
                      "error: stat /sys/module/amdgpu/drivers/: no such file or directory"),
    "amd-ctk": ("$ amd-ctk cdi list\nfailed to list AMD devices: amdgpu driver unavailable: stat "
                "/sys/module/amdgpu/drivers/: no such file or directory"),
}
DRIVER_NEAR = {
    "another sysfs file": ("W0312 09:14:03.512345       1 amdgpu.go:204] Failed to read 'numa_node' file at "
                           "/sys/module/amdgpu/drivers/pci:amdgpu/0000:03:00.0/numa_node: no such file or directory"),
    "permission": ("failed to list AMD devices: amdgpu driver unavailable: stat /sys/module/amdgpu/drivers/: "
                   "permission denied"),
}


@pytest.mark.parametrize("name", sorted(DRIVER_FIRES))
def test_device_plugin_and_amd_ctk_driver_unavailable_show_no_driver(name: str) -> None:
    found = _found({**MI300, "kfd_present": False}, DRIVER_FIRES[name])
    assert "rock-module-not-loaded" in found


@pytest.mark.parametrize("name", sorted(DRIVER_NEAR))
def test_driver_unavailable_near_misses(name: str) -> None:
    assert "rock-module-not-loaded" not in _ids(MI300, DRIVER_NEAR[name])


def test_driver_unavailable_is_contradicted_where_kfd_exists() -> None:
    found = _found({**MI300, "kfd_present": True}, DRIVER_FIRES["amd-ctk"])
    assert "rock-module-not-loaded" not in found or found["rock-module-not-loaded"].contradicted is not None
