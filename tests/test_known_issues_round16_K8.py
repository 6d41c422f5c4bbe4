"""Known issues for in-sample causes of the recorded machines of 2026-11-30 (helper K8, session 16).

Each issue rests on upstream source or the thread that found the cause; texts are written here, modelled on what the
tools print, not copied from a fixture; each issue has a near miss that must not fire it.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_known_issues_texts import _found, _ids

pytestmark = pytest.mark.unit

POLARIS: dict[str, Any] = {"gpus": [{"gfx": "gfx803", "integrated": False}]}
NO_FACTS: dict[str, Any] = {}


# ROCm/HIP@2e916d8 (rocm-3.5.0) rocclr/CMakeLists.txt: the HIP-ROCclr runtime is libamdhip64.so, with a
# libhip_hcc.so link to it; before ROCm 3.5 the HIP runtime library itself was libhip_hcc.so (packaging/hip-hcc.txt).
LIBS = "rocm-libraries-not-found"
LIBS_FIRES = {
    "tensorflow dso loader": (
        "2021-03-02 09:11:04.118230: W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load "
        "dynamic library 'libhip_hcc.so'; dlerror: libhip_hcc.so: cannot open shared object file: No such file or "
        "directory\nAborted (core dumped)"),
    "versioned soname": ("ImportError: libhip_hcc.so.3: cannot open shared object file: No such file or directory"),
}
LIBS_NEAR = {
    "opened": ("2021-03-02 09:11:04.118230: I tensorflow/stream_executor/platform/default/dso_loader.cc:44] "
               "Successfully opened dynamic library libhip_hcc.so"),
    "other library": ("Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open "
                      "shared object file: No such file or directory"),
}


@pytest.mark.parametrize("name", sorted(LIBS_FIRES))
def test_libhip_hcc_not_found_is_a_cause(name: str) -> None:
    found = _found(POLARIS, LIBS_FIRES[name])
    assert LIBS in found
    assert found[LIBS].to_check is None


@pytest.mark.parametrize("name", sorted(LIBS_NEAR))
def test_libhip_hcc_near_misses(name: str) -> None:
    assert LIBS not in _ids(POLARIS, LIBS_NEAR[name])
