"""Preflight checks: step 0 of every planned run, executed by the runner before the first change.

Each check is an :class:`~wizard.model.Action` with a stable ``name`` (what ``--skip-preflight NAME``
names) whose non-zero exit stops the run. Step kinds contribute the checks they need (a ROCm install
needs the package URL, the package-manager lock and disk under /opt; a pip step needs the target
Python's version and its wheel on the index); the planner collects them into step 0.

Every check runs through programs a rehearsal machine stands in for (``wget``, ``sh``, ``python3``,
``mokutil``), so a sandbox answers from its model of the repositories exactly where the real check
would pass, and a test can make one fail.
"""

from __future__ import annotations

import re

from wizard.model import PREFLIGHT, Action, StepPlan

GIB = 1 << 30
# the wizard's own margins (not vendor figures): a full ROCm usecase, a torch venv, an image
DISK_ROCM = 25 * GIB
DISK_VENV = 15 * GIB
DISK_IMAGE = 40 * GIB
LOCK_WAIT = 120  # seconds a run waits for another apt/dpkg (or rpm) to let go of its lock

# the names --skip-preflight accepts, in the order a plan runs them
ORDER = ("machine", "ssh", "root", "package-lock", "package-url", "venv-path", "python-version", "wheel", "disk-rocm",
         "disk-venv", "disk-image", "docker", "secure-boot")
DPKG_LOCKS = ("/var/lib/dpkg/lock-frontend", "/var/lib/dpkg/lock")
RPM_LOCKS = ("/var/lib/rpm/.rpm.lock",)

# python3 -c LOCK_WAIT SECONDS PATH...: wait (with a line every 10 s naming the holder) until no other
# process holds a write lock on the package manager's lock files; fail after SECONDS.
LOCK_WAIT_PROGRAM = """\
import fcntl, os, struct, sys, time
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
        cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\\0", b" ").decode(errors="replace").strip()
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
    time.sleep(0.5)"""
DISK_FREE = """\
import os, shutil, sys
path, need = sys.argv[1], int(sys.argv[2])
while not os.path.exists(path) and os.path.dirname(path) != path:
    path = os.path.dirname(path)
free = shutil.disk_usage(path).free
if free < need:
    sys.exit(f"only {free / 2**30:.1f} GiB free on {path}; {need >> 30} GiB needed")
print(f"{free / 2**30:.1f} GiB free on {path}")"""
# sh -c PY_VERSION sh PYTHON WANT...: PYTHON's major.minor is one of WANT
PY_VERSION = ('py=$1; shift; v=$("$py" --version 2>&1) || { echo "$py cannot run: $v" >&2; exit 1; }; '
              'v=${v#Python }; mm=$(echo "$v" | cut -d. -f1,2); '
              'for w in "$@"; do [ "$mm" = "$w" ] && { echo "$py is Python $mm"; exit 0; }; done; '
              'echo "$py is Python $mm; the wheel exists for Python $*" >&2; exit 1')
# sh -c WHEEL sh PYTHON INDEX NAME REGEX: the index page of NAME lists a wheel matching REGEX for the
# cpXY tag of PYTHON (REGEX holds "@TAG@" where the tag goes).
WHEEL = ('py=$1 index=$2 name=$3 re=$4; v=$("$py" --version 2>&1) || { echo "$py cannot run: $v" >&2; exit 1; }; '
         'v=${v#Python }; tag=cp$(echo "$v" | cut -d. -f1,2 | tr -d .); '
         'page=$(wget -q -O - "${index%/}/$name/") || { echo "${index%/}/$name/ cannot be read" >&2; exit 1; }; '
         're=$(echo "$re" | sed "s/@TAG@/$tag/g"); '
         'if printf "%s\\n" "$page" | grep -qE -- "$re"; then echo "$name for $tag is on $index"; exit 0; fi; '
         'echo "no $name wheel for $tag (this Python) on $index" >&2; exit 1')
SB_OFF = ('if mokutil --sb-state 2>/dev/null | grep -q "SecureBoot enabled"; then '
          'echo "Secure Boot is on and the plan installs a DKMS module without MOK enrolment" >&2; exit 1; fi')
SSH_ADVICE = ('if [ -n "${SSH_CONNECTION:-}" ] && [ -z "${TMUX:-}${STY:-}" ]; then '
              'echo "warning: over ssh without tmux/screen: a dropped connection stops the run; '
              'start tmux or screen first" >&2; fi')
HAS_COMMAND = 'command -v "$1" >/dev/null 2>&1 || { echo "$1 is not installed" >&2; exit 1; }'
# sh -c VENV_PATH sh PATH: PATH does not exist yet, or is a venv (never a plain directory a venv would be
# poured into, which a rollback could then not tell apart from what was there)
VENV_PATH = ('if [ -e "$1" ] && [ ! -e "$1/pyvenv.cfg" ]; then '
             'echo "$1 exists and is not a Python venv: choose another venv path" >&2; exit 1; fi')


def ssh_advice() -> Action:
    return Action(("sh", "-c", SSH_ADVICE), "ssh session: advise tmux/screen", name="ssh")


def root_available() -> Action:
    return Action(("true",), "root is available through sudo", root=True, name="root")


def package_lock_free(pm: str | None, wait: int) -> Action | None:
    paths = DPKG_LOCKS if pm == "apt" else RPM_LOCKS if pm in ("dnf", "yum", "zypper") else None
    if paths is None:
        return None
    return Action(("python3", "-c", LOCK_WAIT_PROGRAM, str(wait), *paths), root=True, name="package-lock",
                  description=f"the package manager's lock is free (waits up to {wait} s)",
                  timeout=wait + 60)


def url_reachable(url: str, what: str) -> Action:
    return Action(("wget", "-q", "--spider", url), f"{what} exists", timeout=120, name="package-url")


def venv_path(path: str) -> Action:
    return Action(("sh", "-c", VENV_PATH, "sh", path), f"{path} is new or a venv", name="venv-path")


def python_version(python: str, wanted: tuple[str, ...]) -> Action:
    return Action(("sh", "-c", PY_VERSION, "sh", python, *wanted),
                  f"{python} is a Python the wheel exists for ({', '.join(wanted)})", name="python-version",
                  timeout=60)


def wheel_pattern(name: str, version: str) -> str:
    """An ERE for ``name-version(+local)-@TAG@-`` in an index page (``version`` "any": any version)."""
    dist = re.sub(r"[-_.]+", "_", name)
    if version == "any":
        return f"{dist}-[0-9][^-]*-@TAG@-"
    esc = re.sub(r"([.+])", r"\\\1", version)
    return f"{dist}-{esc}((\\+|%2B)[^-]*)?-@TAG@-"


def wheel_on_index(python: str, index_url: str, name: str, version: str, *, pure_ok: bool = False) -> Action:
    """``pure_ok``: a ``py3-none`` wheel counts too (AMD's builds, whose Python tags the knowledge base lacks)."""
    pattern = wheel_pattern(name, version)
    if pure_ok:
        pattern = pattern.replace("-@TAG@-", "-(@TAG@|py3-none)-")
    return Action(("sh", "-c", WHEEL, "sh", python, index_url, name, pattern),
                  f"{name} {version} exists on {index_url} for this Python", timeout=120, name="wheel")


def disk_free(name: str, path: str, need: int, what: str) -> Action:
    return Action(("python3", "-c", DISK_FREE, path, str(need)), f"disk space for {what}", name=name)


def has_command(tool: str) -> Action:
    return Action(("sh", "-c", HAS_COMMAND, "sh", tool), f"{tool} is installed", name="docker")


def secure_boot_off() -> Action:
    return Action(("sh", "-c", SB_OFF), "Secure Boot does not block the DKMS module", name="secure-boot")


def step(checks: list[Action]) -> StepPlan:
    """Step 0: the checks, one per name, in ORDER."""
    by_name: dict[str, Action] = {}
    for c in checks:
        by_name.setdefault(c.name or c.description, c)
    rank = {n: i for i, n in enumerate(ORDER)}
    ordered = sorted(by_name.values(), key=lambda a: rank.get(a.name or "", len(ORDER)))
    return StepPlan(kind=PREFLIGHT, title="Preflight: check everything the plan needs before the first change",
                    actions=tuple(ordered),
                    notes=("each check must pass; a failure stops the run before anything changes "
                           "(--skip-preflight NAME skips a check you know to be wrong, and is journalled)",))
