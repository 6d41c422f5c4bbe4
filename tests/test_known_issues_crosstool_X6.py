"""Known issues fed with the words of every tool through which a user meets the same condition.

A package that is not there, a shared library the loader or the linker cannot find, a command that is not on PATH:
the KB had each of these in the words of one tool (apt's "Unable to locate package", the dynamic loader's "cannot open
shared object file", bash's "command not found"). The same condition met through another tool (apt's "has no
installation candidate", zypper, uv, GNU ld at link time, zsh, Ubuntu's command-not-found handler) was missed. Each
case below is that tool's output built from the message template of its upstream source (owner/repo@commit:path in
the comment), with the facts the issue needs, and a near miss: the same tool's line about another package, library or
command, which must stay silent.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_known_issues_texts import _found, _ids

pytestmark = pytest.mark.unit

WSL = {"wsl": True}
ROCM_63 = {"rocm_version": "6.3.0"}
ROCM_71 = {"rocm_version": "7.1.0"}

# apt, Debian/apt@6b128124271e94bdb0f4e7850d9286170d712b04:apt-private/private-cacheset.cc (po/apt-all.pot msgid
# "Package '%s' has no installation candidate", printed after "Package %s is not available, but is referred to by
# another package.") and apt-private/private-output.cc ShowBroken (" <pkg> : Depends: <target> but it is not
# installable").
def _apt_no_candidate(pkg: str) -> str:
    return (f"Package {pkg} is not available, but is referred to by another package.\n"
            "This may mean that the package is missing, has been obsoleted, or\n"
            "is only available from another source\n\n"
            f"E: Package '{pkg}' has no installation candidate")


# (case name, issue id, text that must fire it, its facts, near miss, the near miss's facts)
CASES: list[tuple[str, str, str, dict[str, Any], str, dict[str, Any]]] = [
    # apt, the WSL runtime package referred to but not in this Ubuntu release's ROCm repository.
    ("apt-no-candidate-rocr4wsl", "wsl-rocm-release-unsupported",
     _apt_no_candidate("hsa-runtime-rocr4wsl-amdgpu"), WSL,
     _apt_no_candidate("rocm-hip-runtime"), WSL),
    # apt ShowBroken: a package that depends on the WSL runtime, which has no candidate (the depending package's name
    # is illustrative; the dependency is what the issue names).
    ("apt-depends-rocr4wsl-not-installable", "wsl-rocm-release-unsupported",
     "The following packages have unmet dependencies:\n"
     " rocm-hip-runtime : Depends: hsa-runtime-rocr4wsl-amdgpu but it is not installable\n"
     "E: Unable to correct problems, you have held broken packages.", WSL,
     "The following packages have unmet dependencies:\n"
     " rocm-hip-runtime : Depends: hsa-rocr but it is not installable\n"
     "E: Unable to correct problems, you have held broken packages.", WSL),
    # apt, the ROCm 6.2 profiler names on a 6.3 repository (ROCm 6.3.0 known issues name the apt path).
    ("apt-no-candidate-omniperf", "rocm63-profiler-packages-renamed",
     _apt_no_candidate("omniperf"), ROCM_63,
     _apt_no_candidate("rocprofiler-compute"), ROCM_63),
    # zypper (SLES, a ROCm 6.3 platform), openSUSE/zypper@613c74d4150706abc235b12340b5d4a892d40afa:
    # src/RequestFeedback.cc: "'%s' not found in package names. Trying capabilities." then "No provider of '%s'
    # found." (with --name: "Package '%s' not found.").
    ("zypper-no-provider-omnitrace", "rocm63-profiler-packages-renamed",
     "Loading repository data...\nReading installed packages...\n"
     "'omnitrace' not found in package names. Trying capabilities.\nNo provider of 'omnitrace' found.\n"
     "Resolving package dependencies...\n\nNothing to do.", ROCM_63,
     "Loading repository data...\nReading installed packages...\n"
     "'rocprofiler-systems' not found in package names. Trying capabilities.\n"
     "No provider of 'rocprofiler-systems' found.", ROCM_63),
    ("zypper-name-not-found-omniperf", "rocm63-profiler-packages-renamed",
     "Loading repository data...\nReading installed packages...\nPackage 'omniperf' not found.", ROCM_63,
     "Loading repository data...\nReading installed packages...\nPackage 'omniperf' is not installed.", ROCM_63),
    # apt, AMD's package names with no source that provides them.
    ("apt-no-candidate-rocm-hip-sdk", "rocm-repository-missing",
     _apt_no_candidate("rocm-hip-sdk"), {},
     _apt_no_candidate("rocm-smi-lib"), {}),
    # apt, ROCm 6's -dev metapackages asked for on a ROCm 7.1 host (Debian's own name librocblas-dev is not one).
    ("apt-no-candidate-rocblas-dev", "rocm7-legacy-dev-packages-gone",
     _apt_no_candidate("rocblas-dev"), ROCM_71,
     _apt_no_candidate("librocblas-dev"), ROCM_71),
    # apt, the running kernel's headers package not in any source (a mainline or custom kernel):
    # Debian/apt@6b128124271e94bdb0f4e7850d9286170d712b04:apt-pkg/cacheset.cc "Unable to locate package %s".
    ("apt-unable-to-locate-linux-headers", "dkms-kernel-headers-missing",
     "$ sudo apt install linux-headers-6.14.2-061402-generic\nE: Unable to locate package "
     "linux-headers-6.14.2-061402-generic", {},
     "$ sudo apt install linux-tools-6.14.2-061402-generic\nE: Unable to locate package "
     "linux-tools-6.14.2-061402-generic", {}),
    # zypper/libzypp, openSUSE/libzypp@5adf072042d2d2c11e2eb11fcb63cafacade3fe8:zypp/zypp/solver/detail/
    # SATResolver.cc: "nothing provides '%1%' needed by the to be installed %2%" (quoted, unlike libsolv's
    # "nothing provides %s needed by %s" in openSUSE/libsolv@1b580675:src/problems.c, which dnf prints). AMD's older
    # install FAQ quoted it in this form too. The package-version string is a placeholder.
    ("zypper-nothing-provides-perl-uri-encode", "rpm-prerequisite-repos-missing",
     "Problem: nothing provides 'perl-URI-Encode' needed by the to be installed hipcc-X.Y.Z-1.x86_64\n"
     " Solution 1: do not install hipcc-X.Y.Z-1.x86_64", {},
     "Problem: nothing provides 'perl-DB_File' needed by the to be installed xCAT-server\n"
     " Solution 1: do not install xCAT", {}),
    # uv, astral-sh/uv@26a9dd4b2125bc271b47855e1fa0c49af3365db5:crates/uv-distribution-types/src/
    # prioritized_distribution.rs ("no wheels with a matching Python version tag"), said of a version as
    # "Because <pkg>==<v> has no wheels with a matching Python version tag (e.g., `cp312`)" (its tests,
    # crates/uv/tests/lock/lock.rs). pip says it as "(from versions: none)".
    ("uv-torch-no-wheel-for-python", "rocm-torch-index-no-wheel-for-python",
     "$ uv pip install --index-url https://repo.amd.com/rocm/whl-multi-arch/ torch==2.12.0+rocm7.14.1\n"
     "Using Python 3.14.0 environment at: .venv\n"
     "  x No solution found when resolving dependencies:\n"
     "  `-> Because torch==2.12.0+rocm7.14.1 has no wheels with a matching Python version tag (e.g., `cp314`) and "
     "you require torch==2.12.0+rocm7.14.1, we can conclude that your requirements are unsatisfiable.", {},
     "$ uv pip install --index-url https://repo.amd.com/rocm/whl-multi-arch/ torchvision\n"
     "  x No solution found when resolving dependencies:\n"
     "  `-> Because torchvision==0.27.0 has no wheels with a matching Python version tag (e.g., `cp314`) and "
     "you require torchvision==0.27.0, we can conclude that your requirements are unsatisfiable.", {}),
    # uv, astral-sh/uv@26a9dd4b:crates/uv-resolver/src/resolver/availability.rs "not found in the package registry":
    # the index URL serves no torch at all.
    ("uv-torch-not-in-registry", "rocm-torch-index-no-wheel-for-python",
     "$ uv pip install --index-url https://rocm.nightlies.amd.com/v2/gfx1151/ torch\n"
     "  x No solution found when resolving dependencies:\n"
     "  `-> Because torch was not found in the package registry and you require torch, we can conclude that your "
     "requirements are unsatisfiable.", {},
     "$ uv pip install --index-url https://rocm.nightlies.amd.com/v2/gfx1151/ torchaudio\n"
     "  x No solution found when resolving dependencies:\n"
     "  `-> Because torchaudio was not found in the package registry and you require torchaudio, we can conclude "
     "that your requirements are unsatisfiable.", {}),
]


@pytest.mark.parametrize(("name", "issue_id", "text", "facts", "near", "near_facts"), CASES, ids=[c[0] for c in CASES])
def test_another_tools_wording_of_the_same_condition_fires(name: str, issue_id: str, text: str, facts: dict[str, Any],
                                                          near: str, near_facts: dict[str, Any]) -> None:
    assert issue_id in _ids(facts, text), name
    assert issue_id not in _ids(near_facts, near), name


def test_the_wsl_runtime_line_needs_wsl() -> None:
    """apt's no-candidate line for the WSL runtime is this issue only on WSL (its `when`)."""
    assert "wsl-rocm-release-unsupported" not in _ids({"wsl": False}, _apt_no_candidate("hsa-runtime-rocr4wsl-amdgpu"))


def test_uv_without_a_rocm_index_is_silent() -> None:
    """The uv wording is the issue's symptom only where the text names a ROCm wheel index (its text_matches)."""
    text = ("  `-> Because torch==2.12.0 has no wheels with a matching Python version tag (e.g., `cp314`) and you "
            "require torch==2.12.0, we can conclude that your requirements are unsatisfiable.")
    assert "rocm-torch-index-no-wheel-for-python" not in _ids({}, text)
