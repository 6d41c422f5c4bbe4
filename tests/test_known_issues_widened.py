"""Known issues whose signatures were widened to the wording upstream's own troubleshooting documents print.

Each case is a self-written text with the documented message, the facts the issue needs, and a near miss that
must stay silent. (New issues have their cases in tests/data/known_issue_texts.json; an issue has one case
there, so a second, widened wording of an older issue is tested here.)
"""

from __future__ import annotations

from typing import Any

import pytest
from test_known_issues_texts import _facts, _ids

from wizard.diagnose import diagnose

pytestmark = pytest.mark.unit

# (issue id, text that must fire it, its facts, near miss, the near miss's facts)
CASES: list[tuple[str, str, dict[str, Any], str, dict[str, Any]]] = [
    # ROCm/rocm-install-on-linux docs/reference/install-faq.rst, "Issue #5: Application hangs on Multi-GPU systems"
    ("multi-gpu-iommu",
     "rccl-tests/build/all_reduce_perf -b 8 -e 128M -f 2 -g 2\n"
     "node01:4211:4211 [0] NCCL INFO RCCL version 2.20.5+hip6.2\n"
     "node01:4211:4211 [0] /long_pathname_so_that_rpms_can_package_the_debug_info/src/init.cc:137 "
     "NCCL WARN Missing \"iommu=pt\" from kernel command line which can lead to system instablity or hang!",
     {"gpus": [{"gfx": "gfx1100", "integrated": False}, {"gfx": "gfx1100", "integrated": False}]},
     "node01:4211:4211 [0] NCCL INFO RCCL version 2.20.5+hip6.2\nnode01:4211:4211 [0] NCCL INFO Bootstrap : Using eth0",
     {"gpus": [{"gfx": "gfx1100", "integrated": False}, {"gfx": "gfx1100", "integrated": False}]}),
    # ollama/ollama discover/amd_linux.go verifyKFDDriverAccess: /dev/kfd does not exist
    ("container-without-kfd-device",
     "time=2025-01-20T10:00:00.000Z level=ERROR source=amd_linux.go:404 msg=\"amdgpu devices detected but "
     "permission problems block access: kfd driver not loaded.  If running in a container, remember to include "
     "'--device /dev/kfd --device /dev/dri'\"",
     {"in_container": True, "wsl": False, "kfd_present": False},
     "time=2025-01-20T10:00:00.000Z level=INFO source=amd_linux.go:361 msg=\"no compatible amdgpu devices detected\"",
     {"in_container": True, "wsl": False, "kfd_present": False}),
]


@pytest.mark.parametrize(("issue_id", "text", "facts", "near", "near_facts"), CASES, ids=[c[0] for c in CASES])
def test_widened_signature_fires_on_documented_wording(issue_id: str, text: str, facts: dict[str, Any], near: str,
                                                       near_facts: dict[str, Any]) -> None:
    assert issue_id in _ids(facts, text)
    assert issue_id not in _ids(near_facts, near)


def test_shared_object_init_failed_is_a_symptom_to_check() -> None:
    """ROCm/HIP docs/how-to/faq.md: newer HIP runtimes report a device without a code object as
    hipErrorSharedObjectInitFailed ("shared object initialization failed"). The message is not specific to
    that cause, so it brings the missing-code-object finding up as something to check, not as a cause."""
    text = ("  File \"/home/user/venv/lib/python3.11/site-packages/torch/cuda/__init__.py\", line 302, in _lazy_init\n"
            "RuntimeError: HIP error: shared object initialization failed\n"
            "HIP kernel errors might be asynchronously reported at some other API call")
    facts = {"gpus": [{"gfx": "gfx1100", "integrated": False}, {"gfx": "gfx1036", "integrated": True}]}
    found = {f.id: f for f in diagnose(_facts(facts, text))}
    assert "no-binary-for-gpu" in found
    assert found["no-binary-for-gpu"].to_check is not None
    assert "no-binary-for-gpu" not in _ids(facts, "RuntimeError: HIP error: out of memory")


def test_rccls_iommu_warning_on_a_run_that_completes_is_a_symptom_to_check() -> None:
    """RCCL prints its 'Missing "iommu=pt"' warning at every start on such a kernel command line (the install FAQ's
    Issue #5 is a hang), so the warning alone brings multi-gpu-iommu up as something to check; a hang is a cause."""
    two = {"gpus": [{"gfx": "gfx1100", "integrated": False}, {"gfx": "gfx1100", "integrated": False}]}
    completed = ("node01:4211:4211 [0] NCCL INFO RCCL version 2.20.5+hip6.2\n"
                 "node01:4211:4211 [0] /long_pathname_so_that_rpms_can_package_the_debug_info/src/init.cc:137 "
                 "NCCL WARN Missing \"iommu=pt\" from kernel command line which can lead to system instablity or hang!\n"
                 "   134217728      33554432     float     sum      -1   2211.3   60.70   91.05      0\n"
                 "# Out of bounds values : 0 OK\n"
                 "# Avg bus bandwidth    : 45.2113\n")
    found = {f.id: f for f in diagnose(_facts(two, completed))}
    assert "multi-gpu-iommu" in found and found["multi-gpu-iommu"].to_check is not None
    hang = {f.id: f for f in diagnose(_facts(two, "[rank0]: Watchdog caught collective operation timeout"))}
    assert hang["multi-gpu-iommu"].to_check is None
