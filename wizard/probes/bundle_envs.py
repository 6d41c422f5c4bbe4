"""Python environments in an evidence bundle: what the probes read of each, and the list read back.

``report --bundle`` lists every environment detect found in ``python/envs.jsonl`` (path, kind,
interpreter, Python version, how it was found, in detect's order) and lays a sparse copy of the files
:mod:`wizard.probes.python_envs` reads under ``root/``: ``pyvenv.cfg``, ``bin/activate``, the
site-packages entries of interest (a ``METADATA`` head per ``*.dist-info``, device package
directories), ``torch/version.py`` and one kernel-library file name per gfx target. A recorded
machine with that list is read through the same probe, so ``detect --from`` gives the environments
the machine itself gave. Each environment's ``pip freeze`` is kept beside the list
(``python/N/pip-freeze.txt``): evidence for a person, not read back as facts.
"""

from __future__ import annotations

import json

from wizard.host import Host
from wizard.model import Found, FoundBy, PythonEnv
from wizard.probes.python_envs import (
    _DEVICE_PKG,
    _GFX_IN_NAME,
    _WANTED,
    _norm_name,
    dist_info,
    env_from_prefix,
    read_site_packages,
    site_packages_dirs,
)
from wizard.record import replace

TYPE_CHECKING = False  # typing's, not imported at run time (wizard/record.py says why)
if TYPE_CHECKING:
    from typing import Sequence

LISTING = "python/envs.jsonl"
_LIBRARIES = ("lib/rocblas/library", "lib/hipblaslt/library")


def _metadata_head(host: Host, path: str) -> str:
    """The header of a METADATA file up to its first blank line (name, version; never the long description)."""
    text = host.read_text(path, 16 << 10) or ""
    head = text.split("\n\n", 1)[0]
    return head + "\n" if head else ""


def _site_files(host: Host, site: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for entry in host.listdir(site):
        dist = dist_info(entry)
        if dist:
            name = _norm_name(dist[0])
            if name in _WANTED or _DEVICE_PKG.match(name):
                out[f"{site}/{entry}/METADATA"] = _metadata_head(host, f"{site}/{entry}/METADATA")
        elif "device" in entry.lower() and _DEVICE_PKG.match(_norm_name(entry)) and host.is_dir(f"{site}/{entry}"):
            out[f"{site}/{entry}/__init__.py"] = ""
    torch = f"{site}/torch"
    version = host.read_text(f"{torch}/version.py", 64 << 10)
    if version is not None:
        out[f"{torch}/version.py"] = version
    for sub in _LIBRARIES:
        seen: set[str] = set()
        for name in host.listdir(f"{torch}/{sub}"):
            gfx = {m.group(1) for m in _GFX_IN_NAME.finditer(name)}
            if gfx - seen:  # one file name per gfx target is what the probe reads
                seen |= gfx
                out[f"{torch}/{sub}/{name}"] = ""
    return out


def env_files(host: Host, env: PythonEnv) -> dict[str, str]:
    """Absolute path -> text of what the probes read of one environment (empty for a recorded one)."""
    if not env.path or env.kind == "recorded":
        return {}
    prefix = env.path.rstrip("/") or "/"
    out: dict[str, str] = {}
    for leaf in ("pyvenv.cfg", "bin/activate"):
        text = host.read_text(f"{prefix}/{leaf}", 256 << 10)
        if text is not None:
            out[f"{prefix}/{leaf}"] = text
    for site in site_packages_dirs(host, prefix):
        if read_site_packages(host, site) is not None:  # the one site-packages the probe reads
            out.update(_site_files(host, site))
            break
    return out


def listing(envs: Sequence[PythonEnv]) -> str:
    """``python/envs.jsonl``: one JSON object per environment with a path, in detect's order."""
    lines = [json.dumps({"path": e.path, "kind": e.kind, "python": e.python, "python_version": e.python_version,
                         "found": [{"how": f.how.value, "where": f.where, "text": f.text, "app": f.app}
                                   for f in e.found]})
             for e in envs if e.path and e.kind != "recorded"]
    return "".join(line + "\n" for line in lines)


def read_listing(host: Host) -> list[PythonEnv] | None:
    """The environments a bundle lists, read through the probe from its sparse root; None without a list."""
    text = host.captured(LISTING)
    if text is None:
        return None
    envs: list[PythonEnv] = []
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            continue
        path, kind = item["path"], str(item.get("kind") or "venv")
        python = item.get("python") if isinstance(item.get("python"), str) else None
        version = item.get("python_version") if isinstance(item.get("python_version"), str) else None
        env = env_from_prefix(host, path, kind, python=python)
        if env is None:
            env = PythonEnv(path=path, python=python, python_version=version, kind=kind)
        elif version and env.python_version != version:
            env = replace(env, python_version=version)
        envs.append(replace(env, found=_found(item.get("found"))))
    return envs


def _found(items: object) -> tuple[Found, ...]:
    """How the machine found an environment, as the list wrote it (entries it cannot read are left out)."""
    out: list[Found] = []
    for f in items if isinstance(items, list) else ():
        if not isinstance(f, dict) or not isinstance(f.get("where"), str):
            continue
        try:
            how = FoundBy(f.get("how"))
        except ValueError:
            continue
        text, app = f.get("text"), f.get("app")
        out.append(Found(how, f["where"], text if isinstance(text, str) else None,
                         app if isinstance(app, str) else None))
    return tuple(out)
