"""Known issue for an in-sample cause of the recorded machines of 2026-11-30 (helper K9, session 16).

gfx1151-vgpr-count-cwsr-crash rests on AMD's tracking issue ROCm/TheRock#2991 and what it links (rocm-systems
PR #2200, the amdkfd patch exporting cwsr_size and ctl_stack_size). Texts are written here, modelled on what ROCr
and the tools print, not copied from a fixture; each near miss is of this file's own making.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_known_issues_texts import _found, _ids

pytestmark = pytest.mark.unit

VGPR = "gfx1151-vgpr-count-cwsr-crash"
FAULT = ("Memory access fault by GPU node-1 (Agent handle: 0x55d0c8a1b2c0) on address 0x7f3a21c00000. Reason: Page "
         "not present or supervisor privilege.\nAborted (core dumped)\n")
# ROCr's libhsakmt on a kernel whose KFD does not export the CWSR sizes (rocm-systems PR #2200; the words as
# NixOS/nixpkgs#489098 quotes them)
KFD_WARNING = "WARNING: KFD ABI 1.20+ is recommended\n"


def _strix_halo(**extra: Any) -> dict[str, Any]:
    return {"gpus": [{"gfx": "gfx1151", "integrated": True}], **extra}


# ROCm before 7.2: its ROCr sized the CWSR areas with the wrong gfx1151 VGPR count (TheRock#2991)
CAUSE = {
    "rocm 6.4 fault": (_strix_halo(rocm_version="6.4.1"), "$ ./hipMemcpy_sample\n" + FAULT),
    "rocm 7.1 fault": (_strix_halo(rocm_version="7.1.1", kernel="6.14.0-1017-oem"), FAULT),
    # ROCm 7.2's runtime says itself that the kernel lacks the export, and the fault follows
    "runtime warns then faults": (_strix_halo(rocm_version="7.2.0", kernel="6.11.0-29-generic"), KFD_WARNING + FAULT),
    "issue's words on rocm 7.1": (_strix_halo(rocm_version="7.1.0"),
                                  "Looks like the incorrect VGPR count crash on gfx1151 again: every torch run dies"),
}
# the failure on gfx1151, but the evidence does not say which half of the fix is missing
TO_CHECK = {
    "rocm 7.2 on a 6.17 kernel": (_strix_halo(rocm_version="7.2.1", kernel="6.17.0-20-generic"), FAULT),
    "no version read": (_strix_halo(), FAULT),
    "title on rocm 7.2": (_strix_halo(rocm_version="7.2.0"),
                          "# [gfx1151] Incorrect VGPR count causing crashes in ROCm 7.1.x on Linux\n"),
}
NEAR = {
    # the same fault on a discrete RDNA3 card: no gfx1151, not this issue
    "rx 7900 xtx": ({"gpus": [{"gfx": "gfx1100", "integrated": False}], "rocm_version": "6.4.1"}, FAULT),
    # Strix Point (gfx1150) is not the GPU whose VGPR count was wrong
    "strix point": ({"gpus": [{"gfx": "gfx1150", "integrated": True}], "rocm_version": "6.4.1"}, FAULT),
    # a gfx1151 fault with MES firmware 0x83 loaded: mes-firmware-0x83-hang, with its own fix
    "mes 0x83": (_strix_halo(rocm_version="6.4.1"),
                 "MES_KIQ feature version: 6, firmware version: 0x0000006f\n"
                 "MES feature version: 1, firmware version: 0x00000083\n" + FAULT),
    # the runtime's warning alone: nothing failed
    "warning only": (_strix_halo(rocm_version="7.2.0"), KFD_WARNING + "Device 0: AMD Radeon 8060S Graphics\nOK\n"),
    # TheRock 7.14 nightly crashing in hsa_init: therock-714-initdma-segfault
    "initdma segfault": (_strix_halo(), "rocm 7.14.0a20260610\nSegmentation fault in rocr::AMD::GpuAgent::InitDma()\n"),
    # the words without a failure: someone asking about the VGPR count
    "vgpr question": (_strix_halo(rocm_version="6.4.1"), "How many VGPRs does gfx1151 have per SIMD?"),
}


@pytest.mark.parametrize("name", sorted(CAUSE))
def test_vgpr_count_fault_is_a_cause(name: str) -> None:
    facts, text = CAUSE[name]
    found = _found(facts, text)
    assert VGPR in found
    assert found[VGPR].to_check is None


@pytest.mark.parametrize("name", sorted(TO_CHECK))
def test_vgpr_count_fault_undecided_is_to_check(name: str) -> None:
    facts, text = TO_CHECK[name]
    found = _found(facts, text)
    assert VGPR in found
    assert found[VGPR].to_check is not None


@pytest.mark.parametrize("name", sorted(NEAR))
def test_vgpr_count_near_misses(name: str) -> None:
    facts, text = NEAR[name]
    assert VGPR not in _ids(facts, text)


def test_mes_0x83_keeps_its_own_issue() -> None:
    facts, text = NEAR["mes 0x83"]
    assert "mes-firmware-0x83-hang" in _ids(facts, text)


def test_vgpr_count_ranks_above_the_bare_symptom() -> None:
    ids = _ids(*CAUSE["rocm 6.4 fault"])
    assert ids.index(VGPR) < ids.index("memory-access-fault")


def test_vgpr_count_fix_names_both_halves() -> None:
    fix = _found(*CAUSE["rocm 6.4 fault"])[VGPR].fix
    assert "7.2" in fix and "cwsr_size" in fix


# MIOpen's run-time compile of naive_conv.cpp on ROCm 5.4 / Ubuntu 22.04 (ROCm/MIOpen#2096, #2049: libstdc++-12-dev
# fixed it for the reporters); the log lines as MIOpen prints them
_MIOPEN_LIMITS = (
    "MIOpen(HIP): Error [Compile] 'hiprtcCompileProgram(prog.get(), c_options.size(), c_options.data())' naive_conv.cpp: "
    "HIPRTC_ERROR_COMPILATION (6)\n"
    "MIOpen(HIP): Warning [BuildHip] /tmp/comgr-e64065/input/naive_conv.cpp:39:10: fatal error: 'limits' file not found\n"
    "#include <limits> // std::numeric_limits\n"
    "terminate called after throwing an instance of 'miopen::Exception'\n"
    "  what():  /long_pathname_so_that_rpms_can_package_the_debug_info/data/driver/MLOpen/src/hipoc/hipoc_program.cpp:304: "
    "Code object build failed. Source: naive_conv.cpp\n")


def test_miopen_runtime_compile_missing_cxx_header_is_the_stdlib_issue() -> None:
    found = _found({}, _MIOPEN_LIMITS)
    assert "hip-cxx-stdlib-missing" in found and found["hip-cxx-stdlib-missing"].to_check is None
    # near miss: a miopen::Exception with no missing header (another cause) does not name it
    other = "terminate called after throwing an instance of 'miopen::Exception'\n  what():  Code object build failed.\n"
    assert "hip-cxx-stdlib-missing" not in _found({}, other)
    # near miss: the program's own header missing is no C++ standard library
    assert "hip-cxx-stdlib-missing" not in _found({}, "kernel.hip:3:10: fatal error: 'limits_config.h' file not found")
