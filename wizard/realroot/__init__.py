"""The real root: a Debian 12 (bookworm) userland built with mmdebstrap, in which the wizard's migrations
run against the real apt, dpkg, pip and venv, installing from the local rehearsal mirror.

* :mod:`~wizard.realroot.base`: the base userland, built once per machine and cached as a tarball,
  unpacked (or copied) per use.
* :mod:`~wizard.realroot.enter`: the argv that runs a command inside a root, as root or as the
  profile's user, in its own mount and PID namespaces (procfs, devpts and a controllable boot id).
* :mod:`~wizard.realroot.standins`: the few programs a root without a kernel cannot have for real
  (reboot, systemctl, modprobe, dkms, update-initramfs, mokutil), installed in /usr/local/sbin.
* :mod:`~wizard.realroot.machine`: lays a sandbox profile (GPUs, users, groups) into a root and
  installs its starting stack from the mirror with the real tools.
* :mod:`~wizard.realroot.repair`: the real half-states a package manager leaves (interrupted dpkg,
  broken dependencies, a held lock, a held package), detected and paired with their repair.

Requires root on the host (``unshare --mount`` and ``chroot``). Nothing outside the root directory
is written, except the base cache; nothing of the host is mounted into the root.
"""
