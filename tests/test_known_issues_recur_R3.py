"""Known issues for causes that recur across users' threads (helper R3, session 14).

Each issue rests on at least two threads whose cause a maintainer or the reporter's fix confirmed: libdrm's
'amdgpu.ids: No such file or directory' (harmless: ROCm/pytorch#984, pytorch#144203/#147791, ROCm#2961/#5943,
TheRock#147), amdgpu-install refusing an Ubuntu derivative's os-release ID (system76/docs#490, pop-os/pop#3065,
ROCm#5925), and apt refusing repo.radeon.com for want of a valid ROCm signing key (NO_PUBKEY / EXPKEYSIG
9386B48A1A693C5C: ROCm#859, #496, #1058, #2362, #5268, a guide's #11). Texts are modelled on those threads, not
copied; each issue has a near miss that must not fire.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_known_issues_texts import _found, _ids


pytestmark = pytest.mark.unit

RX7800: dict[str, Any] = {"gpus": [{"gfx": "gfx1101", "integrated": False}]}
RX9070_UBUNTU: dict[str, Any] = {"gpus": [{"gfx": "gfx1201", "integrated": False}], "os_id": "ubuntu"}
RX6700_POP: dict[str, Any] = {"gpus": [{"gfx": "gfx1031", "integrated": False}], "os_id": "pop"}


IDS = "libdrm-amdgpu-ids-missing"
IDS_FIRES = {
    "wheel in a venv": ("$ python -c 'import torch; print(torch.cuda.is_available())'\n"
                        "/opt/amdgpu/share/libdrm/amdgpu.ids: No such file or directory\nTrue"),
    "twice, bare name": "amdgpu.ids: No such file or directory\namdgpu.ids: No such file or directory\n"
                        "PyTorch version: 2.5.1+rocm6.2",
    "TheRock tree": "/share/libdrm/amdgpu.ids: No such file or directory",
}
IDS_NEAR = {
    # the file found by locate: nothing is missing
    "locate": "$ locate amdgpu.ids\n/usr/share/libdrm/amdgpu.ids",
    "another libdrm file": "/usr/share/libdrm/amdgpu.ids.old: permission denied",
}


@pytest.mark.parametrize("name", sorted(IDS_FIRES))
def test_amdgpu_ids_missing_is_an_info_note(name: str) -> None:
    found = _found(RX7800, IDS_FIRES[name])
    assert IDS in found
    assert found[IDS].severity == "info"
    # a harmless message never counts as the cause of a failure
    assert found[IDS].to_check is not None


@pytest.mark.parametrize("name", sorted(IDS_NEAR))
def test_amdgpu_ids_near_misses(name: str) -> None:
    assert IDS not in _ids(RX7800, IDS_NEAR[name])


def test_amdgpu_ids_fix_by_distribution() -> None:
    text = IDS_FIRES["wheel in a venv"]
    ubuntu = _found({**RX7800, "os_id": "ubuntu"}, text)[IDS]
    fedora = _found({**RX7800, "os_id": "fedora"}, text)[IDS]
    assert "sudo apt install libdrm-amdgpu-common" in ubuntu.fix_commands
    assert not any("ln -s" in c for c in ubuntu.fix_commands)
    assert any("ln -s /usr/share/libdrm/amdgpu.ids" in c for c in fedora.fix_commands)
    assert "sudo apt install libdrm-amdgpu-common" not in fedora.fix_commands


OSID = "amdgpu-install-unsupported-os-id"
OSID_FIRES = {
    "pop, old installer": ("$ sudo ./amdgpu-pro-install -y --opencl=legacy,pal\n"
                           "Unsupported DEB-based OS: /etc/os-release ID 'pop'"),
    "pop, amdgpu-install": "$ sudo amdgpu-install --usecase=rocm\nUnsupported OS: /etc/os-release ID 'pop'",
}
OSID_NEAR = {
    # another installer's words about an unsupported OS: not amdgpu-install's ID check
    "other script": "zorin is Unsupported OS",
    "os-release shown": "$ cat /etc/os-release\nNAME=\"Pop!_OS\"\nID=pop\nID_LIKE=\"ubuntu debian\"",
}


@pytest.mark.parametrize("name", sorted(OSID_FIRES))
def test_amdgpu_install_unsupported_os_id_is_a_cause(name: str) -> None:
    found = _found(RX6700_POP, OSID_FIRES[name])
    assert OSID in found
    assert found[OSID].to_check is None
    assert any("/etc/os-release" in c for c in found[OSID].fix_commands)


@pytest.mark.parametrize("name", sorted(OSID_NEAR))
def test_amdgpu_install_unsupported_os_id_near_misses(name: str) -> None:
    assert OSID not in _ids(RX6700_POP, OSID_NEAR[name])


KEY = "rocm-apt-signing-key-missing-or-expired"
KEY_FIRES = {
    "no pubkey, amdgpu repo": (
        "Err:5 https://repo.radeon.com/amdgpu/6.4.2/ubuntu noble InRelease\n"
        "  The following signatures couldn't be verified because the public key is not available: "
        "NO_PUBKEY 9386B48A1A693C5C\n"
        "E: The repository 'https://repo.radeon.com/amdgpu/6.4.2/ubuntu noble InRelease' is not signed."),
    "expired key": ("W: GPG error: http://repo.radeon.com/rocm/apt/debian xenial InRelease: The following "
                    "signatures were invalid: EXPKEYSIG 9386B48A1A693C5C James Adrian Edwards (ROCm Release Manager)"),
    "keyexpired, key elided": ("W: GPG error: http://repo.radeon.com/rocm/apt/debian xenial InRelease: The following "
                               "signatures were invalid: KEYEXPIRED 1533081600"),
}
KEY_NEAR = {
    # another repository's key: not AMD's
    "other repo": ("W: GPG error: https://cloud.r-project.org/bin/linux/ubuntu jammy-cran40/ InRelease: The following "
                   "signatures couldn't be verified because the public key is not available: NO_PUBKEY 51716619E084DAB9"),
    # a present key apt's verifier rejects (Ubuntu 25.10, ROCm#4912): another cause
    "errsig": ("Err:4 https://repo.radeon.com/rocm/apt/6.4.1 noble InRelease\n"
               "  The following signatures were invalid: ERRSIG 9386B48A1A693C5C"),
    "missing signed-by notice": "Notice: Missing Signed-By in the sources.list(5) entry for "
                                "'https://repo.radeon.com/amdgpu/6.2.3/ubuntu'",
}


@pytest.mark.parametrize("name", sorted(KEY_FIRES))
def test_rocm_signing_key_is_a_cause(name: str) -> None:
    found = _found(RX9070_UBUNTU, KEY_FIRES[name])
    assert KEY in found
    assert found[KEY].to_check is None
    assert any("/etc/apt/keyrings/rocm.gpg" in c for c in found[KEY].fix_commands)


@pytest.mark.parametrize("name", sorted(KEY_NEAR))
def test_rocm_signing_key_near_misses(name: str) -> None:
    assert KEY not in _ids(RX9070_UBUNTU, KEY_NEAR[name])
