"""Known issues from the amdgpu / amdkfd kernel driver's own messages (helper D6, session 14).

Each text quotes the line as the driver prints it (amdgpu's probe leaving SI/CIK GPUs to radeon, the VBIOS search
that found nothing, the RAS bad-page table over its threshold, KFD's failed queue preemption and the VRAM lost in a
reset), with a near miss that must not fire: the same words elsewhere (a command line that already carries the
parameters, a VBIOS that was found, the 90% warning, a threshold the driver ignores, a reset that kept VRAM).
"""

from __future__ import annotations

from typing import Any

import pytest
from test_known_issues_texts import _found, _ids


pytestmark = pytest.mark.unit

HAWAII: dict[str, Any] = {"gpus": [{"gfx": "gfx701", "integrated": False, "codename": "Hawaii"}]}
RX6800: dict[str, Any] = {"gpus": [{"gfx": "gfx1030", "integrated": False}]}
MI210: dict[str, Any] = {"gpus": [{"gfx": "gfx90a", "integrated": False}]}


# freebsd/drm-kmod@129bf0f (Linux drm):drivers/gpu/drm/amd/amdgpu/amdgpu_drv.c amdgpu_pci_probe(): dev_info
# "SI support provided by radeon.\n" / "CIK support provided by radeon.\n", then "Use radeon.si_support=0
# amdgpu.si_support=1 to override.\n" (cik likewise), return -ENODEV.
CIK_TEXT = ("amdgpu 0000:01:00.0: CIK support provided by radeon.\n"
            "amdgpu 0000:01:00.0: Use radeon.cik_support=0 amdgpu.cik_support=1 to override.")
SI_TEXT = ("amdgpu 0000:01:00.0: SI support provided by radeon.\n"
           "amdgpu 0000:01:00.0: Use radeon.si_support=0 amdgpu.si_support=1 to override.")
RADEON_NEAR = {
    "already switched": ("$ cat /proc/cmdline\nBOOT_IMAGE=/vmlinuz root=/dev/sda2 radeon.cik_support=0 "
                         "amdgpu.cik_support=1"),
    "radeon driver runs": "[drm] radeon kernel modesetting enabled.\nradeon 0000:01:00.0: VRAM: 4096M",
}


def test_cik_left_to_radeon_is_the_cause_with_amdgpus_own_parameters() -> None:
    found = _found(HAWAII, CIK_TEXT)
    finding = found["amdgpu-si-cik-driven-by-radeon"]
    assert finding.to_check is None
    assert set(finding.fix_kernel_args.add) == {"radeon.cik_support=0", "amdgpu.cik_support=1"}


def test_si_left_to_radeon_gets_the_si_parameters() -> None:
    finding = _found({"gpus": [{"gfx": "gfx601", "integrated": False, "codename": "Pitcairn"}]},
                     SI_TEXT)["amdgpu-si-cik-driven-by-radeon"]
    assert set(finding.fix_kernel_args.add) == {"radeon.si_support=0", "amdgpu.si_support=1"}


@pytest.mark.parametrize("name", sorted(RADEON_NEAR))
def test_si_cik_radeon_near_misses(name: str) -> None:
    assert "amdgpu-si-cik-driven-by-radeon" not in _ids(HAWAII, RADEON_NEAR[name])


# freebsd/drm-kmod@129bf0f:drivers/gpu/drm/amd/amdgpu/amdgpu_bios.c amdgpu_get_bios(): "Fetched VBIOS from ATRM /
# VFCT / VRAM BAR / ROM BAR / ROM / disabled ROM BAR / platform", else dev_err "Unable to locate a BIOS ROM\n";
# amdgpu_device.c returns -EINVAL when amdgpu_get_bios() fails.
VBIOS_TEXT = ("amdgpu 0000:0b:00.0: amdgpu: Unable to locate a BIOS ROM\n"
              "amdgpu 0000:0b:00.0: amdgpu: Fatal error during GPU init\n"
              "amdgpu: probe of 0000:0b:00.0 failed with error -22")


def test_vbios_not_found_is_the_cause_and_explains_the_init_failure() -> None:
    ids = _ids(RX6800, VBIOS_TEXT)
    assert "amdgpu-vbios-not-found" in ids
    assert _found(RX6800, VBIOS_TEXT)["amdgpu-vbios-not-found"].to_check is None
    assert ids.index("amdgpu-vbios-not-found") < ids.index("amdgpu-init-failed")


def test_a_vbios_that_was_found_is_no_vbios_failure() -> None:
    assert "amdgpu-vbios-not-found" not in _ids(RX6800, "amdgpu 0000:0b:00.0: amdgpu: Fetched VBIOS from ROM BAR")


# freebsd/drm-kmod@129bf0f and @1876450 (drm 6.1):amdgpu_ras_eeprom.c amdgpu_ras_eeprom_init(): "RAS records:%d exceed
# threshold:%d, GPU will not be initialized. Replace this GPU or increase the threshold"; @595c686 (drm 5.15): "RAS
# records:%d exceed threshold:%d, maybe retire this GPU?"; amdgpu_ras_eeprom_check_err_threshold(): "This GPU is in
# BAD status." Not fatal: "RAS records:%u exceeds 90%% of threshold:%d" and "GPU will be initialized due to
# bad_page_threshold = -1."
RAS_FIRES = {
    "6.1 on": ("amdgpu 0000:c1:00.0: amdgpu: RAS records:512 exceed threshold:512\n"
               "amdgpu 0000:c1:00.0: amdgpu: RAS records:512 exceed threshold:512, GPU will not be initialized. "
               "Replace this GPU or increase the threshold"),
    "5.15": "amdgpu 0000:c1:00.0: amdgpu: RAS records:512 exceed threshold:512, maybe retire this GPU?",
    "bad status": ("amdgpu 0000:c1:00.0: amdgpu: This GPU is in BAD status.\n"
                   "amdgpu 0000:c1:00.0: amdgpu: Please retire it or set a larger threshold value when reloading "
                   "driver."),
}
RAS_NEAR = {
    "90 percent": "amdgpu 0000:c1:00.0: amdgpu: RAS records:470 exceeds 90% of threshold:512",
    "threshold ignored": ("amdgpu 0000:c1:00.0: amdgpu: RAS records:512 exceed threshold:512\n"
                          "amdgpu 0000:c1:00.0: amdgpu: GPU will be initialized due to bad_page_threshold = -1."),
}


@pytest.mark.parametrize("name", sorted(RAS_FIRES))
def test_ras_bad_pages_over_the_threshold_is_the_cause(name: str) -> None:
    found = _found(MI210, RAS_FIRES[name])
    assert "amdgpu-ras-bad-page-threshold-exceeded" in found
    assert found["amdgpu-ras-bad-page-threshold-exceeded"].to_check is None


@pytest.mark.parametrize("name", sorted(RAS_NEAR))
def test_ras_bad_page_near_misses(name: str) -> None:
    assert "amdgpu-ras-bad-page-threshold-exceeded" not in _ids(MI210, RAS_NEAR[name])


# torvalds/linux@de8a334:drivers/gpu/drm/amd/amdkfd/kfd_device_queue_manager.c unmap_queues_cpsch(): "qcm fence wait
# loop timeout expired", then "The cp might be in an unrecoverable state due to an unsuccessful queues preemption"
# and kfd_hws_hang() (a GPU reset), or "HIQ MQD's queue_doorbell_id0 is not 0, Queue preemption time out".
# freebsd/drm-kmod@129bf0f amdgpu_device.c: DRM_INFO("VRAM is lost due to GPU reset!\n"); drm 5.0: "VRAM is lost!".
RESET_FIRES = {
    "preemption": ("amdgpu: qcm fence wait loop timeout expired\n"
                   "amdgpu: The cp might be in an unrecoverable state due to an unsuccessful queues preemption\n"
                   "amdgpu: Failed to evict process queues"),
    "hiq doorbell": "amdgpu: HIQ MQD's queue_doorbell_id0 is not 0, Queue preemption time out",
    "vram lost": "[drm] VRAM is lost due to GPU reset!",
    "vram lost 5.0": "[drm:amdgpu_device_gpu_recover [amdgpu]] *ERROR* VRAM is lost!",
}
RESET_NEAR = {
    "fence wait alone": "amdgpu: qcm fence wait loop timeout expired",
    "vram words": "The model does not fit: VRAM is lost to the desktop compositor, only 2 GiB free",
}


@pytest.mark.parametrize("name", sorted(RESET_FIRES))
def test_kfd_preemption_failure_and_vram_lost_are_a_gpu_reset_to_check(name: str) -> None:
    found = _found(RX6800, RESET_FIRES[name])
    assert "gpu-ring-timeout" in found
    assert found["gpu-ring-timeout"].to_check is not None


@pytest.mark.parametrize("name", sorted(RESET_NEAR))
def test_gpu_reset_near_misses(name: str) -> None:
    assert "gpu-ring-timeout" not in _ids(RX6800, RESET_NEAR[name])
