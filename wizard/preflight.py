"""Preflight: checks that must pass before a plan's first change (shown in the dry-run script).

Each check is an Action whose non-zero exit stops the run: the package URL exists for this distro
(``wget --spider``), the wheel exists on its index for the target Python (index page), free disk,
root through sudo, a free dpkg lock, Secure Boot vs DKMS; an ssh session only prints advice.
"""

from __future__ import annotations

from wizard.model import Action, StepPlan

GIB = 1 << 30
# the wizard's own margins (not vendor figures): a full ROCm usecase, a torch venv, an image
DISK_ROCM = 25 * GIB
DISK_VENV = 15 * GIB
DISK_IMAGE = 40 * GIB

WHEEL_ON_INDEX = """\
import re, sys, urllib.request
index, name, version = sys.argv[1:4]
tag = "cp%d%d" % sys.version_info[:2]
url = index.rstrip("/") + "/" + name + "/"
try:
    page = urllib.request.urlopen(url, timeout=60).read().decode("utf-8", "replace")
except Exception as exc:
    sys.exit(f"{url}: {exc}")
ver = r"[0-9][^-]*" if version == "any" else re.escape(version) + r"(?:%2B|\\+)?[^-]*"
if not re.search(re.escape(name.replace("-", "_")) + "-" + ver + "-" + tag + "-", page):
    sys.exit(f"no {name} {version} wheel for {tag} (this Python) on {index}")
print(f"{name} {version} for {tag} is on {index}")"""
DISK_FREE = """\
import shutil, sys
path, need = sys.argv[1], int(sys.argv[2])
free = shutil.disk_usage(path).free
if free < need:
    sys.exit(f"only {free >> 30} GiB free on {path}; {need >> 30} GiB needed")"""
DPKG_LOCK_FREE = """\
import fcntl, sys
for path in sys.argv[1:]:
    try:
        f = open(path, "a")
    except FileNotFoundError:
        continue
    try:
        fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        sys.exit(f"{path} is locked: another apt/dpkg (unattended-upgrades?) is running; wait for it")
    fcntl.lockf(f, fcntl.LOCK_UN)"""
SB_OFF = ('if mokutil --sb-state 2>/dev/null | grep -q "SecureBoot enabled"; then '
          'echo "Secure Boot is on and the plan installs a DKMS module without MOK enrolment" >&2; exit 1; fi')
SSH_ADVICE = ('if [ -n "${SSH_CONNECTION:-}" ] && [ -z "${TMUX:-}${STY:-}" ]; then '
              'echo "warning: over ssh without tmux/screen: a dropped connection stops the run; '
              'start tmux or screen first" >&2; fi')
HAS_COMMAND = 'command -v "$1" >/dev/null 2>&1 || { echo "$1 is not installed" >&2; exit 1; }'


def build(*, steps: tuple[StepPlan, ...], pm: str | None, package_url: str | None, wheel_check: tuple[str, str, str]
          | None, check_python: str, venv_parent: str | None, dkms_without_mok: bool,
          docker_tool: str | None) -> tuple[Action, ...]:
    acts = [a for s in steps for a in s.actions]
    kinds = {s.kind for s in steps if s.actions}
    out: list[Action] = []
    if any(a.root for a in acts) or any(s.reboot for s in steps):
        out.append(Action(argv=("sh", "-c", SSH_ADVICE), description="ssh session: advise tmux/screen"))
    if any(a.root for a in acts):
        out.append(Action(argv=("true",), root=True, description="root is available through sudo"))
    if pm == "apt" and kinds & {"purge", "rocm_install"}:
        out.append(Action(argv=("python3", "-c", DPKG_LOCK_FREE, "/var/lib/dpkg/lock-frontend", "/var/lib/dpkg/lock"),
                          root=True, description="the dpkg/apt lock is free"))
    if package_url:
        out.append(Action(argv=("wget", "-q", "--spider", package_url),
                          description="the amdgpu-install package exists for this distro", timeout=120))
    if wheel_check:
        index, name, version = wheel_check
        out.append(Action(argv=(check_python, "-c", WHEEL_ON_INDEX, index, name, version),
                          description=f"{name} {version} exists on {index} for this Python", timeout=120))
    if "rocm_install" in kinds:
        out.append(Action(argv=("python3", "-c", DISK_FREE, "/opt", str(DISK_ROCM)),
                          description="disk space for ROCm under /opt"))
    if "pip_pin" in kinds and venv_parent:
        out.append(Action(argv=("python3", "-c", DISK_FREE, venv_parent, str(DISK_VENV)),
                          description=f"disk space for the venv under {venv_parent}"))
    if "docker" in kinds:
        out.append(Action(argv=("python3", "-c", DISK_FREE, "/var/lib", str(DISK_IMAGE)),
                          description="disk space for the image"))
        if docker_tool:
            out.append(Action(argv=("sh", "-c", HAS_COMMAND, "sh", docker_tool),
                              description=f"{docker_tool} is installed"))
    if dkms_without_mok:
        out.append(Action(argv=("sh", "-c", SB_OFF), description="Secure Boot does not block the DKMS module"))
    return tuple(out)
