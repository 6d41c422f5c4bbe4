"""Known issues from TheRock's own documentation and the messages its Python packages print (helper D2).

Each message is quoted from ROCm/TheRock@89553ce (build_tools/packaging/python/templates/rocm/src/rocm_sdk/,
RELEASES.md, docs/environment_setup_guide.md) or pypa/pip@00226a8 (src/pip/_internal/commands/install.py);
every issue has a case that fires and a near miss that must not.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_known_issues_texts import _found, _ids

from wizard.diagnose import Finding

pytestmark = pytest.mark.unit

RX7900: dict[str, Any] = {"gpus": [{"gfx": "gfx1100", "integrated": False}]}
MI300: dict[str, Any] = {"gpus": [{"gfx": "gfx942", "integrated": False}]}


def _finding(facts: dict[str, Any], text: str, issue_id: str) -> Finding | None:
    return _found(facts, text).get(issue_id)


# rocm_sdk/__init__.py initialize_process(): the warning TheRock's torch wheels raise through _rocm_init.py
# (check_version='<rocm-sdk version>', external-builds/pytorch/build_prod_wheels.py) on a version mismatch.
VERSION_WARNING = (
    "$ python -c 'import torch; print(torch.cuda.is_available())'\n"
    "/home/user/venv/lib/python3.12/site-packages/rocm_sdk/__init__.py:179: UserWarning: The program was compiled "
    "against a ROCm version matching '7\\.13\\.0a20260430' but the installed ROCm version in this Python environment "
    "is 7.14.0a20260601. This incompatibility may result in unexpected behavior\n"
    "  warnings.warn(\n"
    "True")


def test_rocm_sdk_version_mismatch_warning_fires() -> None:
    found = _finding(RX7900, VERSION_WARNING, "rocm-sdk-version-mismatch")
    assert found is not None and found.to_check is None


def test_rocm_sdk_version_mismatch_from_pips_conflict_line() -> None:
    text = ("ERROR: pip's dependency resolver does not currently take into account all the packages that are "
            "installed. This behaviour is the source of the following dependency conflicts.\n"
            "torch 2.11.0+rocm7.13.0a20260430 requires rocm[libraries]==7.13.0a20260430, but you have rocm "
            "7.14.0a20260601 which is incompatible.")
    assert "rocm-sdk-version-mismatch" in _ids(RX7900, text)


def test_rocm_sdk_version_mismatch_near_misses() -> None:
    # the versions printed side by side, without the warning: no mismatch is stated
    plain = ("$ rocm-sdk version\n7.14.0a20260601\n"
             "the installed ROCm version in this Python environment is 7.14.0a20260601")
    assert "rocm-sdk-version-mismatch" not in _ids(RX7900, plain)
    # pip's conflict line about another package than rocm
    other = ("vllm 0.6.6 requires torch==2.5.1, but you have torch 2.11.0+rocm7.13.0a20260430 which is "
             "incompatible.")
    assert "rocm-sdk-version-mismatch" not in _ids(RX7900, other)
    # a requirement that is not installed is another pip message
    missing = "torch 2.11.0+rocm7.13.0a20260430 requires rocm[libraries]==7.13.0a20260430, which is not installed."
    assert "rocm-sdk-version-mismatch" not in _ids(RX7900, missing)


# rocm_sdk/__main__.py _do_path() and rocm_sdk/_devel.py get_devel_root().
DEVEL_MISSING = (
    "$ rocm-sdk path --cmake\n"
    "ERROR: Could not load the `rocm[devel]` package, which is required to access runtime tools and development "
    "files. Please install it with your package manager (pip, uv, etc)\n"
    "ERROR: rocm_sdk_devel module for the ROCm SDK development package is not installed. This can typically be "
    "obtained by installing `rocm[devel]` from your package manager")


def test_rocm_sdk_devel_not_installed_fires_on_path_and_init() -> None:
    found = _finding(RX7900, DEVEL_MISSING, "rocm-sdk-devel-not-installed")
    assert found is not None and found.to_check is None
    init = ("$ rocm-sdk init\nERROR running init: rocm_sdk_devel module for the ROCm SDK development package is "
            "not installed. This can typically be obtained by installing `rocm[devel]` from your package manager")
    assert "rocm-sdk-devel-not-installed" in _ids(RX7900, init)


def test_rocm_sdk_devel_fix_names_the_gpus_device_extra() -> None:
    found = _finding(RX7900, DEVEL_MISSING, "rocm-sdk-devel-not-installed")
    assert any("rocm[libraries,devel,device-gfx1100]==$(rocm-sdk version)" in c for c in found.fix_commands)


def test_rocm_sdk_devel_near_miss_when_it_is_installed() -> None:
    text = ("$ rocm-sdk init\nDevel contents expanded to '.venv/lib/python3.12/site-packages/_rocm_sdk_devel'\n"
            "$ pip install \"rocm[libraries,devel,device-gfx1100]\"  # the rocm[devel] package is installed")
    assert "rocm-sdk-devel-not-installed" not in _ids(RX7900, text)


# rocm_sdk/_devel.py _discover_device_link_plans().
DEVICE_SKIPPED = ("$ rocm-sdk init\n"
                  "WARNING: skipping rocm-sdk-device-gfx1100 7.14.0a20260601: does not match rocm-sdk 7.15.0a20260630\n"
                  "Devel contents expanded to '.venv/lib/python3.12/site-packages/_rocm_sdk_devel'")


def test_rocm_sdk_device_wheel_version_skipped_fires() -> None:
    assert "rocm-sdk-device-wheel-version-skipped" in _ids(RX7900, DEVICE_SKIPPED)


def test_rocm_sdk_device_wheel_version_skipped_near_misses() -> None:
    # pip's own "skipping" of a package it does not find is another message
    pip_skip = "WARNING: Skipping rocm-sdk-device-gfx1100 as it is not installed."
    assert "rocm-sdk-device-wheel-version-skipped" not in _ids(RX7900, pip_skip)
    same = "rocm-sdk-device-gfx1100==7.15.0a20260630\nrocm-sdk-libraries==7.15.0a20260630"
    assert "rocm-sdk-device-wheel-version-skipped" not in _ids(RX7900, same)


# ROCm/TheRock RELEASES.md "Installing multi-arch JAX Python packages"; the XLA wording of a missing handler.
JAX_FFI = (
    "$ pip list | grep jax\njax                0.11.0\njaxlib             0.11.0\n"
    "jax-rocm10-pjrt    0.11.0\njax-rocm10-plugin  0.11.0\n"
    "jax.errors.JaxRuntimeError: NOT_FOUND: No FFI handler registered for hipsolver_getrf_ffi on a platform ROCM "
    "(canonical ROCM)")


def test_jax_rocm10_plugin_unknown_to_old_jaxlib_fires() -> None:
    found = _finding(MI300, JAX_FFI, "jax-rocm10-plugin-unknown-to-jaxlib")
    assert found is not None and found.to_check is None


def test_jax_rocm10_near_misses() -> None:
    # the same missing handler with the ROCm 7 plugin: not this cause
    rocm7 = JAX_FFI.replace("rocm10", "rocm7")
    assert "jax-rocm10-plugin-unknown-to-jaxlib" not in _ids(MI300, rocm7)
    # a handler of another library under ROCm 10 is not the hipsolver lookup the release notes name
    other = JAX_FFI.replace("hipsolver_getrf_ffi", "levanter_dispatch")
    assert "jax-rocm10-plugin-unknown-to-jaxlib" not in _ids(MI300, other)


def test_jax_rocm10_with_a_fixed_jaxlib_is_contradicted() -> None:
    fixed = JAX_FFI.replace("jaxlib             0.11.0", "jaxlib==0.11.1")
    found = _finding(MI300, fixed, "jax-rocm10-plugin-unknown-to-jaxlib")
    assert found is None or found.contradicted is not None


# ROCm/TheRock docs/environment_setup_guide.md "patchelf" / "Issue with patchelf".
PATCHELF = ("$ python build_tools/build_python_packages.py --artifact-dir ./output/artifacts --dest-dir ./wheels\n"
            "$ readelf -l .venv/lib/python3.12/site-packages/_rocm_sdk_libraries/lib/librocblas.so.5\n"
            "readelf: Error: the PHDR segment is not covered by a LOAD segment")


def test_therock_patchelf_phdr_corrupt_fires() -> None:
    found = _finding(RX7900, PATCHELF, "therock-patchelf-phdr-corrupt")
    assert found is not None and found.to_check is None


def test_therock_patchelf_map_segment_in_a_local_build_is_a_cause() -> None:
    text = ("cmake -B build -GNinja . -DTHEROCK_AMDGPU_FAMILIES=gfx110X-all -DTHEROCK_BUNDLE_SYSDEPS=ON\n"
            "$ rocm-sdk test\n"
            "OSError: /home/user/venv/lib/python3.12/site-packages/_rocm_sdk_core/lib/libamdhip64.so.7: failed to "
            "map segment from shared object")
    found = _finding(RX7900, text, "therock-patchelf-phdr-corrupt")
    assert found is not None


def test_therock_patchelf_near_misses() -> None:
    # the load failure with no local build in sight (a noexec mount, a pip install): not this cause
    text = ("$ python -c 'import torch'\nOSError: /tmp/x/libamdhip64.so.7: failed to map segment from shared "
            "object")
    assert "therock-patchelf-phdr-corrupt" not in _ids(RX7900, text)
    # readelf's other complaints in a build are not the PHDR corruption
    other = PATCHELF.replace("the PHDR segment is not covered by a LOAD segment", "no .dynamic section")
    assert "therock-patchelf-phdr-corrupt" not in _ids(RX7900, other)
