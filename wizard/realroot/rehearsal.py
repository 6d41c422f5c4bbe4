"""``--sandbox DIR --profile NAME --root debian12``: a rehearsal on a real Debian 12 root.

The first use of DIR builds it (the cached mmdebstrap base, the profile's GPU tree, devices and user,
the profile's ``/etc/os-release`` so the wizard plans for the profile's machine, a local mirror of
AMD's repositories and the wheel indexes built from the knowledge base into DIR/.realroot/mirror, and
the profile's starting stack installed with the root's real apt, dpkg and pip from that mirror). Every
use serves the mirror on 127.0.0.1 at the port recorded in DIR (the packages inside name it) while the
command runs, and stops it at the end. The machine's mirror configuration sends every origin to that
mirror and trusts the mirror's own signing key by its fingerprint (for repo.radeon.com and the Core SDK
key's hosts).

A root is built whole or not at all: it is built in a directory beside DIR (``.DIR.building-PID``) and
renamed to DIR when it is complete, so a build killed at any instant leaves DIR as it was (absent or
empty); the next use removes what a dead build left beside it and builds again.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from wizard.mirror.config import Mirror, MirrorConfig
from wizard.realroot import enter
from wizard.realroot.base import RealRootError
from wizard.realroot.machine import RealRoot, open_root

KINDS = ("debian12",)  # what --root accepts
MIRROR = ".realroot/mirror"
AMD_REPO = "repo.radeon.com"


def is_real_root(directory: Path) -> bool:
    return (directory / enter.STATE / "machine.json").is_file()


@contextmanager
def opened(directory: Path, profile: str | None) -> Iterator[RealRoot]:
    """DIR as a real root (built on first use), its mirror served while the block runs."""
    from wizard.mirror.server import MirrorServer

    d = Path(directory).absolute()
    if not is_real_root(d):
        _build_whole(d, profile or "seed-7900xt")
    if is_real_root(d):
        root = open_root(d)
        if profile and profile != root.profile:
            raise RealRootError(f"{d}: this real root was built from profile {root.profile!r}, not {profile!r} "
                                "(use another DIR for another profile)")
        port = int(root.mirror_url.rsplit(":", 1)[1])
        try:
            server = MirrorServer(d / MIRROR, port=port, idle_timeout=24 * 3600)
        except OSError as exc:
            raise RealRootError(f"{d}: cannot serve its rehearsal mirror on 127.0.0.1:{port} "
                                f"({exc.strerror or exc}); is another wizard using this root?") from None
        with server:
            yield root
        return
    raise RealRootError(f"{d}: not a real root after its build")  # _build_whole renamed a whole one or raised


BUILDING = ".building-"


def _build_whole(d: Path, profile: str) -> None:
    """Build the root for ``profile`` beside ``d`` and rename it to ``d`` once complete (``d`` absent or an
    empty directory); what a killed build left beside ``d`` is removed first."""
    if d.exists() and (not d.is_dir() or any(d.iterdir())):
        raise RealRootError(f"{d}: exists, is not empty and is not a real root; give a new or empty directory")
    d.parent.mkdir(parents=True, exist_ok=True)
    for stale in d.parent.glob(f".{d.name}{BUILDING}*"):
        pid = stale.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():  # its builder is dead: a part of a root
            shutil.rmtree(stale, ignore_errors=True)
    tmp = d.parent / f".{d.name}{BUILDING}{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    try:
        _build(tmp, profile)
        os.sync()  # the whole root on disk before its name says it is one
        if d.is_dir():
            d.rmdir()  # empty (checked above); a build racing ours that finished first wins
        os.rename(tmp, d)
    except OSError as exc:
        if not is_real_root(d):
            raise RealRootError(f"{d}: cannot put the built root in place ({exc.strerror or exc})") from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _build(d: Path, profile: str) -> None:
    from wizard.kb import load_kb
    from wizard.mirror.build import build_mirror
    from wizard.profiles import PROFILES
    from wizard.mirror.server import MirrorServer
    from wizard.realroot.machine import AMD_CODENAME, build_root, install_starting_stack

    prof = PROFILES.get(profile)
    if prof is None:
        raise RealRootError(f"unknown profile {profile!r} (profiles: {', '.join(sorted(PROFILES))})")
    server = MirrorServer(d / MIRROR, port=0, idle_timeout=24 * 3600)
    with server:
        root = build_root(d, profile, server.base_url, install_stack=False)
        # AMD's jammy packages are what Debian 12 installs (the starting stack); the profile's own codename
        # is what the wizard plans for, since the root claims the profile's os-release
        build_mirror(d / MIRROR, server.base_url,
                     codenames=tuple(dict.fromkeys(c for c in (AMD_CODENAME, prof.codename) if c)),
                     core_distros=tuple(dict.fromkeys(k for k in ("debian12", core_sdk_distro(prof.os_release)) if k)))
        _profile_os_release(d, dict(prof.os_release))
        install_starting_stack(root, prof, load_kb())


def core_sdk_distro(os_release: tuple[tuple[str, str], ...]) -> str | None:
    """The key of a Core SDK release's ``routes.apt.repos`` the profile's machine plans for ("ubuntu2404"):
    the core-sdk plan's own rule, so the mirror carries the repository its source line names."""
    from wizard.model import Facts, OsInfo
    from wizard.steps.core_sdk_install import repo_key

    f = dict(os_release)
    return repo_key(Facts(os=OsInfo(id=f.get("ID"), version=f.get("VERSION_ID"))))


def _profile_os_release(d: Path, fields: dict[str, str]) -> None:
    """The profile's os-release: the wizard plans for the profile's machine; the userland underneath
    is Debian 12's (its apt, dpkg and pip are what run), recorded in .realroot/machine.json."""
    path = d / "etc/os-release"
    if path.is_symlink() or path.exists():
        path.unlink()
    path.write_text("".join(f'{k}="{v}"\n' for k, v in fields.items()))
    meta = d / enter.STATE / "machine.json"
    data = json.loads(meta.read_text())
    data["os_release"] = "profile"
    meta.write_text(json.dumps(data, indent=1) + "\n")


def mirrors(root: RealRoot) -> MirrorConfig:
    """Every origin to the root's mirror; the mirror's signing key trusted for AMD's repository."""
    from wizard.mirror.build import mirror_config

    cfg = mirror_config(root.mirror_url)
    try:
        key = json.loads((root.path / MIRROR / "manifest.json").read_text())["key_fingerprint"]
    except (OSError, ValueError, KeyError):
        return cfg
    signed = {AMD_REPO, *core_sdk_key_origins()}
    return MirrorConfig(tuple(Mirror(m.origin, m.url, m.source, key_fingerprint=str(key))
                              if m.origin in signed else m for m in cfg.mirrors))


def core_sdk_key_origins() -> set[str]:
    """The hosts of the Core SDK releases' key URLs: their mirror's key is given like repo.radeon.com's."""
    from urllib.parse import urlsplit

    from wizard.kb import load_kb
    from wizard.mirror.build import core_sdk_key_urls

    return {h for u in core_sdk_key_urls(load_kb()) if (h := urlsplit(u).hostname)}


__all__ = ["KINDS", "opened", "is_real_root", "mirrors"]
