from __future__ import annotations

from pathlib import Path

import pytest

from wizard.parsers.lspci import parse_lspci

pytestmark = pytest.mark.unit

DATA = Path(__file__).parent / "data" / "parsers" / "lspci"


def test_nn_line() -> None:
    (dev,) = parse_lspci((DATA / "navi31_nn.txt").read_text())
    assert dev.bdf == "0000:03:00.0" and dev.class_code == "0300"
    assert dev.pci_id == "1002:744c" and dev.revision == "c8" and dev.is_amd
    assert dev.name == "Advanced Micro Devices, Inc. [AMD/ATI] Navi 31 [Radeon RX 7900 XT/7900 XTX]"


def test_quoted_paste_keeps_only_display_class() -> None:
    devs = parse_lspci((DATA / "rembrandt_nn.txt").read_text())
    assert [(d.bdf, d.pci_id) for d in devs] == [("0000:74:00.0", "1002:1681")]


def test_prog_if_glued_to_ids() -> None:
    devs = parse_lspci((DATA / "hd_progif.txt").read_text())
    assert [d.pci_id for d in devs] == ["1002:9712", "1002:68c1"]
    assert devs[1].name.endswith("[Mobility Radeon HD 5650/5750 / 6550M]")


def test_plain_lspci_has_no_ids() -> None:
    (dev,) = parse_lspci((DATA / "plain_grep.txt").read_text())
    assert dev.bdf == "0000:01:00.0" and dev.pci_id is None and dev.class_code is None
    assert dev.is_amd and dev.revision == "ff" and dev.line == 2


NNK = """\
00:02.0 Host bridge [0600]: Advanced Micro Devices, Inc. [AMD] Starship/Matisse GPP Bridge [1022:1483]
0000:03:00.0 VGA compatible controller [0300]: Advanced Micro Devices, Inc. [AMD/ATI] Navi 31 [Radeon RX 7900 XT/7900 XTX/7900M] [1002:744c] (rev cc)
\tSubsystem: Sapphire Technology Limited Device [1da2:e471]
\tKernel driver in use: amdgpu
\tKernel modules: amdgpu
0000:03:00.1 Audio device [0403]: Advanced Micro Devices, Inc. [AMD/ATI] Navi 31 HDMI/DP Audio [1002:ab30]
\tKernel driver in use: snd_hda_intel
0000:0e:00.0 VGA compatible controller [0300]: Advanced Micro Devices, Inc. [AMD/ATI] Raphael [1002:164e] (rev c1)
\tKernel driver in use: amdgpu
01:00.0 3D controller [0302]: NVIDIA Corporation GA107M [GeForce RTX 3050 Mobile] [10de:25a2] (rev a1)
"""


def test_nnk_blocks_drivers_and_other_vendors() -> None:
    devs = parse_lspci(NNK)
    assert [d.bdf for d in devs] == ["0000:03:00.0", "0000:0e:00.0", "0000:01:00.0"]
    assert devs[0].driver == "amdgpu" and devs[0].modules == ("amdgpu",)
    assert devs[0].subsystem == "Sapphire Technology Limited Device [1da2:e471]"
    assert devs[1].driver == "amdgpu" and devs[1].pci_id == "1002:164e"
    assert not devs[2].is_amd and devs[2].class_name == "3D controller"


def test_display_controller_and_duplicates_merge() -> None:
    text = (
        "c3:00.0 Display controller: Advanced Micro Devices, Inc. [AMD/ATI] Device 1586 (rev c1)\n"
        "c3:00.0 Display controller [0380]: Advanced Micro Devices, Inc. [AMD/ATI] Device [1002:1586] (rev c1)\n"
    )
    (dev,) = parse_lspci(text)
    assert dev.bdf == "0000:c3:00.0" and dev.pci_id == "1002:1586"
