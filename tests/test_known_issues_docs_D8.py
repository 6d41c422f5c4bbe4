"""Known issues from the distributions' own packaging of ROCm and their tools' messages (helper D8).

- cmake-hip-lang-package-not-found: CMake's HIP language stops with 'does not contain the HIP runtime CMake package'
  (Kitware/CMake Modules/CMakeDetermineHIPCompiler.cmake; the lib64 / multiarch fixes for Fedora and Debian/Ubuntu
  in commits f79428619e, bae57dc281 and e8381e42ef; Debian's libamdhip64-dev file list; AMD's hip-dev packaging).
- nixos-stub-ld-generic-binary: NixOS's stub ELF loader ('Could not start dynamically linked executable: ...',
  nixpkgs nixos/modules/config/stub-ld.nix; nix.dev's FAQ for the ways out).

Each case quotes the message as the source prints it, and a near miss (the same words in another context) that
must not fire.
"""

from __future__ import annotations


import pytest
from test_known_issues_texts import _found, _ids


pytestmark = pytest.mark.unit

RX7900 = {"gpus": [{"gfx": "gfx1100", "integrated": False}]}
CMAKE_ID = "cmake-hip-lang-package-not-found"
NIX_ID = "nixos-stub-ld-generic-binary"


# --- CMake's HIP language: 'does not contain the HIP runtime CMake package'

# CMake 3.27 or newer, AMD's packages without HIP's development package (hip-dev)
CMAKE_OPT_ROCM = ("-- The HIP compiler identification is Clang 19.0.0\n"
                  "CMake Error at /usr/share/cmake-3.28/Modules/CMakeDetermineHIPCompiler.cmake:217 (message):\n"
                  "  The ROCm root directory:\n\n   /opt/rocm\n\n"
                  "  does not contain the HIP runtime CMake package, expected at one of:\n\n"
                  "   /opt/rocm/lib/cmake/hip-lang/hip-lang-config.cmake\n"
                  "   /opt/rocm/lib64/cmake/hip-lang/hip-lang-config.cmake\n\n"
                  "Call Stack (most recent call first):\n  CMakeLists.txt:2 (project)\n"
                  "-- Configuring incomplete, errors occurred!\n")

# CMake 3.21.3-3.26 (one 'expected at:' path) on Fedora, whose rocm-hip-devel installs under /usr/lib64
CMAKE_OLD_FEDORA = ("CMake Error at /usr/share/cmake/Modules/CMakeDetermineHIPCompiler.cmake:140 (message):\n"
                    "  The ROCm root directory:\n\n   /usr\n\n"
                    "  does not contain the HIP runtime CMake package, expected at:\n\n"
                    "   /usr/lib/cmake/hip-lang/hip-lang-config.cmake\n\n"
                    "-- Configuring incomplete, errors occurred!\n")

# CMake 3.27-4.2 on Ubuntu with the distribution's ROCm: the multiarch directory is not in the list
CMAKE_UBUNTU = ("CMake Error at /usr/share/cmake-3.31/Modules/CMakeDetermineHIPCompiler.cmake:234 (message):\n"
                "  The ROCm root directory:\n\n   /usr\n\n"
                "  does not contain the HIP runtime CMake package, expected at one of:\n\n"
                "   /usr/lib/cmake/hip-lang/hip-lang-config.cmake\n"
                "   /usr/lib64/cmake/hip-lang/hip-lang-config.cmake\n")


def test_cmake_hip_lang_missing_with_amd_packages_is_a_cause_with_the_dev_package() -> None:
    found = _found(RX7900, CMAKE_OPT_ROCM)
    finding = found[CMAKE_ID]
    assert finding.to_check is None
    assert "hip-dev" in finding.fix
    assert "find /usr /opt/rocm -name hip-lang-config.cmake 2>/dev/null" in finding.fix_commands
    # the distributions' packages are for a root of /usr, not for AMD's /opt/rocm
    assert "sudo apt install libamdhip64-dev" not in finding.fix_commands
    assert "sudo dnf install rocm-hip-devel" not in finding.fix_commands
    assert "cmake-rocm-prefix-path-missing" not in found


# The ROCm Core SDK 7.14 layout: the root is /opt/rocm/core-7.14, and HIP's CMake configuration comes with the
# release's development metapackage (TheRock@89553ce build_tools/packaging/linux/package.json: amdrocm-core-devel
# depends on amdrocm-runtime-devel, "C++ header files, CMake configuration")
CMAKE_CORE_SDK = CMAKE_OPT_ROCM.replace("/opt/rocm", "/opt/rocm/core-7.14")


def test_cmake_hip_lang_missing_on_the_core_sdk_names_its_dev_metapackage_not_hip_dev() -> None:
    finding = _found(RX7900, CMAKE_CORE_SDK)[CMAKE_ID]
    assert finding.to_check is None
    assert "amdrocm-core-dev<release>" in finding.fix and "amdrocm-core-dev7.14*" in finding.fix
    assert "hip-dev (apt) or hip-devel" not in finding.fix  # the pre-7.14 packages' branch is not this layout's
    assert "hip-dev (apt) or hip-devel" in _found(RX7900, CMAKE_OPT_ROCM)[CMAKE_ID].fix


def test_cmake_hip_lang_old_cmake_on_fedora_names_lib64_and_rocm_hip_devel() -> None:
    finding = _found({**RX7900, "os_id": "fedora"}, CMAKE_OLD_FEDORA)[CMAKE_ID]
    assert finding.to_check is None
    assert "older than 3.27" in finding.fix
    assert "sudo dnf install rocm-hip-devel" in finding.fix_commands
    assert "sudo apt install libamdhip64-dev" not in finding.fix_commands


def test_cmake_hip_lang_on_ubuntu_distribution_rocm_names_libamdhip64_dev() -> None:
    finding = _found({**RX7900, "os_id": "ubuntu"}, CMAKE_UBUNTU)[CMAKE_ID]
    assert "sudo apt install libamdhip64-dev" in finding.fix_commands
    assert "4.3" in finding.fix
    assert "older than 3.27" not in finding.fix  # the list shows 'one of': a CMake of 3.27 or newer


def test_cmake_hip_lang_on_ubuntu_with_amd_packages_does_not_offer_the_distribution_package() -> None:
    finding = _found({**RX7900, "os_id": "ubuntu"}, CMAKE_OPT_ROCM)[CMAKE_ID]
    assert "sudo apt install libamdhip64-dev" not in finding.fix_commands
    assert "hip-dev" in finding.fix


def test_cmake_hip_lang_found_is_no_failure() -> None:
    """A configure that found hip-lang-config.cmake names it without the failure."""
    text = ("-- The HIP compiler identification is Clang 19.0.0\n"
            "-- Found hip-lang: /opt/rocm/lib/cmake/hip-lang/hip-lang-config.cmake\n"
            "-- Configuring done (2.1s)\n")
    assert CMAKE_ID not in _ids(RX7900, text)


def test_cmake_hip_package_config_not_found_is_the_prefix_path_issue_not_this_one() -> None:
    """find_package(hip)'s Config-mode message is another failure (ROCm not on CMAKE_PREFIX_PATH)."""
    text = ('CMake Error at CMakeLists.txt:12 (find_package):\n'
            '  By not providing "Findhip.cmake" in CMAKE_MODULE_PATH this project has\n'
            '  asked CMake to find a package configuration file provided by "hip", but\n'
            '  CMake did not find one.\n')
    ids = _ids(RX7900, text)
    assert CMAKE_ID not in ids
    assert "cmake-rocm-prefix-path-missing" in ids


# --- NixOS's stub ELF loader

NIX_STUB = ("$ ./rocm/bin/rocminfo\n"
            "Could not start dynamically linked executable: ./rocm/bin/rocminfo\n"
            "NixOS cannot run dynamically linked executables intended for generic\n"
            "linux environments out of the box. For more information, see:\n"
            "https://nix.dev/permalink/stub-ld\n")


def test_nixos_stub_ld_is_a_cause_with_nix_ld_advice() -> None:
    finding = _found({**RX7900, "os_id": "nixos"}, NIX_STUB)[NIX_ID]
    assert finding.to_check is None
    assert "programs.nix-ld.enable = true" in finding.fix
    assert "rocmPackages" in finding.fix


def test_nixos_stub_ld_fires_for_another_generic_binary() -> None:
    text = ("Error: llama runner process has terminated: exit status 127\n"
            "Could not start dynamically linked executable: /home/user/.local/bin/llama-server\n")
    assert NIX_ID in _ids(RX7900, text)


def test_nix_ld_configuration_comment_is_no_failure() -> None:
    """A configuration that already enables nix-ld, with the FAQ's sentence in a comment, shows no failure."""
    text = ("# NixOS cannot run dynamically linked executables intended for generic Linux environments out of the box.\n"
            "# See https://nix.dev/permalink/stub-ld\n"
            "programs.nix-ld.enable = true;\n")
    assert NIX_ID not in _ids({**RX7900, "os_id": "nixos"}, text)


def test_plain_missing_loader_is_not_the_nixos_stub() -> None:
    """Without the stub, a missing loader reads differently (bash's 'No such file or directory')."""
    text = "bash: ./rocm/bin/rocminfo: cannot execute: required file not found\n"
    assert NIX_ID not in _ids(RX7900, text)
