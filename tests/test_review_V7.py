"""Review V7 (session sixteen): hostile and edge inputs for the systemd reader (wizard.parsers.systemd_unit,
wizard.probes.env_settings._service_settings) and the knowledge this session changed.

What systemd does, as read:
- systemd.unit(5) (systemd/systemd@00d0abd8bbaaef4a734f684e658cd3e8f25bff98:man/systemd.unit.xml): "If a unit file is
  empty (i.e. has the file size 0) or is symlinked to /dev/null, its configuration will not be loaded and it appears
  with a load state of "masked", and cannot be activated."
- systemd.unit(5), specifiers: "%%" is a single percent sign; "%h" the user's home. A literal "%%h" is "%h".
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from test_env_service_settings import ETC, HOME, host_for, services, write
from test_known_issues_texts import _facts

from wizard.diagnose import Finding, diagnose
from wizard.model import EnvSetting, OsInfo
from wizard.parsers.systemd_unit import expand_specifiers, unit_environment
from wizard.probes.env_settings import probe_env
from wizard.record import replace

pytestmark = pytest.mark.unit

def _probe_within(root: Path, seconds: float, unblock: list[Path]) -> list[EnvSetting] | None:
    """probe_env on a thread; None where it has not returned within ``seconds`` (then each FIFO in ``unblock`` is
    opened for writing, so the blocked reader ends and the thread does not outlive the test)."""
    got: list[list[EnvSetting]] = []
    t = threading.Thread(target=lambda: got.append(probe_env(host_for(root), [])), daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        for fifo in unblock:
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                os.close(fd)
            except OSError:
                pass
        t.join(5)
        return None
    return got[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_an_environment_file_that_is_a_fifo_never_blocks(tmp_path: Path) -> None:
    """EnvironmentFile= may name anything (a FIFO, /dev/stdin, /proc/kmsg): reading it must not wait for a writer."""
    write(tmp_path, f"{ETC}/ollama.service",
          "[Service]\nEnvironmentFile=-/etc/ollama.env\nEnvironment=HSA_OVERRIDE_GFX_VERSION=10.3.0\n")
    fifo = tmp_path / "etc/ollama.env"
    os.mkfifo(fifo)
    got = _probe_within(tmp_path, 5, [fifo])
    assert got is not None, "probe_env blocked on a FIFO named by EnvironmentFile="
    assert services(got) == {("ollama.service", "HSA_OVERRIDE_GFX_VERSION"): ("10.3.0", f"{ETC}/ollama.service:3")}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_unit_file_or_drop_in_that_is_a_fifo_never_blocks(tmp_path: Path) -> None:
    (tmp_path / ETC.lstrip("/") / "ollama.service.d").mkdir(parents=True)
    fifos = [tmp_path / ETC.lstrip("/") / "comfy.service", tmp_path / ETC.lstrip("/") / "ollama.service.d/x.conf"]
    for f in fifos:
        os.mkfifo(f)
    write(tmp_path, f"{ETC}/ollama.service.d/y.conf", "[Service]\nEnvironment=HIP_VISIBLE_DEVICES=0\n")
    got = _probe_within(tmp_path, 5, fifos)
    assert got is not None, "probe_env blocked on a FIFO among the unit files"
    assert services(got) == {("ollama.service", "HIP_VISIBLE_DEVICES"): ("0", f"{ETC}/ollama.service.d/y.conf:2")}


def test_a_masked_service_sets_nothing(tmp_path: Path) -> None:
    """`systemctl mask ollama` links /etc/systemd/system/ollama.service to /dev/null: the service cannot run, so its
    drop-ins give no process anything (and the ollama advice must not count their override as in force)."""
    write(tmp_path, "/usr/lib/systemd/system/ollama.service", "[Service]\nExecStart=/usr/bin/ollama serve\n")
    write(tmp_path, f"{ETC}/ollama.service.d/override.conf", "[Service]\nEnvironment=HSA_OVERRIDE_GFX_VERSION=10.3.0\n")
    (tmp_path / ETC.lstrip("/") / "ollama.service").symlink_to("/dev/null")
    assert services(probe_env(host_for(tmp_path), [])) == {}
    # an empty unit file masks it too (systemd.unit(5): "has the file size 0")
    (tmp_path / ETC.lstrip("/") / "ollama.service").unlink()
    write(tmp_path, f"{ETC}/ollama.service", "")
    assert services(probe_env(host_for(tmp_path), [])) == {}
    # near miss: the unit in /etc is a link to the real unit file (not masked): the drop-in sets the override
    (tmp_path / ETC.lstrip("/") / "ollama.service").unlink()
    (tmp_path / ETC.lstrip("/") / "ollama.service").symlink_to("/usr/lib/systemd/system/ollama.service")
    assert services(probe_env(host_for(tmp_path), [])) == {
        ("ollama.service", "HSA_OVERRIDE_GFX_VERSION"): ("10.3.0", f"{ETC}/ollama.service.d/override.conf:2")}


def test_a_doubled_percent_before_h_is_a_literal_percent_h() -> None:
    assert expand_specifiers("%%h/x", "/root") == "%h/x"
    assert expand_specifiers("100%%", "/root") == "100%"
    assert expand_specifiers("%%%h", "/home/a") == "%/home/a"
    # near miss: a lone %h is the home, other specifiers stay as written
    assert expand_specifiers("%h/.cache %i", "/home/a") == "/home/a/.cache %i"
    assert unit_environment("[Service]\nEnvironment=MIOPEN_USER_DB_PATH=/srv/%%h\n", "/root")[0].pairs == (
        ("MIOPEN_USER_DB_PATH", "/srv/%h"),)


def test_hostile_unit_files_give_no_traceback_and_a_bounded_read(tmp_path: Path) -> None:
    """A symlink loop, a huge unit, binary and non-UTF-8 bytes, an EnvironmentFile= under /proc or naming a
    directory: probe_env returns, reads only the first 64 KiB of a file, and keeps the well-formed setting."""
    etc = tmp_path / ETC.lstrip("/")
    etc.mkdir(parents=True)
    (etc / "loop.service").symlink_to(etc / "loop.service")
    (etc / "a.service.d").mkdir()
    (etc / "a.service.d" / "self.conf").symlink_to(etc / "a.service.d" / "other.conf")
    (etc / "a.service.d" / "other.conf").symlink_to(etc / "a.service.d" / "self.conf")
    huge = "[Service]\n" + "# padding\n" * 20000 + "Environment=HIP_VISIBLE_DEVICES=7\n"  # past the first 64 KiB
    write(tmp_path, f"{ETC}/huge.service", huge)
    (etc / "bin.service").write_bytes(b"[Service]\n\x00\xff\xfe\x80Environment=ROCM_PATH=/x\xff\n"
                                      b"Environment=\"HIP_PATH=/opt/\xc3\x28rocm\" \x00\n"
                                      b"EnvironmentFile=/proc/self/status\nEnvironmentFile=/etc\n"
                                      b"Environment=HSA_OVERRIDE_GFX_VERSION=10.3.0\n")
    got = services(probe_env(host_for(tmp_path), []))
    assert ("huge.service", "HIP_VISIBLE_DEVICES") not in got
    assert got[("bin.service", "HSA_OVERRIDE_GFX_VERSION")] == ("10.3.0", f"{ETC}/bin.service:6")
    assert all(service in ("bin.service",) for service, _ in got)


# ----------------------------------------------------------------------------------------------- knowledge

# Nobara is Fedora rebuilt (PLATFORM_ID "platform:f<N>", Fedora's repositories) yet its os-release says
# ID=nobara, ID_LIKE="rhel centos fedora", the same ID_LIKE as Rocky's:
# Nobara-Project/rpm-sources@fecae91b6fb75a229333a6dc193c7f1be113bab1:baseos/nobara-release/43/nobara-release.spec
NOBARA = OsInfo(id="nobara", version="43", like=("rhel", "centos", "fedora"))
ROCKY = OsInfo(id="rocky", version="9.4", like=("rhel", "centos", "fedora"))
_NO_ROCM = "Error: Unable to find a match: rocm\nNo match for argument: rocm\n"


def _found(os_: OsInfo, text: str = _NO_ROCM) -> dict[str, Finding]:
    return {f.id: f for f in diagnose(replace(_facts({}, text), os=os_))}


def test_nobara_is_fedora_for_the_rocm_metapackage_and_gets_no_amd_rhel_repository() -> None:
    """On Nobara dnf has Fedora's ROCm packages: the Fedora-packaging cause stands, and AMD's RHEL .repo with
    `dnf install rocm` (the RHEL branch, chosen by ID_LIKE's "rhel") is not advised there."""
    nobara = _found(NOBARA)
    meta = nobara["fedora-rocm-metapackage-missing"]
    assert not meta.contradicted, meta.contradicted
    repo = nobara.get("rocm-repository-missing")
    assert repo is None or repo.contradicted is not None
    assert repo is None or "yum.repos.d" not in repo.fix
    # near miss: Rocky (the same ID_LIKE) is RHEL: the Fedora cause is contradicted, AMD's RHEL repository advised
    rocky = _found(ROCKY)
    assert rocky["fedora-rocm-metapackage-missing"].contradicted
    assert "yum.repos.d" in rocky["rocm-repository-missing"].fix
    assert "sudo dnf clean all" in rocky["rocm-repository-missing"].fix_commands
    assert "sudo dnf install rocm" in rocky["rocm-repository-missing"].fix  # in words: a generic install is no fix action


# dnf prints the same words for a package it cannot remove or upgrade (rpm-software-management/dnf@
# 5ad76abc97a6b82a70ddc828d2286a47567eff7f): dnf/base.py remove() -> _raise_package_not_installed_error
# ('No match for argument'), printed by dnf/cli/commands/remove.py as '<error>: <spec>' and followed by 'No packages
# marked for removal.'; upgrade() of a package the repositories have: 'Package %s available, but not installed.' then
# 'No match for argument: %s'. Neither says that the repository is missing.
_DNF_REMOVE = ("$ sudo dnf remove rocm-hip-sdk\nNo match for argument: rocm-hip-sdk\nNo packages marked for removal.\n"
               "Dependencies resolved.\nNothing to do.\nComplete!\n")
_DNF_UPGRADE = ("$ sudo dnf upgrade rocm\nPackage rocm available, but not installed.\nNo match for argument: rocm\n"
                "Error: No packages marked for upgrade.\n")


@pytest.mark.parametrize("text", [_DNF_REMOVE, _DNF_UPGRADE])
def test_dnf_remove_or_upgrade_of_a_package_is_not_a_missing_repository(text: str) -> None:
    for os_ in (ROCKY, OsInfo(id="fedora", version="42")):
        found = _found(os_, text)
        for iid in ("rocm-repository-missing", "fedora-rocm-metapackage-missing"):
            f = found.get(iid)
            assert f is None or f.contradicted is not None, (os_.id, iid, f)


def test_dnf_install_of_an_unknown_rocm_package_is_still_a_missing_repository() -> None:
    """Near miss: `dnf install` (dnf/cli/commands/install.py: 'No match for argument: %s', then 'Unable to find a
    match') on Rocky is AMD's repository missing."""
    text = "$ sudo dnf install rocm-hip-sdk\nNo match for argument: rocm-hip-sdk\nError: Unable to find a match: rocm-hip-sdk\n"
    f = _found(ROCKY, text)["rocm-repository-missing"]
    assert f.contradicted is None and "yum.repos.d" in f.fix
