"""Stand-ins inside the real root, for what a root without a kernel cannot do: reboot/shutdown (a new
boot id), systemctl, modprobe, dkms, update-initramfs and mokutil. Everything else in the root is the
real program; the GPU itself is described by the KFD tree and shown by the mirror's rocminfo.

They are Python scripts run by the root's own python3, installed where Debian puts the real program
(``/usr/sbin/dkms``, ``/usr/bin/systemctl``...), so maintainer scripts find them on apt's own PATH
(``DPkg::Path``, which has no /usr/local) as they would the real ones. A minbase root has none of these
programs; :func:`install` refuses to overwrite one that is not a stand-in. Each call is a
JSON line in ``/var/log/rocm-wizard-rehearsal/calls.log``; state they keep (DKMS trees, a pending MOK,
enabled units) lives where the real tool keeps it, or in ``/var/lib/rocm-wizard-rehearsal``.
"""

from __future__ import annotations

import os
from pathlib import Path

from wizard.realroot.base import RealRootError

MARK = "# rocm-wizard rehearsal stand-in"
LOG_DIR = "var/log/rocm-wizard-rehearsal"
STATE_DIR = "var/lib/rocm-wizard-rehearsal"

_COMMON = r'''#!/usr/bin/python3 -I
# rocm-wizard rehearsal stand-in (real root): see wizard/realroot/standins.py (MARK)
import json, os, subprocess, sys, time, uuid
LOG = "/var/log/rocm-wizard-rehearsal"
STATE = "/var/lib/rocm-wizard-rehearsal"
TOOL = os.path.basename(sys.argv[0])
ARGS = sys.argv[1:]
os.makedirs(LOG, exist_ok=True)
with open(f"{LOG}/calls.log", "a") as fh:
    fh.write(json.dumps({"t": round(time.time(), 3), "tool": TOOL, "argv": ARGS}) + "\n")

def fail(message, code=1):
    print(message, file=sys.stderr)
    sys.exit(code)

def secure_boot():
    try:
        with open("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c", "rb") as fh:
            return fh.read()[4:5] == b"\x01"
    except OSError:
        return False

def installed(package):
    r = subprocess.run(["dpkg-query", "-W", "-f", "${db:Status-Abbrev}", package], capture_output=True, text=True)
    return r.returncode == 0 and r.stdout.startswith("ii")
'''

REBOOT = _COMMON + r'''
def load_driver():
    """A machine that booted without the amdgpu driver has it after this boot when amdgpu-dkms is installed
    and DKMS installed its module (and, under Secure Boot, the MOK was enrolled): /dev/kfd, the KFD topology
    and the render nodes appear as the profile describes them with the driver loaded (DRIVER_TREE)."""
    import base64, grp
    tree_file = f"{STATE}/driver-tree.json"
    if os.path.exists("/dev/kfd") or not os.path.exists(tree_file) or not installed("amdgpu-dkms"):
        return
    if not os.path.isdir("/var/lib/dkms/amdgpu") or (secure_boot() and not os.path.exists(f"{STATE}/mok-enrolled")):
        return
    with open(tree_file) as fh:
        tree = json.load(fh)
    for d in tree["dirs"]:
        os.makedirs("/" + d, exist_ok=True)
    for rel, data in tree["files"]:
        os.makedirs(os.path.dirname("/" + rel), exist_ok=True)
        with open("/" + rel, "wb") as fh:
            fh.write(base64.b64decode(data))
    gid = grp.getgrnam("render").gr_gid
    for rel in tree["nodes"]:
        os.makedirs(os.path.dirname("/" + rel), exist_ok=True)
        open("/" + rel, "w").close()
        os.chown("/" + rel, 0, gid)
        os.chmod("/" + rel, 0o660)
    print("rehearsal: the amdgpu module of amdgpu-dkms loaded at boot: /dev/kfd is present")

bid = str(uuid.uuid4())
with open("/proc/sys/kernel/random/boot_id", "r+") as fh:  # in place: the file is bound over procfs's
    fh.truncate(0)
    fh.write(bid + "\n")
with open(f"{LOG}/reboots.log", "a") as fh:
    fh.write(bid + "\n")
print(f"rehearsal: {TOOL} {' '.join(ARGS)}: the machine rebooted (new boot id {bid})".replace("  ", " "))
load_driver()
'''

SYSTEMCTL = _COMMON + r'''
words = [a for a in ARGS if not a.startswith("-")]
if not words:
    fail("systemctl (rehearsal): a verb is needed")
verb, units = words[0], words[1:]
wants = "/etc/systemd/system/multi-user.target.wants"
if verb in ("reboot", "poweroff", "halt"):
    os.execv("/usr/sbin/reboot", ["reboot"])
if verb == "enable":
    for u in units:
        if not os.path.isfile(f"/etc/systemd/system/{u}") and not os.path.isfile(f"/lib/systemd/system/{u}"):
            fail(f"Failed to enable unit: Unit file {u} does not exist.")
        os.makedirs(wants, exist_ok=True)
        if not os.path.islink(f"{wants}/{u}"):
            target = f"/etc/systemd/system/{u}" if os.path.isfile(f"/etc/systemd/system/{u}") else f"/lib/systemd/system/{u}"
            os.symlink(target, f"{wants}/{u}")
            print(f"Created symlink {wants}/{u} \u2192 {target}.")
    sys.exit(0)
if verb == "disable":
    for u in units:
        if os.path.islink(f"{wants}/{u}"):
            os.unlink(f"{wants}/{u}")
            print(f"Removed {wants}/{u}.")
    sys.exit(0)
if verb == "is-enabled":
    ok = bool(units) and all(os.path.islink(f"{wants}/{u}") for u in units)
    print("enabled" if ok else "disabled")
    sys.exit(0 if ok else 1)
if verb in ("daemon-reload", "start", "stop", "restart", "try-restart", "reload", "status", "is-active", "mask",
            "unmask"):
    sys.exit(0)
fail(f"systemctl (rehearsal): '{verb}' is not modelled")
'''

MODPROBE = _COMMON + r'''
mods = [a for a in ARGS if not a.startswith("-")]
for m in mods:
    if m not in ("amdgpu", "kfd"):
        fail(f"modprobe: FATAL: Module {m} not found in directory /lib/modules/rehearsal")
if "-r" not in ARGS and "amdgpu" in mods and secure_boot() and installed("amdgpu-dkms") \
        and not os.path.exists(f"{STATE}/mok-enrolled"):
    fail("modprobe: ERROR: could not insert 'amdgpu': Key was rejected by service")
'''

DKMS = _COMMON + r'''
import shutil
def opt(flag):
    if flag in ARGS and ARGS.index(flag) + 1 < len(ARGS):
        return ARGS[ARGS.index(flag) + 1]
    for a in ARGS:
        if "/" in a and not a.startswith("-") and a != ARGS[0]:
            return {"-m": a.split("/")[0], "-v": a.split("/")[1]}[flag]
    return None
verb = ARGS[0] if ARGS else ""
if verb == "status":
    base = "/var/lib/dkms"
    for m in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        for v in sorted(os.listdir(f"{base}/{m}")):
            state = "installed" if os.path.exists(f"{base}/{m}/{v}/rehearsal-installed") else "added"
            print(f"{m}/{v}, rehearsal-kernel, x86_64: {state}")
    sys.exit(0)
m, v = opt("-m"), opt("-v")
if not m or not v:
    fail(f"dkms (rehearsal): {verb} needs -m MODULE -v VERSION")
tree = f"/var/lib/dkms/{m}/{v}"
if verb == "add":
    if not os.path.isfile(f"/usr/src/{m}-{v}/dkms.conf"):
        fail(f"Error! Could not find module source directory /usr/src/{m}-{v}")
    os.makedirs(tree, exist_ok=True)
    if not os.path.islink(f"{tree}/source"):
        os.symlink(f"/usr/src/{m}-{v}", f"{tree}/source")
    print(f"Creating symlink {tree}/source -> /usr/src/{m}-{v}")
elif verb in ("build", "install"):
    if not os.path.isdir(tree):
        fail(f"Error! The module/version combo: {m}-{v} is not located in the DKMS tree.")
    with open(f"{tree}/rehearsal-{'built' if verb == 'build' else 'installed'}", "w") as fh:
        fh.write("a root without a kernel: dkms would have built this module for the installed kernels\n")
    with open(f"{LOG}/dkms.log", "a") as fh:
        fh.write(f"{verb} {m}/{v}: would have {'built' if verb == 'build' else 'installed'} the module\n")
    print(f"rehearsal: dkms {verb} {m}/{v} (no kernel here: recorded, not built)")
elif verb == "remove":
    shutil.rmtree(tree, ignore_errors=True)
    try:
        os.rmdir(f"/var/lib/dkms/{m}")
    except OSError:
        pass
    print(f"Deleting module {m}-{v} completely from the DKMS tree.")
else:
    fail(f"dkms (rehearsal): '{verb}' is not modelled")
'''

NOOP = _COMMON + r'''
print(f"rehearsal: {TOOL} {' '.join(ARGS)} (no kernel or initramfs here: recorded)".replace("  ", " "))
'''

MOKUTIL = _COMMON + r'''
if "--sb-state" in ARGS:
    print("SecureBoot enabled" if secure_boot() else "SecureBoot disabled")
    sys.exit(0)
pending = f"{STATE}/mok-pending"
if "--import" in ARGS:
    if not any(a.startswith(("--root-pw", "--hash-file")) for a in ARGS) and not sys.stdin.isatty():
        fail("Failed to get password")
    os.makedirs(STATE, exist_ok=True)
    with open(pending, "w") as fh:
        fh.write(" ".join(ARGS) + "\n")
    sys.exit(0)
if "--list-new" in ARGS:
    print(open(pending).read() if os.path.exists(pending) else "MokNew is empty")
    sys.exit(0)
fail("mokutil (rehearsal): only --sb-state, --import and --list-new are modelled")
'''

# path inside the root (where Debian's package puts the real one) -> script
STANDINS = {
    "/usr/sbin/reboot": REBOOT, "/usr/sbin/shutdown": REBOOT, "/usr/sbin/poweroff": REBOOT,
    "/usr/bin/systemctl": SYSTEMCTL, "/usr/sbin/modprobe": MODPROBE, "/usr/sbin/dkms": DKMS,
    "/usr/sbin/update-initramfs": NOOP, "/usr/bin/mokutil": MOKUTIL,
}


DRIVER_TREE = f"{STATE_DIR}/driver-tree.json"  # what the reboot stand-in lays once amdgpu-dkms is installed


def record_driver_tree(root: Path, files: tuple[tuple[str, bytes], ...], dirs: tuple[str, ...],
                       nodes: tuple[str, ...]) -> None:
    """For a profile booted without the amdgpu driver: what the loaded driver shows, for the reboot stand-in."""
    import base64
    import json

    p = root / DRIVER_TREE
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps({"files": [[rel, base64.b64encode(data).decode()] for rel, data in files],
                             "dirs": list(dirs), "nodes": list(nodes)}))


class RealProgramPresent(RealRootError):
    """The root has the real program where a stand-in would go."""


def _divert(root: Path, path: str) -> None:
    """A package of the root ships the real program (Debian's kmod brings modprobe, a dependency of its
    rocminfo): Debian's own way aside, ``dpkg-divert --local --rename`` to PATH.distrib, so the package's
    upgrades and removal respect the stand-in; refused when it cannot be diverted."""
    from wizard.realroot import enter

    proc = enter.run(root, ["dpkg-divert", "--local", "--rename", "--divert", f"{path}.distrib", "--add", path],
                     user=enter.ROOT_USER, timeout=60)
    if proc.returncode != 0 or not os.path.lexists(root / f"{path.lstrip('/')}.distrib"):
        raise RealProgramPresent(f"{root}: {path} is a real program and cannot be diverted "
                                 f"({(proc.stderr.strip().splitlines() or ['no output'])[-1]}); "
                                 "a stand-in would shadow it")


def install(root: Path) -> tuple[str, ...]:
    """Write the stand-ins into the root; returns their paths inside it."""
    for path, text in STANDINS.items():
        p = root / path.lstrip("/")
        if p.exists() or p.is_symlink():
            try:
                ours = MARK in p.read_text(encoding="utf-8", errors="replace")[:300]
            except OSError:
                ours = False
            if not ours:
                _divert(root, path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text.replace("(MARK)", MARK), encoding="utf-8")
        os.chmod(p, 0o755)
    for sub in (LOG_DIR, STATE_DIR):
        (root / sub).mkdir(parents=True, exist_ok=True)
    return tuple(STANDINS)


def calls(root: Path) -> list[dict[str, object]]:
    """The stand-ins' call log, oldest first."""
    import json

    p = root / LOG_DIR / "calls.log"
    if not p.is_file():
        return []
    return [json.loads(line) for line in p.read_text().splitlines() if line.strip()]
