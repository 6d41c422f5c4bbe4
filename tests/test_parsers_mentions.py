"""Facts stated in free text, one line at a time: what each shape of line says, and what a near miss must not.

The lines are the shapes users paste (tool output, logs, paths, banners, prompts, labels); each expects
(kind, value) mentions to be read, and each near miss names a kind that must stay unread.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wizard.parsers.mentions import read_mentions

pytestmark = pytest.mark.unit

READS = [
    ("  Name:                    amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", "gfx_rt", "gfx90a"),
    ("rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary_lazy_gfx1100.dat: No such file", "gfx_rt", "gfx1100"),
    ("MIOpen(HIP): Warning [SQLiteBase] Missing system database file: gfx1030_36.kdb Performance may degrade.", "gfx_rt", "gfx1030"),
    ("03:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Navi 31 [Radeon RX 7900 XT/7900 XTX] (rev c8)", "gpu_name", "Navi 31"),
    ("03:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Device 73bf (rev c1)", "pci_id", "1002:73bf"),
    ("0b:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Vega 10 XL/XT [Radeon RX Vega 56/64] (rev c3)", "gpu_name", "Vega 10 XL/XT"),
    ("[    3.120000] amdgpu 0000:03:00.0: amdgpu: SMU is initialized successfully!", "bdf", "0000:03:00.0"),
    ("Number of HIP devices: 2", "gpu_count", "2"),
    ("ROCm version: 6.2.0", "rocm", "6.2.0"),
    ("/opt/rocm-6.1.3/lib/libamdhip64.so", "rocm", "6.1.3"),
    ("ii  rocm-core  6.2.0.60200-66~22.04  amd64  Radeon Open Compute (ROCm) runtime", "rocm", "6.2.0"),
    ("rocm-hip-runtime 6.0.2-1", "rocm", "6.0.2"),
    ("HIP version: 6.2.41133-dd7f95766", "hip", "6.2.41133-dd7f95766"),
    ("AMD clang version 17.0.0 (https://github.com/RadeonOpenCompute/llvm-project roc-6.2.0 24292 26466ce804ac523b)", "rocm", "6.2.0"),
    ("/long_pathname_so_that_rpms_can_package_the_debug_info/src/external/hip/rocm-rel-6.1/hipamd/src/hip_code_object.cpp", "rocm", "6.1"),
    ("PyTorch version: 2.4.1+rocm6.1", "torch", "2.4.1+rocm6.1"),
    ("Successfully installed torch-2.5.1+rocm6.2", "torch", "2.5.1+rocm6.2"),
    ("/home/u/venv/lib/python3.10/site-packages/torch/__init__.py", "python_version", "3.10"),
    ("export HSA_OVERRIDE_GFX_VERSION=10.3.0", "env", "HSA_OVERRIDE_GFX_VERSION=10.3.0"),
    ("HSA_OVERRIDE_GFX_VERSION=11.0.0 python main.py", "env", "HSA_OVERRIDE_GFX_VERSION=11.0.0"),
    ('level=INFO source=routes.go msg="server config" env="map[HIP_VISIBLE_DEVICES:0 HSA_OVERRIDE_GFX_VERSION:10.3.0]"',
     "env", "HSA_OVERRIDE_GFX_VERSION=10.3.0"),
    ("Python platform: Linux-6.8.0-55-generic-x86_64-with-glibc2.35", "kernel", "6.8.0-55-generic"),
    # a thread's title about the container it runs failing (invoke-ai/InvokeAI's bug reports)
    ("# [bug]: ROCM Docker container not using AMD GPU", "container", "true"),
    ("# [bug]: invoke-rocm container doesn't support gpus", "container", "true"),
    # a thread's title saying where the problem happens, by target (ROCm/TheRock#2595's title)
    ("# [Issue]: llama.cpp segmentation fault during model load on gfx1151 with TheRock dev tarball", "gfx_rt", "gfx1151"),
    ("# [Issue]: rocBLAS crash on Strix Halo (gfx1151)", "gfx_rt", "gfx1151"),
    # uname -a typed over with commas in an issue template (mudler/LocalAI#1286's environment line)
    ("Linux desktop 6.5.0-pf5, SMP PREEMPT_DYNAMIC, x86_64 AMD Ryzen 9 5900X, AMD 7900XTX, gentoo", "kernel", "6.5.0-pf5"),
    ("Linux box 6.8.0-49-generic #49-Ubuntu SMP PREEMPT_DYNAMIC Thu Nov  7 x86_64 GNU/Linux", "kernel", "6.8.0-49-generic"),
    # a RHEL kernel release whose build number has several parts (4.18.0-348.12.2.el8_5), in a tool's csv row
    ("cardsystem,4.18.0-348.12.2.el8_5.x86_64", "kernel", "4.18.0-348.12.2.el8_5.x86_64"),
    # a version at the end of a sentence, and /dev/kfd said to be there
    ("- System ROCm: 7.14.0.", "rocm", "7.14.0"),
    ("GPU: Radeon 8060S (gfx1151, device ID 0x1586)", "pci_id", "1002:1586"),
    ("Out[2]: '2.2.0.dev20231010+rocm5.7'", "torch", "2.2.0.dev20231010+rocm5.7"),
    ("14:44:16-622504 INFO     Torch 2.3.0+rocm6.0", "torch", "2.3.0+rocm6.0"),
    ("Segfault on Strix Halo since the nightly", "gpu_prose", "Strix Halo"),
    ("AMD Raven Ridge APU 2700u Fedora 31 x64", "gpu_prose", "Raven Ridge"),
    ("I get a `hipErrorNoBinaryForGpu` error when trying the example command inside the container:", "container", "true"),
    ("GPU：    83:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Navi 22 [Radeon RX 6700/6700 XT] (rev c1)",
     "bdf", "0000:83:00.0"),
    ("    Device: AMD Radeon VII (vega20, LLVM 15.0.7, DRM 3.53, 5.15.0-78-generic) (0x66af)", "pci_id", "1002:66af"),
    ("- Kernel: `6.14.0-1019-oem` (in-kernel `amdgpu`/`amdkfd`, no amdgpu-dkms), `/dev/kfd` present.", "kfd", "present"),
    # the device's full target id (both feature settings) stated in prose
    ("The device ISA for my local system is `gfx90a:sramecc+:xnack-` and the empty kpack is picked up.", "gfx_rt", "gfx90a"),
    ("Linux DESKTOP-1 5.15.153.1-microsoft-standard-WSL2 #1 SMP x86_64 GNU/Linux", "wsl", "true"),
    ("ROCk module is loaded", "rock", "true"),
    ("Unable to open /dev/kfd read-write: Permission denied", "kfd", "Permission denied"),
    ("Unable to open /dev/kfd read-write: Cannot allocate memory", "kfd", "Cannot allocate memory"),
    ("[    4.2] kfd kfd: amdgpu: added device 1002:744c", "kfd_added", "1002:744c"),
    ("root@3f2a9c1b7d4e:/# rocminfo", "container", "true"),
    ("user@host:~$ groups", "user", "user"),
    ("amdgpu/6.8.5-2009582.22.04, 6.8.0-45-generic, x86_64: installed", "dkms", "6.8.5-2009582.22.04"),
    ("GPU: AMD Radeon 8060S", "gpu_name", "AMD Radeon 8060S"),
    ("OS: Ubuntu 24.04.1 LTS", "os", "ubuntu 24.04"),
    ("ROCM used to build PyTorch: 6.3.42131-fa1d09cbd", "hip", "6.3.42131-fa1d09cbd"),
    ("sudo apt install ./amdgpu-install_6.1.60103-1_all.deb", "rocm", "6.1.3"),
    ("  Device Name                                     gfx1100", "gfx_rt", "gfx1100"),
    ("_CudaDeviceProperties(name='AMD Radeon RX 7900 XTX', major=11, minor=0, gcnArchName='gfx1100', total_memory=24560MB)",
     "gfx_rt", "gfx1100"),
    ("[    2.581] [drm] initializing kernel modesetting (IP DISCOVERY 0x1002:0x744C 0x1EAE:0x7905 0xC8).", "pci_id", "1002:744c"),
    ("[drm] initializing kernel modesetting (NAVI10 0x1002:0x731F 0x1DA2:0xE410 0xC1).", "gpu_name", "Navi10"),
    ("  System:    Kernel: 6.11.5-arch1-1 arch: x86_64 bits: 64 Desktop: KDE Plasma Distro: Arch Linux", "kernel", "6.11.5-arch1-1"),
    ('msg="inference compute" id=0 library=rocm variant="" compute=gfx1031 driver=6.8 name=1002:73df total="12.0 GiB"',
     "gfx_rt", "gfx1031"),
    ("  Device 0: AMD Radeon RX 7900 XTX, gfx1100 (0x1100), VMM: no, Wave Size: 32", "gfx_rt", "gfx1100"),
    ("ggml_cuda_init: found 2 ROCm devices:", "gpu_count", "2"),
    ("GPU[0]\t\t: GFX Version: \t\tgfx1100", "gfx_hw", "gfx1100"),
    ("im using arch and installed rocm with AUR like this", "os", "arch"),
    ("card1,Arcturus GL-XL [AMD Instinct MI100],0x0c34,Advanced Micro Devices Inc. [AMD/ATI],D34316", "gpu_index", "1"),
    ("card1,Arcturus GL-XL [AMD Instinct MI100],0x0c34,Advanced Micro Devices Inc. [AMD/ATI],D34316", "gpu_name", "AMD Instinct MI100"),
    ("GPU[1]\t\t: Card series:\t\tNavi 31 [Radeon RX 7900 XT/7900 XTX]", "gpu_index", "1"),
    # sglang's check_env names the listed GPUs at once
    ("GPU 0,1,2,3,4,5,6,7: AMD Instinct MI300X", "gpu_count", "8"),
    ("GPU 0,1,2,3,4,5,6,7: AMD Instinct MI300X", "gpu_name", "AMD Instinct MI300X"),
    # a ROCm package version whose build code states the release (apt show, prose)
    ("ROCM is at 4.2.0.40200-21", "rocm", "4.2.0"),
    ("amdgpu              21188608  50", "rock", "true"),
    ("\tKernel driver in use: amdgpu", "rock", "true"),
    ('    "torch_version": "2.1.2+rocm5.6",', "torch", "2.1.2+rocm5.6"),
    ("  --index-url=https://rocm.nightlies.amd.com/v2-staging/gfx1151 \\", "gfx_rt", "gfx1151"),
    ("[    2.562957] kfd kfd: skipped device 1002:67c4, PCI rejects atomics", "kfd_probe", "1002:67c4"),
]

NEAR_MISSES = [
    ("It should work inside a docker container as well.", "container"),
    # a title about containers in general, or asking
    ("# How do I run the container on an AMD GPU", "container"),
    ("# Container fails to start?", "container"),
    # a title asking, or about a target's support, names no machine's GPU by "on gfx..."
    ("# Please enable the wheels on gfx1151?", "gfx_rt"),
    ("# [Feature]: add kernels for Strix Halo (gfx1151)", "gfx_rt"),
    # prose that starts with "Linux" and a version is no uname line
    ("Linux users 6.5.0 and later, see the notes.", "kernel"),
    ("I am not running it in a container.", "container"),
    ("Torch 2.3.0 release notes mention ROCm", "torch"),
    ("00:1f.3 Audio device: Intel Corporation Cannon Lake PCH cAVS (rev 10)", "bdf"),
    # glxinfo's vendor line carries the vendor's id, not a device's
    ("    Vendor: AMD (0x1002)", "pci_id"),
    # a code-object file named for one feature setting is a build's target, not the device's
    ("- torch_gfx90a:xnack-.kpack : 171 KB -> Empty", "gfx_rt"),
    # a distribution the writer says was not tried is not the machine's
    ("I haven't confirmed for RHEL or other dnf based distros on whether they have `rocm-hip-runtime`.", "os"),
    # a gfx named in advice or in a list of supported targets is not this machine's
    ("ROCm 6.2 supports gfx1030, gfx1100 and gfx90a", "gfx_rt"),
    ("Try export HSA_OVERRIDE_GFX_VERSION=10.3.0", "env"),
    ("you could set HSA_OVERRIDE_GFX_VERSION=10.3.0 if you want", "env"),
    # a kernel DKMS built for is installed, not running
    ("amdgpu/6.8.5-2009582.22.04, 6.8.0-45-generic, x86_64: installed", "kernel"),
    ("linux-headers-6.5.0-35-generic is already the newest version", "kernel"),
    ("ROCk module is NOT loaded, possibly no GPU devices", "kfd"),
    ("I read the ROCm docs for 2 hours", "rocm"),
    ("torch is installed", "torch"),
    ("HIP error: invalid device function", "gfx_rt"),
    # the HIP release torch was built with is not torch's own version
    ("ROCM used to build PyTorch: 6.3.42131-fa1d09cbd", "torch"),
    # ComfyUI's "ROCm version" is torch's HIP major.minor, not the system's ROCm
    ("ROCm version: (6, 3)", "rocm"),
    ("running arch x86_64 with 16 cores", "os"),
    # amdgpu-dkms carries the kernel driver's version before the ROCm build code: no release is stated
    ("amdgpu-dkms 1:6.10.5.60204-2187269.22.04", "rocm"),
    ("amdxcp                 12288  1 amdgpu", "rock"),
    ("\tKernel driver in use: vfio-pci", "rock"),
    # a family index names no single target
    ("pip install --index-url https://rocm.nightlies.amd.com/v2/gfx110X-all/ torch", "gfx_rt"),
    ("GPU 0,1 Compute Capability: 9.4", "gpu_count"),
    ("kfd kfd: skipped device 1002:67c4, PCI rejects atomics", "kfd_probe"),  # no boot time: which probe is it?
]


@pytest.mark.parametrize("line, kind, value", READS, ids=[f"{k}:{v}" for _l, k, v in READS])
def test_line_states_a_fact(line: str, kind: str, value: str) -> None:
    got = [(m.kind, m.value) for m in read_mentions(line)]
    assert (kind, value) in got, got
    # the evidence is the line itself (markdown emphasis marks aside)
    assert all(m.line == 1 and m.text.replace("_", "").split() == line.replace("_", "").split() for m in read_mentions(line))


@pytest.mark.parametrize("line, kind", NEAR_MISSES, ids=[f"{k}:{i}" for i, (_l, k) in enumerate(NEAR_MISSES)])
def test_near_miss_states_nothing(line: str, kind: str) -> None:
    got = [(m.kind, m.value) for m in read_mentions(line)]
    assert all(k != kind for k, _v in got), got


def test_line_numbers_follow_the_text() -> None:
    text = "intro\n\nROCm version: 6.2.0\nPyTorch version: 2.4.1+rocm6.1\n"
    got = {(m.kind, m.line) for m in read_mentions(text)}
    assert ("rocm", 3) in got and ("torch", 4) in got


@pytest.mark.parametrize("junk", ["", "\x00\x01", "é" * 5000, "gfx" * 3000, "\n" * 10000, None, 42, b"gfx1030"])
def test_odd_input_never_raises(junk: object) -> None:
    read_mentions(junk)


def test_kfd_probes_at_two_boot_times_are_two_gpus() -> None:
    from wizard.model import EvidenceText
    from wizard.probes.secondary import collect, _gpu_count

    log = ("[    2.562957] kfd kfd: skipped device 1002:67c4, PCI rejects atomics\n"
           "[    3.359595] kfd kfd: skipped device 1002:67c4, PCI rejects atomics\n"
           "[    3.359595] kfd kfd: skipped device 1002:67c4, PCI rejects atomics\n")  # the same line pasted twice
    assert _gpu_count(collect([EvidenceText("dmesg.txt", log, 1, "dmesg.txt", True)]))[0] == 2


def test_ubuntu_version_string_answers_the_os_field() -> None:
    """An issue template's "Operating System" answered with os-release's VERSION alone (no distribution name)."""
    text = "### Operating System\n\n22.04.5 LTS (Jammy Jellyfish)\n"
    assert ("os", "ubuntu 22.04") in {(m.kind, m.value) for m in read_mentions(text)}
    assert not [m for m in read_mentions("### Operating System\n\n21.3 (Virginia)\n") if m.kind == "os"]


def test_a_derivative_named_beside_its_base_is_the_machine() -> None:
    from wizard.model import EvidenceText, Facts
    from wizard.probes.secondary import _os, collect

    text = "I used manjaro 25.0.6 (may also work for archlinux) and installed from the archlinux repo.\n"
    said = collect([EvidenceText("issue.txt", text, 1, "issue.txt", True)])
    assert _os(Facts(), said, []).id == "manjaro"
    both = collect([EvidenceText("issue.txt", "Fedora 40 here, and Ubuntu 22.04 on the other disk\n", 1, "issue.txt", True)])
    assert _os(Facts(), both, []).id is None


def test_template_rocm_field_outranks_versions_in_prose() -> None:
    """The "### ROCm Version" answer is the machine's release; a title's "rocm 6.2" or "I previously used rocm 6.1"
    is not preferred over it."""
    from wizard.model import EvidenceText, Facts
    from wizard.probes.secondary import _rocm, collect

    text = "# Ubuntu 24.04.1 incompatibility with rocm 6.2\n\nI previously used rocm 6.1 before.\n\n### ROCm Version\n\nROCm 6.2.0\n"
    said = collect([EvidenceText("issue.txt", text, 1, "issue.txt", True)])
    assert _rocm(Facts(), said, []).version == "6.2.0"


def test_title_under_a_labels_line_names_the_gpu() -> None:
    """A stored thread's header (repository line, then its labels) puts the title on line 3: the GPU the title names
    is the machine's even when the body names another (here, the one an override pretends to be)."""
    from wizard.kb import load_kb
    from wizard.model import EvidenceText
    from wizard.probes.secondary import _prose_device, collect

    texts = [EvidenceText("paste.txt", "# [bug] HSA_OVERRIDE_GFX_VERSION=9.0.0 breaks GPU detection (Strix Halo)", 3, "text", True),
             EvidenceText("paste.txt", "The test hardcodes the override, which makes the runtime treat it as an MI210.", 6,
                          "text", True)]
    device = _prose_device(collect(texts), load_kb())
    assert device is not None and device.gfx == {"gfx1151"}


@pytest.mark.parametrize(("text", "kind"), [
    ("Driver | in-kernel (inbox) amdgpu driver (not amdgpu-dkms), linux-firmware 20260519 |", "in-tree"),
    ("I run the in-tree amdgpu module of kernel 6.14.", "in-tree"),
    ("I installed it without amdgpu-dkms: rocminfo still fails", None),
    ("I removed amdgpu-dkms, now on the in-kernel (inbox) amdgpu driver", "in-tree"),
    ("After purging amdgpu-dkms rocminfo still fails", None),
    # the package removed by its package manager, or said removed with its article: no DKMS install either
    ("sudo apt remove amdgpu-dkms\nrocminfo still fails", None),
    ("sudo apt-get remove --purge amdgpu-dkms\nrocminfo still fails", None),
    ("sudo dnf remove -y rocm-hip amdgpu-dkms\nrocminfo still fails", None),
    ("I removed the amdgpu-dkms package, rocminfo still fails", None),
    # near misses: removed in one command, installed in the next; another package removed before its install
    ("sudo apt purge rocm-hip && sudo apt install amdgpu-dkms\nrocminfo still fails", "dkms"),
    ("I removed rocm and installed amdgpu-dkms, rocminfo still fails", "dkms"),
    # near misses: the package named as installed is the DKMS build
    ("sudo apt install amdgpu-dkms\nrocminfo still fails", "dkms"),
    ("amdgpu/6.10.5-2084815.24.04, 6.8.0-48-generic, x86_64: installed", "dkms"),
])
def test_the_driver_kind_said_in_words_and_a_negated_package(tmp_path: Path, text: str, kind: str | None) -> None:
    from reading_helpers import detect_paste

    assert detect_paste(tmp_path, text).driver.kind == kind


@pytest.mark.parametrize(("text", "os_id"), [
    ("hsa api call failure at: /var/tmp/portage/dev-util/rocminfo-2.7.0/work/rocminfo-roc-2.7.0/rocminfo.cc:1102",
     "gentoo"),
    # near misses: the directory named without a package's work tree, or another distribution's build root
    ("I set PORTAGE_TMPDIR=/var/tmp/portage to build it", None),
    ("/home/user/rpmbuild/BUILD/rocminfo-5.7.1/rocminfo.cc:1102", None),
])
def test_a_portage_build_path_is_gentoos_package(tmp_path: Path, text: str, os_id: str | None) -> None:
    from reading_helpers import detect_paste

    assert detect_paste(tmp_path, text).os.id == os_id


@pytest.mark.parametrize(("text", "inside"), [
    ("the docker image I use:\n```\ndocker pull rocm/pytorch:rocm5.1.1_ubuntu20.04_py3.7_pytorch_1.9.0\n```", True),
    ("My podman image that we run is rocm/dev-ubuntu-22.04.", True),
    # near misses: an image advised, one not used, one tried once
    ("the docker image you should use is rocm/pytorch:latest", None),
    ("the docker image I use is not the problem, the host is", None),
    ("the docker image I tried: rocm/pytorch:latest", None),
])
def test_the_image_named_as_the_one_the_writer_uses(tmp_path: Path, text: str, inside: bool | None) -> None:
    from reading_helpers import detect_paste

    assert detect_paste(tmp_path, text).in_container is inside


@pytest.mark.parametrize(("text", "torch"), [
    ("| PyTorch |\n2.11.0+rocm7.2 (torch.version.hip = 7.2.26015) |", "2.11.0+rocm7.2"),
    # near misses: torchvision's +rocm version beside nothing of torch's, a version and a hip value not together
    ("torchvision 0.26.0+rocm7.2", None),
    ("2.11.0+rocm7.2 was the wheel; torch.version.hip = 7.2.26015 printed later", None),
])
def test_a_rocm_torch_version_with_its_own_hip_beside_it(text: str, torch: str | None) -> None:
    found = [m.value for m in read_mentions(text) if m.kind == "torch"]
    assert found == ([torch] if torch else []), found


def test_a_torch_companion_pinned_beside_torch_version_hip_is_not_torch() -> None:
    """Left by helper V3: only torch's own version takes 'torch with its hip'; a pin of torchvision, torchaudio or
    triton before the same parenthesis is theirs."""
    for other in ("torchvision==0.26.0+rocm7.2", "torchaudio==2.11.0+rocm7.2", "pytorch-triton-rocm==3.5.0+rocm7.2"):
        text = f"{other} (torch.version.hip = 7.2.26015)"
        assert [m.value for m in read_mentions(text) if m.kind == "torch"] == [], other
    # near miss: torch's own pin keeps it
    assert [m.value for m in read_mentions("torch==2.11.0+rocm7.2 (torch.version.hip = 7.2.26015)")
            if m.kind == "torch"] == ["2.11.0+rocm7.2"]
