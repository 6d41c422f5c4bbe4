"""A sandbox profile laid on a real Debian 12 root, its starting stack installed with the real tools.

:func:`build_root` makes DIR a real root for a profile (``wizard.profiles``: the data is not
repeated here): the base userland (unpacked from the cached tarball, or copied from an unpacked one),
the profile's GPU sysfs/KFD tree and device nodes (plain files, ``root:render`` 0660 as udev makes
them), its user (uid 1000, with home, groups and ``.bashrc``) made by the root's own ``useradd``,
``groupadd`` and ``usermod``, the stand-ins, and then the starting stack from the local mirror:
``wget`` of the amdgpu-install package, ``apt-get install`` of it, ``apt-get update``,
``amdgpu-install -y --usecase=rocm [--no-dkms]``, and the profile's venv made by ``python3 -m venv`` with
``pip install --index-url`` of the mirror's copy of the wheel index, as the user.

The root IS Debian 12: ``/etc/os-release`` stays Debian's own whatever the profile claims
(``.realroot/machine.json`` records the claim), its python3 is Debian's 3.11, and AMD's packages come
from the ``jammy`` repositories, which is how AMD supports Debian 12 (audit-2026-11.md: "Debian 12 uses
the ubuntu/jammy amdgpu-install"). Debian's archive lines are removed from ``sources.list`` and names
resolve from ``/etc/hosts`` only (:func:`offline`): a rehearsal installs from the mirror on 127.0.0.1 and
never reaches an upstream host.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Mapping, Sequence

from wizard.kb import KnowledgeBase, load_kb
from wizard.mirror import catalogue as cat
from wizard.mirror.build import mirror_config
from wizard.realroot import base as rb
from wizard.realroot import enter, standins
from wizard.realroot.base import RealRootError
from wizard.profiles import DISTRO_PROFILES, PROFILES, Profile, find_profile, machine_tree
from wizard.record import field, record

USER = enter.User("user", "/home/user")
AMD_CODENAME = "jammy"  # AMD's packages for Debian 12
# the Debian suites a real root can be (--root KIND): (suite, the Ubuntu codename whose AMD packages it installs).
# Debian 13: noble's, the rehearsal's own choice (glibc 2.41 runs 24.04's binaries), not an AMD statement.
SUITES = {"debian12": ("bookworm", "jammy"), "debian13": ("trixie", "noble")}
USERLAND = {"bookworm": "Debian 12 (bookworm)", "trixie": "Debian 13 (trixie)"}


def kind_of(prof: Profile, kind: str | None) -> str:
    """The --root KIND for ``prof``: a distro profile's own suite, else ``kind`` (default debian12); a KIND
    that contradicts the profile's suite is refused."""
    own = next((k for k, (suite, _) in SUITES.items() if suite == prof.suite), None)
    if own and kind and kind != own:
        raise RealRootError(f"profile {prof.name} is a {own} root (Debian's own packages of {prof.suite}); "
                            f"--root {kind} cannot hold it")
    return own or kind or "debian12"


def base_spec(prof: Profile, kind: str) -> rb.BaseSpec:
    """The base tarball of ``prof`` on ``kind``: the rehearsal's packages and the profile's Debian packages
    (installed by mmdebstrap's real apt from Debian's archive, cached like every base)."""
    return rb.BaseSpec(suite=SUITES[kind][0], packages=rb.PACKAGES + prof.distro_packages)
USER_UID = 1000
DEBIAN_SOURCES = "# rocm-wizard rehearsal root: Debian's archive is not used; packages come from the local mirror\n"
NONINTERACTIVE = {"DEBIAN_FRONTEND": "noninteractive"}


class StepFailed(RealRootError):
    """A command inside the root failed while building it; one line with its last output."""


@record
class RealRoot:
    path: Path
    profile: str
    mirror_url: str  # the rehearsal mirror's base URL ("http://127.0.0.1:PORT")
    user: enter.User = USER
    timings: Mapping[str, float] = field(default_factory=dict, compare=False)
    kind: str = "debian12"  # what --root built it as

    @property
    def amd_codename(self) -> str:
        return SUITES.get(self.kind, SUITES["debian12"])[1]

    def argv(self, argv: Sequence[str], *, as_user: bool = False, env: Mapping[str, str] | None = None,
             cwd: str | None = None) -> list[str]:
        """The host argv running ``argv`` in this root (see :func:`wizard.realroot.enter.enter_argv`)."""
        return enter.enter_argv(self.path, argv, user=self.user if as_user else enter.ROOT_USER, env=env, cwd=cwd)

    def run(self, argv: Sequence[str], *, as_user: bool = False, env: Mapping[str, str] | None = None,
            cwd: str | None = None, timeout: float = 600.0, check: bool = False,
            input: str | None = None) -> subprocess.CompletedProcess[str]:
        proc = enter.run(self.path, argv, user=self.user if as_user else enter.ROOT_USER, env=env, cwd=cwd,
                         timeout=timeout, input=input)
        if check and proc.returncode != 0:
            raise StepFailed(failure(argv, proc))
        return proc

    def boot_id(self) -> str:
        return enter.boot_id(self.path)


def failure(argv: Sequence[str], proc: subprocess.CompletedProcess[str]) -> str:
    tail = [ln for ln in (proc.stderr + "\n" + proc.stdout).splitlines() if ln.strip()][-2:]
    return f"{' '.join(argv)}: exit {proc.returncode}: {' | '.join(tail) or 'no output'}"


def open_root(directory: Path) -> RealRoot:
    """A root built before (its .realroot/machine.json)."""
    try:
        data = json.loads((directory / enter.STATE / "machine.json").read_text())
    except (OSError, ValueError):
        raise RealRootError(f"{directory}: not a real root (no readable .realroot/machine.json)") from None
    return RealRoot(directory.absolute(), data["profile"], data["mirror"], kind=str(data.get("kind", "debian12")))


def build_root(directory: Path, profile: str, mirror_url: str, *, kb: KnowledgeBase | None = None,
               base: rb.BaseSpec | None = None, from_root: Path | None = None, install_stack: bool = True,
               log: Path | None = None, kind: str | None = None) -> RealRoot:
    """Make ``directory`` a real root for ``profile`` whose packages come from the mirror at ``mirror_url``.

    ``from_root``: an unpacked base to copy (a test session's) instead of unpacking the cached tarball.
    """
    rb.require_host()
    prof = find_profile(profile)
    if prof is None:
        raise RealRootError(f"unknown profile {profile!r} "
                            f"(profiles: {', '.join(sorted([*PROFILES, *DISTRO_PROFILES]))})")
    kind = kind_of(prof, kind)
    base = base or base_spec(prof, kind)
    directory = directory.absolute()
    timings: dict[str, float] = {}
    t = time.monotonic()
    if from_root is not None:
        rb.copy(from_root, directory)
        timings["copy base"] = time.monotonic() - t
    else:
        tar = rb.ensure_base(base, log=log)
        if tar.built:
            timings["build base"] = tar.seconds
        t = time.monotonic()
        rb.unpack(tar.path, directory)
        timings["unpack base"] = time.monotonic() - t
    t = time.monotonic()
    root = RealRoot(directory, profile, mirror_url.rstrip("/"), USER, timings, kind)
    lay_profile(root, prof)
    timings["lay profile"] = time.monotonic() - t
    if install_stack:
        install_starting_stack(root, prof, kb or load_kb(), timings)
    return root


def lay_profile(root: RealRoot, prof: Profile) -> None:
    d = root.path
    enter.prepare(d)
    (d / "etc/apt/sources.list").write_text(DEBIAN_SOURCES)
    offline(d)
    standins.install(d)
    nodes = machine_tree(prof).lay(d)
    root.run(["groupadd", "--system", "-f", "render"], check=True)
    render_gid = _gid(d, "render")
    for p in nodes:
        os.chown(p, 0, render_gid)
        os.chmod(p, 0o660)
    if not prof.driver:
        loaded = machine_tree(prof, driver=True)
        standins.record_driver_tree(d, loaded.files, loaded.dirs, loaded.nodes)
    root.run(["useradd", "--create-home", "--uid", str(USER_UID), "--user-group", "--shell", "/bin/bash",
              root.user.name], check=True)
    if prof.user_groups:
        root.run(["usermod", "--append", "--groups", ",".join(prof.user_groups), root.user.name], check=True)
    if prof.bashrc:
        with open(d / "home/user/.bashrc", "a", encoding="utf-8") as fh:
            fh.write(prof.bashrc)
    claims = dict(prof.os_release)
    (d / enter.STATE / "machine.json").write_text(json.dumps({
        "profile": prof.name, "user": root.user.name, "mirror": root.mirror_url,
        "kind": root.kind, "userland": USERLAND[SUITES[root.kind][0]], "amd_codename": root.amd_codename,
        "distro_packages": list(prof.distro_packages),
        "profile_claims": {"os_release": claims, "python": prof.python, "codename": prof.codename},
    }, indent=1) + "\n")


def offline(d: Path) -> None:
    """No name resolves inside the root but /etc/hosts' own (no DNS, and no host resolv.conf copied in by
    mmdebstrap): the rehearsal reaches its mirror by address and no upstream host at all."""
    nss = d / "etc/nsswitch.conf"
    lines = nss.read_text().splitlines() if nss.exists() else []
    lines = [ln for ln in lines if not ln.startswith("hosts:")] + ["hosts:          files"]
    nss.write_text("\n".join(lines) + "\n")
    resolv = d / "etc/resolv.conf"
    if resolv.is_symlink() or resolv.exists():
        resolv.unlink()


def _gid(root: Path, group: str) -> int:
    for line in (root / "etc/group").read_text().splitlines():
        parts = line.split(":")
        if parts[0] == group:
            return int(parts[2])
    raise RealRootError(f"group {group} not found in {root}/etc/group")


def install_starting_stack(root: RealRoot, prof: Profile, kb: KnowledgeBase,
                           timings: dict[str, float] | None = None) -> None:
    """The profile's ROCm (through amdgpu-install, as its user did) and its venv (through pip)."""
    timings = {} if timings is None else timings
    cfg = mirror_config(root.mirror_url)
    if prof.rocm:
        t = time.monotonic()
        rel = cat.legacy_release(kb, prof.rocm, root.amd_codename)
        deb = f"/var/cache/rocm-wizard-rehearsal/{rel.install_url.rsplit('/', 1)[-1]}"
        root.run(["mkdir", "-p", "/var/cache/rocm-wizard-rehearsal"], check=True)
        root.run(["wget", "-q", "-O", deb, cfg.rewrite(rel.install_url)], check=True)
        root.run(["apt-get", "install", "-y", deb], env=NONINTERACTIVE, check=True, timeout=1800)
        root.run(["apt-get", "update"], env=NONINTERACTIVE, check=True, timeout=1800)
        args = ["amdgpu-install", "-y", "--usecase=rocm"] + ([] if prof.dkms else ["--no-dkms"])
        root.run(args, env=NONINTERACTIVE, check=True, timeout=3600)
        timings["install ROCm"] = time.monotonic() - t
    if prof.venv:
        t = time.monotonic()
        root.run(["python3", "-m", "venv", prof.venv], as_user=True, check=True)
        reqs = [f"{name}=={version}" for name, version in prof.venv_packages]
        indexes = {v.partition("+")[2] for _, v in prof.venv_packages if "+" in v}
        if reqs:
            if len(indexes) != 1:
                raise RealRootError(f"profile {prof.name}: venv packages name {len(indexes)} wheel indexes; "
                                    "one is needed")
            url = kb.index_url(indexes.pop())
            if url is None:
                raise RealRootError(f"profile {prof.name}: no wheel index in the knowledge base for {reqs[0]}")
            root.run([f"{prof.venv}/bin/pip", "install", "--disable-pip-version-check", "--no-input", "--index-url",
                      cfg.rewrite(url), *reqs], as_user=True, check=True, timeout=1800)
        timings["install venv"] = time.monotonic() - t


WIZARD_SOURCE = "/usr/local/lib/rocm-wizard"


def install_wizard_source(root: Path) -> str:
    """Copy this wizard's package into the root (the steps/plans links resolved, no bytecode) so the
    root's own python3 runs it: ``PYTHONPATH=<returned dir> python3 -m wizard ...``. A copy, not a bind
    mount: nothing of the host is mounted into the root."""
    import shutil

    import wizard

    src = Path(wizard.__file__).resolve().parent
    dest = root / WIZARD_SOURCE.lstrip("/") / "wizard"
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(src, dest, symlinks=False, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for p in [dest, *dest.rglob("*")]:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    return WIZARD_SOURCE
