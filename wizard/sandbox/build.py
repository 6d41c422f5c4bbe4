"""Builds a sandbox root from a profile (the first use of a sandbox directory)."""

from __future__ import annotations

import json

import uuid
from pathlib import Path

from wizard.sandbox import machine as m
from wizard.profiles import PROFILES, Profile, machine_tree
from wizard.sandbox.standins import HANDLERS, MAPPED_TOOLS, make_venv, standin_script
from wizard.sandbox.machine import package_files as pkgver_files


def refresh_standins(root: Path) -> None:
    """(Re)write the stand-in scripts: their interpreter line follows the wizard's Python."""
    bindir = root / m.SANDBOX_DIR / "bin"
    for tool in [*MAPPED_TOOLS, *HANDLERS]:
        if tool in ("venv-python",):
            continue
        p = bindir / tool
        text = standin_script(tool)
        if not p.is_file() or p.read_text() != text:
            m.atomic_write(p, text, 0o755)


def build(root: Path, name: str) -> None:
    prof = PROFILES[name]
    root.mkdir(parents=True, exist_ok=True)
    cfg: dict[str, object] = {"profile": name, "codename": prof.codename, "python": prof.python, "user": "user",
           "secure_boot": prof.secure_boot, "package_manager": prof.package_manager, "environment": {}}
    _os(root, prof)
    _gpus(root, prof)
    _users(root, prof)
    (root / "var/lib/dpkg/info").mkdir(parents=True, exist_ok=True)
    if prof.package_manager == "apt":
        m.write_dpkg_status(root, {})
        for lock in ("lock", "lock-frontend"):  # dpkg's lock files, as every Debian system has them
            m.atomic_write(root / "var/lib/dpkg" / lock, "", 0o640)
    else:
        m.atomic_write(root / "var/lib/rpm/.rpm.lock", "", 0o644)
    _system_python(root, prof)
    (root / "etc/apt/sources.list.d").mkdir(parents=True, exist_ok=True)
    (root / "proc/sys/kernel/random").mkdir(parents=True, exist_ok=True)
    m.atomic_write(root / "proc/sys/kernel/random/boot_id", str(uuid.uuid4()) + "\n")
    (root / "tmp").mkdir(exist_ok=True)
    m.atomic_write(root / m.SANDBOX_DIR / "machine.json", json.dumps(cfg, indent=1) + "\n")
    refresh_standins(root)
    if prof.rocm:
        _rocm(root, prof)
    if prof.venv:
        make_venv(root, prof.venv, prof.python)
        from wizard.sandbox.standins import _install, _site

        site = _site(root, prof.venv)
        for pkg, ver in prof.venv_packages:
            _install(site, pkg, ver)


def _os(root: Path, prof: Profile) -> None:
    text = "".join(f'{k}="{v}"\n' for k, v in prof.os_release)
    m.atomic_write(root / "etc/os-release", text)
    m.atomic_write(root / "etc/environment", 'PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"\n')


def _system_python(root: Path, prof: Profile) -> None:
    """/usr/bin/python3 -> python3.X and its library directory, as the distro lays them out (what a
    probe reads to know the system Python's version without running it)."""
    name = f"python{prof.python}"
    m.atomic_write(root / "usr/bin" / name, "", 0o755)
    link = root / "usr/bin/python3"
    if not link.is_symlink():
        link.symlink_to(name)
    lib = "lib64" if prof.package_manager == "dnf" else "lib"
    (root / "usr" / lib / name).mkdir(parents=True, exist_ok=True)
    m.atomic_write(root / "usr" / lib / name / "os.py", "# the sandbox's system Python (a stand-in answers for it)\n")


def _gpus(root: Path, prof: Profile) -> None:
    """The GPUs' sysfs/KFD tree, /dev nodes and the Secure Boot variable (profiles.machine_tree)."""
    machine_tree(prof).lay(root)


def _users(root: Path, prof: Profile) -> None:
    m.atomic_write(root / "etc/passwd", "root:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000:user:/home/user:/bin/bash\n")
    rows = [["root", "x", "0", ""], ["video", "x", "44", ""], ["render", "x", "110", ""], ["docker", "x", "999", ""],
            ["user", "x", "1000", ""]]
    for r in rows:
        if r[0] in prof.user_groups:
            r[3] = "user"
    m.write_groups(root, rows)
    home = root / "home/user"
    home.mkdir(parents=True, exist_ok=True)
    (root / "root").mkdir(exist_ok=True)
    m.atomic_write(home / ".bashrc", "# ~/.bashrc (sandbox)\n" + prof.bashrc)


def _rocm(root: Path, prof: Profile) -> None:
    rel = prof.rocm
    assert rel is not None and prof.codename
    ver = m.pkgver(rel)
    deb = root / "tmp" / f"amdgpu-install_{ver}-1_all.deb"
    m.atomic_write(deb, f"rocm-wizard sandbox package\nPackage: amdgpu-install\nVersion: {ver}-1\nRelease: {rel}\n"
                   f"Codename: {prof.codename}\n")
    from wizard.sandbox.standins import _install_deb

    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        _install_deb(root, str(deb))
    deb.unlink()
    avail = m.available(root)
    for n in [*m.ROCM_PACKAGES, *(["amdgpu-dkms"] if prof.dkms else [])]:
        files, links = pkgver_files(n, avail[n])
        m.install_package(root, n, avail[n], files, links)

