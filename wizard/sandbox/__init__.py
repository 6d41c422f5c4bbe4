"""The sandbox: a directory that is a whole machine's root, plus stand-in programs.

``open_sandbox(DIR, PROFILE)`` returns a :class:`wizard.host.LiveHost` rooted at DIR whose PATH holds
only the stand-ins (DIR/.sandbox/bin), so every command any step runs is answered inside DIR. The
first use of DIR builds it from the profile; later uses keep its state (DIR/.sandbox/machine.json
names the profile). The wizard in a sandbox acts as the profile's user ``user`` (not root): root
actions go through the stand-in ``sudo``. State and logs live in DIR/var/lib/rocm-wizard and
DIR/var/log/rocm-wizard, so they survive the sandbox's reboots like a real machine's.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

TYPE_CHECKING = False  # typing's names for the type checker only: every stand-in call imports this package
if TYPE_CHECKING:
    from typing import Any

from wizard.host import HostError, LiveHost

DEFAULT_PROFILE = "seed-7900xt"


def profile_names() -> list[str]:
    from wizard.profiles import PROFILES

    return sorted(PROFILES)


def open_sandbox(directory: str | os.PathLike[str], profile: str | None = None) -> LiveHost:
    from wizard.sandbox import build

    root = Path(directory).expanduser().absolute()
    _check_owner(root)
    cfg_path = root / ".sandbox" / "machine.json"
    if cfg_path.is_file():
        try:
            cfg = json.loads(cfg_path.read_text())
        except (OSError, ValueError):
            raise HostError(f"{root}: the sandbox's .sandbox/machine.json is unreadable") from None
        if profile and cfg.get("profile") != profile:
            raise HostError(f"{root}: this sandbox was built from profile {cfg.get('profile')!r}, not {profile!r} "
                            "(use another DIR for another profile)")
        build.refresh_standins(root)
    else:
        if root.exists() and any(root.iterdir()):
            raise HostError(f"{root}: exists, is not empty and is not a sandbox; give a new or empty directory")
        name = profile or DEFAULT_PROFILE
        if name not in profile_names():
            from wizard.profiles import DISTRO_PROFILES

            real = DISTRO_PROFILES.get(name)
            if real is not None:
                kind = "debian13" if real.suite == "trixie" else "debian12"
                raise HostError(f"profile {name!r} exists only as a real root (Debian's own packages): "
                                f"add --root {kind}")
            raise HostError(f"unknown sandbox profile {name!r} (profiles: {', '.join(profile_names())})")
        build.build(root, name)
        cfg = json.loads(cfg_path.read_text())
    return LiveHost(root, path_prefix=str(root / ".sandbox" / "bin"), environ=sandbox_environ(root, cfg))


def _check_owner(root: Path) -> None:
    """Root runs the programs of DIR/.sandbox/bin: DIR and everything under .sandbox must be the running user's
    or root's and writable by no one else, and so must every directory above DIR (a sticky one, as /tmp, may be
    writable by all): otherwise whoever owns it could swap the stand-ins while root rehearses. One line."""
    from wizard.runner.state import StateError, check_tree, untrusted

    me = os.geteuid()
    for parent in reversed(root.parents):
        try:
            st = os.stat(parent)
        except OSError:
            break
        why = (f"is owned by uid {st.st_uid}" if st.st_uid not in (0, me) else "is writable by group or others"
               if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX else None)
        if why:
            raise HostError(f"refusing the sandbox {root}: {parent} {why} (someone else could replace the programs "
                            "it runs); choose a directory of your own")
    why = untrusted(root)
    try:
        if why is None:
            check_tree(root / ".sandbox")
    except StateError as exc:
        why = str(exc)
    if why:
        raise HostError(f"refusing the sandbox {root}: {why} (someone else could replace the programs it runs); "
                        "choose a directory of your own")


def sandbox_environ(root: Path, cfg: dict[str, Any]) -> dict[str, str]:
    bindir = str(root / ".sandbox" / "bin")
    user = cfg.get("user", "user")
    env = {
        "PATH": bindir,
        "HOME": f"/home/{user}",
        "USER": user,
        "LOGNAME": user,
        "LANG": "C.UTF-8",
        "ROCM_WIZARD_SANDBOX_ROOT": str(root),
    }
    env.update(cfg.get("environment", {}))
    return env
