"""Sandbox profiles: machines built as root trees on first use of a sandbox directory.

PCI ids and names: pciutils/pciids, pci.ids at commit c1c12547d626ebf05fd0223144ad87fab5e95d06
(https://github.com/pciutils/pciids/blob/c1c12547d626ebf05fd0223144ad87fab5e95d06/pci.ids):
1002:744c Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M], 1002:731f Navi 10 [Radeon RX 5600 OEM/5600 XT /
5700/5700 XT], 1002:7550 Navi 48 [Radeon RX 9070/9070 XT/9070 GRE], 1002:1586 Strix Halo [Radeon Graphics /
Radeon 8050S Graphics / Radeon 8060S Graphics], 1002:74a1 Aqua Vanjaram [Instinct MI300X].
gfx targets are the KFD ``gfx_target_version`` encoding (major*10000 + minor*100 + stepping).
Versions in dpkg's status that AMD's repository would carry are marked ``-sandbox``: the build
suffixes of real packages are not known here and are not made up. No kernel version is recorded.
"""

from __future__ import annotations

from wizard.record import field, record

TYPE_CHECKING = False  # typing's, not imported at run time (wizard/record.py says why)
if TYPE_CHECKING:
    from pathlib import Path




@record
class GpuSpec:
    bdf: str
    device: str  # PCI device id (vendor 1002)
    gfx_target_version: int
    integrated: bool = False


@record
class Profile:
    name: str
    description: str
    os_release: tuple[tuple[str, str], ...]
    codename: str | None
    python: str  # the system python's major.minor
    gpus: tuple[GpuSpec, ...]
    rocm: str | None = None  # ROCm release installed through amdgpu-install
    dkms: bool = True
    venv: str | None = None
    venv_packages: tuple[tuple[str, str], ...] = ()
    user_groups: tuple[str, ...] = ()
    bashrc: str = ""
    secure_boot: bool = False
    package_manager: str = "apt"
    notes: tuple[str, ...] = field(default_factory=tuple)
    driver: bool = True  # the amdgpu kernel driver is loaded (/dev/kfd, KFD topology); False: a fresh install
    # real roots only: the Debian suite the root is ("bookworm", "trixie") and the packages of Debian's own
    # archive its starting stack holds, installed by real apt when the base is made (os_release stays Debian's)
    suite: str | None = None
    distro_packages: tuple[str, ...] = ()


@record
class MachineTree:
    """The kernel-side files of a profile's machine, as paths relative to its root: the GPUs' PCI
    sysfs entries and KFD topology, /dev/kfd and render nodes (plain files), the Secure Boot EFI
    variable. Read-only data; the sandbox and the real root both lay it."""
    files: tuple[tuple[str, bytes], ...]
    dirs: tuple[str, ...]
    nodes: tuple[str, ...]  # device nodes, laid as empty plain files

    def lay(self, root: Path) -> list[Path]:
        """Write the tree under ``root`` (parents made as needed); returns the device nodes' paths."""
        for d in self.dirs:
            (root / d).mkdir(parents=True, exist_ok=True)
        for rel, data in self.files:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
        nodes = [root / rel for rel in self.nodes]
        for p in nodes:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("")
        return nodes


SECURE_BOOT_VAR = "sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"


def machine_tree(prof: Profile, *, driver: bool | None = None) -> MachineTree:
    """``driver`` (default: the profile's): lay what the loaded amdgpu driver shows (/dev/kfd, KFD topology,
    render nodes, /sys/module/amdgpu, the devices bound to it); without it only the PCI devices."""
    loaded = prof.driver if driver is None else driver
    if not loaded:
        files_pci: list[tuple[str, bytes]] = []
        for g in prof.gpus:
            base = f"sys/bus/pci/devices/{g.bdf}"
            files_pci += [(f"{base}/vendor", b"0x1002\n"), (f"{base}/device", f"0x{g.device}\n".encode()),
                          (f"{base}/class", b"0x030000\n" if not g.integrated else b"0x038000\n"),
                          (f"{base}/uevent", f"PCI_ID=1002:{g.device.upper()}\nPCI_SLOT_NAME={g.bdf}\n".encode())]
        files_pci.append((SECURE_BOOT_VAR, b"\x06\x00\x00\x00" + (b"\x01" if prof.secure_boot else b"\x00")))
        return MachineTree(tuple(files_pci), (), ())
    files: list[tuple[str, bytes]] = []
    nodes_dir = "sys/class/kfd/kfd/topology/nodes"
    files.append((f"{nodes_dir}/0/properties", b"cpu_cores_count 16\nsimd_count 0\ngfx_target_version 0\n"))
    dev_nodes = ["dev/kfd"]
    for i, g in enumerate(prof.gpus):
        base = f"sys/bus/pci/devices/{g.bdf}"
        files += [(f"{base}/vendor", b"0x1002\n"), (f"{base}/device", f"0x{g.device}\n".encode()),
                  (f"{base}/class", b"0x030000\n" if not g.integrated else b"0x038000\n"),
                  (f"{base}/uevent", f"DRIVER=amdgpu\nPCI_ID=1002:{g.device.upper()}\nPCI_SLOT_NAME={g.bdf}\n".encode())]
        minor = 128 + i
        dev_nodes.append(f"dev/dri/renderD{minor}")
        bus = int(g.bdf.split(":")[1], 16)
        files.append((f"{nodes_dir}/{i + 1}/properties",
                      f"cpu_cores_count 0\ngfx_target_version {g.gfx_target_version}\nvendor_id 4098\n"
                      f"device_id {int(g.device, 16)}\nlocation_id {bus << 8}\ndrm_render_minor {minor}\n".encode()))
    # efivarfs: 4 attribute bytes, then the value byte
    files.append((SECURE_BOOT_VAR, b"\x06\x00\x00\x00" + (b"\x01" if prof.secure_boot else b"\x00")))
    return MachineTree(tuple(files), ("sys/module/amdgpu", "dev/dri"), tuple(dev_nodes))


def _ubuntu(version: str, codename: str) -> tuple[tuple[str, str], ...]:
    return (("NAME", "Ubuntu"), ("VERSION_ID", version), ("ID", "ubuntu"), ("ID_LIKE", "debian"),
            ("VERSION_CODENAME", codename), ("UBUNTU_CODENAME", codename), ("PRETTY_NAME", f"Ubuntu {version} LTS"))


TORCH_251 = (("torch", "2.5.1+rocm6.2"), ("torchvision", "0.20.1+rocm6.2"), ("torchaudio", "2.5.1+rocm6.2"))

PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("seed-7900xt", "the notes' machine: two RX 7900 XT, Ubuntu 22.04, ROCm 6.2.0, torch 2.5.1+rocm6.2",
                _ubuntu("22.04", "jammy"), "jammy", "3.10",
                (GpuSpec("0000:03:00.0", "744c", 110000), GpuSpec("0000:0b:00.0", "744c", 110000)),
                rocm="6.2.0", venv="/home/user/pytorch_venv", venv_packages=TORCH_251, user_groups=("video", "render")),
        Profile("seed-5600xt", "RX 5600 XT, Ubuntu 24.04, ROCm 6.2.4, HSA_OVERRIDE_GFX_VERSION=10.3.0",
                _ubuntu("24.04", "noble"), "noble", "3.12", (GpuSpec("0000:03:00.0", "731f", 100100),),
                rocm="6.2.4", venv="/home/user/pytorch_venv", venv_packages=TORCH_251, user_groups=("video", "render"),
                bashrc="export HSA_OVERRIDE_GFX_VERSION=10.3.0\n"),
        Profile("rx9070xt-noble", "RX 9070 XT, Ubuntu 24.04, nothing installed yet", _ubuntu("24.04", "noble"),
                "noble", "3.12", (GpuSpec("0000:03:00.0", "7550", 120001),)),
        Profile("rx9070xt-noble-nodriver", "RX 9070 XT, Ubuntu 24.04, fresh: no amdgpu driver loaded, no /dev/kfd",
                _ubuntu("24.04", "noble"), "noble", "3.12", (GpuSpec("0000:03:00.0", "7550", 120001),), dkms=False,
                driver=False),
        Profile("strix-halo", "Strix Halo APU (Radeon 8060S class), Ubuntu 24.04, nothing installed yet",
                _ubuntu("24.04", "noble"), "noble", "3.12", (GpuSpec("0000:c3:00.0", "1586", 110501, integrated=True),),
                user_groups=("video",)),
        Profile("mi300x-rhel9", "Instinct MI300X pair, RHEL 9.4, nothing installed yet",
                (("NAME", "Red Hat Enterprise Linux"), ("VERSION_ID", "9.4"), ("ID", "rhel"), ("ID_LIKE", "fedora"),
                 ("PRETTY_NAME", "Red Hat Enterprise Linux 9.4 (Plow)")), None, "3.9",
                (GpuSpec("0000:05:00.0", "74a1", 90402), GpuSpec("0000:26:00.0", "74a1", 90402)),
                package_manager="dnf", user_groups=("video", "render")),
    )
}


# Profiles that exist only as real roots (``--root debian12|debian13``): their starting stack is Debian's own
# ROCm (and PyTorch) packages, installed by real apt from Debian's archive, which the stand-in sandbox does
# not model. Package names and versions as Debian's archive carries them (apt-cache policy, 2026-11-26):
# bookworm: libamdhip64-5 5.2.3, libhsa-runtime64-1 5.2.3, librocsparse0 5.3.0, rocminfo 5.2.3, rocm-smi 5.2.3;
# trixie: libamdhip64-5 5.7.1, libhsa-runtime64-1 6.1.2, librocblas0 5.5.1, rocminfo 6.1.2, rocm-smi 6.1.2,
# python3-torch 2.6.0. hipcc is left out (it pulls a whole clang); librocblas0 and librocsparse0 are the large
# real libraries (over 1 GB installed each).
DEBIAN12_ROCM = ("libamdhip64-5", "libhsa-runtime64-1", "librocsparse0", "rocminfo", "rocm-smi")
DEBIAN13_ROCM = ("libamdhip64-5", "libhsa-runtime64-1", "librocblas0", "rocminfo", "rocm-smi", "python3-torch")
_NAVI31 = (GpuSpec("0000:03:00.0", "744c", 110000),)
DISTRO_PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("debian12-distro-rocm", "RX 7900 XTX, Debian 12 with Debian's own ROCm 5.2 packages (real roots only)",
                (), "bookworm", "3.11", _NAVI31, user_groups=("video", "render"), suite="bookworm",
                distro_packages=DEBIAN12_ROCM),
        Profile("debian13-distro-rocm", "RX 7900 XTX, Debian 13 with Debian's HIP 5.7, rocBLAS 5.5, rocminfo 6.1 and "
                "python3-torch 2.6 (real roots only)", (), "trixie", "3.13", _NAVI31, user_groups=("video", "render"),
                suite="trixie", distro_packages=DEBIAN13_ROCM),
        Profile("debian13-mixed", "debian13-distro-rocm with AMD's ROCm 6.2.4 installed over it by amdgpu-install "
                "(real roots only)", (), "trixie", "3.13", _NAVI31, rocm="6.2.4", dkms=False,
                user_groups=("video", "render"), suite="trixie", distro_packages=DEBIAN13_ROCM),
    )
}


def find_profile(name: str) -> Profile | None:
    """A sandbox profile, or a real-root-only one."""
    return PROFILES.get(name) or DISTRO_PROFILES.get(name)
