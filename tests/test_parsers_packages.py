"""dpkg and rpm parsers."""

from __future__ import annotations

from pathlib import Path

import pytest

from wizard.parsers.dpkg import parse_dpkg
from wizard.parsers.rpm import parse_rpm

pytestmark = pytest.mark.unit

DATA = Path(__file__).parent / "data" / "parsers"


def test_dpkg_l_grep() -> None:
    pkgs = parse_dpkg((DATA / "dpkg" / "rocm622_noble.txt").read_text())
    assert len(pkgs) == 9 and all(p.installed for p in pkgs)
    core = next(p for p in pkgs if p.name == "rocm-core")
    assert (core.version, core.arch, core.status) == ("6.2.2.60202-116~24.04", "amd64", "ii")


def test_dpkg_l_header_and_not_installed() -> None:
    pkgs = parse_dpkg((DATA / "dpkg" / "rocm40_header.txt").read_text())
    assert pkgs[0].name == "procmail" and not pkgs[0].installed
    assert [p.name for p in pkgs if p.installed][-1] == "rocm-device-libs"  # last row was cut


def test_apt_list_only_installed_rows() -> None:
    pkgs = parse_dpkg((DATA / "dpkg" / "apt_list_plucky.txt").read_text())
    assert [(p.name, p.version) for p in pkgs] == [("rocm-core", "7.1.0.70100-20~24.04")]


def test_status_stanzas_and_arch_qualifier() -> None:
    text = """Package: rocminfo
Status: install ok installed
Priority: optional
Architecture: amd64
Version: 5.7.1-3
Description: ROCm Application for Reporting System Info
 rocminfo gives information about the HSA system.

Package: hipcc
Status: deinstall ok config-files
Architecture: amd64
Version: 5.7.1-1
"""
    pkgs = parse_dpkg(text)
    assert [(p.name, p.version, p.installed) for p in pkgs] == [("rocminfo", "5.7.1-3", True), ("hipcc", "5.7.1-1", False)]
    (row,) = parse_dpkg("ii  libc6:amd64  2.35-0ubuntu3.8  amd64  GNU C Library\n")
    assert row.name == "libc6"


def test_rpm_qa() -> None:
    pkgs = parse_rpm((DATA / "rpm" / "centos75_rocm21.txt").read_text())
    assert len(pkgs) == 15
    smi = next(p for p in pkgs if p.name == "rocm-smi")
    assert (smi.version, smi.release, smi.arch) == ("1.0.0_100_g3cacdb9", "1", "x86_64")
    rock = next(p for p in pkgs if p.name == "rock-dkms")
    assert rock.version_release == "2.1-96.el7" and rock.arch == "noarch"
    assert "hip_base" in {p.name for p in pkgs}


def test_rpm_epoch_and_noise() -> None:
    (p,) = parse_rpm("amdgpu-dkms-1:6.8.5.60204-2070768.el9.noarch\nnot a package\n")
    assert (p.name, p.epoch, p.version, p.release) == ("amdgpu-dkms", "1", "6.8.5.60204", "2070768.el9")
