"""backup: everything a rollback needs, written into the run's backup directory, plus a manifest.

Captured (read-only on the system): ``pip freeze --all`` of every affected Python environment with
the index each ROCm wheel came from, the venv files the plan may rewrite (activate, pip.conf), the
package selections of the whole system (both ROCm streams included), apt/yum repo lists, keys and
pins, global env files, and rocminfo / KFD topology evidence. ``manifest.json`` is the index that
``rocm-wizard rollback`` reads (format 1; keys documented in ``manifest()``). A finished backup (its manifest
written) is kept: every file of it is written only where the plan's backup directory holds no manifest yet.
"""

from __future__ import annotations

import json
import re

from wizard import lazy_re
from wizard.model import Action, PythonEnv, StepPlan
from wizard.record import replace

from ._common import NoParams, StepContext, StepKind, capture, no_undo, system_path, write_file

MANIFEST_FORMAT = 1
PYPI_SIMPLE = "https://pypi.org/simple"
APT_PATHS = ("etc/apt/sources.list", "etc/apt/sources.list.d", "etc/apt/preferences.d", "etc/apt/keyrings",
             "etc/apt/trusted.gpg.d")
DNF_PATHS = ("etc/yum.repos.d", "etc/pki/rpm-gpg")
ZYPPER_PATHS = ("etc/zypp/repos.d",)
# GNU tar: a path this machine does not have (no /etc/apt/preferences.d, no pip.conf in the venv) is left out
# without a "Cannot stat" warning; an unreadable one too, as --ignore-failed-read already let it
TAR_CREATE = ("tar", "--ignore-failed-read", "--warning=no-failed-read", "-czf")
GLOBAL_ENV_PATHS = ("etc/environment", "etc/profile.d", "etc/ld.so.conf.d")
KFD_DUMP = ('for f in /sys/class/kfd/kfd/topology/nodes/*/properties; do echo "== $f"; cat "$f"; done '
            '>"$1" 2>&1 || true')
# python3 -I -c FREEZE VENV OUT: `pip freeze`'s name==version lines, read from VENV's *.dist-info/METADATA
# files by the system's python3 (isolated): the venv's own interpreter, which its user can change, never runs
# as root. OUT is created 0600 and never through a symlink.
FREEZE = """\
import glob, os, re, sys
venv, out = sys.argv[1], sys.argv[2]
pins = {}
for meta in glob.glob(os.path.join(glob.escape(venv), "lib*", "python*", "site-packages", "*.dist-info", "METADATA")):
    try:
        with open(meta, encoding="utf-8", errors="replace") as fh:
            text = fh.read(1 << 16)
    except OSError:
        continue
    name, version = re.search(r"^Name: *(\\S+)", text, re.M), re.search(r"^Version: *(\\S+)", text, re.M)
    if name and version:
        pins[name.group(1)] = version.group(1)
fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
with os.fdopen(fd, "w") as fh:
    fh.write("".join(f"{n}=={v}\\n" for n, v in sorted(pins.items(), key=lambda kv: kv[0].lower())))
"""
_LOCAL_ROCM = lazy_re.compile(r"\+(rocm\d+(?:\.\d+){1,2})$")


def needs_root(ctx: StepContext) -> bool:
    """Writing under a system state dir (/var/lib/...) needs root; a user's XDG dir does not."""
    return system_path(ctx.backup_dir)


def affected_envs(ctx: StepContext) -> list[PythonEnv]:
    """Environments with a path whose torch stack a migration may change, the plan's venv first."""
    out: list[PythonEnv] = []
    seen: set[str] = set()
    for e in ctx.facts.python_envs:
        if e.path and e.path == ctx.venv and e.path not in seen:
            out.append(e)
            seen.add(e.path)
    for e in ctx.facts.python_envs:
        if e.path and e.path not in seen and e.kind in ("venv", "conda") and (e.torch or e.rocm_sdk):
            out.append(e)
            seen.add(e.path)
    return out


def wheel_indexes(ctx: StepContext, env: PythonEnv) -> dict[str, str]:
    """The index each installed torch-stack wheel came from, as far as its version says."""
    out: dict[str, str] = {}
    therock = ctx.kb.therock()
    for name, ver in (("torch", env.torch), ("torchvision", env.torchvision), ("torchaudio", env.torchaudio),
                      ("pytorch-triton-rocm", env.triton)):
        if not ver:
            continue
        m = _LOCAL_ROCM.search(ver)
        if m:
            out[name] = ctx.kb.index_url(m.group(1)) or f"https://download.pytorch.org/whl/{m.group(1)}"
        elif env.rocm_sdk and therock is not None:
            out[name] = therock.multi_arch_index
        elif "+" not in ver:
            out[name] = PYPI_SIMPLE
    if env.rocm_sdk and therock is not None:
        out["rocm"] = therock.multi_arch_index
    return out


def _slug(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", path).strip("-")[-60:] or "env"


def plan(ctx: StepContext) -> StepPlan:
    root = needs_root(ctx)
    user_side = not root
    d = ctx.backup_dir
    # a finished backup of this plan (its manifest is there) is the machine before the plan: kept, never written
    # again over the changed machine, whichever executor ran it and whether or not that run finished (the same
    # plan asked again, the script after the engine, the engine after a script cut off)
    kept = ("test", "-e", f"{d}/manifest.json")
    actions: list[Action] = [
        Action(argv=("mkdir", "-p", "-m", "0700", "--", d), description="create the backup directory", root=root,
               as_user=user_side, check=("test", "-d", d), changes=(d,)),
        Action(argv=("chmod", "0700", "--", d), description="the backup directory is its owner's alone (it holds "
               "pip.conf files, which may carry index passwords)", root=root, as_user=user_side),
    ]
    envs_manifest = []
    for i, env in enumerate(affected_envs(ctx), 1):
        assert env.path is not None
        freeze = f"pip-freeze-{i}-{_slug(env.path)}.txt"
        files = f"venv-files-{i}-{_slug(env.path)}.tar.gz"
        actions.append(Action(
            argv=("python3", "-I", "-c", FREEZE, env.path, f"{d}/{freeze}"),
            description=f"the distributions installed in {env.path} (read from their metadata files; the "
                        "venv's own python never runs here)", root=root, as_user=user_side, check=kept,
            changes=(f"{d}/{freeze}",)))
        rel = [f"{env.path.lstrip('/')}/bin/activate", f"{env.path.lstrip('/')}/pip.conf",
               f"{env.path.lstrip('/')}/rocm-wizard-constraints.txt"]
        actions.append(Action(
            argv=(*TAR_CREATE, f"{d}/{files}", "-C", "/", *rel),
            description=f"save {env.path}'s activate script, pip.conf and constraints", root=root,
            as_user=user_side, check=kept,
            changes=(f"{d}/{files}",)))
        envs_manifest.append({
            "path": env.path, "python": env.python, "python_version": env.python_version,
            "torch": env.torch, "torchvision": env.torchvision, "torchaudio": env.torchaudio,
            "triton": env.triton, "rocm_sdk": env.rocm_sdk, "freeze": freeze, "files": files,
            "files_paths": ["/" + r for r in rel], "indexes": wheel_indexes(ctx, env),
        })

    pm = ctx.pm
    packages: dict[str, object] = {"manager": pm, "file": None}
    if pm == "apt":
        packages["file"] = "dpkg-selections.txt"
        actions.append(replace(capture(f"{d}/dpkg-selections.txt",
                               ["dpkg-query", "-W", "-f", "${Package}\\t${Version}\\t${db:Status-Abbrev}\\n"],
                               "installed packages (both ROCm streams included)", root=root, as_user=user_side),
                               check=kept))
        etc: tuple[str, ...] = APT_PATHS
    elif pm in ("dnf", "yum", "zypper"):
        packages["file"] = "rpm-packages.txt"
        actions.append(replace(capture(f"{d}/rpm-packages.txt",
                               ["rpm", "-qa", "--qf", "%{NAME}\\t%{VERSION}-%{RELEASE}\\t%{ARCH}\\n"],
                               "installed packages (both ROCm streams included)", root=root, as_user=user_side),
                               check=kept))
        etc = DNF_PATHS if pm != "zypper" else ZYPPER_PATHS
    else:
        etc = ()
    streams: dict[str, list[str]] = {}
    for inst in ctx.facts.rocm.installs:
        streams.setdefault(inst.stream, []).extend(p for p in inst.packages if p not in streams.get(inst.stream, []))
    packages["rocm_streams"] = streams
    packages["dkms"] = list(ctx.facts.driver.dkms_packages)
    paths = [*etc, *GLOBAL_ENV_PATHS]
    actions.append(Action(
        argv=(*TAR_CREATE, f"{d}/etc-files.tar.gz", "-C", "/", *paths),
        description="repo lists, keys, pins and global env files", root=root, as_user=user_side, check=kept,
        changes=(f"{d}/etc-files.tar.gz",)))
    actions.append(replace(capture(f"{d}/rocminfo.txt", ["rocminfo"], "rocminfo evidence", optional=True,
                                   root=root, as_user=user_side), check=kept))
    actions.append(Action(argv=("sh", "-c", KFD_DUMP, "sh", f"{d}/kfd-properties.txt"),
                          description="KFD topology evidence", root=root, as_user=user_side, check=kept,
                          changes=(f"{d}/kfd-properties.txt",)))
    manifest = {
        "format": MANIFEST_FORMAT,
        "plan": ctx.plan_name,
        "backup_dir": d,
        "machine": {"os": ctx.facts.os.id, "version": ctx.facts.os.version, "codename": ctx.facts.os.codename,
                    "kernel": ctx.facts.os.kernel},
        "rocm": {"version": ctx.facts.rocm.version, "stream": ctx.facts.rocm.stream,
                 "installs": [{"version": i.version, "stream": i.stream, "path": i.path}
                              for i in ctx.facts.rocm.installs],
                 "apt_sources": list(ctx.facts.rocm.apt_sources), "pins": list(ctx.facts.rocm.pins)},
        "driver": {"kind": ctx.facts.driver.kind, "version": ctx.facts.driver.version},
        "envs": envs_manifest,
        "packages": packages,
        "files": {"archive": "etc-files.tar.gz", "paths": ["/" + p for p in paths]},
        "env_settings": [{"name": s.name, "value": s.value, "where": s.where} for s in ctx.facts.env],
        "evidence": ["rocminfo.txt", "kfd-properties.txt"],
    }
    text = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
    actions.append(replace(write_file(f"{d}/manifest.json", text, "the manifest rollback reads", root=root,
                                      as_user=user_side), check=kept))
    actions.append(Action(argv=("chmod", "-R", "go-rwx", "--", d), description="the backup is readable by its "
                          "owner only", root=root, as_user=user_side))
    notes = [f"backup directory: {d}"]
    if not envs_manifest:
        notes.append("no Python environment with torch to back up")
    return StepPlan(kind="backup", title=ctx.title("Back up environments, packages, repo lists and evidence"),
                    actions=tuple(actions), params=(("backup_dir", d),), notes=tuple(notes))


KIND = StepKind(name="backup", summary="everything a rollback needs, with a manifest", params=NoParams, plan=plan,
                undo=no_undo, protects=True,
                record_only="a backup records the machine before the plan: made again over the changed machine it "
                            "would record the wrong one")
