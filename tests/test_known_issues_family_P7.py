"""The kernel-header advice of the two DKMS issues follows the distribution (AMD's prerequisites page has one line
per family: ROCm/rocm-install-on-linux@77c5183 docs/install/prerequisites.rst, "Kernel headers and development
packages"): apt's linux-headers on Debian and Ubuntu, dnf's kernel-headers/kernel-devel on RHEL and Fedora, zypper's
kernel-default-devel on SUSE; an unknown distribution sees every line."""

from __future__ import annotations

import pytest
from test_known_issues_texts import _facts

from wizard.diagnose import diagnose
from wizard.model import OsInfo
from wizard.record import replace

pytestmark = pytest.mark.unit

HEADERS = "dkms-kernel-headers-missing"
NOT_RUNNING = "dkms-not-for-running-kernel"
APT = 'sudo apt install "linux-headers-$(uname -r)"'
DNF = 'sudo dnf install "kernel-headers-$(uname -r)" "kernel-devel-$(uname -r)"'
ZYPPER = "sudo zypper install kernel-default-devel"
# dkms's own words when the headers are missing (a DKMS run on any distribution)
DKMS_NO_HEADERS = "Error! Your kernel headers for kernel 6.8.0-45-generic cannot be found at /lib/modules/6.8.0-45-generic/build"
DKMS_STATUS = "$ dkms status\namdgpu/6.8.5-2041575.24.04, 6.8.0-40-generic, x86_64: installed\n"

OSES = {
    "ubuntu": OsInfo(id="ubuntu", version="24.04", like=("debian",), kernel="6.8.0-45-generic"),
    "linuxmint": OsInfo(id="linuxmint", version="22", like=("ubuntu", "debian"), kernel="6.8.0-45-generic"),
    "rhel": OsInfo(id="rhel", version="9.4", like=("fedora",), kernel="5.14.0-427.13.1.el9_4.x86_64"),
    "rocky": OsInfo(id="rocky", version="9.4", like=("rhel", "centos", "fedora"), kernel="5.14.0-427.el9.x86_64"),
    "sles": OsInfo(id="sles", version="15.6", like=("suse",), kernel="6.4.0-150600.21-default"),
    "opensuse-leap": OsInfo(id="opensuse-leap", version="15.6", like=("suse", "opensuse"), kernel="6.4.0-150600.21-default"),
    "unknown": OsInfo(kernel="6.8.0-45-generic"),
    # AMD's page has no Fedora line; Fedora (and Nobara, whose ID_LIKE says "rhel centos fedora") get no RHEL command
    "fedora": OsInfo(id="fedora", version="42", kernel="6.14.5-300.fc42.x86_64"),
    "nobara": OsInfo(id="nobara", version="42", like=("rhel", "centos", "fedora"), kernel="6.14.5-300.fc42.x86_64"),
}
EXPECTED = {"ubuntu": {APT}, "linuxmint": {APT}, "rhel": {DNF}, "rocky": {DNF}, "sles": {ZYPPER},
            "opensuse-leap": {ZYPPER}, "unknown": {APT, DNF, ZYPPER}, "fedora": set(), "nobara": set()}


def _commands(issue: str, os_: OsInfo, text: str) -> tuple[str, ...]:
    facts = _facts({}, text)
    facts = replace(facts, os=os_)
    found = {f.id: f for f in diagnose(facts)}
    assert issue in found, sorted(found)
    return found[issue].fix_commands


@pytest.mark.parametrize("name", sorted(OSES))
def test_missing_headers_advice_is_the_distributions_own(name: str) -> None:
    commands = _commands(HEADERS, OSES[name], DKMS_NO_HEADERS)
    assert {c for c in commands if c in (APT, DNF, ZYPPER)} == EXPECTED[name]
    if EXPECTED[name]:
        assert "sudo dkms autoinstall" in commands
        assert commands.index("sudo dkms autoinstall") > commands.index(sorted(EXPECTED[name])[0])


@pytest.mark.parametrize("name", ["ubuntu", "rhel", "sles"])
def test_module_for_another_kernel_advice_is_the_distributions_own(name: str) -> None:
    commands = _commands(NOT_RUNNING, OSES[name], DKMS_STATUS)
    assert {c for c in commands if c in (APT, DNF, ZYPPER)} == EXPECTED[name]


def test_the_summary_names_no_debian_package_for_every_distribution() -> None:
    """The summary every distribution reads said "Install linux-headers-$(uname -r)": Debian's name."""
    facts = replace(_facts({}, DKMS_NO_HEADERS), os=OSES["rhel"])
    fix = {f.id: f for f in diagnose(facts)}[HEADERS].fix
    assert "linux-headers" not in fix and "kernel-devel" in fix
