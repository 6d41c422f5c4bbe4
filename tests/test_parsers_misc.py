"""dmesg, uname and error-text parsers."""

from __future__ import annotations

from pathlib import Path

import pytest

from wizard.parsers.dmesg import parse_dmesg
from wizard.parsers.traceback import parse_error_text
from wizard.parsers.uname import parse_uname

pytestmark = pytest.mark.unit

DATA = Path(__file__).parent / "data" / "parsers"


def test_dmesg_init_version_and_ids() -> None:
    d = parse_dmesg((DATA / "dmesg" / "rx7900xtx_init.txt").read_text())
    assert d.amdgpu_version == "6.1.0"
    assert [e.detail for e in d.of("ip_discovery")] == ["1002:744c"]


def test_dmesg_bdf() -> None:
    d = parse_dmesg((DATA / "dmesg" / "navi48_ipdiscovery.txt").read_text())
    (e,) = d.of("ip_discovery")
    assert e.bdf == "0000:c3:00.0" and e.detail == "1002:7590"


def test_dmesg_ring_timeout_and_reset() -> None:
    d = parse_dmesg((DATA / "dmesg" / "rx5700xt_ring_timeout.txt").read_text())
    (t,) = d.of("ring_timeout")
    assert t.detail == "gfx_0.0.0" and t.bdf == "0000:28:00.0"
    assert len(d.of("gpu_reset")) == 3


def test_dmesg_journal_prefix_and_page_fault() -> None:
    d = parse_dmesg((DATA / "dmesg" / "journal_compute_fault.txt").read_text())
    assert [e.detail for e in d.of("ring_timeout")] == ["comp_1.1.1"]
    (pf,) = d.of("page_fault")
    assert pf.detail == "gfxhub" and pf.bdf == "0000:03:00.0" and pf.text.startswith("amdgpu 0000:03:00.0")


def test_dmesg_other_kinds() -> None:
    text = (
        "[    3.1] kfd kfd: amdgpu: added device 1002:744c\n"
        "[    3.2] kfd kfd: amdgpu: skipped device 1002:7340, PCI rejects atomics 730<0\n"
        "[    3.3] [drm] amdgpu: 20464M of VRAM memory ready\n"
        "[    3.4] amdgpu 0000:03:00.0: Direct firmware load for amdgpu/gc_11_0_0_pfp.bin failed with error -2\n"
        "[    3.5] amdgpu 0000:03:00.0: amdgpu: Fatal error during GPU init\n"
        "[    3.6] usb 1-1: new device\n"
    )
    d = parse_dmesg(text)
    assert d.kfd_devices == ("1002:744c",)
    assert [e.kind for e in d.events] == ["kfd_added", "kfd_skipped", "vram", "firmware_missing", "fatal"]
    assert d.of("vram")[0].detail == "20464" and d.of("kfd_skipped")[0].detail == "1002:7340"
    assert d.of("firmware_missing")[0].detail == "amdgpu/gc_11_0_0_pfp.bin"


def test_uname_forms() -> None:
    u = parse_uname(
        "user@box:~$ uname -a\n"
        "Linux box 6.8.0-48-generic #48~22.04.1-Ubuntu SMP PREEMPT_DYNAMIC Mon Oct  7 11:24:13 UTC 2 x86_64 x86_64 x86_64 GNU/Linux\n"
    )
    assert (u.kernel_release, u.arch, u.hostname) == ("6.8.0-48-generic", "x86_64", "box")
    assert u.kernel_version.startswith("#48~22.04.1-Ubuntu") and u.line == 2
    assert parse_uname("6.11.0-19-generic\n").kernel_release == "6.11.0-19-generic"
    r = parse_uname((DATA / "uname" / "cloudlinux9_r.txt").read_text())
    assert r.kernel_release == "5.14.0-427.20.1.el9_4.x86_64" and r.arch is None


def test_error_text() -> None:
    e = parse_error_text((DATA / "traceback" / "collect_env_indexerror.txt").read_text())
    assert (e.exception, e.message) == ("IndexError", "list index out of range")
    h = parse_error_text((DATA / "traceback" / "hip_no_binary.txt").read_text())
    assert "hipErrorNoBinaryForGpu" in h.text and "root@" not in h.text
    noisy = "\x1b[31mRuntimeError:   HIP error: invalid device function\x1b[0m\r\n\r\n"
    assert parse_error_text(noisy).text == "RuntimeError: HIP error: invalid device function"
    tb = parse_error_text("Traceback (most recent call last):\n  File \"x.py\", line 1\nRuntimeError: boom\n")
    assert tb.has_traceback and tb.exception == "RuntimeError"
