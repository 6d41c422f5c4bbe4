"""An error KFD's own open returns (after the device's file mode let the process in) is not "/dev/kfd is missing or
not accessible": its advice (load the driver, join the render group, pass the devices) does not follow from it."""

from __future__ import annotations

import pytest

from wizard.diagnose import diagnose
from wizard.model import Driver, EvidenceText, Facts, Gpu

pytestmark = pytest.mark.unit

GPU = Gpu(name="AMD Radeon 8060S Graphics", gfx="gfx1151", integrated=True)


def _causes(text: str, driver: Driver | None = None, in_container: bool | None = None) -> list[str]:
    facts = Facts(gpus=(GPU,), driver=driver or Driver(), origin="test", in_container=in_container,
                  texts=(EvidenceText("paste.txt", text, 1, "text", True),))
    return [f.id for f in diagnose(facts) if f.to_check is None]


@pytest.mark.parametrize("errno", ["Invalid argument", "Cannot allocate memory", "Bad address",
                                   "Resource temporarily unavailable"])
def test_an_error_kfd_itself_returns_is_not_a_missing_or_forbidden_device(errno: str) -> None:
    line = f"ERROR    test_rocm_sanity.py:34 Unable to open /dev/kfd read-write: {errno}\n"
    assert "kfd-inaccessible" not in _causes(line)
    # the same error read into the facts (what detection makes of such a line) does not predict it either
    assert "kfd-inaccessible" not in _causes("", Driver(kfd_present=True, kfd_accessible=False, kfd_error=errno))


@pytest.mark.parametrize("errno", ["Permission denied", "No such file or directory"])
def test_a_missing_or_forbidden_device_stays_the_finding(errno: str) -> None:
    line = f"hsa api call failure at: rocminfo.cc:1306\nUnable to open /dev/kfd read-write: {errno}\n"
    # the line alone shows the failure, not which of its causes holds: listed, to check
    assert "kfd-inaccessible" in _all(line) and "kfd-inaccessible" not in _causes(line)
    # facts that say why make it the cause: a bare host whose driver is not loaded, a user outside render and video
    present = errno == "Permission denied"
    why = (Driver(kfd_present=True, kfd_accessible=False, kfd_error=errno, user="ann", in_render_group=False,
                  in_video_group=False) if present else Driver(loaded=False, kfd_present=False, kfd_error=errno))
    assert "kfd-inaccessible" in _causes(line, why, False) and "kfd-inaccessible" in _causes("", why, False)


def _all(text: str) -> list[str]:
    facts = Facts(gpus=(GPU,), driver=Driver(), origin="test",
                  texts=(EvidenceText("paste.txt", text, 1, "text", True),))
    return [f.id for f in diagnose(facts)]
