"""Kernel driver (in-tree or amdgpu-dkms), /dev/kfd and render-node access, the user's groups."""

from __future__ import annotations

import os
import re

from wizard import lazy_re
from wizard.host import Host, acting_user
from wizard.model import Driver, Evidence

_ID_GROUPS = lazy_re.compile(r"groups=([^\s]+)")
_GROUP_NAME = lazy_re.compile(r"\d+\(([^)]+)\)")
_ID_USER = lazy_re.compile(r"\buid=\d+\(([^)]+)\)")


def _user(host: Host) -> str | None:
    return acting_user(host.environ) if host.is_live else None


_DEVICE_GROUPS = ("render", "video")


def _own_session(host: Host, user: str | None) -> tuple[str, ...] | None:
    """The groups this process's login session holds where the session is the user's own: the running machine, not
    through sudo, and not a root shell acting for another user (`su` without `-` keeps USER; root's groups are not
    the user's)."""
    session = host.session_groups()
    if session is None or user is None or user != host.environ.get("USER", user):
        return None
    return None if host.uid() == 0 and user != "root" else session


def _groups_pending(session: tuple[str, ...] | None, configured: tuple[str, ...]) -> tuple[str, ...]:
    """The device groups the user is given that this process's login session does not hold (it began before they
    were added)."""
    return () if session is None else tuple(g for g in _DEVICE_GROUPS if g in configured and g not in session)


def _configured_groups(host: Host, user: str) -> tuple[str, ...]:
    """Groups of a user per /etc/passwd (primary) and /etc/group (members): what a new login gets."""
    primary_gid = None
    for line in (host.read_text("/etc/passwd") or "").splitlines():
        parts = line.split(":")
        if len(parts) >= 4 and parts[0] == user:
            primary_gid = parts[3]
    names: list[str] = []
    for line in (host.read_text("/etc/group") or "").splitlines():
        parts = line.split(":")
        if len(parts) < 4:
            continue
        members = [m.strip() for m in parts[3].split(",") if m.strip()]
        if user in members or parts[2] == primary_gid:
            names.append(parts[0])
    return tuple(names)


def _recorded_groups(text: str) -> tuple[str, ...]:
    """`groups` ("alice : alice adm render") or `id` ("uid=... groups=1000(alice),44(video)") output."""
    m = _ID_GROUPS.search(text)
    if m:
        return tuple(_GROUP_NAME.findall(m.group(1)))
    from wizard.parsers._text import prompt_command

    line = next((ln for ln in text.splitlines()
                 if ln.strip() and not ln.strip().startswith(("$", "#")) and prompt_command(ln) is None), "")
    if ":" in line:
        line = line.split(":", 1)[1]
    return tuple(w for w in line.split() if re.fullmatch(r"[a-z_][a-z0-9_-]*\$?", w))


def probe_driver(host: Host, dkms_packages: tuple[str, ...], rock_version: str | None,
                 kfd_seen: bool) -> Driver:
    sources: list[Evidence] = []
    loaded: bool | None = None
    version: str | None = None
    if host.is_dir("/sys/module/amdgpu"):
        loaded = True
        v = (host.read_text("/sys/module/amdgpu/version", 256) or "").strip()
        if v:
            version = v
            sources.append(Evidence("/sys/module/amdgpu/version", 1, v))
    elif host.is_live and host.name == "live":
        loaded = False
    if rock_version and not version:
        version = rock_version
        sources.append(Evidence("rocminfo.txt", None, f"ROCk module version {rock_version}"))
    dmesg = host.captured("dmesg.txt") or ""
    if loaded is None and ("amdgpu" in dmesg or kfd_seen):
        loaded = True
    dkms_tree = host.is_dir("/var/lib/dkms/amdgpu")
    kind = None
    if dkms_packages or dkms_tree or version:
        kind = "dkms"  # the in-tree module has no version file; amdgpu-dkms sets one
    elif loaded and host.is_dir("/sys/module/amdgpu"):
        kind = "in-tree"  # the module is there and has no version file (a recording that only says "loaded" tells neither)
    kfd_present = host.exists("/dev/kfd") if host.is_live else (True if kfd_seen else None)
    kfd_ok = host.access("/dev/kfd", os.R_OK | os.W_OK) if kfd_present else (False if kfd_present is False else None)
    renders = tuple(n for n in host.listdir("/dev/dri") if n.startswith("renderD"))
    render_ok = None
    if renders:
        render_ok = all(host.access(f"/dev/dri/{r}", os.R_OK | os.W_OK) for r in renders)
    user = _user(host)
    groups: tuple[str, ...] = ()
    recorded = host.captured("groups.txt")
    if recorded:
        groups = _recorded_groups(recorded)
        named = _ID_USER.search(recorded)  # `id` names the user whose groups these are
        user = user or (named.group(1) if named else None)
        sources.append(Evidence("groups.txt", 1, recorded.strip().splitlines()[0] if recorded.strip() else ""))
    elif user:
        groups = _configured_groups(host, user)
        sources.append(Evidence("/etc/group", None, f"{user}: {' '.join(groups)}"))
    known = bool(groups) or (user is not None and host.exists("/etc/group"))
    session = _own_session(host, user) if known and not recorded else None
    pending = _groups_pending(session, groups)
    if pending:
        sources.append(Evidence("id", None, f"this login session lacks {', '.join(pending)}"))
    # a device group the session holds that /etc/group does not list for the user (given by LDAP/sssd through nss,
    # or by `newgrp`): the user is in it for what this process opens
    held = tuple(g for g in _DEVICE_GROUPS if session is not None and g in session and g not in groups)
    if held:
        groups += held
        sources.append(Evidence("id", None, f"this login session holds {', '.join(held)} (not listed in /etc/group)"))
    return Driver(
        loaded=loaded, kind=kind, version=version, dkms_packages=dkms_packages,
        kfd_present=kfd_present, kfd_accessible=kfd_ok, render_nodes=renders, render_accessible=render_ok,
        user=user, groups=groups,
        in_render_group=("render" in groups) if known else None,
        in_video_group=("video" in groups) if known else None,
        groups_pending=pending,
        sources=tuple(sources),
    )
