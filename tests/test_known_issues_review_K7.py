"""Four known-issue leftovers of the last reviews (helper K7).

Each test is a machine on which an issue advised, or was shown (or not shown), against what its sources say, with the
near miss that must keep its present behaviour.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from test_known_issues_texts import _facts, _found, _ids

from wizard.diagnose import Finding, diagnose
from wizard.model import OsInfo
from wizard.record import replace

pytestmark = pytest.mark.unit

RX7900: dict[str, Any] = {"gpus": [{"gfx": "gfx1100", "integrated": False}]}

# --------------------------------------------------------------------------- 1. docker --gpus under WSL
# moby/moby@b985e23:daemon/errors.go: 'could not select device driver "" with capabilities: [[gpu]]'.
DOCKER = "docker-gpus-flag-no-amd-device-driver"
GPUS = ("$ docker run --rm -it --gpus all rocm/pytorch:latest\n"
        "docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].\n")


def _advice(f: Finding) -> str:
    return " ".join((f.fix, *f.fix_commands, *(f"{k}={v}" for k, v in f.fix_env)))


# WSL has no /dev/kfd: its GPU is /dev/dxg, reached through librocdxg and DXCore. AMD's own container command for WSL,
# ROCm/librocdxg@021a477ae052e38dc03c82213480157b20a10735:README.md ("Container Launch - WSL-Specific Flags"):
# --device=/dev/dxg, libdxcore.so and librocdxg.so mounted, -e HSA_ENABLE_DXG_DETECTION=1.
def test_docker_gpus_fix_under_wsl_passes_dxg_not_kfd() -> None:
    f = _found({**RX7900, "wsl": True}, GPUS)[DOCKER]
    assert not re.search(r"--device[= ]/dev/kfd\b", _advice(f))  # benchmarks/reading_score.py's rule for WSL
    assert any("--device=/dev/dxg" in c and "-v /usr/lib/wsl/lib/libdxcore.so:/usr/lib/libdxcore.so" in c
               and "-v /opt/rocm/lib/librocdxg.so:/usr/lib/librocdxg.so" in c
               and "-e HSA_ENABLE_DXG_DETECTION=1" in c for c in f.fix_commands), f.fix_commands
    assert "github.com/ROCm/librocdxg" in " ".join(f.sources)


def test_docker_gpus_fix_off_wsl_still_passes_kfd_and_no_dxg() -> None:
    """The near miss: native Linux keeps AMD's --device=/dev/kfd --device=/dev/dri and gets nothing of WSL's."""
    f = _found({**RX7900, "wsl": False}, GPUS)[DOCKER]
    assert any("--device=/dev/kfd --device=/dev/dri" in c for c in f.fix_commands)
    assert "/dev/dxg" not in _advice(f) and "HSA_ENABLE_DXG_DETECTION" not in _advice(f)
    assert f.to_check is None


# --------------------------------------------------------------------------- 2. a lone dpkg clash line
MIXED = "rocm-single-and-multi-version-packages-mixed"


# dpkg's words (dpkg src/main/archives.c: "trying to overwrite '%.250s', which is also in package %.250s %.250s"),
# pasted without the "dpkg: error processing archive ... (--unpack):" line that names the archive being unpacked: which
# kind was being installed is not shown, so a clash under /opt/rocm-X.Y.Z is one of several causes (the mix of kinds,
# or two packages of one kind shipping one file).
@pytest.mark.parametrize("line", [
    " trying to overwrite '/opt/rocm-6.0.0/lib/librocblas.so.4', which is also in package rocblas6.0.0 "
    "4.0.0.60000-91~22.04",
    "trying to overwrite '/opt/rocm-5.4.1/.info/version-lrt', which is also in package rocm-language-runtime "
    "5.4.1.50401-84~20.04",
])
def test_a_lone_clash_line_under_opt_rocm_is_to_check(line: str) -> None:
    found = _found({}, "Errors were encountered while processing:\n" + line + "\n")
    assert MIXED in found and found[MIXED].to_check is not None
    assert found[MIXED].shows_failure


@pytest.mark.parametrize("line", [
    " trying to overwrite '/usr/share/doc/libfoo/copyright', which is also in package libfoo1 1.2-3",
    " trying to overwrite '/opt/rocm/lib/libfoo.so', which is also in package libfoo 1.2-3",  # no release in the path
])
def test_a_lone_clash_line_elsewhere_is_not_shown(line: str) -> None:
    assert MIXED not in _ids({}, line + "\n")


def test_the_clash_with_its_unpack_line_stays_decided_both_ways() -> None:
    """The near misses: with the archive line, a mix of kinds is a cause and two packages of one kind are nothing."""
    def clash(deb: str, other: str) -> str:
        return (f"dpkg: error processing archive /var/cache/apt/archives/{deb} (--unpack):\n"
                f" trying to overwrite '/opt/rocm-6.0.0/lib/librocblas.so.4', which is also in package {other} "
                "4.0.0.60000-91~22.04\n")
    mixed = _found({}, clash("rocblas6.0.0_4.0.0.60000-91~22.04_amd64.deb", "rocblas"))
    assert MIXED in mixed and mixed[MIXED].to_check is None
    assert MIXED not in _ids({}, clash("hipblaslt_0.6.0.60000-91~22.04_amd64.deb", "rocblas"))


# --------------------------------------------------------------------------- 3. CUDA lines on an AMD + NVIDIA machine
NO_HIP_ID = "torch-no-hip-runtime-rocm-home"
NO_HIP = "No ROCm runtime is found, using ROCM_HOME='/opt/rocm'\n"
CT2_ID = "ctranslate2-cuda-build-on-amd-gpu"
CT2 = "RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA runtime version\n"
LSPCI_NVIDIA = "01:00.0 VGA compatible controller: NVIDIA Corporation AD102 [GeForce RTX 4090] (rev a1)\n"
NVIDIA_SMI = "| NVIDIA-SMI 550.54.14    Driver Version: 550.54.14    CUDA Version: 12.4     |\n"


def _mixed(text: str) -> dict[str, Finding]:
    """Detection found both vendors: an AMD GPU (gfx1100) and an NVIDIA card, whose lines the text shows too."""
    facts = replace(_facts(RX7900, text), origin="live", other_gpus=("10de:2684 NVIDIA Corporation AD102",))
    return {f.id: f for f in diagnose(facts)}


@pytest.mark.parametrize("issue_id, line", [(NO_HIP_ID, NO_HIP), (CT2_ID, CT2)])
@pytest.mark.parametrize("nvidia", [LSPCI_NVIDIA, NVIDIA_SMI])
def test_cuda_lines_on_an_amd_and_nvidia_machine_are_to_check(issue_id: str, line: str, nvidia: str) -> None:
    found = _mixed(nvidia + line)
    assert issue_id in found and found[issue_id].to_check is not None
    found = _found(RX7900, nvidia + line)  # an AMD GPU named, an NVIDIA one in the text
    assert issue_id in found and found[issue_id].to_check is not None


@pytest.mark.parametrize("issue_id, line", [(NO_HIP_ID, NO_HIP), (CT2_ID, CT2)])
def test_cuda_lines_keep_their_reading_on_one_vendor_machines(issue_id: str, line: str) -> None:
    """The near misses: AMD only, a cause; NVIDIA only (detected, or only its driver in the text), absent."""
    amd = _found(RX7900, line)
    assert issue_id in amd and amd[issue_id].to_check is None
    nvidia = replace(_facts({}, LSPCI_NVIDIA + line), origin="live", other_gpus=("10de:2684 NVIDIA Corporation AD102",))
    assert issue_id not in {f.id for f in diagnose(nvidia)}
    assert issue_id not in _ids({}, NVIDIA_SMI + line)


# --------------------------------------------------------------------------- 4. the repository, per distribution family
REPO = "rocm-repository-missing"
APT = "E: Unable to locate package rocm-hip-sdk\n"
# dnf: rpm-software-management/dnf@5ad76abc97a6b82a70ddc828d2286a47567eff7f: dnf/base.py _raise_package_not_found_error
# raises PackageNotFoundError(_('No match for argument'), pkg_spec), printed by dnf/cli/commands/install.py as
# '{}: {}'.format(e.value, pkg_spec); zypper: openSUSE/zypper@613c74d:src/RequestFeedback.cc "No provider of '%s' found."
DNF = "Error: No match for argument: rocm\n"
ZYPPER = "'rocm' not found in package names. Trying capabilities.\nNo provider of 'rocm' found.\n"
UBUNTU = OsInfo(id="ubuntu", version="24.04", like=("debian",))
ROCKY = OsInfo(id="rocky", version="9.4", like=("rhel", "centos", "fedora"))
SLES = OsInfo(id="sles", version="15.6", like=("suse",))


def _repo(os_: OsInfo, text: str) -> Finding:
    facts = replace(_facts({}, text), os=os_)
    return {f.id: f for f in diagnose(facts)}[REPO]


def test_repository_fix_on_the_rhel_family_is_a_yum_repo_file() -> None:
    f = _repo(ROCKY, DNF)
    advice = _advice(f)
    assert "/etc/yum.repos.d" in advice and "apt" not in advice.replace("amdgpu", "")
    assert "sources.list" not in advice and "zypper" not in advice


def test_repository_fix_on_suse_is_zypper() -> None:
    f = _repo(SLES, ZYPPER)
    advice = _advice(f)
    assert "zypper" in advice and "/etc/zypp/repos.d" in advice
    assert "apt " not in advice and "sources.list" not in advice and "yum.repos.d" not in advice


def test_repository_fix_on_ubuntu_stays_an_apt_source() -> None:
    """The near miss: the Debian family keeps its apt source under /etc/apt/sources.list.d and apt update."""
    f = _repo(UBUNTU, APT)
    advice = _advice(f)
    assert "/etc/apt/sources.list.d" in advice and "sudo apt update" in f.fix_commands
    assert "yum.repos.d" not in advice and "zypper" not in advice


@pytest.mark.parametrize("text", [DNF, ZYPPER, APT])
def test_repository_missing_reads_each_tools_words(text: str) -> None:
    assert REPO in _ids({}, text)


@pytest.mark.parametrize("text", [
    "Error: No match for argument: rocm-smi-lib\n",  # a package AMD's repository is not needed to explain
    "No provider of 'rocminfo-extra' found.\n",
    "Error: No match for argument: rocm-hip-sdk-docs\n",
])
def test_repository_missing_near_misses(text: str) -> None:
    assert REPO not in _ids({}, text)


def test_repository_missing_is_not_amds_repository_on_fedora() -> None:
    """Fedora's own names are what dnf has there (fedora-rocm-package-names): AMD's repository is no cause."""
    facts = replace(_facts({}, "Error: No match for argument: rocm-hip-sdk\n"), os=OsInfo(id="fedora", version="41"))
    found = {f.id: f for f in diagnose(facts)}
    assert "fedora-rocm-package-names" in found
    assert REPO not in found or found[REPO].to_check is not None or found[REPO].contradicted is not None


def test_fedora_metapackage_finding_is_not_raised_on_rhel() -> None:
    """dnf prints "No match for argument: rocm" on RHEL without AMD's repository too; the Fedora-packaging issue is
    Fedora's own (AMD's repositories do not target Fedora): on RHEL and its rebuilds it is contradicted, and
    rocm-repository-missing is the finding that advises."""
    text = "Error: Unable to find a match: rocm\nNo match for argument: rocm\n"

    def found(os_: OsInfo) -> dict[str, Finding]:
        return {f.id: f for f in diagnose(replace(_facts({}, text), os=os_))}

    rhel = found(OsInfo(id="rocky", version="9.4", like=("rhel", "centos", "fedora")))
    assert "rocm-repository-missing" in rhel
    assert "fedora-rocm-metapackage-missing" not in rhel or rhel["fedora-rocm-metapackage-missing"].contradicted
    fedora = found(OsInfo(id="fedora", version="42"))
    assert "fedora-rocm-metapackage-missing" in fedora and not fedora["fedora-rocm-metapackage-missing"].contradicted
