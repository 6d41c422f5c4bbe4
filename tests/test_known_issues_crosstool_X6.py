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


def _ld_needed(lib: str, by: str) -> str:
    """GNU ld, bminor/binutils-gdb@97da0e2677c4a38df2406576428ec27d1da26e7c:ld/ldelf.c ldelf_after_open:
    "%P: warning: %s, needed by %pB, not found (try using -rpath or -rpath-link)" (a DT_NEEDED entry of a shared
    library on the link line that the linker finds on none of the loader's paths)."""
    return f"/usr/bin/ld: warning: {lib}, needed by {by}, not found (try using -rpath or -rpath-link)"


# (case name, issue id, text that must fire it, its facts, near miss, the near miss's facts)
CASES: list[tuple[str, str, str, dict[str, Any], str, dict[str, Any]]] = [
    # zsh, zsh-users/zsh@2564174dd6f9289b4e4da2a8122b0f8edd8a62b4:Src/exec.c execute(): zerr("command not found: %s")
    # (zerr prefixes the shell's name). bash says "rocminfo: command not found", already a signature.
    ("zsh-rocminfo", "rocm-bin-not-on-path",
     "user@host ~ % rocminfo\nzsh: command not found: rocminfo", {},
     "user@host ~ % nvidia-smi\nzsh: command not found: nvidia-smi", {}),
    # Ubuntu's command-not-found handler, ottok/command-not-found@9c2ccb031e382767da007d5c41296f840db8163b:
    # CommandNotFound/CommandNotFound.py: "Command '%(command)s' not found, but can be installed with:".
    ("ubuntu-command-not-found-rocm-smi", "rocm-bin-not-on-path",
     "$ rocm-smi\nCommand 'rocm-smi' not found, but can be installed with:\n\nsudo apt install rocm-smi\n", {},
     "$ nvtop\nCommand 'nvtop' not found, but can be installed with:\n\nsudo apt install nvtop\n", {}),
    # fish, fish-shell/fish-shell@f13979bfbbcacb7240f2d00e507df0e12280a341:share/functions/fish_command_not_found.fish
    # __fish_default_command_not_found_handler: "fish: Unknown command: %s".
    ("fish-amd-smi", "rocm-bin-not-on-path",
     "user@host ~> amd-smi\nfish: Unknown command: amd-smi", {},
     "user@host ~> nvidia-smi\nfish: Unknown command: nvidia-smi", {}),
    # RCCL's own dlopen of its optional network plugin, ROCm/rccl@63e87b4d907da5b05dca019b35eeab77ff1bbab2:
    # src/plugin/plugin_open.cc openPluginLib: "%s/Plugin: Could not find:%s. %s" with " librccl-net.so" and
    # "Using internal net plugin." (the older "Plugin load returned %d : <dlerror>" is already a signature). The near
    # miss is a plugin the user named in NCCL_NET_PLUGIN that is missing: not the harmless default probe.
    ("rccl-could-not-find-net-plugin", "rccl-net-plugin-absent",
     "node01:4211:4290 [0] NCCL INFO NET/Plugin: Could not find: librccl-net.so. Using internal net plugin.", {},
     "node01:4211:4290 [0] NCCL INFO NET/Plugin: Could not find: ainic librccl-net-ainic.so. Using internal net "
     "plugin.", {}),
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
    # GNU ld at link time: the same missing library as the loader's "cannot open shared object file".
    ("ld-needed-libtinfo5", "libtinfo5-missing",
     _ld_needed("libtinfo.so.5", "/opt/rocm/llvm/lib/libexample.so"), {},
     _ld_needed("libtinfo.so.6", "/usr/lib/libexample.so"), {}),
    ("ld-needed-libgfortran5", "therock-libgfortran-missing",
     _ld_needed("libgfortran.so.5", "/home/user/venv/lib/python3.12/site-packages/_rocm_sdk_libraries/lib/"
                                    "libexample.so"), {},
     _ld_needed("libgomp.so.1", "/home/user/venv/lib/python3.12/site-packages/_rocm_sdk_libraries/lib/"
                                "libexample.so"), {}),
    ("ld-needed-libquadmath0", "therock-libquadmath-missing",
     _ld_needed("libquadmath.so.0", "/home/user/venv/lib/python3.12/site-packages/_rocm_sdk_devel/lib/"
                                    "libexample.so"), {},
     _ld_needed("libgcc_s.so.1", "/home/user/venv/lib/python3.12/site-packages/_rocm_sdk_devel/lib/"
                                 "libexample.so"), {}),
    ("ld-needed-libamdhip64", "rocm-libraries-not-found",
     _ld_needed("libamdhip64.so.6", "/home/user/venv/lib/python3.12/site-packages/torch/lib/libtorch_hip.so"), {},
     _ld_needed("libcudart.so.12", "/home/user/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so"), {}),
    ("ld-needed-libamdhip64-major", "libamdhip64-other-major",
     _ld_needed("libamdhip64.so.6", "/home/user/venv/lib/python3.12/site-packages/torch/lib/libtorch_hip.so"), {},
     _ld_needed("libhipblas.so.2", "/home/user/venv/lib/python3.12/site-packages/torch/lib/libtorch_hip.so"), {}),
    ("ld-needed-rocm-sysdeps", "rocm-sysdeps-lib-not-on-loader-path",
     _ld_needed("librocm_sysdeps_dw.so.1", "/opt/rocm/core/lib/libexample.so"), {},
     _ld_needed("libdw.so.1", "/usr/lib/libexample.so"), {}),
]


@pytest.mark.parametrize(("name", "issue_id", "text", "facts", "near", "near_facts"), CASES, ids=[c[0] for c in CASES])
def test_another_tools_wording_of_the_same_condition_fires(name: str, issue_id: str, text: str, facts: dict[str, Any],
                                                          near: str, near_facts: dict[str, Any]) -> None:
    assert issue_id in _ids(facts, text), name
    assert issue_id not in _ids(near_facts, near), name


def test_the_wsl_runtime_line_needs_wsl() -> None:
    """apt's no-candidate line for the WSL runtime is this issue only on WSL (its `when`)."""
    assert "wsl-rocm-release-unsupported" not in _ids({"wsl": False}, _apt_no_candidate("hsa-runtime-rocr4wsl-amdgpu"))


def test_a_quoted_question_about_the_ld_warning_names_no_library_of_the_issue() -> None:
    """The ld template without a library name (a question about the warning in general) is no finding."""
    text = "What does 'warning: <lib>, needed by <lib>, not found (try using -rpath or -rpath-link)' mean?"
    found = _found({}, text)
    for iid in ("libtinfo5-missing", "therock-libgfortran-missing", "rocm-libraries-not-found",
                "libamdhip64-other-major", "rocm-sysdeps-lib-not-on-loader-path"):
        assert iid not in found


def test_uv_without_a_rocm_index_is_silent() -> None:
    """The uv wording is the issue's symptom only where the text names a ROCm wheel index (its text_matches)."""
    text = ("  `-> Because torch==2.12.0 has no wheels with a matching Python version tag (e.g., `cp314`) and you "
            "require torch==2.12.0, we can conclude that your requirements are unsatisfiable.")
    assert "rocm-torch-index-no-wheel-for-python" not in _ids({}, text)
