"""Three known-issue leftovers of the last reviews (helper L8): dnf5's wordings, Fedora's derivatives, and the launcher
that picked a ROCm torch for an AMD iGPU beside an NVIDIA GPU, shown from detected facts alone.

Each test is a machine on which an issue fired (or stayed silent) against what its sources say, with the near miss
that must keep its present behaviour.
"""

from __future__ import annotations

import pytest
from test_known_issues_texts import _facts, _found, _ids

from wizard.diagnose import Finding, diagnose
from wizard.kb.families import family_of_gfx
from wizard.model import Facts, Gpu, OsInfo, PythonEnv
from wizard.record import replace

pytestmark = pytest.mark.unit

REPO = "rocm-repository-missing"
META = "fedora-rocm-metapackage-missing"
NAMES = "fedora-rocm-package-names"
ROCKY = OsInfo(id="rocky", version="9.4", like=("rhel", "centos", "fedora"))
FEDORA = OsInfo(id="fedora", version="42")


def _on(os_: OsInfo, text: str) -> dict[str, Finding]:
    """The findings of a text on a machine of this os-release (the shared `_found`, with ID_LIKE set)."""
    return {f.id: f for f in diagnose(replace(_facts({}, text), os=os_))}


def _silent(f: Finding | None) -> bool:
    return f is None or f.contradicted is not None


# --------------------------------------------------------------------------- 1. dnf5's wordings
# rpm-software-management/dnf5@8a8e234809ebb898c488b0efbdde86f1c958a5c4:
# - libdnf5/base/log_event.cpp, GoalProblem::NOT_FOUND: "No match for argument: {}" (install, upgrade ...), but for a
#   remove "No packages to remove for argument: {}"; GoalProblem::NOT_INSTALLED: "Packages for argument '{}' available,
#   but not installed." (an upgrade of a package the repositories have and the machine has not)
# - libdnf5/base/goal.cpp: add_remove_to_goal and add_up_down_distrosync_to_goal (upgrade) report a name no repository
#   has through Transaction::Impl::report_not_found (libdnf5/base/transaction.cpp: NOT_FOUND, the query of installed
#   packages only for a remove); an upgrade of a name the repositories have and the machine has not: NOT_INSTALLED
# - libdnf5-cli/exception.cpp: GoalResolveError "Failed to resolve the transaction" then ":\n" and the resolve logs;
#   dnf5/main.cpp print_resolve_hints: "You can try to add to command line:", "{} to skip unavailable packages" with
#   --skip-unavailable where a package was not found; libdnf5-cli/output/transaction_table.cpp: "Nothing to do."
_HINT = "You can try to add to command line:\n  --skip-unavailable to skip unavailable packages\n"
DNF5_INSTALL = "$ sudo dnf install rocm\nFailed to resolve the transaction:\nNo match for argument: rocm\n" + _HINT
DNF5_INSTALL_SDK = ("$ sudo dnf install rocm-hip-sdk\nFailed to resolve the transaction:\n"
                    "No match for argument: rocm-hip-sdk\n" + _HINT)
DNF5_REMOVE = "$ sudo dnf remove rocm-hip-sdk\nNo packages to remove for argument: rocm-hip-sdk\n\nNothing to do.\n"
DNF5_UPGRADE_NOT_INSTALLED = ("$ sudo dnf upgrade rocm\nFailed to resolve the transaction:\n"
                              "Packages for argument 'rocm' available, but not installed.\n")
DNF5_UPGRADE_NO_SUCH = "$ sudo dnf upgrade rocm\nFailed to resolve the transaction:\nNo match for argument: rocm\n" + _HINT


@pytest.mark.parametrize("text", [DNF5_INSTALL, DNF5_INSTALL_SDK])
def test_dnf5_install_of_an_unknown_rocm_package_is_a_missing_repository_on_rhel(text: str) -> None:
    """dnf5 words a missing package as dnf4 did ('No match for argument: rocm'): on Rocky AMD's repository is missing,
    with the RHEL branch's .repo advice; on Fedora the Fedora cause stands and AMD's repository is contradicted."""
    f = _on(ROCKY, text)[REPO]
    assert f.contradicted is None and f.to_check is None and "yum.repos.d" in f.fix
    fedora = _on(FEDORA, text)
    assert fedora[REPO].contradicted is not None
    if text == DNF5_INSTALL:
        assert fedora[META].contradicted is None and fedora[META].to_check is None


@pytest.mark.parametrize("text", [DNF5_REMOVE, DNF5_UPGRADE_NOT_INSTALLED, DNF5_UPGRADE_NO_SUCH])
@pytest.mark.parametrize("os_", [ROCKY, FEDORA], ids=["rocky", "fedora"])
def test_dnf5_remove_or_upgrade_of_a_name_not_installed_is_not_a_missing_repository(text: str, os_: OsInfo) -> None:
    """A remove or upgrade of a name the machine has not installed says nothing of a missing repository, whichever
    wording dnf5 gives it (an upgrade of a name no repository has is worded as an install's)."""
    found = _on(os_, text)
    for iid in (REPO, META):
        assert _silent(found.get(iid)), (os_.id, iid, found.get(iid))


@pytest.mark.parametrize("before", ["$ sudo dnf upgrade --refresh\nNothing to do.\n", "$ sudo dnf upgrade\n",
                                    "$ sudo dnf upgrade rocm-smi-lib\nNothing to do.\n"])
def test_dnf5_install_after_another_upgrade_is_still_a_missing_repository(before: str) -> None:
    """Near miss: an upgrade of the whole system (or of another package) before the failing install does not hide it."""
    f = _on(ROCKY, before + DNF5_INSTALL)[REPO]
    assert f.contradicted is None and f.to_check is None


# --------------------------------------------------------------------------- 2. Fedora's derivatives
# Each rewrites Fedora's os-release to its own ID with ID_LIKE="fedora" and keeps Fedora's packages:
# - Bazzite: ublue-os/bazzite@18a220517154c36d0e0aea42ddc221b3760f55d6:build_files/image-info (IMAGE_PRETTY_NAME
#   "Bazzite", IMAGE_LIKE "fedora"; sed "s/^ID=fedora/ID=${IMAGE_PRETTY_NAME,}\nID_LIKE=\"${IMAGE_LIKE}\"/")
# - Bluefin: ublue-os/bluefin@e038626d7db5975808405690613ec2ecba40a9be:build_files/base/00-image-info.sh (the same)
# - Aurora: ublue-os/aurora@a15738e4615f6787c0cb320b0722f9cbb7b721b5:build_scripts/base/18-image-info.sh (the same)
# - Ultramarine: Ultramarine-Linux/packages@04871fd13e6b8a79583912f1b54d9c9e66013ace:
#   ultramarine/release/ultramarine-release.spec ("ID=ultramarine", "ID_LIKE=fedora")
DERIVATIVES = {
    "bazzite": OsInfo(id="bazzite", version="42", like=("fedora",)),
    "bluefin": OsInfo(id="bluefin", version="42", like=("fedora",)),
    "aurora": OsInfo(id="aurora", version="42", like=("fedora",)),
    "ultramarine": OsInfo(id="ultramarine", version="42", like=("fedora",)),
    # Nobara: ID_LIKE="rhel centos fedora", as Rocky's, yet Fedora rebuilt
    # (Nobara-Project/rpm-sources@fecae91b6fb75a229333a6dc193c7f1be113bab1:baseos/nobara-release/43/nobara-release.spec)
    "nobara": OsInfo(id="nobara", version="43", like=("rhel", "centos", "fedora")),
    "fedora": FEDORA,
}
# Near misses, which say "fedora" in ID_LIKE but take another's packages: RHEL (ID_LIKE="fedora", as
# tests/test_known_issues_family_P7.py has it), Rocky and AlmaLinux ("rhel centos fedora"), Oracle Linux (ID="ol",
# ID_LIKE="fedora"), Amazon Linux 2023 (ID="amzn", ID_LIKE="fedora": Amazon's own repositories)
NOT_FEDORA = {
    "rhel": OsInfo(id="rhel", version="9.4", like=("fedora",)),
    "rocky": ROCKY,
    "almalinux": OsInfo(id="almalinux", version="9.4", like=("rhel", "centos", "fedora")),
    "ol": OsInfo(id="ol", version="9.3", like=("fedora",)),
    "amzn": OsInfo(id="amzn", version="2023", like=("fedora",)),
}
NO_ROCM = "$ sudo dnf install rocm\nNo match for argument: rocm\nError: Unable to find a match: rocm\n"
RHEL_HEADERS = 'sudo dnf install "kernel-headers-$(uname -r)" "kernel-devel-$(uname -r)"'
DKMS_NO_HEADERS = ("Error! Your kernel headers for kernel 6.14.5-300.fc42.x86_64 cannot be found at "
                   "/lib/modules/6.14.5-300.fc42.x86_64/build")


@pytest.mark.parametrize("name", sorted(DERIVATIVES))
def test_a_fedora_derivative_is_fedora_for_the_missing_rocm_package(name: str) -> None:
    found = _on(DERIVATIVES[name], NO_ROCM)
    assert found[META].contradicted is None and found[META].to_check is None, found[META]
    assert _silent(found.get(REPO)), found.get(REPO)
    assert found.get(REPO) is None or not found[REPO].fix_commands


@pytest.mark.parametrize("name", sorted(NOT_FEDORA))
def test_rhel_and_other_fedora_likes_are_not_fedora_for_the_missing_rocm_package(name: str) -> None:
    found = _on(NOT_FEDORA[name], NO_ROCM)
    assert found[REPO].contradicted is None, found[REPO]
    assert found[META].contradicted is not None, found[META]


@pytest.mark.parametrize("name", sorted(DERIVATIVES))
def test_a_fedora_derivative_gets_no_rhel_kernel_headers_command(name: str) -> None:
    f = _on(DERIVATIVES[name], DKMS_NO_HEADERS)["dkms-kernel-headers-missing"]
    assert RHEL_HEADERS not in f.fix_commands and "RHEL" not in f.fix


def test_rhel_still_gets_its_kernel_headers_command() -> None:
    assert RHEL_HEADERS in _on(NOT_FEDORA["rhel"], DKMS_NO_HEADERS)["dkms-kernel-headers-missing"].fix_commands


@pytest.mark.parametrize("name", sorted(DERIVATIVES))
def test_fedoras_package_names_hold_on_its_derivatives(name: str) -> None:
    assert NAMES in _on(DERIVATIVES[name], "No match for argument: rocm-hip-runtime\n")


@pytest.mark.parametrize("name", sorted(NOT_FEDORA))
def test_fedoras_package_names_are_no_finding_on_rhel_or_other_fedora_likes(name: str) -> None:
    assert NAMES not in _on(NOT_FEDORA[name], "No match for argument: rocm-hip-runtime\n")


# the evidence case of tests/data/known_issue_texts.json (cmake-hip-lang-package-not-found)
HIP_LANG = ("CMake Error at /usr/share/cmake/Modules/CMakeDetermineHIPCompiler.cmake:140 (message):\n"
            "  The ROCm root directory:\n\n   /usr\n\n  does not contain the HIP runtime CMake package, expected at:\n\n"
            "   /usr/lib/cmake/hip-lang/hip-lang-config.cmake\n\n-- Configuring incomplete, errors occurred!")


@pytest.mark.parametrize("name", sorted(DERIVATIVES))
def test_fedoras_hip_devel_package_is_advised_on_its_derivatives(name: str) -> None:
    f = _on(DERIVATIVES[name], HIP_LANG)["cmake-hip-lang-package-not-found"]
    assert "sudo dnf install rocm-hip-devel" in f.fix_commands, f.fix_commands


@pytest.mark.parametrize("name", ["rhel", "rocky"])
def test_fedoras_hip_devel_package_is_not_advised_on_rhel(name: str) -> None:
    f = _on(NOT_FEDORA[name], HIP_LANG)["cmake-hip-lang-package-not-found"]
    assert "sudo dnf install rocm-hip-devel" not in f.fix_commands


IDS_MISSING = "/opt/amdgpu/share/libdrm/amdgpu.ids: No such file or directory\n"
IDS_LINK = "sudo ln -s /usr/share/libdrm/amdgpu.ids /opt/amdgpu/share/libdrm/amdgpu.ids"


@pytest.mark.parametrize("os_", [*DERIVATIVES.values(), OsInfo(id="arch")], ids=[*DERIVATIVES, "arch"])
def test_the_libdrm_table_link_is_advised_on_fedora_derivatives_and_arch(os_: OsInfo) -> None:
    f = _on(os_, IDS_MISSING)["libdrm-amdgpu-ids-missing"]
    assert IDS_LINK in f.fix_commands and f.fix.count("This distribution keeps the table") == 1, f.fix


@pytest.mark.parametrize("os_", [NOT_FEDORA["rhel"], OsInfo(id="ubuntu", version="24.04", like=("debian",))],
                         ids=["rhel", "ubuntu"])
def test_the_libdrm_table_link_is_not_advised_on_rhel_or_ubuntu(os_: OsInfo) -> None:
    assert IDS_LINK not in _on(os_, IDS_MISSING)["libdrm-amdgpu-ids-missing"].fix_commands


def test_an_unknown_distribution_reads_the_libdrm_link_advice_once() -> None:
    f = _found({}, IDS_MISSING)["libdrm-amdgpu-ids-missing"]
    assert IDS_LINK in f.fix_commands and f.fix.count("This distribution keeps the table") == 1, f.fix


# --------------------------------------------------------------------------- 3. an iGPU beside NVIDIA, from facts
LAUNCHER = "launcher-picks-rocm-torch-for-amd-igpu"
IGPU = Gpu(name="AMD Radeon 680M", gfx="gfx1035", gfx_reported="gfx1035", pci_id="1002:1681", integrated=True,
           family=family_of_gfx("gfx1035"))
DGPU = Gpu(name="AMD Radeon RX 7900 XTX", gfx="gfx1100", gfx_reported="gfx1100", pci_id="1002:744c",
           integrated=False, family=family_of_gfx("gfx1100"))
NVIDIA = "10de:2520 NVIDIA Corporation GA106M [GeForce RTX 3060 Mobile / Max-Q]"
ROCM_TORCH = PythonEnv(path="/home/u/stable-diffusion-webui/venv", kind="venv", torch="2.3.1+rocm5.7", build="rocm")
CUDA_TORCH = PythonEnv(path="/home/u/stable-diffusion-webui/venv", kind="venv", torch="2.3.1+cu121", build="cuda")


def _detected(gpus: tuple[Gpu, ...], others: tuple[str, ...], env: PythonEnv, origin: str) -> Facts:
    """What detection records on the machine: no text at all, only the GPUs, the other display controllers (lspci's
    non-AMD ones) and the venv's torch."""
    return Facts(os=OsInfo(id="ubuntu", version="22.04", like=("debian",)), gpus=gpus, other_gpus=others,
                 python_envs=(env,), origin=origin)


@pytest.mark.parametrize("origin", ["live", "bundle"])
def test_the_launcher_issue_shows_from_detected_facts_alone(origin: str) -> None:
    facts = _detected((IGPU,), (NVIDIA,), ROCM_TORCH, origin)
    assert not facts.texts
    f = {x.id: x for x in diagnose(facts)}[LAUNCHER]
    # nothing failed on this machine: a risk the facts show (an iGPU, an NVIDIA GPU and a ROCm torch), to check
    assert f.to_check is not None and f.contradicted is None
    said = " ".join(f.evidence)
    assert "680M" in said and "NVIDIA" in said and "+rocm5.7" in said, f.evidence


@pytest.mark.parametrize("gpus, others, env", [
    ((DGPU,), (NVIDIA,), ROCM_TORCH),  # a discrete AMD GPU beside the NVIDIA one: the ROCm torch is for it
    ((IGPU,), (), ROCM_TORCH),  # the iGPU alone: the ROCm torch is the only GPU's
    ((IGPU, DGPU), (NVIDIA,), ROCM_TORCH),  # an AMD dGPU besides the iGPU
    ((IGPU,), (NVIDIA,), CUDA_TORCH),  # the launcher picked the CUDA torch
], ids=["amd-dgpu-and-nvidia", "igpu-alone", "igpu-dgpu-and-nvidia", "cuda-torch"])
@pytest.mark.parametrize("origin", ["live", "bundle"])
def test_the_launcher_issue_is_silent_on_its_near_misses(gpus: tuple[Gpu, ...], others: tuple[str, ...],
                                                         env: PythonEnv, origin: str) -> None:
    assert LAUNCHER not in [x.id for x in diagnose(_detected(gpus, others, env, origin))]


def test_the_shared_helper_machine_without_a_gpu_named_is_no_launcher_finding() -> None:
    """Near miss through the shared helpers: a ROCm torch and no GPU known, no text: nothing says iGPU or NVIDIA."""
    assert LAUNCHER not in _ids({"python_envs": [{"torch": "2.3.1+rocm5.7", "build": "rocm"}]}, "")
