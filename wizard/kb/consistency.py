"""Cross-file checks of the knowledge base (``python -m wizard.kb check``), one line per problem.

Each file's own shape is checked by ``wizard.kb.parse``; this module checks that the files agree with each
other and with the shipped plans (read-only, straight from ``plans/*.toml``: a lower layer never imports the
plan loader):

* every plan's ``[target]`` (ROCm release, index, torch version) names rows the knowledge base has;
* every plan name a known issue's fix may point at has a plan file, and a fix's plan can serve at least one
  GPU the issue is about;
* TheRock's indexes are in the index list and its stable device extras are what the stable index documents;
* AMD torch builds belong to a known Core SDK release;
* Docker images name a known ROCm release; release dates do not go backwards within a release line.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.version import InvalidVersion, Version

from .records import PLANS

if TYPE_CHECKING:
    from . import KnowledgeBase

def _plans_dir() -> Path:
    """Where the shipped plan files are (the wizard.plans data package, found without importing it)."""
    import importlib.util

    spec = importlib.util.find_spec("wizard.plans")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(locations[0]) if locations else Path(__file__).resolve().parent.parent.parent / "plans"


PLANS_DIR = _plans_dir()


def _v(text: str | None) -> Version | None:
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None


def _plan_targets(plans_dir: Path, out: list[str]) -> dict[str, dict[str, Any]]:
    targets: dict[str, dict[str, Any]] = {}
    for path in sorted(plans_dir.glob("*.toml")):
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            out.append(f"plans/{path.name}: unreadable ({exc})")
            continue
        target = doc.get("target")
        if not isinstance(target, dict):
            out.append(f"plans/{path.name}: no [target] table")
            continue
        targets[path.stem] = target
    return targets


def _index_serves(kb: KnowledgeBase, index: str, gfx: str) -> bool:
    """Whether a plan whose target index is ``index`` can give ``gfx`` a wheel (natively or overridden)."""
    if index == "therock":  # the stable channel (a plan's default)
        return bool(kb.device_extra_indexes(gfx, stable_only=True))
    if index == "core-sdk":
        return any(gfx in (ix.device_extras or ()) for v in kb.vendor_wheels()
                   for ix in (kb.wheel_index(v.index),) if ix is not None)
    rows = [w for w in kb.wheels() if (index == "auto" and w.bundles_rocm is True) or w.index == index]
    return any(w.gfx is not None and (gfx in w.gfx or kb.override_for(gfx, w) is not None) for w in rows)


def _plan_problems(kb: KnowledgeBase, targets: dict[str, dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for name, t in targets.items():
        where = f"plans/{name}.toml: [target]"
        rocm = t.get("rocm")
        if rocm == "newest":
            if not kb.releases("core-sdk" if t.get("stream") in ("core-sdk", "driver") else str(t.get("stream"))):
                out.append(f"{where}: rocm newest but no release of stream {t.get('stream')}")
        elif isinstance(rocm, str) and kb.release(rocm) is None:
            out.append(f"{where}: ROCm {rocm} is not a release in rocm_releases.json")
        index = t.get("index")
        torch = t.get("torch")
        if index == "therock":
            tr = kb.therock()
            if tr is None:
                out.append(f"{where}: index therock but torch_wheels.json has no therock section")
        elif index == "core-sdk":
            if not kb.vendor_wheels():
                out.append(f"{where}: index core-sdk but torch_wheels.json has no AMD torch builds (vendor_wheels)")
        elif index == "auto":
            if not any(w.bundles_rocm is True and w.gfx is not None for w in kb.wheels()):
                out.append(f"{where}: index auto but no upstream wheel row with a known gfx list")
        elif isinstance(index, str):
            if kb.wheel_index(index) is None:
                out.append(f"{where}: index {index} is not in the indexes list")
            rows = kb.wheels_for(index=index)
            if not rows:
                out.append(f"{where}: no wheel rows on index {index}")
            elif isinstance(torch, str) and torch != "newest" and kb.wheel(torch, index) is None:
                out.append(f"{where}: torch {torch} has no row on index {index}")
    return out


def _issue_problems(kb: KnowledgeBase, targets: dict[str, dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for name in PLANS:
        if name not in targets:
            out.append(f"plans/{name}.toml: missing, but known issues may name plan {name!r}")
    for k in kb.known_issues():
        # the fix's plan under the issue's conditions, and each branch's under the issue's and its own
        for plan, when in [(k.fix.plan, k.when)] + [(b.plan, k.when + b.when) for b in k.fix.branches]:
            if plan is None or plan not in targets:
                continue
            gfx = next((tuple(arg) for pred, arg in reversed(when) if pred == "gpu_gfx_in"), ())
            index = targets[plan].get("index")
            if not gfx or not isinstance(index, str):
                continue
            if not any(_index_serves(kb, index, g) for g in gfx):
                out.append(f"known_issues.json: issues ({k.id}): fix plan {plan} (index {index}) serves none of "
                           f"{', '.join(gfx)}")
    return out


def _index_problems(kb: KnowledgeBase) -> list[str]:
    out: list[str] = []
    tr = kb.therock()
    if tr is not None:
        stable = kb.wheel_index(tr.multi_arch_index)
        if stable is not None:
            if not stable.stable:
                out.append(f"torch_wheels.json: therock: multi_arch_index {stable.url} is not a stable index")
            elif set(tr.device_extras) != set(stable.device_extras or ()):
                out.append("torch_wheels.json: therock: device_extras differ from the stable index's "
                           f"({stable.name}) documented device extras")
    for v in kb.vendor_wheels():
        rel = kb.release(v.sdk)
        ix = kb.wheel_index(v.index)
        if rel is None or rel.stream != "core-sdk":
            out.append(f"torch_wheels.json: vendor_wheels ({v.torch} {v.index}): sdk {v.sdk} is not a Core SDK "
                       "release in rocm_releases.json")
        if ix is not None and ix.vendor != "amd":
            out.append(f"torch_wheels.json: vendor_wheels ({v.torch} {v.index}): index is not AMD's")
    for w in kb.wheels():
        ix = kb.wheel_index(w.index)
        if ix is not None and ix.url.rstrip("/") != w.index_url.rstrip("/"):
            out.append(f"torch_wheels.json: wheels ({w.torch} {w.index}): index_url differs from the index list")
    return out


def _release_problems(kb: KnowledgeBase) -> list[str]:
    out: list[str] = []
    lines: dict[tuple[str, str], list[tuple[Version, str]]] = {}
    for r in kb.releases():
        if r.amdgpu_install and "no URL is recorded" in (r.uncertain or ""):
            out.append(f"rocm_releases.json: releases ({r.version}): has amdgpu-install URLs but its uncertain note "
                       "says no URL is recorded")
        codenames = {d.codename for d in r.distros or () if d.codename}
        for key in sorted(r.amdgpu_install):
            if r.distros is not None and key.isalpha() and key not in codenames:
                out.append(f"rocm_releases.json: releases ({r.version}): amdgpu-install URL for {key}, which is not "
                           "among its distributions")
        v = _v(r.version)
        if v is None or r.date is None:
            continue
        lines.setdefault((r.stream, f"{v.major}.{v.minor}"), []).append((v, r.date))
    for (stream, line), items in sorted(lines.items()):
        items.sort()
        for (v1, d1), (v2, d2) in zip(items, items[1:]):
            if d2 < d1:
                out.append(f"rocm_releases.json: releases ({v2}): dated {d2}, before {v1} ({d1}) of the same "
                           f"{stream} {line} line")
    known = [_v(r.version) for r in kb.releases()]
    for im in kb.docker_images():
        if not im.rocm:
            continue
        want = _v(im.rocm)  # "7.2" equals 7.2.0 under PEP 440
        if want is not None and want not in known:
            out.append(f"docker_images.json: images ({im.tag}): ROCm {im.rocm} is not a release in "
                       "rocm_releases.json")
    return out


def cross_problems(kb: KnowledgeBase, plans_dir: Path | None = None) -> list[str]:
    """Every cross-file problem, one line each."""
    out: list[str] = []
    directory = plans_dir or PLANS_DIR
    targets = _plan_targets(directory, out) if directory.is_dir() else {}
    if targets:
        out.extend(_plan_problems(kb, targets))
        out.extend(_issue_problems(kb, targets))
    out.extend(_index_problems(kb))
    out.extend(_release_problems(kb))
    return out
