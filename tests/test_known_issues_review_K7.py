"""Four known-issue leftovers of the last reviews (helper K7).

Each test is a machine on which an issue advised, or was shown (or not shown), against what its sources say, with the
near miss that must keep its present behaviour.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from test_known_issues_texts import _facts, _found, _ids

from wizard.diagnose import Finding, diagnose
from wizard.model import OsInfo
from wizard.record import replace

pytestmark = pytest.mark.unit

RX7900: dict[str, Any] = {"gpus": [{"gfx": "gfx1100", "integrated": False}]}

# --------------------------------------------------------------------------- 1. docker --gpus under WSL
# moby/moby@b985e23:daemon/errors.go: 'could not select device driver "" with capabilities: [[gpu]]'.
DOCKER = "docker-gpus-flag-no-amd-device-driver"
GPUS = ("$ docker run --rm -it --gpus all rocm/pytorch:latest\n"
        "docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].\n")


def _advice(f: Finding) -> str:
    return " ".join((f.fix, *f.fix_commands, *(f"{k}={v}" for k, v in f.fix_env)))


# WSL has no /dev/kfd: its GPU is /dev/dxg, reached through librocdxg and DXCore. AMD's own container command for WSL,
# ROCm/librocdxg@021a477ae052e38dc03c82213480157b20a10735:README.md ("Container Launch - WSL-Specific Flags"):
# --device=/dev/dxg, libdxcore.so and librocdxg.so mounted, -e HSA_ENABLE_DXG_DETECTION=1.
def test_docker_gpus_fix_under_wsl_passes_dxg_not_kfd() -> None:
    f = _found({**RX7900, "wsl": True}, GPUS)[DOCKER]
    assert not re.search(r"--device[= ]/dev/kfd\b", _advice(f))  # benchmarks/reading_score.py's rule for WSL
    assert any("--device=/dev/dxg" in c and "-v /usr/lib/wsl/lib/libdxcore.so:/usr/lib/libdxcore.so" in c
               and "-v /opt/rocm/lib/librocdxg.so:/usr/lib/librocdxg.so" in c
               and "-e HSA_ENABLE_DXG_DETECTION=1" in c for c in f.fix_commands), f.fix_commands
    assert "github.com/ROCm/librocdxg" in " ".join(f.sources)


def test_docker_gpus_fix_off_wsl_still_passes_kfd_and_no_dxg() -> None:
    """The near miss: native Linux keeps AMD's --device=/dev/kfd --device=/dev/dri and gets nothing of WSL's."""
    f = _found({**RX7900, "wsl": False}, GPUS)[DOCKER]
    assert any("--device=/dev/kfd --device=/dev/dri" in c for c in f.fix_commands)
    assert "/dev/dxg" not in _advice(f) and "HSA_ENABLE_DXG_DETECTION" not in _advice(f)
    assert f.to_check is None

