"""The sandbox machine's state, as its stand-in programs read and write it (all under ROOT).

* dpkg: ``var/lib/dpkg/status`` (deb822 paragraphs) and ``var/lib/dpkg/info/<pkg>.list`` (files).
* apt: ``etc/apt/sources.list.d/*.list``; what they offer is derived from the repository URLs.
* the boot id: ``proc/sys/kernel/random/boot_id`` (a reboot writes a new one).
* every stand-in call: ``.sandbox/calls.log`` (JSON lines).
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

TYPE_CHECKING = False  # typing's names for the type checker only: every stand-in call imports this module
if TYPE_CHECKING:
    from typing import Any

SANDBOX_DIR = ".sandbox"
ROCM_PACKAGES = ("rocm", "rocm-core", "rocm-hip-runtime", "hip-runtime-amd", "rocminfo", "rocm-smi-lib",
                 "rocm-language-runtime", "rocm-opencl-runtime")
BASE_PACKAGES = ("python3-venv", "python3-pip", "wget", "curl", "gnupg", "ca-certificates", "build-essential",
                 "docker.io", "mokutil", "dkms")


# The GPU's device nodes, as profiles.machine_tree lays them in the root (dev/kfd, dev/dri/renderD*): these are the
# sandbox machine's (mapped under ROOT, absent there when its driver is not loaded), the rest of /dev is the host's
# (/dev/null, /dev/fd/N, /dev/tty: what a script needs to run at all).
GPU_DEVICES = ("/dev/kfd", "/dev/dri")


def machine_path(path: str) -> str:
    """A path of the sandbox machine normalised as the machine reads it: ``..`` never climbs above its ``/``, and
    ``//x`` is ``/x``."""
    return "/" + os.path.normpath("/" + path.lstrip("/")).lstrip("/")


def gpu_device(path: str) -> bool:
    """``path`` (absolute) names one of the GPU's device nodes (:data:`GPU_DEVICES`) or something below them."""
    p = machine_path(path)
    return any(p == d or p.startswith(d + "/") for d in GPU_DEVICES)


def host_device(path: str) -> bool:
    """``path`` (absolute) is the host's /dev or below it, and not one of the GPU's nodes: it is left as it is."""
    p = machine_path(path)
    return (p == "/dev" or p.startswith("/dev/")) and not gpu_device(p)


class Escape(ValueError):
    """A path of the sandbox machine that would leave ROOT (``..`` past its top, or a link out of it)."""


def inside(root: Path, path: str) -> Path:
    """A path of the sandbox machine -> the real path under ROOT. The path is normalised first
    (``/home/../../x`` is the machine's ``/x``, as on a real one), and the directory it lands in must
    resolve inside ROOT (a symlinked directory pointing out of it is refused): :class:`Escape`."""
    r = str(root).rstrip("/") or "/"
    if "\0" in path:
        raise Escape(f"sandbox: a path with a NUL byte: {path!r}")
    if path == r or path.startswith(r + "/"):
        path = "/" + path[len(r):].lstrip("/")
    machine = machine_path(path)  # '..' cannot climb above the machine's /
    real = root / machine.lstrip("/") if machine != "/" else root
    check_within(root, real)
    return real


def within(root: Path, real: Path | str) -> bool:
    """``real`` is ROOT or below it, once every directory on its way is resolved (its last part is
    not followed: removing or replacing a link acts on the link)."""
    top = os.path.realpath(root)
    p = os.path.normpath(str(real))
    parent = os.path.realpath(os.path.dirname(p)) if p != os.path.normpath(str(root)) else top
    return parent == top or parent.startswith(top.rstrip("/") + "/") or os.path.realpath(p) == top


def check_within(root: Path, real: Path | str) -> None:
    if not within(root, real):
        raise Escape(f"sandbox: {real} is outside the sandbox {root}; nothing outside it is touched")


def atomic_write(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def record_call(root: Path, tool: str, argv: list[str]) -> None:
    p = root / SANDBOX_DIR / "calls.log"
    p.parent.mkdir(parents=True, exist_ok=True)
    with open(p, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"t": round(time.time(), 3), "tool": tool, "argv": argv}) + "\n")


SUDO_PASSWORD = "sudo-password"  # ROOT/.sandbox/<this>: its first line is the password sudo asks for
SUDO_TICKET = "sudo-ticket"  # written by a good password; valid for SUDO_TICKET_SECONDS (sudoers default)
SUDO_TICKET_SECONDS = 15 * 60


def sudo_password_required(root: Path) -> bool:
    """The sandbox machine's sudo asks for a password (otherwise it is passwordless)."""
    return (root / SANDBOX_DIR / SUDO_PASSWORD).is_file()


def config(root: Path) -> dict[str, Any]:
    try:
        data = json.loads((root / SANDBOX_DIR / "machine.json").read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


# ------------------------------------------------------------------------------ dpkg


def dpkg_status(root: Path) -> dict[str, dict[str, str]]:
    try:
        text = (root / "var/lib/dpkg/status").read_text(encoding="utf-8")
    except OSError:
        return {}
    out: dict[str, dict[str, str]] = {}
    for para in text.split("\n\n"):
        fields: dict[str, str] = {}
        for line in para.splitlines():
            if ":" in line and not line.startswith(" "):
                k, v = line.split(":", 1)
                fields[k.strip()] = v.strip()
        if "Package" in fields:
            out[fields["Package"]] = fields
    return out


def write_dpkg_status(root: Path, pkgs: dict[str, dict[str, str]]) -> None:
    paras = []
    for name in sorted(pkgs):
        f = pkgs[name]
        paras.append("\n".join(f"{k}: {v}" for k, v in f.items()))
    atomic_write(root / "var/lib/dpkg/status", "\n\n".join(paras) + ("\n" if paras else ""))


def installed(root: Path) -> dict[str, str]:
    return {n: f.get("Version", "") for n, f in dpkg_status(root).items() if "installed" in f.get("Status", "")}


def install_package(root: Path, name: str, version: str, files: dict[str, str] | None = None,
                    links: dict[str, str] | None = None) -> None:
    """Files first, then the .list, then the status entry (the order dpkg's own crash safety implies)."""
    listed = []
    for rel, content in (files or {}).items():
        p = inside(root, rel)
        atomic_write(p, content)
        listed.append(rel)
    for rel, target in (links or {}).items():
        p = inside(root, rel)
        p.parent.mkdir(parents=True, exist_ok=True)
        if p.is_symlink() or p.exists():
            p.unlink()
        os.symlink(target, p)
        listed.append(rel)
    info = root / "var/lib/dpkg/info" / f"{name}.list"
    atomic_write(info, "".join(f"{f}\n" for f in listed))
    pkgs = dpkg_status(root)
    pkgs[name] = {"Package": name, "Status": "install ok installed", "Architecture": "amd64", "Version": version}
    write_dpkg_status(root, pkgs)


def remove_package(root: Path, name: str) -> bool:
    pkgs = dpkg_status(root)
    if name not in pkgs:
        return False
    info = root / "var/lib/dpkg/info" / f"{name}.list"
    try:
        files = [f for f in info.read_text().splitlines() if f]
    except OSError:
        files = []
    for rel in files:
        p = inside(root, rel)
        if p.is_symlink() or p.is_file():
            p.unlink()
    for rel in files:  # empty directories left behind, deepest first
        d = inside(root, rel).parent
        while d != root and d.is_dir() and not any(d.iterdir()):
            d.rmdir()
            d = d.parent
    del pkgs[name]
    write_dpkg_status(root, pkgs)
    if info.exists():
        info.unlink()
    return True


# ------------------------------------------------------------------------------ apt


def apt_source_lines(root: Path) -> list[str]:
    out = []
    for p in sorted((root / "etc/apt/sources.list.d").glob("*.list")):
        for line in p.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                out.append(line.strip())
    return out


def pkgver(release: str) -> str:
    """AMD's package version for a release (knowledge base rule: 6.2.4 -> 6.2.60204, 7.2.1 -> 7.2.1.70201)."""
    parts = [int(x) for x in release.split(".")] + [0, 0]
    x, y, z = parts[:3]
    tag = f"{x}{y:02d}{z:02d}"
    if x >= 7 and z > 0:
        return f"{x}.{y}.{z}.{tag}"
    return f"{x}.{y}.{tag}"


def rocm_release_in_sources(root: Path) -> str | None:
    for line in apt_source_lines(root):
        m = re.search(r"repo\.radeon\.com/rocm/apt/([0-9][0-9.]*)", line)
        if m:
            return m.group(1)
    return None


def available(root: Path) -> dict[str, str]:
    """Package -> version that ``apt-get install`` would pick, from the configured sources."""
    out = {name: "sandbox" for name in BASE_PACKAGES}
    rel = rocm_release_in_sources(root)
    if rel:
        codename = config(root).get("codename", "")
        ver = f"{pkgver(rel)}-sandbox~{codename}"
        out.update({p: ver for p in ROCM_PACKAGES})
    for line in apt_source_lines(root):
        m = re.search(r"repo\.radeon\.com/amdgpu/([0-9][0-9.]*)/", line)
        if m:
            out["amdgpu-dkms"] = f"1:{m.group(1)}-sandbox"
    return out


def rocm_files(release: str) -> tuple[dict[str, str], dict[str, str]]:
    files = {f"/opt/rocm-{release}/.info/version": release + "\n"}
    links = {"/opt/rocm": f"rocm-{release}"}
    return files, links


def package_files(name: str, version: str) -> tuple[dict[str, str], dict[str, str]]:
    m = re.search(r"\.(\d)(\d\d)(\d\d)$", version.split("-")[0])
    if name == "rocm-core" and m:
        rel = f"{int(m.group(1))}.{int(m.group(2))}.{int(m.group(3))}"
        return rocm_files(rel)
    if name == "amdgpu-dkms":
        return {f"/var/lib/dkms/amdgpu/{version.split(':')[-1]}/source/dkms.conf": "PACKAGE_NAME=amdgpu\n"}, {}
    return {}, {}


# ------------------------------------------------------------------------------ boot, groups


def new_boot_id(root: Path) -> str:
    import uuid

    bid = str(uuid.uuid4())
    atomic_write(root / "proc/sys/kernel/random/boot_id", bid + "\n")
    return bid


def groups(root: Path) -> list[list[str]]:
    try:
        return [line.split(":") for line in (root / "etc/group").read_text().splitlines() if line]
    except OSError:
        return []


def write_groups(root: Path, rows: list[list[str]]) -> None:
    atomic_write(root / "etc/group", "".join(":".join(r) + "\n" for r in rows))

