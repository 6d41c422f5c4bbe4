"""Known issues from runtime messages in library and driver source (helper D4, session 14).

Each text quotes the message as the source prints it (MIOpen's user database and kernel cache, the ROCm runtime's
HW exception and memory fault reasons, amdgpu's thermal shutdown), with a near miss that must not fire: the same
words about another directory, another reason, a system database, the GPU cooling down again.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_known_issues_texts import _found, _ids

from wizard.kb import load_kb

pytestmark = pytest.mark.unit

RX6800: dict[str, Any] = {"gpus": [{"gfx": "gfx1030", "integrated": False}]}
MI210: dict[str, Any] = {"gpus": [{"gfx": "gfx90a", "integrated": False}]}


# ROCm/MIOpen@2d1fd99:src/include/miopen/sqlite_db.hpp SQLiteBase(): MIOPEN_THROW(miopenStatusInternalError,
# "Cannot open database file:" + filename_) for a user database; errors.hpp try_() prints "MIOpen Error: " + what(),
# what() being "<file>:<line>: <message>". src/sqlite_db.cpp ErrorMessage(): "Internal error while accessing SQLite
# database: " + sqlite3_errmsg. src/binary_cache.cpp ComputeUserCachePath(): fs::create_directories(p), whose
# libstdc++ exception reads "filesystem error: cannot create directories: <reason> [<path>]".
MIOPEN_FIRES = {
    "user perf db": ("MIOpen Error: /long_pathname_so_that_rpms_can_package_the_debug_info/src/extlibs/MLOpen/src/"
                     "include/miopen/sqlite_db.hpp:252: Cannot open database file:/home/user/.config/miopen/"
                     "gfx1030_36_1.1.0.udb\n"
                     "RuntimeError: miopenStatusInternalError"),
    "kernel cache dir": ("MIOpen Error: filesystem error: cannot create directories: Permission denied "
                         "[/home/user/.cache/miopen/3.2.0.a6f2d6b2b]\n"
                         "RuntimeError: miopenStatusUnknownError"),
    "read-only fs": ("MIOpen Error: filesystem error: cannot create directories: Read-only file system "
                     "[/workspace/.cache/miopen/3.2.0.a6f2d6b2b]"),
    "readonly db": ("MIOpen Error: /MIOpen/src/sqlite_db.cpp:226: Internal error while accessing SQLite database: "
                    "attempt to write a readonly database"),
}
MIOPEN_NEAR = {
    "another program's directory": ("filesystem error: cannot create directories: Permission denied "
                                    "[/home/user/.cache/huggingface/hub]"),
    "system database": ("MIOpen(HIP): Warning [SQLiteBase] Unable to read system database file:/opt/rocm/share/miopen/"
                        "db/gfx1030_36.db Performance may degrade"),
    "missing kernels package": ("MIOpen(HIP): Warning [SQLiteBase] Missing system database file: gfx1030_36.kdb "
                                "Performance may degrade. Please follow instructions to install: "
                                "https://github.com/ROCm/MIOpen#installing-miopen-kernels-package"),
    "another sqlite user": "sqlite3.OperationalError: attempt to write a readonly database",
    # create_directories throws on every error: the warning alone means the directory was there (review V4)
    "dir warning": "MIOpen(HIP): Warning [SQLiteBase] Unable to create a directory: \"/home/user/.config/miopen\"",
}


@pytest.mark.parametrize("name", sorted(MIOPEN_FIRES))
def test_miopen_user_db_unwritable_is_the_cause_in_miopens_words(name: str) -> None:
    found = _found(RX6800, MIOPEN_FIRES[name])
    assert "miopen-user-db-unwritable" in found
    assert found["miopen-user-db-unwritable"].to_check is None


@pytest.mark.parametrize("name", sorted(MIOPEN_NEAR))
def test_miopen_user_db_unwritable_near_misses(name: str) -> None:
    assert "miopen-user-db-unwritable" not in _ids(RX6800, MIOPEN_NEAR[name])


def test_miopen_user_db_fix_points_at_writable_directories() -> None:
    issue = load_kb().known_issue("miopen-user-db-unwritable")
    assert issue is not None
    assert set(issue.fix.env) == {"MIOPEN_USER_DB_PATH", "MIOPEN_CUSTOM_CACHE_DIR"}


# ROCm/ROCR-Runtime@c7785a6:runtime/hsa-runtime/core/runtime/runtime.cpp HwExceptionHandler(): "HW Exception by GPU
# node-%u (Agent handle: %p) reason :%s" with "ECC" or "GPU Hang"; VMFaultHandler(): "Memory access fault by GPU
# node-%u (Agent handle: %p) on address %p%s. Reason: %s." with "DRAM ECC failure", "SRAM ECC failure",
# "Generic hang recovery" among the reasons.
ECC_FIRES = {
    "hw exception": "HW Exception by GPU node-2 (Agent handle: 0x55d4a1c0f2a0) reason :ECC\nAborted (core dumped)",
    "dram": ("Memory access fault by GPU node-4 (Agent handle: 0x5612f0a2c4b0) on address 0x7f3c2a000000(may not be "
             "exact address). Reason: DRAM ECC failure.\nAborted (core dumped)"),
    "sram": ("Memory access fault by GPU node-4 (Agent handle: 0x5612f0a2c4b0) on address 0x7f3c2a000000(may not be "
             "exact address). Reason: SRAM ECC failure."),
}
ECC_NEAR = {
    "page fault": ("Memory access fault by GPU node-1 (Agent handle: 0x5591d0a3f6c0) on address 0x7f1a3c200000. "
                   "Reason: Page not present or supervisor privilege."),
    "hang": "HW Exception by GPU node-1 (Agent handle: 0x5591d0a3f6c0) reason :GPU Hang",
    "no error": "rocm-smi --showrasinfo all shows no ECC failure: every uncorrectable count is 0",
}


@pytest.mark.parametrize("name", sorted(ECC_FIRES))
def test_uncorrectable_ecc_is_the_cause_in_the_runtimes_words(name: str) -> None:
    found = _found(MI210, ECC_FIRES[name])
    assert "gpu-uncorrectable-ecc-error" in found
    assert found["gpu-uncorrectable-ecc-error"].to_check is None


@pytest.mark.parametrize("name", sorted(ECC_NEAR))
def test_uncorrectable_ecc_near_misses(name: str) -> None:
    assert "gpu-uncorrectable-ecc-error" not in _ids(MI210, ECC_NEAR[name])


def test_an_ecc_memory_fault_ranks_above_the_plain_memory_fault() -> None:
    ids = _ids(MI210, ECC_FIRES["dram"])
    assert "memory-access-fault" in ids
    assert ids.index("gpu-uncorrectable-ecc-error") < ids.index("memory-access-fault")


@pytest.mark.parametrize("text", [ECC_NEAR["hang"],
                                  "Memory access fault by GPU node-1 (Agent handle: 0x5591d0a3f6c0) on address "
                                  "0x7f1a3c200000(may not be exact address). Reason: Generic hang recovery."])
def test_the_runtimes_gpu_hang_words_are_a_gpu_reset_to_check(text: str) -> None:
    found = _found(RX6800, text)
    assert "gpu-ring-timeout" in found
    assert found["gpu-ring-timeout"].to_check is not None
    assert "gpu-uncorrectable-ecc-error" not in found


def test_a_plain_page_fault_is_no_gpu_reset() -> None:
    assert "gpu-ring-timeout" not in _ids(RX6800, ECC_NEAR["page fault"])


# torvalds/linux@6867849:drivers/gpu/drm/amd/pm/powerplay/amd_powerplay.c pp_swctf_delayed_work_handler() and
# @7e11e01:drivers/gpu/drm/amd/pm/powerplay/hwmgr/smu_helper.c phm_irq_process(): dev_emerg lines before
# orderly_poweroff(true).
THERMAL_FIRES = {
    "sw ctf": ("kernel: amdgpu 0000:03:00.0: amdgpu: ERROR: GPU over temperature range(SW CTF) detected!\n"
               "kernel: amdgpu 0000:03:00.0: amdgpu: ERROR: System is going to shutdown due to GPU SW CTF!"),
    "hw ctf": ("amdgpu 0000:0c:00.0: amdgpu: ERROR: GPU HW Critical Temperature Fault(aka CTF) detected!\n"
               "amdgpu 0000:0c:00.0: amdgpu: ERROR: System is going to shutdown due to GPU HW CTF!"),
}
THERMAL_NEAR = {
    "cooled down": "amdgpu 0000:03:00.0: amdgpu: ERROR: GPU under temperature range detected!",
    "thermal limit words": "The junction temperature reached 95 C and the GPU throttled its clocks.",
}


@pytest.mark.parametrize("name", sorted(THERMAL_FIRES))
def test_thermal_shutdown_is_the_cause_in_amdgpus_words(name: str) -> None:
    found = _found(RX6800, THERMAL_FIRES[name])
    assert "gpu-thermal-shutdown" in found
    assert found["gpu-thermal-shutdown"].to_check is None


@pytest.mark.parametrize("name", sorted(THERMAL_NEAR))
def test_thermal_shutdown_near_misses(name: str) -> None:
    assert "gpu-thermal-shutdown" not in _ids(RX6800, THERMAL_NEAR[name])
