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


# vllm/platforms/__init__.py: rocm_platform_plugin() imports amdsmi; an exception leaves only this debug line
# (ROCm/TheRock#3054, ROCm/rocm-cli#254, vllm-project/vllm#24576).
SMI = "vllm-rocm-platform-amdsmi-module-missing"
SMI_FIRES = {
    "debug log": ("DEBUG 09-10 18:43:10 [__init__.py:106] Checking if ROCm platform is available.\n"
                  "DEBUG 09-10 18:43:10 [__init__.py:120] ROCm platform is not available because: No module named "
                  "'amdsmi'\nINFO 09-10 18:43:10 [__init__.py:220] No platform detected, vLLM is running on "
                  "UnspecifiedPlatform\nRuntimeError: Failed to infer device type"),
}
SMI_NEAR = {
    "nvidia host": ("DEBUG [__init__.py:78] Confirmed CUDA platform is available.\n"
                    "DEBUG [__init__.py:120] ROCm platform is not available because: No module named 'amdsmi'"),
    "no gpu found": "DEBUG [__init__.py:118] ROCm platform is not available because no GPU is found.",
    "not init": ("DEBUG ROCm platform is not available because: Error code:\n\t32 | AMDSMI_STATUS_NOT_INIT - "
                 "Device not initialized"),
}


@pytest.mark.parametrize("name", sorted(SMI_FIRES))
def test_vllm_amdsmi_missing_is_a_cause(name: str) -> None:
    found = _found(RX7900, SMI_FIRES[name])
    assert SMI in found
    assert found[SMI].to_check is None
    assert any("amd_smi" in c for c in found[SMI].fix_commands)


@pytest.mark.parametrize("name", sorted(SMI_NEAR))
def test_vllm_amdsmi_missing_near_misses(name: str) -> None:
    assert SMI not in _ids(RX7900, SMI_NEAR[name])


# flash-attention's ROCm Triton backend is selected by FLASH_ATTENTION_TRITON_AMD_ENABLE at build and run time; the
# CK extension flash_attn_2_cuda is MI200/MI300 only (ROCm/ROCm#4578, Dao-AILab/flash-attention#1538, #1499, #2343).
FA = "flash-attn-amd-triton-backend-not-selected"
FA_TEXT = ("  File \"/home/u/YuE/venv/lib/python3.12/site-packages/flash_attn/flash_attn_interface.py\", line 15, in "
           "<module>\n    import flash_attn_2_cuda as flash_attn_gpu\nModuleNotFoundError: No module named "
           "'flash_attn_2_cuda'")
RX7800: dict[str, Any] = {"gpus": [{"gfx": "gfx1101", "integrated": False}]}


def test_flash_attn_triton_backend_is_a_cause_on_radeon() -> None:
    found = _found(RX7800, FA_TEXT)
    assert FA in found
    assert found[FA].to_check is None
    assert ("FLASH_ATTENTION_TRITON_AMD_ENABLE", "TRUE") in tuple(found[FA].fix_env)


@pytest.mark.parametrize("spec", [
    {"gpus": [{"gfx": "gfx942", "integrated": False}]},  # MI300: the CK backend is the one for it
    {"gpus": [{"gfx": "gfx1101", "integrated": False}], "env": {"FLASH_ATTENTION_TRITON_AMD_ENABLE": "TRUE"}},
], ids=["mi300", "already-set"])
def test_flash_attn_triton_backend_near_miss_facts(spec: dict[str, Any]) -> None:
    assert FA not in _ids(spec, FA_TEXT)


def test_flash_attn_triton_backend_near_miss_abi() -> None:
    text = ("    import flash_attn_2_cuda as flash_attn_gpu\nImportError: /venv/lib/python3.12/site-packages/"
            "flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so: undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocationE")
    assert FA not in _ids(RX7800, text)
