"""Typed values shared by every layer: Facts (what the machine is) and Actions (what a step does).

Everything here is a frozen record (``wizard.record``) with no behaviour beyond small derived views, so the
probes, the knowledge base, the diagnoser, the planner, the runner and both front ends can
exchange them freely. Unknown is ``None``, never a guess.
"""

from __future__ import annotations

from enum import Enum

from wizard import lazy_re
from wizard.record import asdict, field, is_record, record

TYPE_CHECKING = False  # typing's, not imported at run time (wizard/record.py says why)
if TYPE_CHECKING:
    from typing import Any, Iterable, Sequence



# --------------------------------------------------------------------------- evidence


@record
class Evidence:
    """Where a fact came from: a file or a command, and the line that said it."""

    source: str  # e.g. "sys/class/kfd/kfd/topology/nodes/1/properties", "rocminfo.txt", "env"
    line: int | None = None  # 1-based line number in the source, when known
    text: str | None = None  # the line itself (stripped), when short enough to be useful

    def __str__(self) -> str:
        where = self.source if self.line is None else f"{self.source}:{self.line}"
        return f"{where}: {self.text}" if self.text else where


@record
class EvidenceText:
    """One text the wizard read: a bundle file, a segment of a paste, kernel log lines, an error file.

    Known-issue signatures are matched against every one of these, and a finding names ``source``
    and the line that matched. ``kind`` says which tool printed it (a bundle file name such as
    "rocminfo.txt") or "text" for prose and logs; ``own`` is False for another person's post in a
    pasted thread (it describes their machine, not this one).
    """

    source: str  # "paste.txt", "rocminfo.txt", "--paste", "--error-file", "journalctl -k"
    text: str
    first_line: int = 1  # line number of text's first line within source
    kind: str = "text"
    own: bool = True
    command: str | None = None  # the command that printed it, when the paste shows one
    post: int = 0  # which post of a pasted thread (0: the first, or no thread structure)


@record
class ProbeError:
    """A probe that could not read its source. Recorded on Facts; never raised through detect()."""

    probe: str
    message: str


# --------------------------------------------------------------------------- facts


# A GPU target's name as tools write it (gfx803, gfx90a, gfx942, gfx1100, gfx1250): the one pattern every reader of
# a text uses for it, without the boundaries each reader puts around it
GFX_TARGET = r"gfx(?:[6-9][0-9][0-9a-f]|1[0-3][0-9][0-9a-f])"

# Fedora, RHEL and its rebuilds, by os-release ID or ID_LIKE: dnf's systems, whose boot entries grubby edits
REDHAT_FAMILY = frozenset({"fedora", "rhel", "centos", "rocky", "almalinux", "ol"})
# apt's and dpkg's systems, zypper's, pacman's: by os-release ID or ID_LIKE (openSUSE says "suse opensuse")
DEBIAN_FAMILY = frozenset({"debian", "ubuntu"})
SUSE_FAMILY = frozenset({"suse", "sles", "opensuse", "opensuse-leap", "opensuse-tumbleweed"})
ARCH_FAMILY = frozenset({"arch"})
# The distribution family a command's tool belongs to (os-release's ID or an ID_LIKE word must be one of it): the
# package tools, grubby and rpm-ostree (kernel arguments on Fedora, RHEL and its rebuilds), and amdgpu-install, which
# AMD's install pages offer for Ubuntu, RHEL, SLES and Oracle Linux only, as a .deb or an .rpm
# (wizard/kb/derived_install_pages.json, from ROCm/rocm-install-on-linux docs/conf.py)
TOOL_FAMILY: dict[str, frozenset[str]] = {
    "apt": DEBIAN_FAMILY, "apt-get": DEBIAN_FAMILY, "dpkg": DEBIAN_FAMILY, "dnf": REDHAT_FAMILY, "yum": REDHAT_FAMILY,
    "rpm-ostree": REDHAT_FAMILY, "grubby": REDHAT_FAMILY, "zypper": SUSE_FAMILY, "pacman": ARCH_FAMILY,
    "amdgpu-install": DEBIAN_FAMILY | REDHAT_FAMILY | SUSE_FAMILY}


@record
class OsInfo:
    id: str | None = None  # "ubuntu", "debian", "rhel", "fedora", "opensuse-leap", "arch" ...
    version: str | None = None  # "22.04", "9.4", "12"
    codename: str | None = None  # "jammy", "noble", "bookworm"
    kernel: str | None = None  # "6.8.0-48-generic"
    like: tuple[str, ...] = ()  # ID_LIKE
    pretty_name: str | None = None
    arch: str | None = None  # "x86_64"
    package_manager: str | None = None  # "apt", "dnf", "zypper", "pacman"
    secure_boot: bool | None = None
    wsl: bool | None = None  # Windows Subsystem for Linux (a "microsoft" kernel, /dev/dxg)
    ostree: bool | None = None  # an (rpm-)ostree system: os-release's OSTREE_VERSION, /run/ostree-booted
    sources: tuple[Evidence, ...] = ()


@record
class Gpu:
    name: str | None = None  # marketing name
    gfx: str | None = None  # the hardware's own target, e.g. "gfx1100"
    gfx_reported: str | None = None  # what the runtime reports (differs when an override is in force)
    pci_id: str | None = None  # "1002:744c"
    bdf: str | None = None  # "0000:03:00.0"
    integrated: bool | None = None
    vram_bytes: int | None = None
    family: str | None = None  # "RDNA3", "RDNA3.5", "CDNA3", "GCN5" ...
    codename: str | None = None  # the chip's codename per the knowledge base ("Navi 31", "Ellesmere (Polaris 10)")
    hip_index: int | None = None  # HIP ordinal when it can be known
    kfd_node: int | None = None
    render_node: str | None = None  # "renderD128"
    sources: tuple[Evidence, ...] = ()


@record
class Driver:
    loaded: bool | None = None  # amdgpu module loaded
    kind: str | None = None  # "in-tree" | "dkms"
    version: str | None = None  # /sys/module/amdgpu/version (DKMS sets it) or dkms status
    dkms_packages: tuple[str, ...] = ()  # e.g. ("amdgpu-dkms 1:6.8.5.60204-...",)
    kfd_present: bool | None = None
    kfd_accessible: bool | None = None  # the current user can open /dev/kfd read-write
    kfd_error: str | None = None  # why it cannot: "Permission denied", "No such file or directory", ...
    render_nodes: tuple[str, ...] = ()
    render_accessible: bool | None = None
    user: str | None = None
    groups: tuple[str, ...] = ()  # the user's groups
    in_render_group: bool | None = None
    in_video_group: bool | None = None
    # render/video groups the user is given (/etc/group) that this login session does not have yet: added after
    # it began, so only a new login (or newgrp) gets them; empty where the session's own groups were not read
    groups_pending: tuple[str, ...] = ()
    sources: tuple[Evidence, ...] = ()


@record
class RocmInstall:
    version: str | None
    stream: str  # "legacy" | "core-sdk" | "pip" | "distro"
    path: str | None = None  # "/opt/rocm-6.2.0", "/opt/rocm/core-10.0", a venv's site-packages
    how: str = ""  # "version-file", "package", "pip", "rocminfo"
    packages: tuple[str, ...] = ()  # installed package names that belong to it (exact)
    sources: tuple[Evidence, ...] = ()


@record
class Rocm:
    version: str | None = None  # the release /opt/rocm points at (or the only one)
    stream: str | None = None
    installs: tuple[RocmInstall, ...] = ()
    apt_sources: tuple[str, ...] = ()  # repo lines mentioning repo.radeon.com / repo.amd.com
    pins: tuple[str, ...] = ()  # /etc/apt/preferences.d files that pin AMD repos
    amdgpu_pro: str | None = None  # where a proprietary amdgpu-pro runtime shows (a path on the library path)
    sources: tuple[Evidence, ...] = ()  # where the version came from when no install record holds it


class FoundBy(str, Enum):
    """How a Python environment was found (``detect --json``: ``python_envs[].found[].how``)."""

    NAMED = "named"  # --python PATH
    ACTIVE = "active"  # $VIRTUAL_ENV / $CONDA_PREFIX in force
    PATH = "path"  # the python3 a command typed now would run, and /usr/bin/python3
    PROCESS = "process"  # the interpreter of a running process (/proc/PID: exe, cmdline, cwd)
    SERVICE = "service"  # a systemd unit's ExecStart
    APP = "app"  # inside an application folder of a home or of /opt (ComfyUI/venv, installer_files/env ...)
    FOLDER = "folder"  # a folder of a home or of /opt that is itself a venv (~/torch-env)
    VENVS = "venvs"  # ~/venvs, ~/.venvs, ~/.virtualenvs
    PYENV = "pyenv"  # ~/.pyenv/versions/*
    CONDA = "conda"  # a conda root (also a folder of a home or of /opt: /opt/conda), its envs, environments.txt
    PIPX = "pipx"  # pipx's venvs (~/.local/share/pipx, ~/.local/pipx, /opt/pipx, $PIPX_HOME)
    UV_TOOL = "uv-tool"  # uv tool environments (~/.local/share/uv/tools, $UV_TOOL_DIR)
    USER_SITE = "user-site"  # ~/.local (pip install --user)
    SYSTEM = "system"  # /usr, /usr/local
    RECORDED = "recorded"  # a bundle's collect_env.txt / pip-freeze.txt


IN_USE = (FoundBy.PROCESS, FoundBy.SERVICE)


@record
class Found:
    """One way an environment was found: what shows it, and the application it serves when known."""

    how: FoundBy
    where: str  # the folder, "pid 4242", or the unit file and line that shows it
    text: str | None = None  # the command line or the ExecStart line
    app: str | None = None  # the application folder beside the environment (~/ComfyUI), when known

    def __str__(self) -> str:
        return f"{self.how.value}: {self.where}" + (f": {self.text}" if self.text else "")


@record
class PythonEnv:
    path: str | None  # venv / conda prefix; None when only recorded output is known
    python: str | None = None  # interpreter path (live) or version (bundle)
    python_version: str | None = None  # "3.12"
    torch: str | None = None  # "2.5.1+rocm6.2"
    torchvision: str | None = None
    torchaudio: str | None = None
    triton: str | None = None  # pytorch-triton-rocm / triton version
    hip: str | None = None  # torch.version.hip as recorded in the wheel ("6.2.41133-dd7f95766")
    build: str | None = None  # "rocm" | "cuda" | "cpu" | None
    gfx_targets: tuple[str, ...] = ()  # gfx targets the wheel carries (read from its files)
    rocm_sdk: str | None = None  # TheRock pip ROCm (rocm / _rocm_sdk_core) version, if any
    rocm_sdk_targets: tuple[str, ...] = ()  # device packages installed (gfx targets)
    placeholders: tuple[str, ...] = ()  # PyPI's empty placeholders under ROCm's names ("rocm 0.1.0")
    numpy: str | None = None
    kind: str | None = None  # "venv" | "conda" | "system" | "user-site" | "recorded"
    sources: tuple[Evidence, ...] = ()
    found: tuple[Found, ...] = ()  # how it was found (several ways: a running process of an app folder's venv)

    @property
    def app(self) -> str | None:
        """The application folder this environment serves, when discovery saw one."""
        return next((f.app for f in self.found if f.app), None)

    @property
    def in_use(self) -> bool:
        """A running process or a service runs this environment's interpreter."""
        return any(f.how in IN_USE for f in self.found)


def system_torch(envs: Sequence[PythonEnv]) -> PythonEnv | None:
    """The system interpreter's environment (/usr, /usr/local) when it holds a torch: a distribution's
    python3-torch, which other environments may see (``Facts.torch_shadows``)."""
    return next((e for e in envs if e.kind == "system" and e.torch and e.path in ("/usr", "/usr/local")), None)


@record
class TorchShadow:
    """One way the system's own torch (Debian's python3-torch in dist-packages) is what ``import torch`` loads
    where the user may expect another, or none."""

    how: str  # "venv" (made with --system-site-packages, no torch of its own) | "PYTHONPATH" | "python3"
    where: str  # the venv's prefix; where PYTHONPATH is set ("~/.bashrc:3"); the python3 a command runs
    detail: str  # what was read, with its line where there is one


@record
class EnvSetting:
    """One assignment of a relevant variable, and where it is made."""

    name: str
    value: str
    where: str  # "environment", "/etc/environment:3", "~/.bashrc:12", "<venv>/bin/activate:40", "env.txt"
    # the systemd unit whose processes get it ("ollama.service": its Environment= or EnvironmentFile=, where names
    # the file and line); None: the shell's and the process environment's, what a program started by hand sees
    service: str | None = None


def values_in_force(settings: Iterable[EnvSetting]) -> dict[str, str]:
    """Each variable's value where a program is started by hand: the first assignment wins (``settings`` in
    precedence order); a service's own settings (``EnvSetting.service``) are not the shell's."""
    out: dict[str, str] = {}
    for s in settings:
        if s.service is None:
            out.setdefault(s.name, s.value)
    return out


def unit_name(service: str) -> str:
    """"ollama" or "ollama.service" -> "ollama.service"."""
    return service if service.endswith(".service") else f"{service}.service"


@record
class Docker:
    docker: str | None = None  # path of the docker client, or None
    podman: str | None = None
    in_docker_group: bool | None = None
    sources: tuple[Evidence, ...] = ()


@record
class Conflict:
    """Two views of the machine that disagree (e.g. runtime gfx vs hardware gfx)."""

    id: str
    message: str
    evidence: tuple[Evidence, ...] = ()


@record
class Facts:
    os: OsInfo = field(default_factory=OsInfo)
    gpus: tuple[Gpu, ...] = ()
    driver: Driver = field(default_factory=Driver)
    rocm: Rocm = field(default_factory=Rocm)
    python_envs: tuple[PythonEnv, ...] = ()
    env: tuple[EnvSetting, ...] = ()  # every relevant assignment found, in precedence order
    torch_shadows: tuple[TorchShadow, ...] = ()  # what the system's own torch shadows (none without one)
    docker: Docker = field(default_factory=Docker)
    disk_free_bytes: int | None = None  # free space where ROCm installs (/opt, else /)
    home_free_bytes: int | None = None  # free space where venvs live
    is_root: bool | None = None
    ssh_session: bool | None = None
    in_container: bool | None = None
    other_gpus: tuple[str, ...] = ()  # non-AMD display controllers ("10de:2684 NVIDIA ...")
    services: tuple[str, ...] = ()  # systemd service units with a unit file, not masked ("ollama.service"), where read
    dmesg: tuple[str, ...] = ()  # amdgpu/kfd lines, when recorded
    error_text: str | None = None  # traceback.txt of a bundle
    texts: tuple[EvidenceText, ...] = ()  # every text read (bundle files, paste segments, kernel log)
    origin: str = "live"  # "live", "bundle:<path>", "sandbox:<path>"
    conflicts: tuple[Conflict, ...] = ()
    errors: tuple[ProbeError, ...] = ()

    # -- derived views -------------------------------------------------------------
    @property
    def env_values(self) -> dict[str, str]:
        """The value in force for each variable where a program is started by hand: the first assignment wins
        (precedence order); a service's own settings (``EnvSetting.service``) are not the shell's."""
        return values_in_force(self.env)

    def has_service(self, service: str) -> bool:
        """A unit file of ``service`` ("ollama" or "ollama.service") was found, not masked: the service runs with its
        unit's environment, not with a shell's."""
        return unit_name(service) in self.services

    def service_env(self, service: str) -> dict[str, str]:
        """The relevant variables a systemd service sets for its processes (``service``: "ollama" or
        "ollama.service"), each the value in force there (a system unit's before a user unit's of the same name)."""
        unit = unit_name(service)
        out: dict[str, str] = {}
        for s in self.env:
            if s.service == unit:
                out.setdefault(s.name, s.value)
        return out

# --------------------------------------------------------------------------- actions

# An entry of Action.changes saying the action changes the kernel driver (a DKMS module installed or
# removed): the new driver is only loaded after a reboot, so a run that did this must say so.
KERNEL_DRIVER = "kernel:amdgpu"
# The package of AMD's DKMS kernel driver (the driver plan installs it; a thread saying it installed it and the GPU
# works reads as that plan applied: wizard/fix_plans.py)
DRIVER_PACKAGE = "amdgpu-dkms"
# Action.requires: what the machine must provide for the action to mean anything. An executor that
# cannot provide it (a rehearsal machine has no GPU) skips the step and says why, never "passes" it.
NEEDS_GPU = "gpu"


_URL_PASSWORD = lazy_re.compile(r"(?i)(\b[a-z][a-z0-9+.-]{0,20}://[^\s/:@]{1,256}:)[^\s/@]{1,256}(@)")


def hide_passwords(text: str) -> str:
    """``text`` with every URL's password (``scheme://user:PASS@host``) as ``***``: what is shown, logged or
    journalled of a mirror URL with credentials (the plan itself keeps them: its commands need them)."""
    return _URL_PASSWORD.sub(r"\1***\2", text) if "@" in text else text


@record
class Action:
    """One command a step wants run. Steps build these; only the runner executes them."""

    argv: tuple[str, ...]
    description: str = ""
    root: bool = False  # needs root: run through `sudo -n --` when not root
    as_user: bool = False  # user-scope (venv, pip): run as the invoking user even under sudo
    check: tuple[str, ...] | None = None  # argv whose exit 0 means "already done" (re-probed on resume)
    changes: tuple[str, ...] = ()  # what it changes (paths, packages, "dpkg", "venv:<path>", KERNEL_DRIVER)
    undo: tuple[str, ...] | None = None  # argv that reverts it, where one exists
    destructive: bool = False  # removes something; must come after a backup
    env: tuple[tuple[str, str], ...] = ()  # extra environment for this action
    ok_codes: tuple[int, ...] = (0,)
    timeout: float | None = None  # seconds; None = no limit
    redact: tuple[int, ...] = ()  # argv positions shown as *** in logs and scripts
    idempotent: bool = True  # safe to repeat if interrupted mid-way
    name: str | None = None  # a stable id (preflight checks: what --skip-preflight NAME names)
    requires: tuple[str, ...] = ()  # NEEDS_GPU ...
    repeat: bool = False  # a guard: runs again every time its step is entered (a resume after a crash
    #                       repairs what the crash left), even when the journal says it ran

    def shown(self) -> str:
        """The argv as logs, the journal and the screen show it: redacted positions as ***, and a URL's password
        (``https://user:PASS@mirror``) as *** wherever it stands."""
        import shlex

        parts = ["***" if i in self.redact else hide_passwords(a) for i, a in enumerate(self.argv)]
        return shlex.join(parts)

    def command(self) -> tuple[str, ...]:
        """The argv that runs, environment included (``env K=V argv``): the same for the runner and the
        dry-run script, which adds only the privilege prefix (``sudo --``) in front of it."""
        if not self.env:
            return self.argv
        return ("env", *(f"{k}={v}" for k, v in self.env), *self.argv)


PREFLIGHT = "preflight"  # the kind of step 0 of every planned run: the checks before the first change


@record
class StepPlan:
    """A step resolved against the facts: its actions, in order."""

    kind: str  # "preflight", "backup", "purge", "rocm_install", "pip_pin", "env", "groups", "reboot", "verify", ...
    title: str
    actions: tuple[Action, ...] = ()
    params: tuple[tuple[str, Any], ...] = ()
    reboot: bool = False  # this step ends in a reboot
    destructive: bool = False
    notes: tuple[str, ...] = ()  # shown in review and as comments in the dry-run script
    skipped_reason: str | None = None  # set when the step has nothing to do on this machine
    effects: tuple[str, ...] = ()  # what later steps must know it does: KERNEL_DRIVER, "mok"
    # the step's done-check on the machine (its kind states it): exit 0 when the machine has what the step
    # makes, read now, never from a record. A step a journal or a progress file records as done whose check
    # fails is drift: every executor reports it and runs the step again. None: the record is the answer
    # (a backup is never made again over a changed machine; a reboot is known by its boot id)
    check: Action | None = None

    def param(self, name: str, default: Any = None) -> Any:
        for k, v in self.params:
            if k == name:
                return v
        return default


@record
class ResolvedPlan:
    name: str
    title: str
    why: str
    target: tuple[tuple[str, Any], ...]  # ("rocm", "6.2.4"), ("torch", "2.5.1"), ("index", "rocm6.2") ...
    steps: tuple[StepPlan, ...]  # a planned run's step 0 is its preflight (kind PREFLIGHT)
    source_file: str | None = None
    state_dir: str | None = None  # the state dir the plan writes into (its backup), as the machine sees it
    # the facts it was made from and depends on (wizard.binding): ("os", "ubuntu 22.04"), ("pci", ...) ...;
    # its preflight's first check stops it on a machine that does not have them
    machine: tuple[tuple[str, str], ...] = ()

    @property
    def preflight(self) -> tuple[Action, ...]:
        """The checks of step 0 (none for a plan built without the planner)."""
        if self.steps and self.steps[0].kind == PREFLIGHT:
            return self.steps[0].actions
        return ()

    @property
    def size(self) -> str:
        """"10 steps (1 skipped), 51 commands": the one count of a plan every view shows (preflight checks
        are commands; a skipped step is a step that runs nothing)."""
        skipped = sum(1 for s in self.steps if s.skipped_reason is not None)
        commands = sum(len(s.actions) for s in self.steps)
        return (f"{len(self.steps)} steps" + (f" ({skipped} skipped)" if skipped else "")
                + f", {commands} command{'s' if commands != 1 else ''}")


def to_jsonable(obj: Any) -> Any:
    """Dataclasses -> plain JSON types (tuples become lists)."""
    if is_record(obj):
        return {k: to_jsonable(v) for k, v in asdict(obj).items()}
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    return obj
