"""Known issues for causes that recur across users' threads in the PyTorch ecosystem on ROCm (helper R6, session 14).

Each issue rests on at least two threads whose cause a maintainer or the reporter's fix confirmed. Texts are modelled
on those threads, not copied; each issue has a near miss that must not fire.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_known_issues_texts import _found, _ids

pytestmark = pytest.mark.unit

STRIX_HALO: dict[str, Any] = {"gpus": [{"gfx": "gfx1151", "integrated": True}]}
RX7900: dict[str, Any] = {"gpus": [{"gfx": "gfx1100", "integrated": False}]}


# triton-lang/triton third_party/amd/backend/compiler.py: path_to_rocm_lld() raises this when no ld.lld is found
# (ROCm/TheRock#2006, ROCm/ROCm#4499, kyuz0/amd-strix-halo-voice-toolbox#1).
LLD = "triton-hip-lld-not-found"
LLD_FIRES = {
    "inductor": ("  File \"/home/u/venv/lib/python3.12/site-packages/triton/backends/amd/compiler.py\", line 197, in "
                 "path_to_rocm_lld\ntorch._inductor.exc.InductorError: LoweringException: Exception: ROCm linker "
                 "/opt/rocm/llvm/bin/ld.lld not found. Set 'TRITON_HIP_LLD_PATH' to its path."),
    "rocm_path variant": ("Exception: ROCm linker /usr/lib64/rocm/llvm/bin/ld.lld not found. "
                          "Set 'TRITON_HIP_LLD_PATH' to its path."),
}
LLD_NEAR = {
    "clang": "Exception: ROCm compiler /opt/rocm/llvm/bin/clang not found. Set 'TRITON_HIP_CLANG_PATH' to its path.",
    "link failed": ("RuntimeError: LLD failed to link hsaco source /tmp/tmpa into object file /tmp/tmpb\n"
                    "  because ld.lld: error: target emulation unknown: -m or at least one .o file required"),
}


@pytest.mark.parametrize("name", sorted(LLD_FIRES))
def test_triton_lld_not_found_is_a_cause(name: str) -> None:
    found = _found(STRIX_HALO, LLD_FIRES[name])
    assert LLD in found
    assert found[LLD].to_check is None
    assert any("TRITON_HIP_LLD_PATH" in c for c in found[LLD].fix_commands)


@pytest.mark.parametrize("name", sorted(LLD_NEAR))
def test_triton_lld_not_found_near_misses(name: str) -> None:
    assert LLD not in _ids(STRIX_HALO, LLD_NEAR[name])
