"""Kernel command-line parameters as fix data (issue 21, point 4: a fix is data): a fix adds or removes them
(`fix.kernel_args`), the advice says so in every front end (a line in the CLI/TUI panel, `fix_kernel_args` in JSON, the
grubby commands where the machine's distribution manages its boot entries with grubby), and a parameter added or
removed reads as that fix applied when the thread says it worked."""

from __future__ import annotations

import io
from pathlib import Path
import json
from typing import Any

import pytest
from rich.console import Console

from wizard.diagnose import SHARED_FIX, Finding, diagnose
from wizard.kb.parse import Problems, parse_issues
from wizard.model import EvidenceText, Facts, Gpu, OsInfo
from wizard.render import findings_renderables, kernel_args_line

pytestmark = pytest.mark.unit

IOMMU = "amdgpu 0000:03:00.0: AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x000e address=0x0 flags=0x0020]\n"


def _facts(text: str, os: OsInfo | None = None, gpus: int = 1) -> Facts:
    gpu = Gpu(name="AMD Radeon RX 7900 XTX", gfx="gfx1100", integrated=False, family="RDNA3")
    return Facts(gpus=(gpu,) * gpus, origin="test", os=os or OsInfo(),
                 texts=(EvidenceText("paste.txt", text, 1, "text", True),))


def _findings(text: str, os: OsInfo | None = None, gpus: int = 1) -> dict[str, Finding]:
    return {f.id: f for f in diagnose(_facts(text, os, gpus))}


def _entry(kernel_args: Any) -> list[str]:
    entry = {"id": "x-y", "severity": "error", "title": "t", "signatures": ["zzz"], "when": [], "predict": False,
             "cause": "c", "fix": {"summary": "s", "kernel_args": kernel_args},
             "sources": ["https://rocm.docs.amd.com/"]}
    problems = Problems("known_issues.json")
    parse_issues(json.loads(json.dumps({"issues": [entry]})), problems)
    return problems.lines


def test_kernel_args_are_checked_when_the_knowledge_base_loads() -> None:
    assert _entry({"add": ["iommu=pt", "amdgpu.runpm=0"], "remove": ["nomodeset"]}) == []
    assert any("kernel parameters such as" in line for line in _entry({"add": ["iommu=pt; reboot"]}))
    assert any("kernel parameters such as" in line for line in _entry({"add": ['quiet "splash"']}))
    assert any("expected {" in line for line in _entry(["iommu=pt"]))
    assert any("expected {" in line for line in _entry({"append": ["iommu=pt"]}))
    assert any("leave it out" in line for line in _entry({"add": []}))


def test_the_advice_names_the_parameters_in_json_and_in_the_panel() -> None:
    found = _findings(IOMMU)["iommu-io-page-fault"]
    assert found.to_json()["fix_kernel_args"] == {"add": ["iommu=pt"], "remove": []}
    out = io.StringIO()
    for item in findings_renderables([found]):
        Console(file=out, width=200, color_system=None).print(item)
    assert "kernel command line: add iommu=pt (GRUB: GRUB_CMDLINE_LINUX_DEFAULT" in out.getvalue()
    # rpm-ostree is the Fedora family's ostree tool: the hint names that family (Endless OS, an ostree system of
    # Debian's family, has none)
    assert "their ostree variants (Silverblue, Kinoite, CoreOS): rpm-ostree kargs" in str(kernel_args_line(found.fix_kernel_args))


@pytest.mark.parametrize(("os", "grubby"), [
    (OsInfo(id="fedora", version="41"), True),
    (OsInfo(id="rocky", version="9.4", like=("rhel", "centos", "fedora")), True),
    (OsInfo(id="ubuntu", version="24.04", like=("debian",)), False),
    (OsInfo(), False),  # the distribution not known: no command that may not exist there
])
def test_grubby_commands_only_where_the_distribution_uses_grubby(os: OsInfo, grubby: bool) -> None:
    found = _findings(IOMMU, os)["iommu-io-page-fault"]
    assert ('sudo grubby --update-kernel=ALL --args="iommu=pt"' in found.fix_commands) == grubby


def test_a_removal_is_advised_only_where_the_machine_shows_the_parameter() -> None:
    text = "rocminfo\nROCk module is NOT loaded, possibly no GPU devices\n"
    plain = _findings(text)["rock-module-not-loaded"]
    assert not plain.fix_kernel_args.remove
    shown = _findings(text + "[    0.000000] Booted with the nomodeset parameter. Only the system framebuffer will "
                      "be available\n", OsInfo(id="fedora", version="41"))["rock-module-not-loaded"]
    assert shown.fix_kernel_args.remove == ("nomodeset",)
    assert 'sudo grubby --update-kernel=ALL --remove-args="nomodeset"' in shown.fix_commands


@pytest.mark.parametrize(("text", "issue"), [
    ('I added iommu=pt to GRUB_CMDLINE_LINUX_DEFAULT="quiet splash iommu=pt", ran update-grub and now it works.',
     "iommu-io-page-fault"),
    ("Booting with amdgpu.runpm=0 fixed it, the GPUs come back after idle.", "amdgpu-runtime-pm-resume-fails"),
    ("I put `options amdgpu runpm=0` in /etc/modprobe.d/amdgpu.conf and now it works.",
     "amdgpu-runtime-pm-resume-fails"),
    ("Removing nomodeset from the kernel command line fixed it: rocminfo works now.", "rock-module-not-loaded"),
])
def test_a_parameter_the_thread_says_worked_names_the_fix(text: str, issue: str) -> None:
    found = _findings(text)
    assert issue in found and any(e.startswith("the fix applied") for e in found[issue].evidence), text


@pytest.mark.parametrize("text", [
    "cat /proc/cmdline shows iommu=pt, but the IO_PAGE_FAULT is still there.",
    "Should I boot with iommu=pt? It works fine on my other box.",
    "I set amd_iommu=pt and now it works.",  # another parameter (not even a valid value)
    "I added nomodeset and now it boots.",  # the opposite of the removal
])
def test_near_misses_name_no_kernel_parameter_fix(text: str) -> None:
    found = _findings(text)
    applied = [i for i, f in found.items() if any(e.startswith("the fix applied") for e in f.evidence)]
    assert not {"iommu-io-page-fault", "multi-gpu-iommu", "rock-module-not-loaded"} & set(applied), (text, applied)


def test_a_parameter_two_issues_share_is_decided_by_the_facts_else_to_check() -> None:
    text = "Adding iommu=pt to the kernel command line fixed it."
    # one GPU: multi-gpu-iommu does not fit, and nothing shows the page fault: to check
    assert _findings(text)["iommu-io-page-fault"].to_check == SHARED_FIX
    # two GPUs: every condition of multi-gpu-iommu holds, so the fix states it
    assert _findings(text, gpus=2)["multi-gpu-iommu"].to_check is None
    # the page fault shown: its own failure decides
    assert _findings(IOMMU + text)["iommu-io-page-fault"].to_check is None


@pytest.mark.parametrize("line", [
    "[    0.000000] Command line: BOOT_IMAGE=/boot/vmlinuz-6.8.0-45-generic root=UUID=1234 ro iommu=pt",
    "Nov 30 10:00:00 box kernel: Kernel command line: BOOT_IMAGE=/vmlinuz-6.8.0 root=UUID=1234 ro iommu=pt",
    "initrd=\\amd-ucode.img initrd=\\initramfs-linux.img root=UUID=1234 rw iommu=pt",  # systemd-boot's /proc/cmdline
])
def test_the_booted_command_line_shows_a_parameter_it_does_not_say_it_was_added(line: str) -> None:
    # the machine's state (its /proc/cmdline, the kernel's "Command line:"): two GPUs, a "works fine" after it, and
    # the hang still there; no fix was applied
    text = f"{line}\nrocminfo works fine.\nThe all_reduce test hangs after a few steps.\n"
    found = _findings(text, gpus=2)
    assert not any(e.startswith("the fix applied") for f in found.values() for e in f.evidence), found
    # near miss that must still read: the parameter added in the reporter's words, the same lines after it
    added = _findings("I added iommu=pt to the kernel command line: rocminfo works fine now.", gpus=2)
    assert added["multi-gpu-iommu"].to_check is None


def test_a_command_line_shown_lines_before_leaves_a_parameter_added_later_read() -> None:
    # the booted command line is one line: a parameter the reporter adds lines later, far into a long text, reads
    dump = "[    0.000000] Command line: BOOT_IMAGE=/boot/vmlinuz-6.8.0 root=UUID=1234 ro quiet\n"
    text = dump + "rocm-smi output follows.\n" * 50 + "I added iommu=pt to the kernel command line and now it works.\n"
    assert _findings(text + "x\n" * 3000, gpus=2)["multi-gpu-iommu"].to_check is None


@pytest.mark.parametrize(("os", "in_container"), [
    (OsInfo(id="almalinux", version="8.10", like=("rhel", "centos", "fedora")), True),  # a RHEL-like image: the host's
    (OsInfo(id="fedora", version="41", wsl=True), None),  # WSL's kernel command line is set in .wslconfig
])
def test_no_grubby_command_where_grubby_does_not_set_the_running_kernels_command_line(
        os: OsInfo, in_container: bool | None) -> None:
    from wizard.record import replace

    found = {f.id: f for f in diagnose(replace(_facts(IOMMU, os), in_container=in_container))}["iommu-io-page-fault"]
    assert found.fix_kernel_args.add == ("iommu=pt",)  # the parameter is still named, in words
    assert not any("grubby" in c for c in found.fix_commands), found.fix_commands
    # near miss: the same distribution on the machine itself
    host = {f.id: f for f in diagnose(replace(_facts(IOMMU, os), in_container=False, os=replace(os, wsl=False)))}
    assert any("grubby" in c for c in host["iommu-io-page-fault"].fix_commands)


@pytest.mark.parametrize("text", [
    # RCCL's start-up warning names the parameter the command line lacks (ROCm/rccl@7383f10:src/init.cc:
    # 'Missing \"iommu=pt\" from kernel command line which can lead to system instablity or hang!')
    'init.cc:213 NCCL WARN Missing "iommu=pt" from kernel command line which can lead to system instablity or hang!\n'
    "With NCCL_P2P_DISABLE=1 the all_reduce test works fine.\n",
    "iommu=pt is missing from my kernel command line. rccl-tests runs fine otherwise.\n",
])
def test_a_parameter_said_missing_is_not_a_parameter_added(text: str) -> None:
    found = _findings(text, gpus=2)
    assert not any(e.startswith("the fix applied") for f in found.values() for e in f.evidence), found
    # near miss that must still read: the missing parameter added
    assert _findings("I added the missing iommu=pt to the kernel command line and now it works.",
                     gpus=2)["multi-gpu-iommu"].to_check is None


@pytest.mark.parametrize("text", [
    "iommu=pt was already set. Updating ROCm to 6.2 fixed it.",
    "I already boot with iommu=pt, so after updating ROCm to 6.2 it works now.",
])
def test_a_parameter_already_there_is_not_the_fix_applied(text: str) -> None:
    found = _findings(text, gpus=2)
    assert not any(e.startswith("the fix applied") for f in found.values() for e in f.evidence), found
    # near miss that must still read: the parameter set now
    assert _findings("I set iommu=pt on the kernel command line and it works now.", gpus=2)["multi-gpu-iommu"].to_check \
        is None


def test_an_ostree_system_gets_rpm_ostree_kargs_not_grubby(tmp_path: Path) -> None:
    """Fedora Silverblue's os-release carries OSTREE_VERSION (rpm-ostree writes it into the trees it composes): its
    kernel arguments are rpm-ostree's (`rpm-ostree kargs --append=KEY=VALUE`, Fedora CoreOS docs), not grubby's."""
    from reading_helpers import detect_paste

    from wizard.host import open_recorded
    from wizard.probes import detect

    (tmp_path / "os-release.txt").write_text('NAME="Fedora Linux"\nID=fedora\nVERSION_ID=41\nVARIANT_ID=silverblue\n'
                                             "OSTREE_VERSION='41.20241101.0'\n", encoding="utf-8")
    (tmp_path / "paste.txt").write_text(IOMMU, encoding="utf-8")
    facts = detect(open_recorded(str(tmp_path)))
    assert facts.os.id == "fedora" and facts.os.ostree is True
    found = {f.id: f for f in diagnose(facts)}["iommu-io-page-fault"]
    assert "sudo rpm-ostree kargs --append-if-missing=iommu=pt" in found.fix_commands
    assert not any("grubby" in c for c in found.fix_commands)
    # near miss: the same Fedora without OSTREE_VERSION is a grubby system
    (tmp_path / "os-release.txt").write_text('NAME="Fedora Linux"\nID=fedora\nVERSION_ID=41\n', encoding="utf-8")
    plain = detect(open_recorded(str(tmp_path)))
    assert plain.os.ostree is False
    assert 'sudo grubby --update-kernel=ALL --args="iommu=pt"' in {f.id: f for f in diagnose(plain)}[
        "iommu-io-page-fault"].fix_commands
    # no os-release at all: not known
    bare = tmp_path / "bare"
    bare.mkdir()
    assert detect_paste(bare, IOMMU).os.ostree is None


KFD_IOMMU = ("kfd kfd: amdgpu: error getting iommu info. is the iommu enabled?\n"
             "[    0.000000] Command line: BOOT_IMAGE=/vmlinuz root=/dev/sda2 amd_iommu=off\n")


def test_an_ostree_removal_does_not_fail_on_a_parameter_the_machine_lacks() -> None:
    """kfd-iommu-v2-unavailable removes amd_iommu=off and iommu=off where the text shows either. rpm-ostree applies
    each --delete with ostree_kernel_args_delete, which fails ("No key '%s' found") on a key the deployment lacks, and
    the whole transaction with it (coreos/rpm-ostree@d5ef5f0:src/daemon/rpmostreed-transaction-types.cxx,
    kernel_arg_apply_patching; ostreedev/ostree src/libostree/ostree-kernel-args.c): with only amd_iommu=off booted,
    `--delete=amd_iommu=off --delete=iommu=off` removed nothing. `--delete-if-present` ("Like --delete, but does nothing
    if the key is already missing", src/app/rpmostree-builtin-kargs.cxx) removes the one there."""
    found = _findings(KFD_IOMMU, OsInfo(id="fedora", version="41", ostree=True))["kfd-iommu-v2-unavailable"]
    assert found.fix_kernel_args.remove == ("amd_iommu=off", "iommu=off")
    kargs = [c for c in found.fix_commands if "rpm-ostree" in c]
    assert kargs == ["sudo rpm-ostree kargs --delete-if-present=amd_iommu=off --delete-if-present=iommu=off"], kargs
    # near miss: grubby's --remove-args leaves alone what is not there; a plain Fedora keeps it
    plain = _findings(KFD_IOMMU, OsInfo(id="fedora", version="41"))["kfd-iommu-v2-unavailable"]
    assert 'sudo grubby --update-kernel=ALL --remove-args="amd_iommu=off iommu=off"' in plain.fix_commands


@pytest.mark.parametrize(("os", "rpm_ostree"), [
    (OsInfo(id="fedora", version="41", ostree=True), True),
    (OsInfo(id="rhcos", like=("rhel", "fedora"), ostree=True), True),
    # an ostree system that rpm-ostree does not manage: Endless OS is a Debian-based ostree system without any
    # package layering (https://github.com/castrojo/eos-ubuntu: "There's no such thing as deb-ostree"); ostree marks
    # every booted deployment with /run/ostree-booted, whatever tool made it
    (OsInfo(id="debian", ostree=True), False),
    (OsInfo(ostree=True), False),  # the distribution not known
])
def test_rpm_ostree_kargs_only_where_rpm_ostree_manages_the_system(os: OsInfo, rpm_ostree: bool) -> None:
    found = _findings(IOMMU, os)["iommu-io-page-fault"]
    assert ("sudo rpm-ostree kargs --append-if-missing=iommu=pt" in found.fix_commands) == rpm_ostree, found.fix_commands
    assert not any("grubby" in c for c in found.fix_commands)  # grubby's edits do not carry over either
