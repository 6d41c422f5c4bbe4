"""Facts -> the `detect --json` document (schema 1). Field names here are a public contract."""

from __future__ import annotations


from wizard.model import Evidence, Facts, Found, FoundBy, system_torch, to_jsonable

TYPE_CHECKING = False  # typing's, not imported at run time (wizard/record.py says why)
if TYPE_CHECKING:
    from typing import Any

SCHEMA = 1


def _ev(sources: tuple[Evidence, ...]) -> list[str]:
    return [str(e) for e in sources]


def found_json(f: Found) -> dict[str, Any]:
    """How an environment was found, as ``python_envs[].found[]`` shows it."""
    return {"how": f.how.value, "where": f.where, "text": f.text, "app": f.app}


def found_from_json(items: Any) -> tuple[Found, ...]:
    """``found_json`` read back (a bundle's list of environments); what is not such an entry is left out."""
    out: list[Found] = []
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, dict) or not isinstance(item.get("where"), str):
            continue
        try:
            how = FoundBy(item.get("how"))
        except ValueError:
            continue
        text, app = item.get("text"), item.get("app")
        out.append(Found(how, item["where"], text if isinstance(text, str) else None,
                         app if isinstance(app, str) else None))
    return tuple(out)


def system_torch_json(facts: Facts) -> dict[str, Any] | None:
    """``system_torch``: the system interpreter's own torch (a distribution's python3-torch) and what it shadows
    (``shadows[]``: ``how`` venv | PYTHONPATH | python3, ``where``, ``detail``); null without one."""
    env = system_torch(facts.python_envs)
    if env is None:
        return None
    return {"torch": env.torch, "path": env.path, "python": env.python, "python_version": env.python_version,
            "shadows": [{"how": s.how, "where": s.where, "detail": s.detail} for s in facts.torch_shadows]}


def facts_to_json(facts: Facts) -> dict[str, Any]:
    os_ = facts.os
    env_sources: dict[str, list[str]] = {}
    service_env: dict[str, dict[str, str]] = {}
    for s in facts.env:
        env_sources.setdefault(s.name, []).append(f"{s.where}={s.value}")
        if s.service is not None:
            service_env.setdefault(s.service, {}).setdefault(s.name, s.value)
    return {
        "schema": SCHEMA,
        "origin": facts.origin,
        "os": {
            "id": os_.id, "version": os_.version, "codename": os_.codename, "kernel": os_.kernel,
            "like": list(os_.like), "pretty_name": os_.pretty_name, "arch": os_.arch,
            "package_manager": os_.package_manager, "secure_boot": os_.secure_boot, "wsl": os_.wsl,
            "ostree": os_.ostree,
        },
        "gpus": [
            {
                "name": g.name, "gfx": g.gfx, "gfx_reported": g.gfx_reported, "pci_id": g.pci_id,
                "bdf": g.bdf, "integrated": g.integrated, "vram_bytes": g.vram_bytes, "family": g.family,
                "codename": g.codename,
                "hip_index": g.hip_index, "kfd_node": g.kfd_node, "render_node": g.render_node,
                "sources": _ev(g.sources),
            }
            for g in facts.gpus
        ],
        "other_gpus": list(facts.other_gpus),
        "driver": {k: v for k, v in to_jsonable(facts.driver).items() if k != "sources"}
        | {"sources": _ev(facts.driver.sources)},
        "rocm": {
            "version": facts.rocm.version,
            "stream": facts.rocm.stream,
            "installs": [
                {"version": i.version, "stream": i.stream, "path": i.path, "how": i.how,
                 "packages": list(i.packages), "sources": _ev(i.sources)}
                for i in facts.rocm.installs
            ],
            "apt_sources": list(facts.rocm.apt_sources),
            "pins": list(facts.rocm.pins),
            "amdgpu_pro": facts.rocm.amdgpu_pro,
            "sources": _ev(facts.rocm.sources),
        },
        "python_envs": [
            {
                "path": e.path, "python": e.python, "python_version": e.python_version, "torch": e.torch,
                "torchvision": e.torchvision, "torchaudio": e.torchaudio, "triton": e.triton, "hip": e.hip,
                "build": e.build, "gfx_targets": list(e.gfx_targets), "rocm_sdk": e.rocm_sdk,
                "rocm_sdk_targets": list(e.rocm_sdk_targets), "placeholders": list(e.placeholders),
                "numpy": e.numpy, "kind": e.kind,
                "sources": _ev(e.sources),
                "found": [found_json(f) for f in e.found],
            }
            for e in facts.python_envs
        ],
        "system_torch": system_torch_json(facts),
        "env": facts.env_values,
        "env_sources": env_sources,
        "service_env": service_env,
        "service_units": list(facts.services),
        "docker": {"docker": facts.docker.docker, "podman": facts.docker.podman,
                   "in_docker_group": facts.docker.in_docker_group},
        "disk_free_bytes": facts.disk_free_bytes,
        "home_free_bytes": facts.home_free_bytes,
        "is_root": facts.is_root,
        "ssh_session": facts.ssh_session,
        "in_container": facts.in_container,
        "conflicts": [{"id": c.id, "message": c.message, "evidence": _ev(c.evidence)} for c in facts.conflicts],
        "texts": [{"source": t.source, "lines": f"{t.first_line}-{t.first_line + t.text.count(chr(10))}", "kind": t.kind,
                   "command": t.command, "own": t.own} for t in facts.texts],
        "errors": [{"probe": e.probe, "message": e.message} for e in facts.errors],
    }
