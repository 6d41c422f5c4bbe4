"""What applying one of the shipped plans does that a thread's text can show, read from the plan itself.

A known issue whose fix is a plan (`fix.plan`: pip-only, therock-pip, docker, driver, core-sdk, a release move) says
what applying it looks like only through that plan. This module reads it from the plan file's own data (its
``[target]`` table and the kinds of its steps, ``plans/<name>.toml``) and from the knowledge base tables the planner
resolves that target against, so no URL, image or package name is written down twice:

- a step that pins torch (``pip_pin``) installs from the target's wheel index: ``index = "rocm6.2"`` that index,
  ``"auto"`` any upstream PyTorch index, ``"therock"`` any AMD index (the plan's channel is a choice made when it
  runs: ``--channel nightly`` takes a nightly index), ``"core-sdk"`` the indexes of AMD's own torch builds;
- a container step (``docker``) runs an image of the repositories the knowledge base's images come from
  (``rocm/pytorch``);
- the driver step (``kernel_driver``) installs the kernel driver's package (`wizard.model.DRIVER_PACKAGE`);
- the Core SDK step (``core_sdk_install``) installs a Core SDK release's packages (its meta package, or its per-target
  package: the releases' ``routes``);
- a plan that installs one system ROCm release (``rocm_install`` with a versioned target) moves the machine to that
  release line; its torch index comes with the release and is not what sets it apart.

`wizard.fix_worked` turns what a plan does into the text that shows it done. The plan files are data (their loader,
`wizard.plan_file`, validates the steps against the step library, a layer above this one); tests check that what
this module reads from them is what that loader reads.
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any

import wizard.plans
from wizard.kb import KnowledgeBase, WheelIndex, load_kb
from wizard.model import DRIVER_PACKAGE
from wizard.record import record

PLANS_DIR = Path(next(iter(wizard.plans.__path__)))  # the shipped plans (`wizard.plan_file` reads them from here too)


def normalize_kind(kind: str) -> str:
    """A step kind as plan files may spell it ("kernel-driver") in the step library's spelling ("kernel_driver")."""
    return kind.strip().replace("-", "_")


@record
class PlanDoes:
    """What applying one plan does, in the terms a text shows it."""

    plan: str
    release: str | None = None  # "7.2": the ROCm release line it installs system-wide
    indexes: tuple[str, ...] = ()  # URLs of the wheel indexes its torch comes from
    index_names: tuple[str, ...] = ()  # how people name those indexes ("rocm6.2": download.pytorch.org's)
    images: tuple[str, ...] = ()  # the container image repositories it runs ("rocm/pytorch")
    driver_packages: tuple[str, ...] = ()  # the kernel driver's packages it installs
    sdk_packages: tuple[str, ...] = ()  # the Core SDK packages it installs; "{gfx}" stands for a target


@lru_cache(maxsize=32)
def _plan_data(name: str) -> tuple[dict[str, Any], tuple[str, ...]] | None:
    """(the plan's target table, its step kinds) as the plan file holds them, or None for no such plan."""
    path = PLANS_DIR / f"{name}.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    target = data.get("target")
    steps = data.get("steps")
    if not isinstance(target, dict) or not isinstance(steps, list):
        return None
    kinds = tuple(normalize_kind(str(s.get("kind", ""))) for s in steps if isinstance(s, dict))
    return target, kinds


def _release_line(version: str) -> str | None:
    parts = version.split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 and all(p.isdigit() for p in parts[:2]) else None


def _indexes(index: str, kb: KnowledgeBase) -> tuple[WheelIndex, ...]:
    if index == "auto":
        return kb.indexes(vendor="pytorch")
    if index == "therock":
        return kb.indexes(vendor="amd")
    if index == "core-sdk":
        found = (kb.wheel_index(v.index) for v in kb.vendor_wheels())
        return tuple(dict.fromkeys(ix for ix in found if ix is not None))
    one = kb.wheel_index(index)
    return (one,) if one is not None else ()


def plan_does(name: str, kb: KnowledgeBase | None = None) -> PlanDoes | None:
    """What applying the shipped plan ``name`` does that a text can show, or None where there is no such plan."""
    data = _plan_data(name)
    if data is None:
        return None
    kb = kb or load_kb()
    target, kinds = data
    rocm = target.get("rocm")
    release = _release_line(rocm) if isinstance(rocm, str) and "rocm_install" in kinds else None
    index = target.get("index")
    indexes: tuple[WheelIndex, ...] = ()
    if release is None and "pip_pin" in kinds and isinstance(index, str):
        indexes = _indexes(index, kb)
    images: tuple[str, ...] = ()
    if "docker" in kinds and isinstance(target.get("image"), str):
        image = str(target["image"])
        tags = [im.tag for im in kb.docker_images()] if image == "auto" else [
            im.tag for im in (kb.docker_image(image),) if im is not None]
        images = tuple(dict.fromkeys(t.split(":", 1)[0] for t in tags))
    sdk: list[str] = []
    if "core_sdk_install" in kinds:
        for rel in kb.releases("core-sdk"):
            if rel.routes is not None:
                sdk += [p for p in (rel.routes.meta_package, rel.routes.gfx_package) if p]
    return PlanDoes(
        name, release,
        tuple(ix.url for ix in indexes),
        tuple(ix.url.rstrip("/").rsplit("/", 1)[-1] for ix in indexes if ix.vendor == "pytorch"),
        images,
        (DRIVER_PACKAGE,) if "kernel_driver" in kinds else (),
        tuple(dict.fromkeys(sdk)))
