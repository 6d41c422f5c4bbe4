"""A fix that moves the kernel or linux-firmware to a newer or an older one, as fix data (`fix.move_to`): shown in
every front end (a line in the panel, `fix_move_to` in JSON) and read as the fix applied where the thread says moving
worked ("upgrading the kernel fixed it", "updated linux-firmware and now it works"), with the direction it says."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from rich.console import Console

from wizard.diagnose import SHARED_FIX, Finding, diagnose
from wizard.kb.parse import Problems, parse_issues
from wizard.model import EvidenceText, Facts, Gpu, OsInfo
from wizard.render import findings_renderables

pytestmark = pytest.mark.unit

KFD_REFUSES = "kfd kfd: amdgpu: GC IP 0c0001 not supported in kfd\n"
MES_OLD = "amdgpu 0000:03:00.0: amdgpu: MES FW version must be >= 0x7f to enable LR compute workaround.\n"


def _findings(text: str, gfx: str = "gfx1201", kernel: str | None = None) -> dict[str, Finding]:
    gpu = Gpu(name="AMD Radeon", gfx=gfx, integrated=False, family="RDNA4" if gfx.startswith("gfx12") else "RDNA1")
    facts = Facts(gpus=(gpu,), origin="test", os=OsInfo(kernel=kernel),
                  texts=(EvidenceText("paste.txt", text, 1, "text", True),))
    return {f.id: f for f in diagnose(facts)}


def _applied(f: Finding | None) -> bool:
    return f is not None and any(e.startswith("the fix applied") for e in f.evidence)


def _entry(move_to: Any) -> list[str]:
    entry = {"id": "x-y", "severity": "error", "title": "t", "signatures": ["zzz"], "when": [], "predict": False,
             "cause": "c", "fix": {"summary": "s", "move_to": move_to}, "sources": ["https://rocm.docs.amd.com/"]}
    problems = Problems("known_issues.json")
    parse_issues(json.loads(json.dumps({"issues": [entry]})), problems)
    return problems.lines


def test_move_to_is_checked_when_the_knowledge_base_loads() -> None:
    assert _entry({"kernel": "newer", "linux-firmware": "older"}) == []
    for bad in ({"kernel": "latest"}, {"bios": "newer"}, {}, ["kernel"]):
        assert any("move_to" in line for line in _entry(bad)), bad


def test_the_move_is_advice_in_json_and_in_the_panel() -> None:
    found = _findings(KFD_REFUSES, kernel="6.8.0-48-generic")["kernel-too-old-for-gpu"]
    assert found.to_json()["fix_move_to"] == {"kernel": "newer"}
    out = io.StringIO()
    for item in findings_renderables([found]):
        Console(file=out, width=200, color_system=None).print(item)
    assert "system: boot a newer kernel, then reboot" in out.getvalue()
    older = _findings("HSA_STATUS_ERROR_OUT_OF_RESOURCES\nexpected size 0x8000 not equal to mapping", "gfx1010",
                      "6.12.1-arch1-1")["hsakmt-cwsr-size-rejected-navi1x"]
    assert older.to_json()["fix_move_to"] == {"kernel": "older"}


@pytest.mark.parametrize(("text", "issue"), [
    (KFD_REFUSES + "Upgrading the kernel to 6.11 fixed it.", "kernel-too-old-for-gpu"),
    (KFD_REFUSES + "I installed the HWE kernel and now it works.", "kernel-too-old-for-gpu"),
    (MES_OLD + "After I updated linux-firmware the warning is gone and it works now.", "mes-firmware-too-old"),
    (MES_OLD + "On openSUSE I upgraded kernel-firmware-amdgpu and now it works.", "mes-firmware-too-old"),
    (MES_OLD + "I upgraded the system to the latest linux-firmware and now it works.", "mes-firmware-too-old"),
    (KFD_REFUSES + "I upgraded Ubuntu to the HWE kernel and now it works.", "kernel-too-old-for-gpu"),
])
def test_a_move_the_thread_says_worked_names_the_fix(text: str, issue: str) -> None:
    assert _applied(_findings(text, kernel="6.8.0-48-generic").get(issue)), text


@pytest.mark.parametrize("text", [
    KFD_REFUSES + "I upgraded the kernel but it still says not supported.",  # it did not work
    KFD_REFUSES + "I downgraded the kernel and now it works.",  # the other direction
    KFD_REFUSES + "I switched to kernel 6.6 and now it works.",  # no direction said
    KFD_REFUSES + "I updated the kernel headers and now it works.",  # not the kernel
    MES_OLD + "I updated the firmware and now it works.",  # the board's firmware or linux-firmware: not said
    # the board's firmware moved "to" a firmware package: the 'to' form that ab5a4d0 gave linux-firmware too reads
    # the thing before "to" as the one moved, and a BIOS is no linux-firmware
    MES_OLD + "I upgraded my VBIOS to the latest firmware package and now it works.",
    MES_OLD + "I upgraded the BIOS to the newest amdgpu firmware and now it works.",
])
def test_near_misses_name_no_move(text: str) -> None:
    found = _findings(text, kernel="6.8.0-48-generic")
    assert not _applied(found.get("kernel-too-old-for-gpu")) and not _applied(found.get("mes-firmware-too-old")), text


def test_a_firmware_update_several_issues_share_is_decided_by_the_failure_shown_else_to_check() -> None:
    said = "Updating linux-firmware fixed it."
    listed = _findings(said)
    assert {"mes-firmware-too-old", "amdgpu-firmware-missing"} <= {i for i, f in listed.items() if f.to_check == SHARED_FIX}
    assert _findings(MES_OLD + said)["mes-firmware-too-old"].to_check is None


@pytest.mark.parametrize("text", [
    # words after "kernel" that make it another thing than the kernel itself
    "I updated the kernel cmdline and now it works.",
    "I updated the kernel boot parameters and now it works.",
    "Updated the kernel driver and now it works.",
    "I updated the kernel module and now it works.",
    "I upgraded the kernel config and now it works.",
    "I upgraded kernel-firmware and now it works.",  # openSUSE's name of linux-firmware
    "I updated the kernel args and now it works.",
    "I updated the kernel arguments and now it works.",
])
def test_another_thing_of_the_kernel_updated_is_no_newer_kernel(text: str) -> None:
    found = _findings(text, kernel="6.8.0-48-generic")
    assert not _applied(found.get("kernel-too-old-for-gpu")), (text, found.get("kernel-too-old-for-gpu"))
    # near miss that must still read: the kernel itself
    assert _applied(_findings(KFD_REFUSES + "I updated the kernel and now it works.",
                              kernel="6.8.0-48-generic").get("kernel-too-old-for-gpu"))


@pytest.mark.parametrize(("text", "gfx", "kernel"), [
    ("I upgraded the kernel and now it works.", "gfx1100", "6.14.0-15-generic"),
    ("Updating linux-firmware fixed it.", "gfx1100", "6.14.0-15-generic"),
])
def test_a_move_alone_names_no_cause_where_nothing_else_speaks_for_it(text: str, gfx: str, kernel: str) -> None:
    # a newer kernel (or linux-firmware) fixes many failures the knowledge base has no issue for: the move alone,
    # on a machine whose failure is not shown, leaves its issue to check, not a (critical) cause
    found = _findings(text, gfx, kernel)
    assert not {i for i, f in found.items() if f.to_check is None and _applied(f)}, \
        {i: f.to_check for i, f in found.items()}
    assert {"kernel-too-old-for-gpu", "mes-firmware-too-old"} & set(found)  # listed: to check


def test_a_move_with_its_failure_shown_names_the_cause() -> None:
    # near miss of the above: the failure shown decides
    found = _findings(KFD_REFUSES + "I upgraded the kernel and now it works.", "gfx1100", "6.14.0-15-generic")
    assert found["kernel-too-old-for-gpu"].to_check is None and _applied(found["kernel-too-old-for-gpu"])


def test_the_kernels_own_driver_is_no_kernel_moved() -> None:
    """Left by helper V3: "went back to the kernel's own amdgpu driver" is the in-tree driver, not an older kernel."""
    shown = "expected size 0x8000 not equal to mapping\n"
    for said in ("I went back to the kernel's own amdgpu driver and now it works.",
                 "I went back to the kernel’s driver and now it works."):
        found = _findings(shown + said, "gfx1010", "6.12.1-arch1-1")
        assert not _applied(found.get("hsakmt-cwsr-size-rejected-navi1x")), said
    # near miss: the kernel itself moved back still reads
    moved = _findings("expected size 0x8000 not equal to mapping\nI went back to the previous kernel and now it works.",
                      "gfx1010", "6.12.1-arch1-1")
    assert _applied(moved.get("hsakmt-cwsr-size-rejected-navi1x"))
