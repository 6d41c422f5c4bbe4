"""kernel_driver: only the amdgpu kernel driver, for ROCm that comes from pip or a container.

When the running kernel's own (in-tree) driver is enough (``/dev/kfd`` present, and for a Ryzen APU the
kernel at least the version the knowledge base says it needs), the step has nothing to do and says so.
Otherwise: AMD's driver-numbered amdgpu-install package (31.x, from the target Core SDK release of the
knowledge base) and ``amdgpu-install -y`` with the ``--usecase`` line AMD documents for Radeon GPUs; the
DKMS module it builds needs a reboot. Ryzen APUs use the in-tree driver (AMD's Ryzen line has
``--no-dkms``): a kernel too old for them is refused with the knowledge base's words, never patched here.
Instinct GPUs are refused: the knowledge base records no amdgpu-install line for them.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING, Sequence

from packaging.version import InvalidVersion, Version

from wizard import lazy_re
from wizard import preflight
from wizard.model import KERNEL_DRIVER, Action, Facts, StepPlan

from ._common import NoParams, StepContext, StepKind, StepRefused, package_guards, skipped, system_path
from .rocm_install import os_codename
from .rocm_install import undo as amdgpu_install_undo

if TYPE_CHECKING:
    from wizard.kb import Release

# "ubuntu 24.04: Ryzen APUs (gfx1150, gfx1151, ...) need the OEM kernel 6.14 or newer (linux-oem-24.04d)"
_RYZEN_KERNEL = lazy_re.compile(r"^(?P<os>\S+) (?P<ver>[\d.]+): Ryzen APUs \((?P<gfx>[^)]*)\) need .*?kernel "
                           r"(?P<kernel>\d+\.\d+) or newer(?P<rest>.*)$")
_DPKG_HAS = 'dpkg-query -W -f \'${db:Status-Abbrev}\' "$1" 2>/dev/null | grep -q "^ii"'


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
    have = _kernel_version(facts)
    if need is None or have is None or have >= Version(need[0]):
        return None
    return (f"kernel {facts.os.kernel} is too old for this Ryzen APU's in-tree driver; the knowledge base "
            f"(ROCm {rel.version}): \"{need[1]}\"")


def _kernel_version(facts: Facts) -> Version | None:
    mo = re.match(r"^(\d+\.\d+)", facts.os.kernel or "")
    try:
        return Version(mo.group(1)) if mo else None
    except InvalidVersion:
        return None


def package_url(rel: Release, facts: Facts) -> str | None:
    from wizard.kb import KnowledgeBase

    key = KnowledgeBase.amdgpu_install_key(facts.os.id, facts.os.version, os_codename(facts))
    return rel.amdgpu_install.get(key) if key else None


def release_facts(rel: Release, facts: Facts) -> list[str]:
    """What a driver install on this machine needs from the release that the knowledge base lacks."""
    if rel.stream != "core-sdk":
        return [f"a Core SDK release ({rel.version} is {rel.stream})"]
    fam = family(facts)
    out: list[str] = []
    if not rel.driver_version:
        out.append("driver_version (the amdgpu-install 31.x line)")
    if package_url(rel, facts) is None:
        where = " ".join(x for x in (facts.os.id, facts.os.version) if x) or "this OS"
        out.append(f"an amdgpu-install package for {where}")
    if fam != "instinct" and fam not in rel.amdgpu_install_usecases:
        out.append(f"amdgpu_install_usecases.{fam}")
    return out


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
            said += (f"kernel {kernel} meets: {need[1]}" if _kernel_version(facts) is not None
                     else f"the kernel version is unknown here; the knowledge base says: {need[1]}",)
        return skipped("kernel_driver", title, why, said)
    fam = family(facts)
    if fam == "instinct":
        raise StepRefused(["the knowledge base records amdgpu-install usecases for Radeon and Ryzen only, not for "
                           "Instinct GPUs: follow AMD's Instinct driver instructions"])
    if fam == "ryzen":
        raise StepRefused([f"/dev/kfd is missing on a Ryzen APU: AMD's Ryzen line ({rel.amdgpu_install_usecases.get('ryzen', '')}) "
                           f"installs no kernel driver; the in-tree driver of kernel {kernel} must provide it "
                           "(check dmesg for amdgpu errors)"])
    missing = release_facts(rel, facts)
    if missing:
        raise StepRefused([f"ROCm {rel.version}'s amdgpu-install: the knowledge base lacks {'; '.join(missing)}"])
    url = package_url(rel, facts)
    assert url is not None
    pm = ctx.pm
    if pm not in ("apt", "dnf"):
        raise StepRefused([f"the driver install is planned for apt and dnf systems, not {pm or 'an unknown one'}"])
    if facts.os.secure_boot and "secure_boot" not in ctx.later:
        raise StepRefused(["Secure Boot is on and the plan installs the DKMS kernel driver with no MOK enrolment step"])
    usecase = shlex.split(rel.amdgpu_install_usecases[fam])
    no_dkms = "--no-dkms" in usecase
    state_root = system_path(ctx.state_dir)
    downloads = f"{ctx.state_dir}/downloads"
    pkg = f"{downloads}/{url.rsplit('/', 1)[-1]}"
    actions: list[Action] = package_guards(pm, ctx.lock_wait, ("amdgpu-install", "amdgpu-dkms"))
    actions += [
        Action(argv=("mkdir", "-p", "--", downloads), description="download directory", root=state_root,
               as_user=not state_root, check=("test", "-d", downloads), changes=(downloads,)),
        Action(argv=("wget", "-q", "-O", pkg, url), description=f"download amdgpu-install {rel.driver_version}",
               root=state_root, as_user=not state_root, check=("test", "-s", pkg), changes=(pkg,), timeout=600),
    ]
    if pm == "apt":
        actions.append(Action(argv=("apt-get", "install", "-y", pkg), description="install the amdgpu-install "
                              "package (adds AMD's driver repository)", root=True,
                              changes=("dpkg", "/etc/apt/sources.list.d"), destructive=True, timeout=1800))
        done: tuple[str, ...] = ("sh", "-c", _DPKG_HAS, "sh", "amdgpu-dkms")
    else:
        actions.append(Action(argv=("dnf", "-y", "install", pkg), description="install the amdgpu-install package",
                              root=True, changes=("rpm", "/etc/yum.repos.d"), destructive=True, timeout=1800))
        done = ("rpm", "-q", "amdgpu-dkms")
    changes = ("dpkg" if pm == "apt" else "rpm",) + (() if no_dkms else (KERNEL_DRIVER,))
    actions.append(Action(argv=("amdgpu-install", "-y", *usecase),
                          description=f"the amdgpu driver as AMD documents it for Radeon ({' '.join(usecase)})",
                          root=True, check=None if no_dkms else done, changes=changes, destructive=True,
                          timeout=7200))
    notes = [f"amdgpu-install {rel.driver_version} (ROCm Core SDK {rel.version}): {url}",
             f"why: /dev/kfd is {'missing' if facts.driver.kfd_present is False else 'unknown'}, the amdgpu driver "
             f"is {'not loaded' if facts.driver.loaded is False else 'loaded' if facts.driver.loaded else 'not known to be loaded'}",
             *ctx.release_notes]
    if not no_dkms:
        notes.append("builds the amdgpu-dkms kernel module: a reboot loads it")
    return StepPlan(kind="kernel_driver", title=ctx.title(f"The amdgpu kernel driver (amdgpu-install {rel.driver_version})"),
                    actions=tuple(actions), params=(("url", url), ("usecase", " ".join(usecase)), ("dkms", not no_dkms)),
                    destructive=True, notes=tuple(notes), effects=() if no_dkms else (KERNEL_DRIVER,),
                    check=Action(done if not no_dkms else (*done[:-1], "amdgpu-install"),
                                 "the driver package is installed" if not no_dkms else "amdgpu-install is installed"))


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


KIND = StepKind(name="kernel_driver", summary="only the amdgpu kernel driver (amdgpu-install 31.x), or nothing "
                "when the kernel's own driver is enough", target_needs=("rocm",), streams=("driver",),
                params=NoParams, plan=plan, destructive=True, preflight=checks, undo=amdgpu_install_undo,
                release_facts=release_facts)
