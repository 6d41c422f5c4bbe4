"""kernel_driver: only the amdgpu kernel driver, for ROCm that comes from pip or a container.

When the running kernel's own (in-tree) driver is enough (``/dev/kfd`` present, and for a Ryzen APU the
kernel at least the version the knowledge base says it needs), the step has nothing to do and says so.
Otherwise it takes AMD's driver-only route (AMD's native "AMD GPU Driver (amdgpu)" install, as AMD's own
rocm-cli does it): the driver-numbered amdgpu-install package (31.x, from the target Core SDK release of
the knowledge base) only adds AMD's driver repository; then the running kernel's headers and
``amdgpu-dkms`` are installed, and ``dkms status`` must show the module built. No ``amdgpu-install
--usecase`` line runs: AMD documents those as the full "ROCm and graphics" install. The DKMS module needs
a reboot, after which ``driver_check`` looks for ``/dev/kfd``. Refused: a distribution the release does
not list, a mainline (non-distribution) kernel AMD's DKMS packages refuse, an installed legacy ROCm that
AMD says to uninstall first with no purge step before this one, Ryzen APUs (AMD's Ryzen line has
``--no-dkms``: a kernel too old for them is refused with the knowledge base's words) and Instinct GPUs.

Refused too: a kernel newer than every kernel series the release's notes list as supported for this
distribution version (``Release.kernel_series``: 10.0.0's "Operating system support" tables, GA/HWE/OEM series
per distribution; the release's amdgpu-dkms is not built for a newer one). Where the knowledge base lists no
series for the distribution (a release without that table, Oracle Linux's UEK names) nothing is refused on
that ground: a too-new kernel then shows as the ``dkms-build-fails-new-kernel`` known issue after ``dkms status``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from wizard import lazy_re
from wizard import preflight
from wizard.model import DRIVER_PACKAGE, KERNEL_DRIVER, Action, Facts, StepPlan
from wizard.parsers.uname import kernel_series

from ._common import (NoParams, StepContext, StepKind, StepRefused, Undo, UndoContext, package_guards, skipped,
                      system_path)
from .rocm_install import os_codename

if TYPE_CHECKING:
    from wizard.kb import Release

# "ubuntu 24.04: Ryzen APUs (gfx1150, gfx1151, ...) need the OEM kernel 6.14 or newer (linux-oem-24.04d)"
_RYZEN_KERNEL = lazy_re.compile(r"^(?P<os>\S+) (?P<ver>[\d.]+): Ryzen APUs \((?P<gfx>[^)]*)\) need .*?kernel "
                           r"(?P<kernel>\d+\.\d+) or newer(?P<rest>.*)$")
_DPKG_HAS = 'dpkg-query -W -f \'${db:Status-Abbrev}\' "$1" 2>/dev/null | grep -q "^ii"'
_DKMS_BUILT = 'dkms status amdgpu | grep -q ": installed"'
_MAINLINE = lazy_re.compile(r"^\d+\.\d+\.\d+-\d{6}-")


def family(facts: Facts) -> str:
    """Which of AMD's usecase lines fits: "radeon" for a discrete GPU, "ryzen" for APUs only, "instinct"."""
    discrete = [g for g in facts.gpus if g.integrated is not True]
    if any((g.family or "").startswith("CDNA") for g in discrete):
        return "instinct"
    return "radeon" if discrete else "ryzen"


def ryzen_kernel_need(rel: Release, facts: Facts, gfx: Sequence[str]) -> tuple[str, str] | None:
    """(minimum kernel, the knowledge base's line) for these APU targets on this OS, if it states one."""
    o = facts.os
    for line in rel.kernels or ():
        mo = _RYZEN_KERNEL.match(line)
        if not mo or mo.group("os") != (o.id or "") or not (o.version or "").startswith(mo.group("ver")):
            continue
        listed = {x.strip() for x in mo.group("gfx").split(",")}
        if any(g in listed for g in gfx):
            return mo.group("kernel"), line
    return None


def kernel_too_old(rel: Release, facts: Facts, apus: Sequence[str]) -> str | None:
    """Why this kernel is too old for these Ryzen APUs per the knowledge base (None: fine or not stated)."""
    need = ryzen_kernel_need(rel, facts, apus) if apus else None
    have = kernel_series(facts.os.kernel)
    if need is None or have is None or have >= Version(need[0]):
        return None
    return (f"kernel {facts.os.kernel} is too old for this Ryzen APU's in-tree driver; the knowledge base "
            f"(ROCm {rel.version}): \"{need[1]}\"")


def kernel_too_new(rel: Release, facts: Facts) -> str | None:
    """Why the running kernel is newer than every series the release lists for this distribution (None: it is
    not, or the knowledge base lists none, or the kernel is unknown)."""
    newest = rel.newest_kernel_series(facts.os.id, facts.os.version)
    have = kernel_series(facts.os.kernel)
    if newest is None or have is None or have <= Version(newest):
        return None
    listed = ", ".join(rel.kernel_series.get(f"{(facts.os.id or '').lower()} {facts.os.version}", ()))
    return (f"kernel {facts.os.kernel} is newer than the kernels ROCm {rel.version} lists as supported on "
            f"{facts.os.id} {facts.os.version} ({listed}): its amdgpu-dkms is not built for it (boot one of those)")


def package_url(rel: Release, facts: Facts) -> str | None:
    from wizard.kb import KnowledgeBase

    key = KnowledgeBase.amdgpu_install_key(facts.os.id, facts.os.version, os_codename(facts))
    return rel.amdgpu_install.get(key) if key else None


def release_facts(rel: Release, facts: Facts) -> list[str]:
    """What a driver install on this machine needs from the release that the knowledge base lacks."""
    if rel.stream != "core-sdk":
        return [f"a Core SDK release ({rel.version} is {rel.stream})"]
    out: list[str] = []
    if not rel.driver_version:
        out.append("driver_version (the amdgpu-install 31.x line)")
    if package_url(rel, facts) is None:
        where = " ".join(x for x in (facts.os.id, facts.os.version) if x) or "this OS"
        out.append(f"an amdgpu-install package for {where}")
    if rel.distros is None:
        out.append("distros (the distributions it supports)")
    return out


def distro_listed(rel: Release, facts: Facts) -> bool | None:
    """Whether the release lists this OS among its distributions (None: the list or the OS is unknown).
    "24.04" matches a listed "24.04" and "24.04.4"; "9" matches "9.4"; "9.4" matches "9"."""
    o = facts.os
    if rel.distros is None or not o.id or not o.version:
        return None
    return any(d.id == o.id and (o.version == d.version or o.version.startswith(d.version + ".")
                                 or d.version.startswith(o.version + ".")) for d in rel.distros)


def legacy_to_remove(rel: Release, facts: Facts) -> list[str]:
    """Installed legacy releases AMD says to uninstall before this one (its ``remove_first``)."""
    if not rel.remove_first:
        return []
    try:
        spec = SpecifierSet(rel.remove_first)
    except InvalidSpecifier:
        return []
    out = []
    for inst in facts.rocm.installs:
        if inst.stream != "legacy" or not inst.version:
            continue
        try:
            if Version(inst.version) in spec:
                out.append(inst.version)
        except InvalidVersion:
            continue
    return out


def mainline_kernel(facts: Facts) -> bool:
    """An Ubuntu mainline-PPA kernel ("6.2.0-060200-generic"): AMD's DKMS packages refuse it (ROCm#2840)."""
    return bool(_MAINLINE.match(facts.os.kernel or ""))


def driver_install(facts: Facts, pm: str) -> str:
    """The shell line that installs the running kernel's headers (DKMS builds amdgpu against them) and
    amdgpu-dkms, as AMD's native driver install writes it: the kernel is read when it runs (``uname -r``)."""
    if pm == "apt":
        extra = ' "linux-modules-extra-$(uname -r)"' if facts.os.id == "ubuntu" else ""
        return f'apt-get install -y "linux-headers-$(uname -r)"{extra} {DRIVER_PACKAGE}'
    return f'dnf -y install "kernel-headers-$(uname -r)" "kernel-devel-$(uname -r)" {DRIVER_PACKAGE}'


def needs_driver(facts: Facts) -> bool | None:
    """True: no /dev/kfd or no amdgpu module; False: /dev/kfd is there; None: the machine does not say."""
    d = facts.driver
    if d.kfd_present is False or d.loaded is False:
        return True
    return False if d.kfd_present else None


def plan(ctx: StepContext) -> StepPlan:
    facts = ctx.facts
    title = ctx.title("The amdgpu kernel driver")
    kernel = facts.os.kernel or "unknown"
    if facts.in_container:
        raise StepRefused(["inside a container the kernel driver belongs to the host: run this plan there"])
    if facts.os.wsl:
        raise StepRefused(["under WSL the GPU driver is the Windows one: there is no amdgpu kernel driver to install"])
    rel = ctx.release
    if rel is None:
        raise StepRefused([] if ctx.target.rocm == "newest" else [f"ROCm {ctx.target.rocm} is not in the knowledge base"])
    apus = [g.gfx for g in ctx.gpus if g.integrated is True and g.gfx]
    need = ryzen_kernel_need(rel, facts, apus) if apus else None
    too_old = kernel_too_old(rel, facts, apus)
    if too_old:
        raise StepRefused([too_old])
    need_it = needs_driver(facts)
    if need_it is None:
        raise StepRefused(["whether /dev/kfd exists is not known for this machine (nothing recorded says): the driver "
                           "plan is for a machine without it (check with ls -l /dev/kfd)"])
    if not need_it:
        why = f"the in-tree amdgpu driver of kernel {kernel} is enough: /dev/kfd is present" if facts.driver.kind != "dkms" \
            else "the amdgpu DKMS driver is installed and /dev/kfd is present"
        said: tuple[str, ...] = ("nothing to do",)
        if need is not None:  # an APU the KB states a kernel for: say whether this one is known to meet it
            said += (f"kernel {kernel} meets: {need[1]}" if kernel_series(facts.os.kernel) is not None
                     else f"the kernel version is unknown here; the knowledge base says: {need[1]}",)
        return skipped("kernel_driver", title, why, said)
    fam = family(facts)
    if fam == "instinct":
        raise StepRefused(["the knowledge base records the driver route for Radeon and Ryzen only, not for "
                           "Instinct GPUs: follow AMD's Instinct driver instructions"])
    if fam == "ryzen":
        raise StepRefused([f"/dev/kfd is missing on a Ryzen APU: AMD's Ryzen line ({rel.amdgpu_install_usecases.get('ryzen', '')}) "
                           f"installs no kernel driver; the in-tree driver of kernel {kernel} must provide it "
                           "(check dmesg for amdgpu errors)"])
    missing = release_facts(rel, facts)
    if missing:
        raise StepRefused([f"ROCm {rel.version}'s amdgpu driver: the knowledge base lacks {'; '.join(missing)}"])
    where = " ".join(x for x in (facts.os.id, facts.os.version) if x) or "this OS"
    refused: list[str] = []
    if distro_listed(rel, facts) is False:
        refused.append(f"ROCm Core SDK {rel.version}'s driver ({rel.driver_version}) does not list {where} among its "
                       "supported distributions")
    if mainline_kernel(facts):
        refused.append(f"kernel {kernel} is a mainline (non-distribution) kernel: AMD's amdgpu-dkms supports the "
                       "distribution's own kernels only (boot one of those)")
    elif too_new := kernel_too_new(rel, facts):
        refused.append(too_new)
    old = legacy_to_remove(rel, facts)
    if old and "purge" not in ctx.earlier:
        refused.append(f"ROCm {', '.join(old)} (legacy) is installed and AMD says to uninstall ROCm {rel.remove_first} "
                       f"before installing {rel.version}: this plan has no purge step before the driver")
    if refused:
        raise StepRefused(refused)
    url = package_url(rel, facts)
    assert url is not None
    pm = ctx.pm
    if pm not in ("apt", "dnf"):
        raise StepRefused([f"the driver install is planned for apt and dnf systems, not {pm or 'an unknown one'}"])
    if facts.os.secure_boot and "secure_boot" not in ctx.later:
        raise StepRefused(["Secure Boot is on and the plan installs the DKMS kernel driver with no MOK enrolment step"])
    state_root = system_path(ctx.state_dir)
    downloads = f"{ctx.state_dir}/downloads"
    pkg = f"{downloads}/{url.rsplit('/', 1)[-1]}"
    install = driver_install(facts, pm)
    actions: list[Action] = package_guards(pm, ctx.lock_wait, ("amdgpu-install", DRIVER_PACKAGE))
    actions += [
        Action(argv=("mkdir", "-p", "--", downloads), description="download directory", root=state_root,
               as_user=not state_root, check=("test", "-d", downloads), changes=(downloads,)),
        Action(argv=("wget", "-q", "-O", pkg, url), description=f"download amdgpu-install {rel.driver_version}",
               root=state_root, as_user=not state_root, check=("test", "-s", pkg), changes=(pkg,), timeout=600),
    ]
    if pm == "apt":
        done: tuple[str, ...] = ("sh", "-c", _DPKG_HAS, "sh", DRIVER_PACKAGE)
        actions += [
            Action(argv=("apt-get", "install", "-y", pkg), description="install the amdgpu-install package: it adds "
                   "AMD's driver repository (no usecase is run)", root=True,
                   changes=("dpkg", "/etc/apt/sources.list.d"), destructive=True, timeout=1800),
            Action(argv=("apt-get", "update"), description="read AMD's driver repository", root=True, check=done,
                   changes=("/var/lib/apt/lists",), timeout=1800),
            Action(argv=("sh", "-c", install), description="the running kernel's headers and amdgpu-dkms "
                   "(AMD's driver-only install)", root=True, check=done, changes=("dpkg", DRIVER_PACKAGE, KERNEL_DRIVER),
                   destructive=True, timeout=7200),
        ]
    else:
        done = ("rpm", "-q", DRIVER_PACKAGE)
        actions += [
            Action(argv=("dnf", "-y", "install", pkg), description="install the amdgpu-install package: it adds "
                   "AMD's driver repository (no usecase is run)", root=True, changes=("rpm", "/etc/yum.repos.d"),
                   destructive=True, timeout=1800),
            Action(argv=("sh", "-c", install), description="the running kernel's headers and amdgpu-dkms "
                   "(AMD's driver-only install)", root=True, check=done, changes=("rpm", DRIVER_PACKAGE, KERNEL_DRIVER),
                   destructive=True, timeout=7200),
        ]
    actions.append(Action(argv=("sh", "-c", _DKMS_BUILT), description="dkms status: the amdgpu module is built "
                          "and installed", root=True, timeout=120))
    notes = [f"amdgpu-install {rel.driver_version} (ROCm Core SDK {rel.version}) adds AMD's driver repository: {url}",
             "the driver only: amdgpu-dkms and the kernel headers, not amdgpu-install's --usecase lines (AMD "
             "documents those as the full ROCm and graphics install)",
             f"why: /dev/kfd is {'missing' if facts.driver.kfd_present is False else 'unknown'}, the amdgpu driver "
             f"is {'not loaded' if facts.driver.loaded is False else 'loaded' if facts.driver.loaded else 'not known to be loaded'}",
             "builds the amdgpu-dkms kernel module: a reboot loads it, then /dev/kfd must exist (ls -l /dev/kfd; "
             "the pip plans check it)",
             *ctx.release_notes]
    if old:
        notes.append(f"ROCm {', '.join(old)} is removed first (AMD: uninstall ROCm {rel.remove_first} before "
                     f"{rel.version})")
    return StepPlan(kind="kernel_driver", title=ctx.title(f"The amdgpu kernel driver (amdgpu-dkms, driver {rel.driver_version})"),
                    actions=tuple(actions), params=(("url", url), ("install", install), ("dkms", True)),
                    destructive=True, notes=tuple(notes), effects=(KERNEL_DRIVER,),
                    check=Action(done, "the driver package is installed"))


def checks(ctx: StepContext, step: StepPlan) -> Sequence[Action]:
    if not step.actions:
        return ()
    out: list[Action] = []
    lock = preflight.package_lock_free(ctx.pm, ctx.lock_wait)
    if lock:
        out.append(lock)
    out.append(preflight.url_reachable(str(step.param("url")), "the amdgpu-install package for this distro"))
    if step.param("dkms") and "secure_boot" not in ctx.later:
        out.append(preflight.secure_boot_off())
    return out


def undo(u: UndoContext) -> Undo:
    """Remove what the run installed: amdgpu-dkms (where its install ran) and amdgpu-install with the driver
    repository it added. The kernel headers stay: they may have been there before and harm nothing."""
    ran = u.ran_actions
    if not any(a.destructive for a in ran):
        return Undo()
    apt = any("dpkg" in a.changes for a in u.step.actions)
    dkms = any(KERNEL_DRIVER in a.changes for a in ran)
    pkgs = ((DRIVER_PACKAGE,) if dkms else ()) + ("amdgpu-install",)
    argv = ("apt-get", "-y", "purge", *pkgs) if apt else ("dnf", "-y", "remove", *pkgs)
    changes = ("dpkg" if apt else "rpm",) + ((KERNEL_DRIVER,) if dkms else ())
    return Undo(actions=((f"remove the run's {' and '.join(pkgs)}", Action(argv, root=True, changes=changes,
                                                                           timeout=3600)),))


KIND = StepKind(name="kernel_driver", summary="only the amdgpu kernel driver (amdgpu-dkms from AMD's driver "
                "repository, which amdgpu-install 31.x adds), or nothing when the kernel's own driver is enough",
                target_needs=("rocm",), streams=("driver",),
                params=NoParams, plan=plan, destructive=True, preflight=checks, undo=undo,
                release_facts=release_facts)
