"""Who runs each action: root actions through ``sudo -n --``, user-scope actions as the invoking user.

The wizard itself runs as the user. Before the first change it asks for root once (``sudo -v`` in
the foreground, or ``sudo -n -v`` in ``--yes`` mode, which must not prompt); every root action then
runs as ``sudo -n -- argv`` and can never wait on a password. Started with sudo, ``as_user`` actions
(venvs, pip) run as ``SUDO_USER`` through ``sudo -n -u USER -H --``.
"""

from __future__ import annotations

import os
import subprocess
import threading
from contextlib import contextmanager
from typing import Iterator, Mapping, Sequence

from wizard.model import Action
from wizard.record import record

YES_NEEDS_ROOT = (
    "--yes needs root or passwordless sudo (sudo -n failed): run it as root, with sudo, "
    "or without --yes to be asked for the password once"
)


class PrivilegeError(Exception):
    """Root is needed and cannot be had without a prompt."""


@record
class Privilege:
    is_root: bool
    sudo_user: str | None = None  # the invoking user when started through sudo
    sudo: str = "sudo"

    @classmethod
    def detect(cls, environ: Mapping[str, str] | None = None) -> "Privilege":
        env = os.environ if environ is None else environ
        root = os.geteuid() == 0
        user = env.get("SUDO_USER") if root else None
        return cls(is_root=root, sudo_user=user if user and user != "root" else None)

    def wrap(self, action: Action, command: Sequence[str] | None = None) -> list[str]:
        """The argv that really runs for ``action``: its command (``Action.command()``, environment
        included, unless a mapped one is given) behind the privilege it needs."""
        cmd = list(action.command() if command is None else command)
        if action.root and not self.is_root:
            return [self.sudo, "-n", "--", *cmd]
        if action.as_user and self.is_root and self.sudo_user:
            return [self.sudo, "-n", "-u", self.sudo_user, "-H", "--", *cmd]
        return cmd

    def needs_sudo(self, actions: Sequence[Action]) -> bool:
        return not self.is_root and any(a.root for a in actions)

    def refresh(self, environ: Mapping[str, str]) -> bool:
        """Extend the sudo ticket without ever prompting (``sudo -n -v``)."""
        try:
            return subprocess.run([self.sudo, "-n", "-v"], env=dict(environ), stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            return False

    @contextmanager
    def kept_alive(self, environ: Mapping[str, str], every: float = 60.0) -> Iterator[None]:
        """Refresh the ticket every ``every`` seconds while the block runs, so a long step (a DKMS
        build) cannot outlast it and leave the next ``sudo -n`` action without rights."""
        stop = threading.Event()

        def loop() -> None:
            while not stop.wait(every):
                self.refresh(environ)

        t = threading.Thread(target=loop, name="sudo keep-alive", daemon=True)
        t.start()
        try:
            yield
        finally:
            stop.set()
            t.join(5)

    def authenticate(self, *, yes: bool, environ: Mapping[str, str]) -> None:
        """Ask for root once. ``--yes``: ``sudo -n -v`` only; otherwise ``sudo -v`` on the terminal."""
        argv = [self.sudo, "-n", "-v"] if yes else [self.sudo, "-v"]
        try:
            rc = subprocess.run(
                argv,
                env=dict(environ),
                stdin=subprocess.DEVNULL if yes else None,
                stdout=subprocess.DEVNULL if yes else None,
                stderr=subprocess.DEVNULL if yes else None,
                timeout=None if not yes else 30,
            ).returncode
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PrivilegeError(YES_NEEDS_ROOT if yes else f"sudo could not run: {exc}") from None
        if rc != 0:
            raise PrivilegeError(YES_NEEDS_ROOT if yes else "sudo -v failed: administrator rights were not granted")
