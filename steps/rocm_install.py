"""rocm_install (TOML kind ``rocm_install``; ``rocm-install`` is accepted): the system ROCm release.

Legacy stream: the distro-specific amdgpu-install package from the knowledge base, AMD's repository
key checked against its pinned fingerprint, an apt pin (priority 600) so distro rocminfo/hipcc
packages cannot shadow AMD's, then ``amdgpu-install -y --usecase=...`` with ``--no-dkms`` unless the
kernel driver is (and stays) DKMS. Core SDK stream: only where the knowledge base has its package
repository for this distro; it has none today, so the step refuses and says which plan works.
"""

from __future__ import annotations

from typing import Sequence

from wizard import lazy_re
from wizard import preflight
from wizard.model import KERNEL_DRIVER, Action, Facts, StepPlan
from wizard.record import record, replace

from ._common import (AT_END, StepContext, StepKind, StepRefused, Undo, UndoContext, installed_target, package_guards,
                      system_path, write_file)

_USECASE_RE = lazy_re.compile(r"^[a-z][a-z0-9]*(,[a-z][a-z0-9]*)*$")
GIB = 1 << 30


@record
class Params:
    usecase: str = "rocm"  # amdgpu-install --usecase
    dkms: str = "auto"  # the kernel driver: "auto" (keep what the machine has), "yes" (DKMS), "no" (in-tree)

    def __post_init__(self) -> None:
        if not _USECASE_RE.match(self.usecase):
            raise ValueError(f"not a comma-separated list of amdgpu-install usecases: {self.usecase!r}")
        if self.dkms not in ("auto", "yes", "no"):
            raise ValueError(f"one of auto, yes, no (got {self.dkms!r})")

# AMD's ROCm repository signing key (the key amdgpu-install installs and apt checks). Its fingerprint:
# `apt-key list` output in https://github.com/ROCm/ROCm/issues/101 (CA8B B472 7A47 B4D0 9B4E E896 9386 B48A
# 1A69 3C5C); the same long key id 9386B48A1A693C5C in apt's EXPKEYSIG error in
# https://github.com/ROCm/ROCm/issues/2362, whose reporter also shows the keyring at /etc/apt/keyrings/rocm.gpg.
ROCM_KEY_FINGERPRINT = "CA8BB4727A47B4D09B4EE8969386B48A1A693C5C"
APT_KEYRING = "/etc/apt/keyrings/rocm.gpg"
# AMD's documented pin (install docs, package-manager method; knowledge: facts.md Q3 "pin 600",
# https://github.com/ROCm/legacy-rocm-build/issues/3656)
APT_PIN_PATH = "/etc/apt/preferences.d/rocm-pin-600"
APT_PIN = "Package: *\nPin: release o=repo.radeon.com\nPin-Priority: 600\n"
# Ubuntu release codenames (https://wiki.ubuntu.com/Releases), for os-release files that lack one
UBUNTU_CODENAMES = {"20.04": "focal", "22.04": "jammy", "24.04": "noble"}
# exactly the pinned key: a keyring holding it and another key would have apt trust both (signed-by)
KEY_CHECK = ('got=$(gpg --show-keys --with-colons "$1" 2>/dev/null | '
             'awk -F: \'$1=="pub"{p=1;next} p&&$1=="fpr"{print $10;p=0}\'); '
             '[ "$got" = "$2" ] || { echo "$1 holds key(s) ${got:-none}, not only the AMD ROCm key $2" >&2; exit 1; }')


# sh -c UNLESS_INSTALLED sh FILE [CHECK...]: exit 0 when FILE (the release's version file) is there, else the
# action's own check decides (none: not done)
UNLESS_INSTALLED = 'test -e "$1" && exit 0; shift; [ "$#" -gt 0 ] && exec "$@"; exit 1'


def unless_installed(a: Action, version_file: str) -> Action:
    """``a`` skipped by its check where the release is installed: nothing before the install is needed then."""
    return replace(a, check=("sh", "-c", UNLESS_INSTALLED, "sh", version_file, *(a.check or ())))


# sh -c FETCH_DEB sh DEB URL: into DEB.part, continued (-c) after a kill or a dropped link; only a whole download
# gets DEB's name (the done-check ``test -s DEB`` never takes a partial one)
FETCH_DEB = 'wget -q -c -O "$1.part" "$2" && mv -f -- "$1.part" "$1"'


def download_path(ctx: StepContext, url: str) -> str:
    return f"{ctx.state_dir}/downloads/{url.rsplit('/', 1)[-1]}"


def os_codename(facts: Facts) -> str | None:
    o = facts.os
    if o.codename or o.id != "ubuntu" or not o.version:
        return o.codename
    return UBUNTU_CODENAMES.get(".".join(o.version.split(".")[:2]))


def codename(ctx: StepContext) -> str | None:
    return os_codename(ctx.facts)


def package_url(ctx: StepContext) -> str | None:
    if ctx.release is None:
        return None
    o = ctx.facts.os
    return ctx.kb.amdgpu_install_url(ctx.release.version, o.id, o.version, codename(ctx))


def dkms(ctx: StepContext) -> bool:
    """Whether the install brings the DKMS kernel driver: asked for, or kept where the machine has it."""
    mode = ctx.params.dkms
    return bool(mode == "yes" or (mode == "auto" and ctx.facts.driver.kind == "dkms" and not ctx.facts.in_container))


def refusals(ctx: StepContext) -> list[str]:
    out: list[str] = []
    free = ctx.facts.disk_free_bytes
    if free is not None and free < preflight.DISK_ROCM:
        out.append(f"not enough disk: {free // GIB} GiB free for ROCm, {preflight.DISK_ROCM // GIB} GiB needed")
    if dkms(ctx) and ctx.facts.os.secure_boot and "secure_boot" not in ctx.later:
        out.append("Secure Boot is on and the plan installs the DKMS kernel driver with no MOK enrolment step")
    rel = ctx.release
    o = ctx.facts.os
    cn = codename(ctx)
    where = f"{o.id or 'unknown OS'} {o.version or ''}{f' ({cn})' if cn else ''}".strip()
    if rel is None:
        out.append(f"ROCm {ctx.target.rocm} is not in the knowledge base")
        return out
    if rel.stream != "legacy":
        out.append(f"ROCm {rel.version} is a Core SDK release: amdgpu-install installs the legacy line only "
                   "(the core-sdk plan installs it from AMD's package repository)")
        return out
    if not o.id:
        out.append(f"the OS of this machine is unknown (no os-release recorded): a ROCm {rel.version} system "
                   "install cannot be planned")
        return out
    if ctx.pm not in ("apt", "dnf", "yum"):
        out.append(f"ROCm {rel.version} system install is planned for apt and dnf systems; {where} uses "
                   f"{ctx.pm or 'an unknown package manager'}")
    if package_url(ctx) is None:
        keys = ", ".join(sorted(rel.amdgpu_install)) or "none"
        out.append(f"ROCm {rel.version} has no amdgpu-install package for {where} in the knowledge base "
                   f"(packages exist for: {keys})")
    if rel.distros is not None and o.id and o.version:
        ok = any(d.id == o.id and (o.version == d.version or o.version.startswith(d.version + "."))
                 for d in rel.distros)
        if not ok:
            out.append(f"ROCm {rel.version} does not list {where} among its supported distributions")
    if ctx.facts.in_container and dkms(ctx):
        out.append("inside a container the kernel driver cannot be installed (DKMS); use the host")
    return out


def usecase(ctx: StepContext) -> str:
    return str(ctx.params.usecase)


def plan(ctx: StepContext) -> StepPlan:
    reasons = refusals(ctx)
    if reasons:
        raise StepRefused(reasons)
    assert ctx.release is not None
    url = package_url(ctx)
    assert url is not None
    rel = ctx.release
    deb = download_path(ctx, url)
    with_dkms = dkms(ctx)
    args = ["amdgpu-install", "-y", f"--usecase={usecase(ctx)}"]
    if not with_dkms:
        args.append("--no-dkms")
    there = installed_target(ctx)
    notes = [f"amdgpu-install package: {url} (the knowledge base records no sha256 for it: it is installed "
             "without a hash check; the packages it then installs are checked by the package manager against "
             "AMD's signed repository)"]
    if there is not None:
        notes.insert(0, f"ROCm {rel.version}, the target, is already installed ({there.path}): each action is "
                        "skipped by its check; nothing here changes the kernel driver")
    done_check = ("test", "-e", f"/opt/rocm-{rel.version}/.info/version")
    # first on every entry to the step: a crash inside one of its dpkg runs (an unpack of amdgpu-install or of
    # the stack) leaves an interrupted dpkg that every apt command of a resume would stop at
    guards = package_guards(ctx.pm, ctx.lock_wait, ("amdgpu-install", "rocm", "amdgpu-dkms"))
    actions: list[Action] = [
        Action(argv=("mkdir", "-p", "--", f"{ctx.state_dir}/downloads"), description="download directory",
               root=system_path(ctx.state_dir), as_user=not system_path(ctx.state_dir),
               check=("test", "-d", f"{ctx.state_dir}/downloads"),
               changes=(f"{ctx.state_dir}/downloads",)),
        Action(argv=("sh", "-c", FETCH_DEB, "sh", deb, url),
               description=f"download amdgpu-install for ROCm {rel.version}",
               root=system_path(ctx.state_dir), as_user=not system_path(ctx.state_dir), check=("test", "-s", deb),
               changes=(deb,), timeout=600),
    ]
    if ctx.pm == "apt":
        actions += [
            Action(argv=("apt-get", "install", "-y", deb), description="install the amdgpu-install package "
                   "(adds AMD's repo lists and key)", root=True, changes=("dpkg", "/etc/apt/sources.list.d"),
                   destructive=True, timeout=1800),
            Action(argv=("sh", "-c", KEY_CHECK, "sh", APT_KEYRING, ROCM_KEY_FINGERPRINT),
                   description="AMD's repository key has the pinned fingerprint"),
            write_file(APT_PIN_PATH, APT_PIN, "pin AMD's repository at 600 above distro rocm packages",
                       root=True, destructive=True),
            Action(argv=("apt-get", "update"), description="read the new repository lists", root=True,
                   timeout=1800),
        ]
    else:
        actions += [
            Action(argv=("dnf", "-y", "install", deb), description="install the amdgpu-install package", root=True,
                   changes=("rpm", "/etc/yum.repos.d"), destructive=True, timeout=1800),
        ]
        notes.append("dnf checks AMD's key through the repo files' gpgkey; the fingerprint pin is applied on "
                     "apt systems only")
    # where the release is installed (its version file), nothing before its install is needed: the downloads, the
    # package, the key and the lists are skipped with it (the pin keeps its own check: a removed pin is written again)
    actions = [a if APT_PIN_PATH in a.changes else unless_installed(a, done_check[2]) for a in actions]
    actions = [*guards, *actions]
    changes = ("dpkg" if ctx.pm == "apt" else "rpm", f"/opt/rocm-{rel.version}")
    actions.append(Action(argv=tuple(args), description=f"install ROCm {rel.version} (usecase {usecase(ctx)}"
                          f"{', kernel driver via DKMS' if with_dkms else ', in-tree kernel driver kept'})",
                          root=True, check=done_check, changes=(*changes, KERNEL_DRIVER) if with_dkms else changes,
                          destructive=True, timeout=7200))
    if there is None:  # (where it is installed, the note at the top says why nothing changes the driver)
        notes.append("installs the amdgpu-dkms kernel module: a reboot is needed" if with_dkms else
                     "--no-dkms: the running kernel's amdgpu driver stays; no reboot needed for the driver")
    at_end = f"ROCm {rel.version} is installed" if there is not None else ""
    return StepPlan(kind="rocm_install", title=ctx.title(f"Install ROCm {rel.version} with amdgpu-install"),
                    actions=tuple(actions), params=(("url", url), ("usecase", usecase(ctx)), ("dkms", with_dkms),
                                                    (AT_END, at_end)),
                    reboot=False, destructive=True, notes=tuple(notes),
                    effects=(KERNEL_DRIVER,) if with_dkms and there is None else (),
                    check=Action(done_check, f"ROCm {rel.version} is installed (its rocm-core version file)"))


def checks(ctx: StepContext, step: StepPlan) -> Sequence[Action]:
    out: list[Action] = []
    lock = preflight.package_lock_free(ctx.pm, ctx.lock_wait)
    if lock:
        out.append(lock)
    if step.param(AT_END):  # the release is installed: nothing to download, no room to find, no module to load
        return out
    url = step.param("url")
    if url:
        out.append(preflight.url_reachable(str(url), "the amdgpu-install package for this distro"))
    out.append(preflight.disk_free("disk-rocm", "/opt", preflight.DISK_ROCM, "ROCm under /opt"))
    if step.param("dkms") and "secure_boot" not in ctx.later:
        out.append(preflight.secure_boot_off())
    return out


def undo(u: UndoContext) -> Undo:
    """Remove what this step installed: every ROCm release amdgpu-install put there, the amdgpu-install
    package, and the apt pin it wrote. The release the machine had before comes back with the purge
    step's undo (it runs after this one)."""
    ran = u.ran_actions
    if not any(a.destructive for a in ran):
        return Undo()
    dkms_installed = any(KERNEL_DRIVER in a.changes for a in ran)
    pm = "apt" if any("dpkg" in a.changes for a in u.step.actions) else "dnf"
    remove_pkg = (("apt-get", "-y", "purge", "amdgpu-install") if pm == "apt"
                  else ("dnf", "-y", "remove", "amdgpu-install"))
    actions: list[tuple[str, Action]] = [
        ("remove the ROCm the run installed",
         Action(("amdgpu-install", "-y", "--uninstall", "--rocmrelease=all"), root=True, ok_codes=(0, 127),
                changes=("dpkg", KERNEL_DRIVER) if dkms_installed else ("dpkg",), timeout=3600)),
        ("remove the run's amdgpu-install", Action(remove_pkg, root=True, changes=(pm,), timeout=1800)),
    ]
    if pm == "apt" and any(APT_PIN_PATH in a.changes for a in ran):
        actions.append(("remove the run's apt pin", Action(("rm", "-f", "--", APT_PIN_PATH), root=True,
                                                           changes=(APT_PIN_PATH,))))
    return Undo(actions=tuple(actions))


KIND = StepKind(name="rocm_install", summary="the system ROCm release through AMD's amdgpu-install package",
                target_needs=("rocm",), streams=("legacy",),
                params=Params, plan=plan, destructive=True, preflight=checks, undo=undo)
