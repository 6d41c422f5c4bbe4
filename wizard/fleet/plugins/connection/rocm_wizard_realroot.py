"""Ansible connection to a rocm-wizard real root (``rocm-wizard --sandbox DIR --profile NAME --root debian12``).

Real Ansible running its real modules inside a real Debian 12 userland: every command Ansible sends (its
``/bin/sh -c`` lines, the module runs through the root's own ``/usr/bin/python3``) is entered into the root
by :func:`wizard.realroot.enter.enter_argv` (private mount and PID namespaces, ``chroot``): the root's own
``sh``, ``python3``, ``apt-get``, ``dpkg`` and ``pip`` run, nothing of the host. A task runs as the root's
user (uid 1000, the one who owns the venvs, through ``setpriv``); a ``become`` task runs as the root's root
(there is no sudo in the root: the host's root enters it, as :class:`wizard.realroot.executor.RealRootExecutor`
does for root actions). Files put and fetched map into DIR. The reboot is the root's stand-in
(``/usr/sbin/reboot`` rewrites the root's boot id, which ``ansible.builtin.reboot`` reads back): give
``rocm_wizard_reboot_command=/usr/sbin/reboot``.

The root's rehearsal mirror must be served while the play runs: the fleet commands do it for every host of
the inventory that uses this connection (wizard/fleet/realroots.py), and copy this wizard into the root
(``python3 -m wizard`` there is the root's python3 running it). Needs host root (unshare, chroot).
"""

from __future__ import annotations

DOCUMENTATION = """
    name: rocm_wizard_realroot
    short_description: run tasks inside a rocm-wizard real root (Debian 12 userland, chroot)
    description:
        - Enters every command into the real root (unshare + chroot) as its user, or as its root for become,
          and copies files into and out of the root's directory.
    author: rocm-wizard
    options:
        realroot:
            description: the real root's directory (rocm-wizard --sandbox DIR --root debian12)
            type: str
            required: true
            vars:
                - name: rocm_wizard_realroot
    extends_documentation_fragment:
        - connection_pipelining
"""

import os
import shlex
import shutil
from pathlib import Path

from ansible.errors import AnsibleError
from ansible.plugins.connection.local import Connection as LocalConnection

from wizard.realroot import enter
from wizard.realroot.machine import USER, USER_UID
from wizard.realroot.rehearsal import is_real_root


class Connection(LocalConnection):
    transport = "rocm_wizard_realroot"
    has_pipelining = True

    def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self._as_root = False

    def set_become_plugin(self, plugin):  # type: ignore[no-untyped-def]
        # become means the root's root, entered directly: no sudo line is built (the root has no sudo)
        self._as_root = plugin is not None
        super().set_become_plugin(None)

    def _root(self) -> Path:
        root = self.get_option("realroot")
        if not root or not is_real_root(Path(root)):
            raise AnsibleError(f"rocm_wizard_realroot: {root!r} is not a rocm-wizard real root")
        return Path(root).absolute()

    def exec_command(self, cmd, in_data=None, sudoable=True):  # type: ignore[no-untyped-def]
        text = cmd if isinstance(cmd, str) else shlex.join(cmd)
        root = self._root()
        enter.prepare(root)
        user = enter.ROOT_USER if self._as_root else USER
        argv = enter.enter_argv(root, ["/bin/sh", "-c", text], user=user)
        return super().exec_command(shlex.join(argv), in_data=in_data, sudoable=sudoable)

    def inside(self, path: str) -> str:
        root = str(self._root())
        if path == root or path.startswith(root.rstrip("/") + "/"):
            return path
        return os.path.join(root, path.lstrip("/"))

    def put_file(self, in_path, out_path):  # type: ignore[no-untyped-def]
        target = self.inside(out_path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        super().put_file(in_path, target)
        if not self._as_root:
            os.chown(target, USER_UID, USER_UID)

    def fetch_file(self, in_path, out_path):  # type: ignore[no-untyped-def]
        source = self.inside(in_path)
        if not os.path.isfile(source):
            raise AnsibleError(f"rocm_wizard_realroot: {in_path} does not exist in the real root")
        shutil.copyfile(source, out_path)
