"""Known issues taken from ROCm's own release notes (known and resolved issues of 7.11.0, 7.12.0 and 10.0.0).

Each case quotes the message the release notes give, and a near miss (the same words elsewhere: another tool, a
library found, another soname, a negation) that must not fire. Sources are in each issue's "sources".
"""

from __future__ import annotations


import pytest
from test_known_issues_texts import _found, _ids


pytestmark = pytest.mark.unit

RX7900 = {"gpus": [{"gfx": "gfx1100", "integrated": False}]}
R9700 = {"gpus": [{"gfx": "gfx1201", "integrated": False}]}


# --- hipify-clang with CUDA 12.x: 'must pass in an explicit nvptx64 gpu architecture' (7.11 known, 7.12 resolved)

HIPIFY_CUDA12 = ("$ hipify-clang vectorAdd.cu --cuda-path=/usr/local/cuda-12.4 -o vectorAdd.cu.hip\n"
                 "error: must pass in an explicit nvptx64 gpu architecture to 'ptxas'\n"
                 "error: must pass in an explicit nvptx64 gpu architecture to 'nvlink'\n")


def test_hipify_clang_cuda12_nvptx64_messages_are_a_note() -> None:
    found = _found(RX7900, HIPIFY_CUDA12)
    finding = found["hipify-clang-cuda12-nvptx64-arch-messages"]
    assert finding.to_check is not None  # an info note: never the cause of a failure
    assert "hipify-clang-needs-cuda-installation" not in found


def test_hipify_clang_nvlink_line_alone_fires() -> None:
    text = "[HIPIFY] info: file 'kernel.cu' statistics:\nerror: must pass in an explicit nvptx64 gpu architecture to 'nvlink'"
    assert "hipify-clang-cuda12-nvptx64-arch-messages" in _ids(RX7900, text)


def test_plain_clang_cuda_compile_is_not_the_hipify_note() -> None:
    """The same clang driver message from a CUDA compile that hipify-clang did not run."""
    text = ("$ clang++ -x cuda vectorAdd.cu -o vectorAdd --cuda-path=/usr/local/cuda-12.4\n"
            "error: must pass in an explicit nvptx64 gpu architecture to 'ptxas'\n")
    assert "hipify-clang-cuda12-nvptx64-arch-messages" not in _ids(RX7900, text)


def test_hipify_clang_other_error_is_not_the_note() -> None:
    text = "$ hipify-clang vectorAdd.cu\nerror: unknown type name 'cudaStream_t'\n"
    assert "hipify-clang-cuda12-nvptx64-arch-messages" not in _ids(RX7900, text)


# --- librocm_sysdeps_*.so not on the loader path (7.12 known issue; 10.0 TensorFlow known issue)

ROCPROF_SYSDEPS = ("$ rocprof-compute profile -n vadd -- ./vadd\n"
                   "Traceback (most recent call last):\n"
                   "OSError: librocm_sysdeps_dw.so.1: cannot open shared object file: No such file or directory\n")


def test_rocprof_compute_sysdeps_library_not_found_is_a_cause() -> None:
    found = _found(RX7900, ROCPROF_SYSDEPS)
    assert found["rocm-sysdeps-lib-not-on-loader-path"].to_check is None
    assert any("rocm_sysdeps/lib" in c for c in found["rocm-sysdeps-lib-not-on-loader-path"].fix_commands)


def test_tensorflow_sysdeps_importerror_fires() -> None:
    text = "ImportError: librocm_sysdeps_asm.so.1: cannot open shared object file: No such file or directory"
    assert "rocm-sysdeps-lib-not-on-loader-path" in _ids(R9700, text)


def test_sysdeps_library_resolved_by_ldd_is_no_failure() -> None:
    text = ("$ ldd /opt/rocm/lib/librocprofiler-sdk.so | grep sysdeps\n"
            "\tlibrocm_sysdeps_dw.so.1 => /opt/rocm/lib/rocm_sysdeps/lib/librocm_sysdeps_dw.so.1 (0x00007f1c)\n")
    assert "rocm-sysdeps-lib-not-on-loader-path" not in _ids(RX7900, text)


def test_other_library_not_found_is_not_the_sysdeps_issue() -> None:
    text = "OSError: libnuma.so.1: cannot open shared object file: No such file or directory"
    assert "rocm-sysdeps-lib-not-on-loader-path" not in _ids(RX7900, text)


# --- TensorFlow from pip on ROCm's pip packages: ImportError: libhipsparse.so.4 (10.0 known issue)

TF_PIP = ("(.venv) $ pip install rocm_tensorflow\n"
          "(.venv) $ python -c 'import tensorflow as tf'\n"
          "ImportError: libhipsparse.so.4: cannot open shared object file: No such file or directory\n")


def test_tensorflow_pip_libhipsparse_is_the_cause_and_explains_the_generic_one() -> None:
    found = _found(R9700, TF_PIP)
    finding = found["tensorflow-rocm-pip-libhipsparse-importerror"]
    assert finding.to_check is None
    order = list(found)
    if "rocm-libraries-not-found" in found:
        assert order.index("tensorflow-rocm-pip-libhipsparse-importerror") < order.index("rocm-libraries-not-found")


def test_libhipsparse_importerror_without_the_pip_rocm_sdk_is_not_this_issue() -> None:
    """Old tensorflow-rocm against a system ROCm: another cause (a ROCm of another major version)."""
    text = ("$ pip install tensorflow-rocm==2.14.0.600\n"
            "ImportError: libhipsparse.so.4: cannot open shared object file: No such file or directory\n")
    assert "tensorflow-rocm-pip-libhipsparse-importerror" not in _ids(R9700, text)


def test_other_hipsparse_soname_is_not_this_issue() -> None:
    text = ("$ pip install rocm_tensorflow\n"
            "ImportError: libhipsparse.so.1: cannot open shared object file: No such file or directory\n")
    assert "tensorflow-rocm-pip-libhipsparse-importerror" not in _ids(R9700, text)
