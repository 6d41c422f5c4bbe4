#!/usr/bin/env bash
# rocm-wizard dry run: plan driver: Only the amdgpu kernel driver (AMD's amdgpu-install 31.x), for
# ROCm from pip or a container
# Nothing has been run. Running this script by hand does what `rocm-wizard --plan driver` would
# do, in the same order, with the same commands. Run it again after the reboot, or after fixing a
# failure: it continues where it stopped.
#
# machine: Ubuntu 24.04 LTS (noble) [recorded:rx9070xt-noble-no-kfd]
# GPU: AMD Radeon RX 9070 XT / 9070 GRE / 9070 (gfx1201)
# target: stream driver, rocm 10.0.0, gfx gfx1201
# why: For the many setups whose ROCm comes from a pip wheel or a container: only the kernel
# driver is needed, and /dev/kfd is how it shows. When the running kernel's own amdgpu driver is
# enough (/dev/kfd present; for a Ryzen APU a kernel as new as the knowledge base says it needs)
# this plan has nothing to do and says so. Otherwise it installs AMD's driver-numbered amdgpu-
# install package of the newest Core SDK release the knowledge base has facts for and runs it with
# the --usecase line AMD documents for Radeon GPUs, then reboots. After it, a pip plan (pip-only,
# therock-pip) or docker.
# plan file: plans/driver.toml (shipped)

set -euo pipefail

# Progress: one line per finished step. Delete this file to start the plan over.
progress=/var/lib/rocm-wizard/script/driver.progress
[ -e "$progress" ] || { sudo -- mkdir -p "$(dirname "$progress")" && sudo -- touch "$progress"; }
step_done() { grep -qx "$1" "$progress"; }
mark_done() { echo "$1" | sudo -- tee -a "$progress" >/dev/null; }
mark_boot() { echo "$1" | sudo -- tee "$progress.reboot" >/dev/null; }

# ---- step 1/6: preflight: Preflight: check everything the plan needs before the first change
# note: each check must pass; a failure stops the run before anything changes (--skip-preflight
# NAME skips a check you know to be wrong, and is journalled)
if ! step_done 1; then
  # ssh: ssh session: advise tmux/screen
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sh -c 'if [ -n "${SSH_CONNECTION:-}" ] && [ -z "${TMUX:-}${STY:-}" ]; then echo "warning: over ssh without tmux/screen: a dropped connection stops the run; start tmux or screen first" >&2; fi'; then echo 'preflight failed: ssh: ssh session: advise tmux/screen' >&2; exit 1; fi
  # root: root is available through sudo
  if ! sudo -- true; then echo 'preflight failed: root: root is available through sudo' >&2; exit 1; fi
  # package-lock: the package manager's lock is free (waits up to 120 s)
  if ! sudo -- python3 -c 'import fcntl, os, struct, sys, time
wait, paths = float(sys.argv[1]), sys.argv[2:]
def holder(path):
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return None
    try:
        got = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 0, 0) + bytes(8))
    finally:
        os.close(fd)
    kind, _, _, _, pid = struct.unpack("hhqqi", got[:struct.calcsize("hhqqi")])
    if kind == fcntl.F_UNLCK:
        return None
    try:
        cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        cmd = ""
    return f"pid {pid}" + (f" ({cmd[:80]})" if cmd else "")
start, said = time.monotonic(), -10.0
while True:
    held = [(p, h) for p in paths for h in [holder(p)] if h]
    if not held:
        sys.exit(0)
    waited = time.monotonic() - start
    if waited >= wait:
        p, h = held[0]
        sys.exit(f"{p} is still locked by {h} after {wait:g} s: another package manager (unattended-upgrades?) "
                 "is running; wait for it, or give the run more time with --lock-wait S")
    if waited - said >= 10:
        p, h = held[0]
        print(f"waiting for {p}, locked by {h} ({waited:.0f} s of at most {wait:g} s)", flush=True)
        said = waited
    time.sleep(0.5)' 120 /var/lib/dpkg/lock-frontend /var/lib/dpkg/lock; then echo 'preflight failed: package-lock: the package manager'"'"'s lock is free (waits up to 120 s)' >&2; exit 1; fi
  # package-url: the amdgpu-install package for this distro exists
  if ! wget -q --spider https://repo.radeon.com/amdgpu-install/31.50/ubuntu/noble/amdgpu-install_31.50.315000-1_all.deb; then echo 'preflight failed: package-url: the amdgpu-install package for this distro exists' >&2; exit 1; fi
  # secure-boot: Secure Boot does not block the DKMS module
  if ! sh -c 'if mokutil --sb-state 2>/dev/null | grep -q "SecureBoot enabled"; then echo "Secure Boot is on and the plan installs a DKMS module without MOK enrolment" >&2; exit 1; fi'; then echo 'preflight failed: secure-boot: Secure Boot does not block the DKMS module' >&2; exit 1; fi
  mark_done 1
fi

# ---- step 2/6: backup: Back up environments, packages, repo lists and evidence
# note: backup directory: /var/lib/rocm-wizard/backup/driver
# note: no Python environment with torch to back up
if ! step_done 2; then
  # create the backup directory
  if ! test -d /var/lib/rocm-wizard/backup/driver; then
    sudo -- mkdir -p -m 0700 -- /var/lib/rocm-wizard/backup/driver
  fi
  # the backup directory is its owner's alone (it holds pip.conf files, which may carry index
  # passwords)
  sudo -- chmod 0700 -- /var/lib/rocm-wizard/backup/driver
  # installed packages (both ROCm streams included)
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  sudo -- sh -c 'out=$1; shift; "$@" >"$out" 2>&1' sh /var/lib/rocm-wizard/backup/driver/dpkg-selections.txt dpkg-query -W -f '${Package}\t${Version}\t${db:Status-Abbrev}\n'
  # repo lists, keys, pins and global env files
  sudo -- tar --ignore-failed-read --warning=no-failed-read -czf /var/lib/rocm-wizard/backup/driver/etc-files.tar.gz -C / etc/apt/sources.list etc/apt/sources.list.d etc/apt/preferences.d etc/apt/keyrings etc/apt/trusted.gpg.d etc/environment etc/profile.d etc/ld.so.conf.d
  # rocminfo evidence
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  sudo -- sh -c 'out=$1; shift; if command -v "$1" >/dev/null 2>&1; then "$@" >"$out" 2>&1 || true; else echo "not installed: $1" >"$out"; fi' sh /var/lib/rocm-wizard/backup/driver/rocminfo.txt rocminfo
  # KFD topology evidence
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  sudo -- sh -c 'for f in /sys/class/kfd/kfd/topology/nodes/*/properties; do echo "== $f"; cat "$f"; done >"$1" 2>&1 || true' sh /var/lib/rocm-wizard/backup/driver/kfd-properties.txt
  # the manifest rollback reads
  if ! python3 -c 'import sys
try: sys.exit(0 if open(sys.argv[1]).read()==sys.argv[2] else 1)
except OSError: sys.exit(1)' /var/lib/rocm-wizard/backup/driver/manifest.json '{
 "backup_dir": "/var/lib/rocm-wizard/backup/driver",
 "driver": {
  "kind": null,
  "version": null
 },
 "env_settings": [],
 "envs": [],
 "evidence": [
  "rocminfo.txt",
  "kfd-properties.txt"
 ],
 "files": {
  "archive": "etc-files.tar.gz",
  "paths": [
   "/etc/apt/sources.list",
   "/etc/apt/sources.list.d",
   "/etc/apt/preferences.d",
   "/etc/apt/keyrings",
   "/etc/apt/trusted.gpg.d",
   "/etc/environment",
   "/etc/profile.d",
   "/etc/ld.so.conf.d"
  ]
 },
 "format": 1,
 "machine": {
  "codename": "noble",
  "kernel": null,
  "os": "ubuntu",
  "version": "24.04"
 },
 "packages": {
  "dkms": [],
  "file": "dpkg-selections.txt",
  "manager": "apt",
  "rocm_streams": {}
 },
 "plan": "driver",
 "rocm": {
  "apt_sources": [],
  "installs": [],
  "pins": [],
  "stream": null,
  "version": null
 }
}
' >/dev/null 2>&1; then
    sudo -- python3 -c 'import os,sys
p,mode,text=sys.argv[1],int(sys.argv[2],8),sys.argv[3]
d=os.path.dirname(p) or '"'"'.'"'"'
os.makedirs(d,exist_ok=True)
t=p+'"'"'.rocm-wizard.tmp'"'"'
with open(t,'"'"'w'"'"') as f: f.write(text)
os.chmod(t,mode)
os.replace(t,p)' /var/lib/rocm-wizard/backup/driver/manifest.json 644 '{
 "backup_dir": "/var/lib/rocm-wizard/backup/driver",
 "driver": {
  "kind": null,
  "version": null
 },
 "env_settings": [],
 "envs": [],
 "evidence": [
  "rocminfo.txt",
  "kfd-properties.txt"
 ],
 "files": {
  "archive": "etc-files.tar.gz",
  "paths": [
   "/etc/apt/sources.list",
   "/etc/apt/sources.list.d",
   "/etc/apt/preferences.d",
   "/etc/apt/keyrings",
   "/etc/apt/trusted.gpg.d",
   "/etc/environment",
   "/etc/profile.d",
   "/etc/ld.so.conf.d"
  ]
 },
 "format": 1,
 "machine": {
  "codename": "noble",
  "kernel": null,
  "os": "ubuntu",
  "version": "24.04"
 },
 "packages": {
  "dkms": [],
  "file": "dpkg-selections.txt",
  "manager": "apt",
  "rocm_streams": {}
 },
 "plan": "driver",
 "rocm": {
  "apt_sources": [],
  "installs": [],
  "pins": [],
  "stream": null,
  "version": null
 }
}
'
  fi
  # the backup is readable by its owner only
  sudo -- chmod -R go-rwx -- /var/lib/rocm-wizard/backup/driver
  mark_done 2
fi

# ---- step 3/6: kernel_driver: The amdgpu kernel driver (amdgpu-install 31.50)
# note: amdgpu-install 31.50 (ROCm Core SDK 10.0.0): https://repo.radeon.com/amdgpu-
# install/31.50/ubuntu/noble/amdgpu-install_31.50.315000-1_all.deb
# note: why: /dev/kfd is missing, the amdgpu driver is not known to be loaded
# note: ROCm 10.1.0 is newer, but the knowledge base lacks driver_version (the amdgpu-install 31.x
# line); an amdgpu-install package for ubuntu 24.04; amdgpu_install_usecases.radeon: not planned
# note: builds the amdgpu-dkms kernel module: a reboot loads it
if ! step_done 3; then
  # wait for the package manager's lock (at most 120 s)
  sudo -- python3 -c 'import fcntl, os, struct, sys, time
wait, paths = float(sys.argv[1]), sys.argv[2:]
def holder(path):
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return None
    try:
        got = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 0, 0) + bytes(8))
    finally:
        os.close(fd)
    kind, _, _, _, pid = struct.unpack("hhqqi", got[:struct.calcsize("hhqqi")])
    if kind == fcntl.F_UNLCK:
        return None
    try:
        cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        cmd = ""
    return f"pid {pid}" + (f" ({cmd[:80]})" if cmd else "")
start, said = time.monotonic(), -10.0
while True:
    held = [(p, h) for p in paths for h in [holder(p)] if h]
    if not held:
        sys.exit(0)
    waited = time.monotonic() - start
    if waited >= wait:
        p, h = held[0]
        sys.exit(f"{p} is still locked by {h} after {wait:g} s: another package manager (unattended-upgrades?) "
                 "is running; wait for it, or give the run more time with --lock-wait S")
    if waited - said >= 10:
        p, h = held[0]
        print(f"waiting for {p}, locked by {h} ({waited:.0f} s of at most {wait:g} s)", flush=True)
        said = waited
    time.sleep(0.5)' 120 /var/lib/dpkg/lock-frontend /var/lib/dpkg/lock
  # repair an interrupted dpkg (dpkg --configure -a)
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sh -c 'test -z "$(ls -A /var/lib/dpkg/updates 2>/dev/null)" && test -z "$(dpkg --audit 2>/dev/null)"' >/dev/null 2>&1; then
    sudo -- dpkg --configure -a
  fi
  # repair broken dependencies and reinstall half-installed packages (apt-get -f install)
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sh -c 'apt-get check >/dev/null 2>&1 && test -z "$(dpkg --audit 2>/dev/null)"' >/dev/null 2>&1; then
    sudo -- apt-get -f install -y
  fi
  # reinstall the packages a kill mid-unpack left half-installed (apt-get install --reinstall)
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sh -c '! dpkg-query -W -f '"'"'${Status}\n'"'"' 2>/dev/null | grep -q '"'"' reinstreq '"'"'' >/dev/null 2>&1; then
    sudo -- sh -c 'pkgs=$(dpkg-query -W -f '"'"'${Package} ${Status}\n'"'"' 2>/dev/null | awk '"'"'$3 == "reinstreq" {print $1}'"'"'); [ -z "$pkgs" ] || exec apt-get install --reinstall -y $pkgs'
  fi
  # no package the step changes is held
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  sh -c 'held=$(apt-mark showhold "$@" 2>/dev/null | tr "\n" " " | sed "s/ *$//"); if [ -n "$held" ]; then echo "held packages the plan changes: $held. A hold is the admin'"'"'s decision: if you decide so, run: sudo apt-mark unhold $held (then rocm-wizard resume)" >&2; exit 1; fi' sh amdgpu-install amdgpu-dkms
  # download directory
  if ! test -d /var/lib/rocm-wizard/downloads; then
    sudo -- mkdir -p -- /var/lib/rocm-wizard/downloads
  fi
  # download amdgpu-install 31.50
  if ! test -s /var/lib/rocm-wizard/downloads/amdgpu-install_31.50.315000-1_all.deb; then
    sudo -- wget -q -O /var/lib/rocm-wizard/downloads/amdgpu-install_31.50.315000-1_all.deb https://repo.radeon.com/amdgpu-install/31.50/ubuntu/noble/amdgpu-install_31.50.315000-1_all.deb
  fi
  # install the amdgpu-install package (adds AMD's driver repository)
  sudo -- apt-get install -y /var/lib/rocm-wizard/downloads/amdgpu-install_31.50.315000-1_all.deb
  # the amdgpu driver as AMD documents it for Radeon (--usecase=rocm,graphics --gfxversion=auto)
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sh -c 'dpkg-query -W -f '"'"'${db:Status-Abbrev}'"'"' "$1" 2>/dev/null | grep -q "^ii"' sh amdgpu-dkms >/dev/null 2>&1; then
    sudo -- amdgpu-install -y --usecase=rocm,graphics --gfxversion=auto
  fi
  mark_done 3
fi

# ---- step 4/6: secure_boot: Enrol the DKMS signing key for Secure Boot (MOK)
# skipped: Secure Boot state unknown; check `mokutil --sb-state`

# ---- step 5/6: groups: Add the user to the render and video groups
# note: log out and back in (or run `newgrp render`) for the groups to apply; no reboot needed
if ! step_done 5; then
  # add user to render and video
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sh -c 'for g in render video; do id -nG "$1" | tr " " "\n" | grep -qx "$g" || exit 1; done' sh user >/dev/null 2>&1; then
    sudo -- usermod -a -G render,video user
  fi
  mark_done 5
fi

# ---- step 6/6: reboot: Reboot
# note: the run continues after the reboot (rocm-wizard resume)
if ! step_done 6; then
  boot_id=$(cat /proc/sys/kernel/random/boot_id)
  if [ ! -e "$progress.reboot" ]; then
    mark_boot "$boot_id"
    echo 'rebooting now: run this script again after the reboot to continue' >&2
    sudo -- systemctl reboot
    exit 0
  elif [ "$(cat "$progress.reboot")" = "$boot_id" ]; then
    echo 'a reboot is still pending: reboot, then run this script again' >&2
    exit 3
  fi
  mark_done 6
fi

echo 'rocm-wizard plan driver: done'
