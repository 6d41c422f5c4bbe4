"""purge: remove the installed ROCm streams by exact package names, after a simulation.

Order: ``amdgpu-install --uninstall --rocmrelease=all`` where amdgpu-install is installed, then a
package-manager simulation (``apt-get -s purge`` / ``dnf remove --assumeno``) whose output is shown,
then the real removal of exactly the packages the detection found (never a glob), then leftover
repo lists, pins, the ROCm key and the exact /opt/rocm* directories of the removed installs, then a
read-only audit that lists whatever is still there (DKMS trees, ld.so.conf.d, alternatives, env
exports) for the user to judge.
"""

from __future__ import annotations

import re

from typing import Any, Sequence

from wizard import lazy_re
from wizard import preflight
from wizard.model import KERNEL_DRIVER, Action, RocmInstall, StepPlan
from wizard.record import record, replace

from ._common import AT_END, StepContext, StepKind, Undo, UndoContext, installed_target, package_guards, skipped

STREAMS = ("legacy", "core-sdk", "distro")


@record
class Params:
    streams: tuple[str, ...] = STREAMS  # which installed ROCm streams to remove

    def __post_init__(self) -> None:
        if not self.streams or any(s not in STREAMS for s in self.streams):
            raise ValueError(f"a non-empty list of {', '.join(STREAMS)}")
        object.__setattr__(self, "streams", tuple(dict.fromkeys(self.streams)))

# AMD's documented file names: amdgpu-install's repo lists, the 600 pin, the repo key
LEFTOVER_FILES_APT = (
    "/etc/apt/sources.list.d/rocm.list",
    "/etc/apt/sources.list.d/amdgpu.list",
    "/etc/apt/sources.list.d/amdgpu-proprietary.list",
    "/etc/apt/preferences.d/rocm-pin-600",
)
LEFTOVER_FILES_DNF = ("/etc/yum.repos.d/rocm.repo", "/etc/yum.repos.d/amdgpu.repo",
                      "/etc/yum.repos.d/amdgpu-proprietary.repo")
AUDIT = r"""
echo "leftovers after the purge (review; nothing here is removed automatically):"
for p in /opt/rocm /opt/rocm-* /opt/rocm/core* /etc/ld.so.conf.d/*rocm* /etc/ld.so.conf.d/*hip* \
         /etc/apt/sources.list.d/*rocm* /etc/apt/sources.list.d/*amdgpu* /etc/yum.repos.d/*rocm* \
         /etc/yum.repos.d/*amdgpu* /etc/apt/keyrings/rocm.gpg /var/lib/dkms/amdgpu; do
  if [ -e "$p" ] || [ -L "$p" ]; then echo "  $p"; fi
done
if command -v update-alternatives >/dev/null 2>&1; then
  update-alternatives --list rocm 2>/dev/null | sed 's/^/  alternative rocm: /' || true
fi
for f in /etc/environment /etc/profile.d/*.sh "$HOME/.bashrc" "$HOME/.profile"; do
  [ -r "$f" ] && grep -nE '(ROCM_PATH|HIP_PATH|HSA_OVERRIDE_GFX_VERSION|/opt/rocm)' "$f" 2>/dev/null \
    | sed "s|^|  $f:|" || true
done
exit 0
"""
# the start of a loop over PKG... with each one's dpkg status abbreviation in $s (a package dpkg does not know: skipped)
EACH_STATUS = 'for p; do s=$(dpkg-query -W -f \'${db:Status-Abbrev}\' "$p" 2>/dev/null) || continue; '
# exit 0 when none of PKG... is on the machine in any state but not-installed: the status letter (the second of
# dpkg's abbreviation) decides, not the wanted one, so a purge cut off after apt marked the packages (``pi``: purge
# wanted, still installed) or one that left config files (``rc``) is not done
NONE_INSTALLED_DPKG = (EACH_STATUS + 'case "$s" in ""|?n*) ;; *) exit 1 ;; esac; done; exit 0')
# exit 0 unless a removal of PKG... was cut off: one of them is marked for removal or purge (``p``/``r`` wanted) and
# still on the machine (status not ``n``)
NO_CUT_OFF_REMOVAL = (EACH_STATUS + 'case "$s" in [pr]n*|[!pr]*|"") ;; *) exit 1 ;; esac; done; exit 0')
# sh -c FINISH_REMOVAL sh PKG...: purge those of PKG... dpkg still has (a cut-off purge removed some entirely, and apt
# cannot locate a package it no longer knows)
FINISH_REMOVAL = ('set -- $(' + EACH_STATUS + 'case "$s" in ""|?n*) ;; *) printf "%s\\n" "$p" ;; esac; done); '
                  '[ "$#" -eq 0 ] || apt-get -y purge "$@"')
NONE_INSTALLED_RPM = 'for p; do if rpm -q "$p" >/dev/null 2>&1; then exit 1; fi; done; exit 0'
# sh -c NO_DEPENDENTS sh PKG...: apt's simulation of the purge removes nothing but PKG... (a distribution's ROCm
# libraries are depended on by other packages of the distribution: hipcc, python3-torch, a user's own);
# otherwise stop, naming them and the --allow-remove that would let them go (the user's consent, by name)
NO_DEPENDENTS = ('out=$(apt-get -s purge "$@" 2>&1) || { printf "%s\\n" "$out" >&2; exit 1; }; '
                 'extra=$(printf "%s\\n" "$out" | awk \'$1 == "Purg" || $1 == "Remv" {sub(/:.*/, "", $2); print $2}\' | '
                 'while read -r p; do keep=1; for w in "$@"; do [ "$p" = "${w%%:*}" ] && keep=0; done; '
                 '[ "$keep" = 1 ] && printf "%s " "$p"; done); '
                 'if [ -n "$extra" ]; then echo "other installed packages depend on these and apt would remove them too: '
                 '${extra% }; remove or keep them yourself first (the wizard removes only what it detected), '
                 'or allow it: --allow-remove $(printf "%s" "${extra% }" | tr " " ,)" >&2; exit 1; fi; '
                 'echo "apt removes exactly these packages"')
_PKG_NAME = lazy_re.compile(r"^[a-z0-9][a-z0-9+.\-]*(:[a-z0-9]+)?$")


def kept(ctx: StepContext) -> RocmInstall | None:
    """The install the purge keeps: the plan's target release, already the installed one of its stream (the facts
    say so: ``installed_target``); its stream's other installs, and the other streams, go as before."""
    inst = installed_target(ctx)
    if inst is None or ctx.target.stream != inst.stream or inst.stream not in ctx.params.streams:
        return None
    return inst


def kept_note(inst: RocmInstall) -> str:
    return f"ROCm {inst.version}, the target, is already installed: kept"


def packages_to_remove(ctx: StepContext) -> list[str]:
    """The detected packages of the streams to remove (never those of the target release where it is already the
    installed one: ``kept``); where the distribution's stream is among them, then the dependents the user allowed to
    go with it (``--allow-remove``)."""
    streams = ctx.params.streams
    keep = kept(ctx)
    names: list[str] = []
    distro = False
    for inst in ctx.facts.rocm.installs:
        if inst.stream in streams and inst != keep:
            names.extend(inst.packages)
            distro = distro or (inst.stream == "distro" and bool(inst.packages))
    # the DKMS driver goes with an installed legacy line ("amdgpu-dkms 1:6.8.5.60204-..." -> "amdgpu-dkms"), and
    # before a legacy install (which brings its own); otherwise, with no legacy ROCm installed, it is a driver of its
    # own (the driver plan's, from AMD's driver repository) that a Core SDK plan, which installs none, keeps. A kept
    # legacy target keeps its driver.
    legacy = (keep is None or keep.stream != "legacy") and (
        ctx.target.stream == "legacy" or any(i.stream == "legacy" for i in ctx.facts.rocm.installs))
    for entry in ctx.facts.driver.dkms_packages:
        if "legacy" in streams and legacy and entry.split():
            names.append(entry.split()[0])
    if distro and ctx.pm == "apt":
        names.extend(ctx.allow_remove)
    out: list[str] = []
    for n in names:
        n = n.strip()
        if _PKG_NAME.match(n) and n not in out:
            out.append(n)
    return out


def _driver_keeps(ctx: StepContext) -> str | None:
    """Why the driver plan's purge removes nothing here (None: it removes the legacy line first)."""
    from .kernel_driver import legacy_to_remove, needs_driver

    rel = ctx.release
    old = legacy_to_remove(rel, ctx.facts) if rel is not None else []
    if not old:
        return "no installed ROCm release that AMD says to uninstall before this driver"
    if needs_driver(ctx.facts) is not True:
        return "the driver plan installs no driver here, so the installed ROCm stays"
    return None


def plan(ctx: StepContext) -> StepPlan:
    title = ctx.title("Remove the installed ROCm stacks (simulated first)")
    pm = ctx.pm
    if ctx.target.stream == "driver":  # the driver plan removes only what AMD says to uninstall before its driver
        why = _driver_keeps(ctx)
        if why:
            return skipped("purge", title, why, ("nothing to purge",))
    pkgs = packages_to_remove(ctx)
    keep = kept(ctx)
    installs = [i for i in ctx.facts.rocm.installs if i.stream in ("legacy", "core-sdk", "distro") and i != keep]
    notes: list[str] = []
    if not pkgs:
        if installs:
            notes.append("a ROCm install was found but no package list for it (recorded without dpkg/rpm "
                         "output?): only the leftover audit runs; remove it by hand if it is not packaged")
        elif keep is not None:
            return skipped("purge", title, f"{kept_note(keep)} (nothing to purge)",
                           ("nothing to purge", kept_note(keep)))
        else:
            return skipped("purge", title, "no ROCm packages installed", ("nothing to purge",))
    actions: list[Action] = package_guards(pm, ctx.lock_wait, pkgs) if pkgs else []
    if pm == "apt":
        none_installed = ("sh", "-c", NONE_INSTALLED_DPKG, "sh", *pkgs)
        if pkgs and any(i.stream == "distro" for i in installs if i.stream in ctx.params.streams):
            # AMD warns against mixing the distribution's ROCm with its own: it goes, but never takes a package
            # that depends on it along; checked before anything is removed
            actions.append(Action(argv=("sh", "-c", NO_DEPENDENTS, "sh", *pkgs),
                                  description="no other installed package depends on them", check=none_installed))
        if pkgs:  # on every entry, before any other removal: a purge a crash cut off is finished first (the
            # dependents check above ran before it, and is in the journal)
            actions.append(Action(
                argv=("sh", "-c", FINISH_REMOVAL, "sh", *pkgs), root=True,
                description="finish a removal a crash cut off (the packages it left)",
                check=("sh", "-c", NO_CUT_OFF_REMOVAL, "sh", *pkgs), changes=("dpkg", *pkgs), destructive=True,
                repeat=True, timeout=3600))
        if "amdgpu-install" in pkgs:
            actions.append(Action(
                argv=("amdgpu-install", "-y", "--uninstall", "--rocmrelease=all"),
                description="amdgpu-install removes every ROCm release it installed", root=True,
                check=("sh", "-c", NONE_INSTALLED_DPKG, "sh", *[p for p in pkgs if p != "amdgpu-install"]),
                changes=("dpkg",), destructive=True, timeout=3600))
        if pkgs:
            actions.append(Action(
                argv=("apt-get", "-s", "purge", *pkgs),
                description="simulation: what the removal would do (read it before the real removal)",
                check=none_installed))
            actions.append(Action(
                argv=("apt-get", "-y", "purge", *pkgs), description="remove exactly these packages", root=True,
                check=none_installed, changes=("dpkg", *pkgs), destructive=True, timeout=3600))
        for inst in half_installed(ctx, installs, pkgs):
            # its version file is there and dpkg lists its rocm-core in no installed state: whatever state dpkg holds
            # it in (half-configured, unpacked, half-installed), it goes too, so the install step finds no version
            # file and installs the release again
            actions.append(Action(
                argv=("sh", "-c", FINISH_REMOVAL, "sh", "rocm-core"), root=True,
                description=f"remove the rocm-core of {inst.path} that dpkg does not list as installed",
                check=("sh", "-c", NONE_INSTALLED_DPKG, "sh", "rocm-core"), changes=("dpkg", "rocm-core"),
                destructive=True, timeout=3600))
        leftovers: tuple[str, ...] = LEFTOVER_FILES_APT
    elif pm in ("dnf", "yum"):
        none_installed = ("sh", "-c", NONE_INSTALLED_RPM, "sh", *pkgs)
        if "amdgpu-install" in pkgs:
            actions.append(Action(
                argv=("amdgpu-install", "-y", "--uninstall", "--rocmrelease=all"),
                description="amdgpu-install removes every ROCm release it installed", root=True,
                check=("sh", "-c", NONE_INSTALLED_RPM, "sh", *[p for p in pkgs if p != "amdgpu-install"]),
                changes=("rpm",), destructive=True, timeout=3600))
        if pkgs:
            actions.append(Action(
                argv=("dnf", "remove", "--assumeno", *pkgs),
                description="simulation: what the removal would do (dnf answers no and exits 1)",
                check=none_installed, ok_codes=(0, 1)))
            actions.append(Action(
                argv=("dnf", "-y", "remove", *pkgs), description="remove exactly these packages", root=True,
                check=none_installed, changes=("rpm", *pkgs), destructive=True, timeout=3600))
        leftovers = LEFTOVER_FILES_DNF
    else:
        return skipped("purge", title, f"package manager {pm or 'unknown'}: purge is supported for apt and dnf only",
                       ("remove the ROCm packages with your package manager before continuing",))
    # a kept legacy target keeps its repo lists, pin and key (amdgpu-install's own files)
    rm_paths = list(leftovers) if keep is None or keep.stream != "legacy" else []
    if keep is None or keep.stream != "legacy":
        if any("amdgpu-install" == p for p in pkgs) or ctx.facts.rocm.apt_sources:
            rm_paths.append("/etc/apt/keyrings/rocm.gpg" if pm == "apt" else "/etc/pki/rpm-gpg/RPM-GPG-KEY-rocm")
    for inst in installs:
        if inst.path and re.match(r"^/opt/rocm-\d+(\.\d+){1,2}$", inst.path) and inst.stream == "legacy":
            rm_paths.append(inst.path)
    files = [p for p in rm_paths if not p.startswith("/opt/")]
    dirs = [p for p in rm_paths if p.startswith("/opt/")]
    if files:
        actions.append(Action(argv=("rm", "-f", "--", *files), description="leftover repo lists, pin and key",
                              root=True, changes=tuple(files), destructive=True))
    if dirs:
        actions.append(Action(argv=("rm", "-rf", "--", *dirs),
                              description="leftover directories of the removed releases (exact paths)",
                              root=True, check=("sh", "-c", '! ls -d -- "$@" >/dev/null 2>&1', "sh", *dirs),
                              changes=tuple(dirs), destructive=True))
    actions.append(Action(argv=("sh", "-c", AUDIT.strip()), description="leftover audit (read-only)"))
    for s in ctx.facts.env:
        if s.name in ("HSA_OVERRIDE_GFX_VERSION", "ROCM_PATH", "HIP_PATH") and s.where not in ("environment",):
            notes.append(f"stale export? {s.name}={s.value} at {s.where}: not changed by the wizard")
    notes.insert(0, f"packages: {' '.join(pkgs) if pkgs else '(none recorded)'}")
    if keep is not None:
        notes.insert(1, kept_note(keep))
    allowed = [p for p in ctx.allow_remove if p in pkgs]
    if allowed:
        notes.insert(1, f"removed with the distribution's ROCm because you allowed it (--allow-remove): "
                        f"{' '.join(allowed)}")
    effects: tuple[str, ...] = ()
    if "amdgpu-dkms" in pkgs:
        effects = (KERNEL_DRIVER,)
        actions = [_with_change(a, KERNEL_DRIVER) if a.destructive and {"dpkg", "rpm"} & set(a.changes) else a
                   for a in actions]
    new_path = ctx.release.install_path if ctx.release is not None else None
    gone = (Action(("sh", "-c", '! ls -d -- "$@" >/dev/null 2>&1', "sh", *dirs),
                   "the removed releases' directories are gone") if dirs and new_path not in dirs else None)
    return StepPlan(kind="purge", title=title, actions=tuple(actions), params=(("packages", tuple(pkgs)), (AT_END, "")),
                    destructive=True, notes=tuple(notes), effects=effects, check=gone)


def half_installed(ctx: StepContext, installs: list[RocmInstall], pkgs: list[str]) -> list[RocmInstall]:
    """The legacy installs the purge removes whose version file is there while dpkg lists their rocm-core (the
    package that owns it) in no installed state: the probe reads dpkg's installed packages only."""
    if "legacy" not in ctx.params.streams or "rocm-core" in pkgs:
        return []
    return [i for i in installs if i.stream == "legacy" and i.how == "version-file" and i.path and i.packages
            and "rocm-core" not in i.packages][:1]


def _with_change(a: Action, change: str) -> Action:
    return replace(a, changes=(*a.changes, change)) if change not in a.changes else a


def checks(ctx: StepContext, step: StepPlan) -> Sequence[Action]:
    lock = preflight.package_lock_free(ctx.pm, ctx.lock_wait) if step.actions else None
    return (lock,) if lock else ()


def undo(u: UndoContext) -> Undo:
    """Reinstall the ROCm release the backup recorded: restore the repo lists, keys and env files from
    the backup, then its amdgpu-install package and ``amdgpu-install --usecase=rocm`` (with the DKMS
    driver when the machine had it). Only when this purge really removed something."""
    if not any(a.destructive for a in u.ran_actions):
        return Undo()
    man = u.manifest
    if man is None:
        return Undo(cannot=("no backup manifest was found: the removed ROCm packages cannot be reinstalled",))
    rocm = man.get("rocm") or {}
    version = rocm.get("version")
    if not version:
        return Undo()
    if (man.get("packages") or {}).get("manager") != "apt":
        return Undo(cannot=(f"ROCm {version}: reinstalling system packages is only automated on apt systems",))
    url = _amdgpu_install_url(u, str(version), man.get("machine") or {})
    if url is None:
        return Undo(cannot=(f"ROCm {version}: no amdgpu-install package URL is known for this machine",))
    d = str(man.get("backup_dir", ""))
    deb = f"{d}/{url.rsplit('/', 1)[-1]}"
    dkms = (man.get("driver") or {}).get("kind") == "dkms"
    changes = ("dpkg", KERNEL_DRIVER) if dkms else ("dpkg",)
    return Undo(actions=(
        ("restore repo lists, keys and env files", Action(("tar", "-xzf", f"{d}/etc-files.tar.gz", "-C", "/"),
                                                          root=True, changes=("/etc",))),
        (f"download amdgpu-install for ROCm {version}", Action(("wget", "-O", deb, url), root=True, timeout=600)),
        (f"reinstall amdgpu-install for ROCm {version}", Action(("apt-get", "-y", "install", deb), root=True,
                                                                changes=("dpkg",), timeout=1800)),
        # apt's lists are still the new release's: read the restored repositories' before installing from them,
        # as the install step reads the new ones
        ("read the restored repository lists", Action(("apt-get", "update"), root=True, timeout=1800)),
        (f"reinstall ROCm {version}", Action(("amdgpu-install", "-y", "--usecase=rocm",
                                              *([] if dkms else ["--no-dkms"])), root=True, changes=changes,
                                             timeout=7200)),
    ))


def _amdgpu_install_url(u: UndoContext, version: str, machine: dict[str, Any]) -> str | None:
    if u.kb is None:
        return None
    return u.kb.amdgpu_install_url(version, machine.get("os"), machine.get("version"), machine.get("codename"))


KIND = StepKind(name="purge", summary="remove the installed ROCm stacks by exact package names, simulated first",
                params=Params, plan=plan, destructive=True, preflight=checks, undo=undo,
                record_only="without a removed release directory to look for (the packages cannot tell: the new "
                            "release brings the same names), the record says the purge ran")
