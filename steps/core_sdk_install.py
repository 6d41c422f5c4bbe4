"""core_sdk_install: the ROCm Core SDK (7.14 / 10.x) from AMD's package repository, per gfx target.

Everything comes from the knowledge base's ``routes`` of the target release (AMD's install page): the
repository URL for this distro, its signing key's URL and keyring path, the source format (deb822 or one
line), and the per-target package (``amdrocm10.0-gfx1201``). Where a needed fact is null the step is
refused, naming it; nothing is guessed. AMD's instruction that the legacy line (7.2.4 or older) be
uninstalled first is kept by requiring a purge step before this one when such a release is installed.
The knowledge base records no fingerprint for this key, so none is pinned: apt checks the repository
against the key fetched over https from AMD's URL, and the key's fingerprint is shown in the log.
"""

from __future__ import annotations

from typing import Sequence


from wizard import preflight
from wizard.kb import AptRepo, Release
from wizard.model import Action, Facts, StepPlan

from ._common import (NoParams, StepContext, StepKind, StepRefused, package_guards, package_manager, system_path,
                      write_file)

GIB = 1 << 30
SOURCE_NAME = "amdrocm"  # our name for the source file (AMD's page leaves it to the user); the keyring is AMD's
EL_IDS = ("rhel", "ol", "rocky", "almalinux", "centos")
# sh -c KEYRING sh DOWNLOADED KEYRING: AMD's key into the keyring apt's signed-by names (dearmored when it
# is ASCII-armored), then its fingerprint into the log for the reader to compare with AMD's page
KEYRING = ('mkdir -p "$(dirname "$2")" && if grep -q "BEGIN PGP PUBLIC KEY BLOCK" "$1"; '
           'then gpg --dearmor --yes -o "$2" "$1"; else cp "$1" "$2"; fi && chmod 644 "$2" && '
           '{ gpg --show-keys --with-colons "$2" 2>/dev/null | grep "^fpr" || true; }')
# sh -c ALL_INSTALLED sh PKG...: exit 0 when every PKG is installed (dpkg)
ALL_INSTALLED_DPKG = ('for p; do dpkg-query -W -f \'${db:Status-Abbrev}\' "$p" 2>/dev/null | grep -q "^ii" '
                      '|| exit 1; done; exit 0')
ALL_INSTALLED_RPM = 'for p; do rpm -q "$p" >/dev/null 2>&1 || exit 1; done; exit 0'


def repo_key(facts: Facts) -> str | None:
    """The key of ``routes.apt.repos`` / ``routes.rpm.repos`` for this OS: ubuntu2404, debian12, rhel9, sles15."""
    o = facts.os
    os_id, ver = (o.id or "").lower(), o.version or ""
    if not ver:
        return None
    major = ver.split(".")[0]
    if os_id == "ubuntu":
        return "ubuntu" + "".join(ver.split(".")[:2])
    if os_id == "debian":
        return "debian" + major
    if os_id in EL_IDS:
        return "rhel" + major
    if os_id.startswith("sles") or os_id.startswith("opensuse"):
        return "sles" + major
    return None


def packages(rel: Release, gfx: Sequence[str]) -> list[str]:
    r = rel.routes
    if r is None:
        return []
    if r.gfx_package and gfx:
        return [r.gfx_package.replace("{gfx}", g) for g in gfx]
    return [r.meta_package] if r.meta_package else []


def release_facts(rel: Release, facts: Facts) -> list[str]:
    """What this machine needs from the release that the knowledge base lacks (empty: complete)."""
    if rel.stream != "core-sdk":
        return [f"a Core SDK release ({rel.version} is {rel.stream})"]
    key = repo_key(facts)
    pm = package_manager(facts)
    r = rel.routes
    if r is None:
        return ["routes (AMD's package repository and key)"]
    out: list[str] = []
    if pm == "apt":
        if r.apt is None:
            out.append("routes.apt (AMD's apt repository)")
        elif key is None or key not in r.apt.repos:
            out.append(f"routes.apt.repos.{key or '<this distro>'} (AMD's repository for this distro)")
    elif pm in ("dnf", "yum"):
        if r.rpm is None:
            out.append("routes.rpm (AMD's RPM repository)")
        elif key is None or key not in r.rpm.repos:
            out.append(f"routes.rpm.repos.{key or '<this distro>'} (AMD's repository for this distro)")
    else:
        out.append(f"a package route for {pm or 'an unknown package manager'} (apt and dnf are planned)")
    if not (r.gfx_package or r.meta_package):
        out.append("routes.gfx_package / routes.meta_package (the package names)")
    if rel.gfx is None:
        out.append("gfx (the targets it supports)")
    return out


def refusals(ctx: StepContext) -> list[str]:
    rel = ctx.release
    if rel is None:
        return [] if ctx.target.rocm == "newest" else [f"ROCm {ctx.target.rocm} is not in the knowledge base"]
    out: list[str] = []
    missing = release_facts(rel, ctx.facts)
    o = ctx.facts.os
    where = " ".join(x for x in (o.id, o.version) if x) or "this OS"
    if missing:
        out.append(f"ROCm Core SDK {rel.version} on {where}: the knowledge base lacks {'; '.join(missing)}, so its "
                   "system packages cannot be planned")
        return out
    assert rel.gfx is not None
    lacking = [g for g in ctx.gfx if g not in rel.gfx.official]
    if lacking:
        out.append(f"ROCm Core SDK {rel.version} has no package for {', '.join(lacking)} (its targets: "
                   f"{', '.join(rel.gfx.official)})")
    from .kernel_driver import distro_listed, kernel_too_old, legacy_to_remove

    if distro_listed(rel, ctx.facts) is False:
        out.append(f"ROCm Core SDK {rel.version} does not list {where} among its supported distributions")

    apus = [g.gfx for g in ctx.gpus if g.integrated is True and g.gfx]
    too_old = kernel_too_old(rel, ctx.facts, apus)
    if too_old:
        out.append(too_old)
    old = legacy_to_remove(rel, ctx.facts)
    if old and "purge" not in ctx.earlier:
        out.append(f"ROCm {', '.join(old)} (legacy) is installed and AMD says to uninstall ROCm {rel.remove_first} "
                   f"before installing {rel.version}: this plan has no purge step before the install")
    free = ctx.facts.disk_free_bytes
    if free is not None and free < preflight.DISK_ROCM:
        out.append(f"not enough disk: {free // GIB} GiB free for ROCm, {preflight.DISK_ROCM // GIB} GiB needed")
    if ctx.facts.in_container:
        out.append("inside a container: install the Core SDK into the image, not with this plan")
    return out


def apt_source(apt: AptRepo, url: str) -> tuple[str, str]:
    """(path, content) of the apt source, in the format AMD's page uses for this release."""
    if apt.format == "deb822":
        return (f"/etc/apt/sources.list.d/{SOURCE_NAME}.sources",
                f"Types: deb\nURIs: {url}\nSuites: {apt.suite}\nComponents: {' '.join(apt.components)}\n"
                f"Signed-By: {apt.keyring}\n")
    return (f"/etc/apt/sources.list.d/{SOURCE_NAME}.list",
            f"deb [arch=amd64 signed-by={apt.keyring}] {url} {apt.suite} {' '.join(apt.components)}\n")


def plan(ctx: StepContext) -> StepPlan:
    reasons = refusals(ctx)
    if reasons or ctx.release is None:
        raise StepRefused(reasons)
    rel = ctx.release
    routes = rel.routes
    assert routes is not None
    key = repo_key(ctx.facts)
    assert key is not None
    pkgs = packages(rel, ctx.gfx)
    pm = ctx.pm
    where_root = system_path(ctx.state_dir)
    downloads = f"{ctx.state_dir}/downloads"
    notes = [f"packages: {' '.join(pkgs)}", *ctx.release_notes]
    actions: list[Action] = package_guards(pm, ctx.lock_wait, pkgs)
    actions.append(Action(argv=("mkdir", "-p", "--", downloads), description="download directory",
                          root=where_root, as_user=not where_root, check=("test", "-d", downloads),
                          changes=(downloads,)))
    if pm == "apt":
        apt = routes.apt
        assert apt is not None
        url = apt.repos[key]
        key_url = apt.key_url
        got = f"{downloads}/{SOURCE_NAME}-{rel.version}.key"
        src_path, src = apt_source(apt, url)
        actions += [
            Action(argv=("wget", "-q", "-O", got, key_url), description="download AMD's repository key",
                   root=where_root, as_user=not where_root, check=("test", "-s", got), changes=(got,),
                   undo=("rm", "-f", "--", got), timeout=600),
            Action(argv=("sh", "-c", KEYRING, "sh", got, apt.keyring),
                   description=f"AMD's key into {apt.keyring} (its fingerprint is printed)", root=True,
                   check=("test", "-s", apt.keyring), changes=(apt.keyring,), undo=("rm", "-f", "--", apt.keyring),
                   destructive=True),
            write_file(src_path, src, f"AMD's ROCm Core SDK {rel.version} repository for {key}", root=True,
                       destructive=True, undo=("rm", "-f", "--", src_path)),
            Action(argv=("apt-get", "update"), description="read the new repository", root=True, timeout=1800),
            Action(argv=("apt-get", "install", "-y", *pkgs),
                   description=f"install ROCm Core SDK {rel.version} for {', '.join(ctx.gfx)}", root=True,
                   check=("sh", "-c", ALL_INSTALLED_DPKG, "sh", *pkgs),
                   changes=("dpkg", *(p for p in (rel.install_path,) if p)),
                   undo=("apt-get", "-y", "purge", *pkgs), destructive=True, timeout=7200),
        ]
        notes.append(f"repository: {url} (suite {apt.suite}, {apt.format} source {src_path}), key {key_url}")
    else:
        rpm = routes.rpm
        assert rpm is not None
        url = rpm.repos[key]
        key_url = rpm.key_url
        repo_path = f"/etc/yum.repos.d/{SOURCE_NAME}.repo"
        repo = (f"[{SOURCE_NAME}]\nname=ROCm Core SDK {rel.version}\nbaseurl={url}\nenabled=1\ngpgcheck=1\n"
                f"gpgkey={key_url}\n")
        actions += [
            write_file(repo_path, repo, f"AMD's ROCm Core SDK {rel.version} repository for {key}", root=True,
                       destructive=True, undo=("rm", "-f", "--", repo_path)),
            Action(argv=("dnf", "-y", "install", *pkgs),
                   description=f"install ROCm Core SDK {rel.version} for {', '.join(ctx.gfx)}", root=True,
                   check=("sh", "-c", ALL_INSTALLED_RPM, "sh", *pkgs),
                   changes=("rpm", *(p for p in (rel.install_path,) if p)),
                   undo=("dnf", "-y", "remove", *pkgs), destructive=True, timeout=7200),
        ]
        notes.append(f"repository: {url}, key {key_url} (dnf checks it through gpgkey)")
    notes.append("the knowledge base has no fingerprint for this key: none is pinned; compare the printed one "
                 "with AMD's install page")
    if rel.install_path:
        notes.append(f"installs under {rel.install_path}")
    return StepPlan(kind="core_sdk_install", title=ctx.title(f"Install ROCm Core SDK {rel.version} from AMD's "
                                                             "package repository"),
                    actions=tuple(actions), params=(("repo", url), ("key_url", key_url), ("packages", tuple(pkgs)),
                                                    ("release", rel.version)),
                    destructive=True, notes=tuple(notes),
                    check=Action(actions[-1].check, f"the ROCm Core SDK {rel.version} packages are installed")
                    if actions[-1].check else None)


def checks(ctx: StepContext, step: StepPlan) -> Sequence[Action]:
    out: list[Action] = []
    lock = preflight.package_lock_free(ctx.pm, ctx.lock_wait)
    if lock:
        out.append(lock)
    out.append(preflight.url_reachable(str(step.param("key_url")), "AMD's repository key"))
    out.append(preflight.disk_free("disk-rocm", "/opt", preflight.DISK_ROCM, "ROCm under /opt"))
    return out


KIND = StepKind(name="core_sdk_install",
                summary="the ROCm Core SDK from AMD's package repository, one package per gfx target",
                target_needs=("rocm",), streams=("core-sdk",), params=NoParams, plan=plan, destructive=True,
                preflight=checks, release_facts=release_facts)
