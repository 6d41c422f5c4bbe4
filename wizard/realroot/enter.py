"""Running a command inside a real root.

:func:`enter_argv` turns an argv into the host argv that runs it inside ROOT::

    unshare --mount --pid --fork --kill-child -- /bin/sh -c SETUP realroot-enter ROOT \\
        /usr/bin/env -i -C CWD NAME=VALUE... [CONFINE] \
        [/usr/bin/setpriv --reuid=USER --regid=USER --init-groups --] ARGV

``unshare``, ``sh``, ``mount`` and ``chroot`` are the host's; everything after ``chroot`` is the root's own
program. In the new mount namespace (private: nothing propagates back to the host) SETUP mounts a
fresh procfs on ROOT/proc, a new devpts instance and a tmpfs /dev/shm, and binds ROOT's boot-id file
over ``/proc/sys/kernel/random/boot_id``: the root's boot id is the plain file
``ROOT/proc/sys/kernel/random/boot_id`` (read from the host side when no namespace is up), which the
reboot stand-in rewrites in place. Nothing of the host is mounted into the root. The command is PID 1
of its own PID namespace: when it ends, whatever it left running in the root ends with it, and when
the ``unshare`` process is killed its child is killed too, so the mounts go away with the namespace.

The environment is built from scratch (``env -i``): PATH (stand-ins in /usr/local/sbin first), HOME,
USER, LOGNAME, LANG=C.UTF-8, plus the caller's ``env``. Host root only (unshare --mount, chroot).
"""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path
from typing import Mapping, Sequence

from wizard.record import record


STATE = ".realroot"  # ROOT/.realroot: machine.json, the rehearsal's logs
BOOT_ID = "proc/sys/kernel/random/boot_id"
BOOT_ID_BIND = f"{STATE}/boot_id.bind"  # an empty file: the boot id is bound here before procfs hides it
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SETUP = r"""set -e
root=$1; shift
mount --bind "$root/proc/sys/kernel/random/boot_id" "$root/.realroot/boot_id.bind"
mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
mount --bind "$root/.realroot/boot_id.bind" "$root/proc/sys/kernel/random/boot_id"
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$root/dev/pts"
mount --bind "$root/dev/pts/ptmx" "$root/dev/ptmx"
mount -t tmpfs -o nosuid,nodev,mode=1777,size=512m tmpfs "$root/dev/shm"
exec chroot "$root" "$@"
"""


# What a confined command keeps of root's capabilities (its bounding set): what apt, dpkg, maintainer scripts, pip and
# useradd need to change files, owners and users. Gone: sys_chroot (chroot(subdir) + chdir('..') leaves a chroot),
# dac_read_search (open_by_handle_at reaches host files), sys_admin (mount), sys_module, sys_ptrace, sys_rawio,
# mknod, net_admin, sys_boot, sys_time and the rest: inside a real root, a chroot is a boundary for its root.
CONFINED_CAPS = ("chown", "dac_override", "fowner", "fsetid", "setuid", "setgid", "kill", "setfcap",
                 "net_bind_service", "audit_write")
CONFINE = ["/usr/bin/setpriv", "--bounding-set=-all," + ",".join(f"+{c}" for c in CONFINED_CAPS),
           "--inh-caps=-all", "--"]


@record
class User:
    name: str
    home: str


ROOT_USER = User("root", "/root")


def environment(user: User, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {"PATH": PATH, "HOME": user.home, "USER": user.name, "LOGNAME": user.name, "LANG": "C.UTF-8"}
    env.update(extra or {})
    return env


def enter_argv(root: Path, argv: Sequence[str], *, user: User = ROOT_USER, env: Mapping[str, str] | None = None,
               cwd: str | None = None, confined: bool = False) -> list[str]:
    """The host argv that runs ``argv`` inside ``root`` as ``user`` (root by default). ``confined``: with only
    :data:`CONFINED_CAPS` in its bounding set (a plan's actions and checks), so even its root cannot leave."""
    if not argv:
        raise ValueError("an empty command")
    root = Path(root).absolute()
    inner = ["/usr/bin/env", "-i", "-C", cwd or user.home]
    inner += [f"{k}={v}" for k, v in environment(user, env).items()]
    if confined:
        inner += CONFINE
    if user.name != "root":
        inner += ["/usr/bin/setpriv", f"--reuid={user.name}", f"--regid={user.name}", "--init-groups", "--"]
    return ["unshare", "--mount", "--pid", "--fork", "--kill-child", "--", "/bin/sh", "-c", SETUP, "realroot-enter",
            str(root), *inner, *argv]


def prepare(root: Path) -> None:
    """The files entering needs: a boot id (a fresh one if none) and the bind placeholder."""
    state = root / STATE
    state.mkdir(mode=0o700, exist_ok=True)
    (root / BOOT_ID_BIND).touch()
    boot = root / BOOT_ID
    if not boot.is_file() or not boot.read_text().strip():
        boot.parent.mkdir(parents=True, exist_ok=True)
        boot.write_text(f"{uuid.uuid4()}\n")


def run(root: Path, argv: Sequence[str], *, user: User = ROOT_USER, env: Mapping[str, str] | None = None,
        cwd: str | None = None, timeout: float = 600.0, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` in ``root`` and wait: output captured as text (a convenience for tests and tools)."""
    prepare(root)
    return subprocess.run(enter_argv(root, argv, user=user, env=env, cwd=cwd), capture_output=True, text=True,
                          timeout=timeout, input=input, env={"PATH": os.environ.get("PATH", PATH), "LC_ALL": "C"})


def boot_id(root: Path) -> str:
    """The root's boot id, read from the host side."""
    return (root / BOOT_ID).read_text().strip()
