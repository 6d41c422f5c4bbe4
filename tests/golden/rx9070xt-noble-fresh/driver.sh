#!/usr/bin/env bash
# rocm-wizard dry run: plan driver: Only the amdgpu kernel driver (AMD's amdgpu-install 31.x), for
# ROCm from pip or a container
# Nothing has been run. Running this script by hand does what `rocm-wizard --plan driver` would
# do, in the same order, with the same commands. Run it again after the reboot, or after fixing a
# failure: it continues where it stopped.
#
# machine: Ubuntu 24.04.1 LTS (noble), kernel 6.8.0-48-generic [built:rx9070xt-noble-fresh]
# GPU: AMD Radeon RX 9070 XT (gfx1201)
# driver: amdgpu in-tree
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
  "kind": "in-tree",
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
  "kernel": "6.8.0-48-generic",
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
  "kind": "in-tree",
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
  "kernel": "6.8.0-48-generic",
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

# ---- step 3/6: kernel_driver: The amdgpu kernel driver
# note: nothing to do
# skipped: the in-tree amdgpu driver of kernel 6.8.0-48-generic is enough: /dev/kfd is present

# ---- step 4/6: secure_boot: Enrol the DKMS signing key for Secure Boot (MOK)
# skipped: Secure Boot is off

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
# skipped: no earlier step needs a reboot

echo 'rocm-wizard plan driver: done'
