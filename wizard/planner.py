"""The planner: a plan file + the machine's Facts + the knowledge base -> a ResolvedPlan, or a refusal.

``resolve_plan(spec, facts, *, venv=None, state_dir=None)`` resolves one plan: first its *target*
(the venv and the Python that fills it, the wheel or TheRock index, the Docker image, the ROCm
release), then each step through its kind in the registry (``wizard.steps``), which plans its actions,
refuses what cannot work and names the preflight checks it needs; the checks become step 0. It refuses
with ``PlanRefused(reasons)`` listing every reason at once, and raises ``PlanError`` for an unknown
plan or a malformed file. ``recommend(facts)`` resolves every shipped plan and marks one as
recommended, with the reason. The planner has no branch on a step kind.

The backup directory is ``<state_dir>/backup/<plan>``; ``state_dir`` defaults to ``wizard.paths``'s
rule (/var/lib/rocm-wizard for root, ``$XDG_STATE_HOME/rocm-wizard`` for a user).
"""

from __future__ import annotations

import re
import sys
from typing import Any, NamedTuple

from packaging.version import InvalidVersion, Version

from wizard import binding, paths, preflight
from wizard.diagnose import Finding, gpus_read
from wizard.kb import DockerImage, KnowledgeBase, Release, VendorWheel, Wheel, WheelIndex
from wizard.mirror.apply import apply as mirror_apply
from wizard.mirror.config import MirrorConfig
from wizard.model import KERNEL_DRIVER, Action, Facts, FoundBy, PythonEnv, ResolvedPlan, StepPlan
from wizard.plan_file import CHANNELS, PlanError, PlanFile, builtin_plan_names, builtin_plans, load_plan
from wizard.record import record, replace

__all__ = ["PlanError", "PlanRefused", "PlanChoice", "resolve_plan", "recommend", "default_state_dir",
           "fitting_fix_plans", "ranked_venvs", "venv_roles", "VenvRoles"]

GIB = 1 << 30
RECOMMEND_ORDER = ("pip-only", "therock-pip", "docker", "core-sdk", "upgrade-7.2", "upgrade-6.4", "downgrade-6.2")
NEW_VENV_NAME = "rocm-wizard-venv"
NOTHING_TO_PROTECT = "no step of this plan changes anything"
HOME_VAR = "~"  # a recording that does not say whose home: the script's user's (the shell expands it)


class PlanRefused(Exception):
    """The plan does not fit this machine. ``reasons``: one line each."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = list(reasons)


class PlanChoice(NamedTuple):
    plan: PlanFile
    applicable: bool
    reasons: list[str]
    target: dict[str, Any]
    recommended: bool
    resolved: ResolvedPlan | None = None
    notes: tuple[str, ...] = ()  # said of an applicable plan that is no reason for or against it (its end state)


def default_state_dir() -> str:
    return str(paths.state_dir())


def _v(text: str | None) -> Version:
    try:
        return Version(text or "0")
    except InvalidVersion:
        return Version("0")


def _home(facts: Facts) -> str | None:
    for e in facts.python_envs:
        m = re.match(r"^(/home/[^/]+|/root)(/|$)", e.path or "")
        if m:
            return m.group(1)
    user = facts.driver.user
    if user == "root":
        return "/root"
    if user and re.match(r"^[a-z_][a-z0-9_.-]*$", user):
        return f"/home/{user}"
    return None


def _user(facts: Facts, home: str | None) -> str | None:
    if facts.driver.user:
        return facts.driver.user
    if home and home.startswith("/home/"):
        return home.split("/")[2]
    return None


class _Machine:
    """The GPUs a plan sets up, and those to hide."""

    def __init__(self, facts: Facts) -> None:
        amd = list(facts.gpus)
        self.discrete = [g for g in amd if g.integrated is not True]
        self.integrated = [g for g in amd if g.integrated is True]
        self.targets = self.discrete or self.integrated
        self.hidden = self.integrated if self.discrete else []
        self.gfx = tuple(sorted({g.gfx for g in self.targets if g.gfx}))
        self.only_igpu = not self.discrete and bool(self.integrated)


def _choose_venv(pf: PlanFile, facts: Facts, venv: str | None, reasons: list[str]) -> tuple[str | None, bool,
                                                                                          PythonEnv | None, str | None]:
    """(venv path, exists, its PythonEnv, home). The user's ``venv`` wins; else the plan's own; else a new
    venv beside the best existing one (which stays untouched), or the one an earlier run made there; else
    ``~/rocm-wizard-venv`` (left to the script's shell when the recording does not say whose home)."""
    home = _home(facts)
    param = pf.target.venv
    path: str | None = venv
    if path is not None and path.startswith("~/") and home:  # the machine's user's home, not this process's
        path = f"{home}/{path[2:]}"
    if path is None and param != "auto":
        path = f"{home}/{param[2:]}" if param.startswith("~/") and home else (None if param.startswith("~/")
                                                                              else param)
    if path is None:
        path = beside_venv(pf.name, [e.path for e in ranked_venvs(facts) if e.path])
    if path is None:
        path = f"{home or HOME_VAR}/{NEW_VENV_NAME}"
    from wizard.inputs import InputError, shell_path

    try:  # a venv found on the machine or given: it is written into shell files, so checked as any other
        tilde = path.startswith("~/")
        path = shell_path(path[1:] if tilde else path, "venv")
        path = f"~{path}" if tilde else path
    except InputError as exc:
        reasons.append(str(exc))
        return None, False, None, home
    env = next((e for e in facts.python_envs if e.path == path), None)
    return path, env is not None, env, home


def ranked_venvs(facts: Facts) -> list[PythonEnv]:
    """The machine's venvs and conda envs, the one the user runs torch in first: with torch, then in use (a
    running process or a service runs it), then beside an application (~/ComfyUI/venv), then a ROCm build;
    detection's order otherwise. A plan that pins torch works beside the first. pipx's and uv's tool
    environments are theirs to manage: never a plan's venv, nor the place of a new one beside them."""
    envs = [e for e in facts.python_envs if e.path and e.kind in ("venv", "conda")
            and not any(f.how in (FoundBy.PIPX, FoundBy.UV_TOOL) for f in e.found)]
    return sorted(envs, key=lambda e: (e.torch is None, not e.in_use, e.app is None, e.build != "rocm"))


@record
class VenvRoles:
    """What a plan does to the machine's Python environments, for Review to name."""

    changes: str | None  # the venv the plan fills (None: the plan installs no torch)
    new: bool  # it does not exist yet
    beside: str | None  # the detected environment it is made beside (left as it is)
    left_alone: tuple[str, ...]  # every other detected environment with torch (none of them is touched)

    def lines(self) -> list[str]:
        """Plain lines for a view: the venv the plan changes, and the environments it leaves alone."""
        out: list[str] = []
        if self.changes:
            how = f" (new, beside {self.beside})" if self.new and self.beside else " (new)" if self.new else ""
            out.append(f"changes the venv {self.changes}{how}")
        if self.left_alone:
            out.append("leaves alone: " + ", ".join(self.left_alone))
        return out


def venv_roles(plan: ResolvedPlan, facts: Facts) -> VenvRoles:
    venv = dict(plan.target).get("venv")
    target = str(venv) if venv else None
    paths = [e.path for e in facts.python_envs if e.path]
    beside = next((p for p in paths if target and target != p and target.endswith(f"-{plan.name}")
                   and target[:-len(plan.name) - 1] == p), None)
    alone = tuple(p for e in facts.python_envs if (p := e.path) and p != target
                  and (e.torch or e.kind in ("venv", "conda")))
    return VenvRoles(target, target is not None and target not in paths, beside, alone)


def beside_venv(plan: str, existing: list[str]) -> str | None:
    """The new venv a plan fills beside the user's venv (``<venv>-<plan>``), so the old one stays as it is
    until the new one is verified; an earlier run's ``...-<plan>`` venv is reused."""
    suffix = f"-{plan}"
    ours = [p for p in existing if p.rstrip("/").endswith(suffix)]
    if ours:
        return ours[0]
    return f"{existing[0].rstrip('/')}{suffix}" if existing else None


def _wheel_choice(pf: PlanFile, kb: KnowledgeBase, m: _Machine, py: str | None,
                  reasons: list[str]) -> tuple[Wheel | None, str | None, str | None, list[str]]:
    """(upstream wheel row or None, None, override or None, notes); AMD's indexes: ``_amd_choice``"""
    t = pf.target
    notes: list[str] = []
    if t.index == "auto":
        rows = [w for w in kb.wheels() if w.bundles_rocm is True and w.gfx is not None]
    else:
        rows = [w for w in kb.wheels() if w.index == t.index]
        if not rows:
            reasons.append(f"the knowledge base has no wheels on the {t.index} index")
            return None, None, None, notes
    if t.torch != "newest":
        exact = [w for w in rows if _v(w.torch) == _v(t.torch)]
        if not exact:
            have = ", ".join(sorted({w.torch for w in rows}, key=_v)) or "none"
            reasons.append(f"torch {t.torch} is not on the {t.index} index (it carries {have})")
            return None, None, None, notes
        rows = exact
    if py:
        fit = [w for w in rows if py in w.python]
        if not fit:
            pys = ", ".join(sorted({p for w in rows for p in w.python}, key=lambda s: (_v(s.rstrip('t')), s)))
            reasons.append(f"no torch {rows[0].torch if t.torch != 'newest' else ''} wheel on "
                           f"{t.index if t.index != 'auto' else 'any upstream index'} for Python {py} "
                           f"(builds exist for {pys})".replace("torch  wheel", "torch wheel"))
            return None, None, None, notes
        rows = fit

    def status(w: Wheel) -> tuple[bool, str | None]:
        lacking = [g for g in m.gfx if g not in (w.gfx or ())]
        if not lacking:
            return True, None
        values = {kb.override_for(g, w) for g in lacking}
        if len(values) == 1 and None not in values:
            return True, values.pop()
        return False, None

    # "newest" prefers rows whose gfx list and Python tags are certain (a note about torchaudio or the index
    # alone does not demote a row); a newer row uncertain in those is noted
    ranked = sorted(rows, key=lambda w: (w.choice_certain, _v(w.torch), _v(w.rocm)), reverse=True)
    native = [w for w in ranked if status(w) == (True, None)]
    overridden = [w for w in ranked if status(w)[0] and status(w)[1] is not None]
    pick = native[0] if native else overridden[0] if overridden else None
    if pick is None:
        for g in m.gfx:
            if all(g not in (w.gfx or ()) for w in ranked):
                entry = kb.override_entry(g)
                why = f": {entry.reason}" if entry and entry.value is None else ""
                gpu = next((x for x in m.targets if x.gfx == g), None)
                where = (f"torch {t.torch} from {t.index} does not carry" if t.torch != "newest" and t.index != "auto"
                         else f"no wheel on the {t.index} index carries" if t.index != "auto"
                         else "no upstream wheel carries")
                msg = (f"{where} {g}" + (f" ({gpu.name})" if gpu and gpu.name else "")
                       + f" and no safe HSA_OVERRIDE_GFX_VERSION exists for it{why.rstrip('.')}")
                tr = kb.therock()
                if tr is not None and g in tr.device_extras:
                    msg += f"; the path that can work: therock-pip (TheRock's device-{g} extra)"
                reasons.append(msg)
        if m.only_igpu and reasons:
            reasons.append("only an integrated GPU is present and this plan's wheels cannot use it")
        return None, None, None, notes
    _, ov = status(pick)
    newer = sorted({w.torch for w in rows if _v(w.torch) > _v(pick.torch) and status(w)[0]}, key=_v)
    if newer and t.torch == "newest":
        notes.append(f"torch {pick.torch} is the newest row whose gfx list and Python tags the knowledge base "
                     f"confirms; {', '.join(newer)} exist there with those marked uncertain")
    return pick, None, ov, notes


@record
class _AmdChoice:
    """AMD's index with the GPUs' device extras, and what is pinned from it."""

    index: WheelIndex | None = None
    vendor: VendorWheel | None = None  # AMD's torch build (None: the index's newest, unpinned)
    rocm_requirement: str | None = None
    notes: tuple[str, ...] = ()


def _rocm_requirement(kb: KnowledgeBase, sdk: str | None, gfx: tuple[str, ...]) -> str | None:
    """The Core SDK's own pip requirement with the GPUs' device extras (None where the KB lacks it)."""
    rel = kb.release(sdk) if sdk else None
    req = rel.routes.pip_requirement if rel is not None and rel.routes is not None else None
    if not req or "{gfx}" not in req or not gfx:
        return None
    return req.replace("{gfx}", ",device-".join(gfx))


def _newest_vendor(rows: list[VendorWheel], torch: str) -> VendorWheel | None:
    if torch != "newest":
        rows = [v for v in rows if _v(v.torch.split("+")[0]) == _v(torch)]
    rows = [v for v in rows if v.uncertain is None] or rows
    return max(rows, key=lambda v: (_v(v.torch), _v(v.sdk)), default=None)


def _amd_choice(pf: PlanFile, kb: KnowledgeBase, m: _Machine, release: Release | None,
                reasons: list[str]) -> _AmdChoice:
    """index "core-sdk": AMD's torch for the target release; "therock": the AMD index that really carries
    every GPU's device extra, stable unless the plan's channel allows nightly builds."""
    t = pf.target
    gfx = m.gfx
    if t.index == "core-sdk":
        if release is None:
            return _AmdChoice()
        rows = list(kb.vendor_wheels(release.version))
        if not rows:
            reasons.append(f"the knowledge base has no AMD torch build for ROCm Core SDK {release.version} "
                           "(torch_wheels.json vendor_wheels)")
            return _AmdChoice()
        pick = _newest_vendor(rows, t.torch or "newest")
        if pick is None:
            have = ", ".join(sorted({v.torch for v in rows}, key=_v))
            reasons.append(f"AMD has no torch {t.torch} build for ROCm Core SDK {release.version} (it has {have})")
            return _AmdChoice()
        ix = kb.wheel_index(pick.index)
        extras = ix.device_extras if ix is not None and ix.device_extras is not None else ()
        lacking = [g for g in gfx if g not in extras]
        if ix is None or lacking:
            where = ix.url if ix is not None else pick.index
            reasons.append(f"AMD's index {where} documents no device extra for {', '.join(lacking or gfx)}: "
                           f"AMD's torch for Core SDK {release.version} cannot serve it")
            return _AmdChoice()
        return _AmdChoice(ix, pick, _rocm_requirement(kb, pick.sdk, gfx),
                          (f"AMD's torch {pick.torch} for ROCm Core SDK {pick.sdk} from {ix.url} "
                           f"({ix.name}, {ix.channel}), installed with the mandatory device extra",))
    # index "therock"
    if not gfx:
        return _AmdChoice()
    stable_only = t.channel == "stable"
    per_gfx = [kb.device_extra_indexes(g, stable_only=stable_only, published=True) for g in gfx]
    common = [ix for ix in per_gfx[0] if all(ix in other for other in per_gfx[1:])]
    if not common:
        for g in gfx:
            if kb.device_extra_indexes(g, stable_only=stable_only, published=True):
                continue
            later = [ix for ix in kb.device_extra_indexes(g, published=True) if not ix.stable]
            if later and stable_only:
                names = ", ".join(f"{ix.name} ({ix.url}, {ix.channel})" for ix in later)
                reasons.append(f"AMD's device-{g} extra is only on {names}: not a stable release, so refused while "
                               "the plan's channel is stable (a copy of this plan with channel = \"nightly\" in its "
                               "target table uses it)")
            else:
                reasons.append(f"no AMD index documents a device-{g} extra")
        if not reasons:
            reasons.append(f"no one AMD index documents device extras for all of {', '.join(gfx)}")
        return _AmdChoice()
    ix = common[0]
    rows = [v for v in kb.vendor_wheels() if v.index == ix.name]
    pick = _newest_vendor(rows, "newest")
    notes: list[str] = []
    if not ix.stable:
        notes.append(f"{ix.url} ({ix.name}) is a {ix.channel} index, not a stable release: its builds may be "
                     "broken or withdrawn; the constraints file pins what got installed")
    notes += _undocumented_devices(kb, ix, gfx)
    if pick is None:
        notes.append(f"the knowledge base records no torch version on {ix.name}: the newest it serves is installed")
        return _AmdChoice(ix, None, None, tuple(notes))
    notes.insert(0, f"AMD's torch {pick.torch} (ROCm Core SDK {pick.sdk}) from {ix.url} ({ix.name}, {ix.channel}), "
                    "the newest build the knowledge base confirms there")
    return _AmdChoice(ix, pick, _rocm_requirement(kb, pick.sdk, gfx), tuple(notes))


def _undocumented_devices(kb: KnowledgeBase, ix: WheelIndex, gfx: tuple[str, ...]) -> list[str]:
    """The warning for targets whose device packages are published on ``ix`` but not in AMD's documented list."""
    out = []
    for g in gfx:
        if g in (ix.device_extras or ()):
            continue
        st = kb.target_status(g)
        status = ("; TheRock's SUPPORTED_GPUS.md: " + ("Release Ready" if st["release_ready"] else "Sanity Tested"
                                                      if st["sanity_tested"] else "Build Passing only (pip installs, "
                                                      "the runtime may still fail)")) if st else ""
        out.append(f"warning: device-{g} is published, not in AMD's documented list: TheRock's publishing manifest "
                   f"({kb.published_provenance()}) puts its device packages on {ix.url}, but AMD's install page "
                   f"does not document it among its {len(ix.device_extras or ())} targets{status}")
    return out


def _release_complete(kinds: list[Any], rel: Release, facts: Facts) -> list[str]:
    return [line for k in kinds if k.release_facts is not None for line in k.release_facts(rel, facts)]


def _choose_release(pf: PlanFile, facts: Facts, kb: KnowledgeBase, reasons: list[str]) -> tuple[Release | None,
                                                                                                 tuple[str, ...]]:
    """The target release: as named, or for "newest" the newest release of the stream whose facts every
    step of the plan finds complete for this machine, and, where the plan takes AMD's torch for that release
    (index "core-sdk"), for which the knowledge base has that build (newer ones lacking a fact are noted, not
    guessed)."""
    from wizard.steps import kind as step_kind

    t = pf.target
    if t.rocm is None:
        return None, ()
    if t.rocm != "newest":
        return kb.release(t.rocm), ()
    stream = "core-sdk" if t.stream in ("core-sdk", "driver") else t.stream
    if not facts.os.id:
        reasons.append(f"the OS of this machine is unknown (no os-release recorded): the newest {stream} release "
                       "for it cannot be chosen")
        return None, ()
    kinds = [step_kind(s.kind) for s in pf.steps]
    lacking: list[tuple[str, list[str]]] = []
    for rel in sorted(kb.releases(stream), key=lambda r: _v(r.version), reverse=True):
        missing = _release_complete(kinds, rel, facts)
        if t.torch is not None and t.index == "core-sdk" and not kb.vendor_wheels(rel.version):
            missing.append("AMD's torch build for it (torch_wheels.json vendor_wheels)")
        if not missing:
            return rel, tuple(f"ROCm {v} is newer, but the knowledge base lacks {'; '.join(what)}: not planned"
                              for v, what in lacking)
        lacking.append((rel.version, missing))
    where = " ".join(x for x in (facts.os.id, facts.os.version) if x) or "this OS"
    shown = "; ".join(f"{v}: {', '.join(what)}" for v, what in lacking[:3]) or "no release of this stream"
    reasons.append(f"no {stream} release in the knowledge base has every fact this plan needs on {where} "
                   f"(missing: {shown})")
    return None, ()


@record
class _Target:
    """The target resolved against the machine: what the steps install, and where."""

    venv: str | None = None
    venv_exists: bool = False
    python_version: str | None = None
    home: str | None = None
    wheel: Wheel | None = None
    amd: _AmdChoice = _AmdChoice()
    wheel_notes: tuple[str, ...] = ()
    override: str | None = None
    image: DockerImage | None = None
    release: Release | None = None
    release_notes: tuple[str, ...] = ()


def _resolve_target(pf: PlanFile, facts: Facts, kb: KnowledgeBase, m: _Machine, venv: str | None,
                    reasons: list[str]) -> _Target:
    t = pf.target
    home = _home(facts)
    venv_path: str | None = None
    venv_exists = False
    py_version: str | None = None
    wheel = override = None
    amd = _AmdChoice()
    notes: list[str] = []
    release, release_notes = _choose_release(pf, facts, kb, reasons)
    if t.torch is not None:  # torch goes into a venv
        venv_path, venv_exists, env, home = _choose_venv(pf, facts, venv, reasons)
        py_version = env.python_version if env else next(
            (e.python_version for e in facts.python_envs if e.kind == "system" and e.python_version), None)
        if env and env.build == "cuda" and facts.other_gpus:
            reasons.append(f"{venv_path} holds a CUDA torch and this machine also has "
                           f"{facts.other_gpus[0]}: replacing it would break that GPU's setup; pass a new venv")
        if m.gfx and t.index in ("therock", "core-sdk"):
            amd = _amd_choice(pf, kb, m, release, reasons)
        elif m.gfx:
            wheel, _, override, notes = _wheel_choice(pf, kb, m, py_version, reasons)
        old = venv_path[:-len(pf.name) - 1] if venv_path and venv_path.endswith(f"-{pf.name}") else None
        if old and any(e.path == old for e in facts.python_envs):
            notes.insert(0, f"{old} stays as it is (a new venv beside it gets the new stack; --venv PATH "
                            "chooses another)")
    image = None
    if t.image is not None and m.gfx:
        from wizard.steps.docker import choose_image, engine
        from wizard.steps.pip_pin import override_gfx

        eff = []
        for g in m.gfx:
            ov = kb.override_for(g)
            eff.append(override_gfx(ov) if ov else g)
        image = choose_image(kb, tuple(eff))
        if image is None:
            tr = kb.therock()
            extra = "; the path that can work: therock-pip" if tr and all(g in tr.device_extras for g in m.gfx) else ""
            reasons.append(f"no rocm/pytorch image in the knowledge base carries {', '.join(m.gfx)}"
                           " (natively or with a documented override)" + extra)
        else:
            lacking = [g for g in m.gfx if kb.override_for(g)]
            override = kb.override_for(lacking[0]) if lacking else None
        if engine(facts) is None and facts.origin == "live":
            reasons.append("neither docker nor podman is installed: install Docker Engine first")
    return _Target(venv_path, venv_exists, py_version, home, wheel, amd, tuple(notes), override, image, release,
                   release_notes)


def resolve_plan(spec: str, facts: Facts, *, venv: str | None = None, state_dir: str | None = None,
                 wizard_python: str | None = None, kb: KnowledgeBase | None = None,
                 lock_wait: int = preflight.LOCK_WAIT, mirrors: MirrorConfig | None = None,
                 user_state_dir: str | None = None, channel: str | None = None,
                 allow_remove: tuple[str, ...] = ()) -> ResolvedPlan:
    """``user_state_dir``: where a plan whose steps change nothing system-wide (no root action, no reboot) keeps
    its backup and progress instead of ``state_dir``, so it needs no root (``~/`` is the machine user's home).
    ``channel``: ``stable`` or ``nightly`` in place of the plan's own ``target.channel`` (``--channel``).
    ``allow_remove``: installed packages depending on the distribution's ROCm that a purge may remove with it
    (``--allow-remove``; the user's consent, asked for by name when a run stops there)."""
    plan = _resolve_plan(spec, facts, venv=venv, state_dir=state_dir, wizard_python=wizard_python, kb=kb,
                         lock_wait=lock_wait, mirrors=mirrors, channel=channel, allow_remove=allow_remove)
    user_dir = _user_dir(user_state_dir, facts)
    if user_dir is None or user_dir == plan.state_dir or not user_only(plan):
        return plan
    return _resolve_plan(spec, facts, venv=venv, state_dir=user_dir, wizard_python=wizard_python, kb=kb,
                         lock_wait=lock_wait, mirrors=mirrors, channel=channel, allow_remove=allow_remove)


def user_only(plan: ResolvedPlan) -> bool:
    """No step but a backup needs root or a reboot: the plan changes nothing system-wide."""
    from wizard.steps import changes_system

    return not changes_system(plan)


def _user_dir(user_state_dir: str | None, facts: Facts) -> str | None:
    if not user_state_dir or not user_state_dir.startswith("~/"):
        return user_state_dir
    home = _home(facts)  # a recording that does not say whose home keeps the state dir it was given
    return f"{home.rstrip('/')}/{user_state_dir[2:]}" if home else None


def _resolve_plan(spec: str, facts: Facts, *, venv: str | None, state_dir: str | None, wizard_python: str | None,
                  kb: KnowledgeBase | None, lock_wait: int, mirrors: MirrorConfig | None,
                  channel: str | None = None, allow_remove: tuple[str, ...] = ()) -> ResolvedPlan:
    from wizard.kb import load_kb
    from wizard.steps import kind as step_kind
    from wizard.steps._common import StepContext, StepRefused, skipped

    pf = load_plan(spec)
    if channel is not None:
        if channel not in CHANNELS:
            raise PlanError(f"channel: one of {', '.join(CHANNELS)} (got {channel!r})")
        pf = replace(pf, target=replace(pf.target, channel=channel))
    kb = kb or load_kb()
    reasons: list[str] = []
    m = _Machine(facts)
    if not facts.gpus:
        reasons.append("no AMD GPU was detected")
    for g in m.targets:
        if not g.gfx:
            reasons.append(f"the gfx target of {g.name or g.pci_id or 'an AMD GPU'} is unknown")
    tg = _resolve_target(pf, facts, kb, m, venv, reasons)
    state = state_dir or default_state_dir()
    kinds = pf.kinds
    base = StepContext(facts=facts, kb=kb, plan_name=pf.name, target=pf.target, spec=pf.steps[0],
                       gpus=tuple(m.targets), hidden=tuple(m.hidden), gfx=m.gfx, release=tg.release, wheel=tg.wheel,
                       therock_index=tg.amd.index.url if tg.amd.index else None, amd_index=tg.amd.index,
                       vendor_wheel=tg.amd.vendor, rocm_requirement=tg.amd.rocm_requirement,
                       release_notes=tg.release_notes, wheel_notes=tg.wheel_notes + tg.amd.notes,
                       override=tg.override,
                       venv=tg.venv, venv_exists=tg.venv_exists, python_version=tg.python_version, home=tg.home,
                       user=_user(facts, tg.home), image=tg.image, state_dir=state,
                       backup_dir=f"{state.rstrip('/')}/backup/{pf.name}",
                       wizard_python=wizard_python or sys.executable or "python3", lock_wait=lock_wait,
                       allow_remove=allow_remove)

    steps: list[StepPlan] = []
    checks: list[Action] = []
    effects: set[str] = set()
    for i, s in enumerate(pf.steps):
        ctx = replace(base, spec=s, params=s.params, effects_before=frozenset(effects), earlier=kinds[:i],
                      later=kinds[i + 1:])
        k = step_kind(s.kind)
        try:
            sp = k.plan(ctx)
        except StepRefused as exc:
            reasons.extend(exc.reasons)
            continue
        effects.update(sp.effects)
        steps.append(sp)
        checks.extend(k.preflight(ctx, sp))
    if facts.driver.kfd_present is False and KERNEL_DRIVER not in effects and not (pf.name == DRIVER_PLAN and reasons):
        # (the driver plan is the one that installs it: where it is refused, its own reasons say why it installs none)
        reasons.append("/dev/kfd is missing (no amdgpu kernel driver serves the GPU), and this plan does not "
                       "install one" + _driver_way(pf, facts, kb, state_dir))
    if reasons:
        raise PlanRefused(list(dict.fromkeys(reasons)))
    guarded = [not step_kind(sp.kind).protects for sp in steps]
    if not any(sp.actions for sp, g in zip(steps, guarded) if g):  # nothing to do: nothing to protect either
        steps = [sp if g else skipped(sp.kind, sp.title, NOTHING_TO_PROTECT, ("nothing to do",))
                 for sp, g in zip(steps, guarded)]
        checks = []

    acts = [a for sp in steps for a in sp.actions]
    if any(a.root for a in acts) or any(sp.reboot for sp in steps):
        checks.insert(0, preflight.ssh_advice())
    if any(a.root for a in acts):
        checks.insert(1, preflight.root_available())
    machine = binding.bound_facts(facts, tg.venv, tg.venv_exists, tg.python_version)
    # a plan with nothing to do checks nothing; one whose every change is skipped by its check here (asked again
    # where it finished) is still bound: its file, run elsewhere, would run those changes there
    bind = binding.check(machine) if checks or any(sp.actions for sp in steps) else None
    if bind is not None:
        checks.insert(0, bind)  # before every other check: on another machine nothing else means anything
    target: list[tuple[str, Any]] = [("stream", pf.target.stream)]
    if tg.release:
        target.append(("rocm", tg.release.version))
    if tg.wheel is not None:
        target += [("torch", tg.wheel.torch), ("index", tg.wheel.index), ("index_url", tg.wheel.index_url)]
    if tg.amd.index is not None:
        torch = tg.amd.vendor.torch if tg.amd.vendor else f"newest on {tg.amd.index.name}"
        target += [("torch", torch), ("index", tg.amd.index.name), ("index_url", tg.amd.index.url)]
        if not tg.amd.index.stable:
            target.append(("channel", f"{tg.amd.index.channel} (not a stable release)"))
    if tg.image is not None:
        target.append(("image", tg.image.tag))
    if m.gfx:
        target.append(("gfx", ",".join(m.gfx)))
    if tg.override:
        target.append(("HSA_OVERRIDE_GFX_VERSION", tg.override))
    if tg.venv:
        target.append(("venv", tg.venv))
    plan = ResolvedPlan(name=pf.name, title=pf.title, why=pf.why, target=tuple(target),
                        steps=(preflight.step(checks), *steps), source_file=pf.path, state_dir=state,
                        machine=machine)
    plan = mirror_apply(plan, mirrors) if mirrors is not None else plan
    if facts.origin == "live":  # a recorded or sandboxed machine's indexes are not reached from here
        from wizard.downloads.pin import pin_plan

        plan = pin_plan(plan, tg.python_version, base.wizard_python, tg.home, envs=facts.python_envs)
    return plan


DRIVER_PLAN = "driver"


def _driver_way(pf: PlanFile, facts: Facts, kb: KnowledgeBase, state_dir: str | None) -> str:
    """How a machine without /dev/kfd gets a driver: the driver plan when it applies here, or why not."""
    if pf.name == DRIVER_PLAN or DRIVER_PLAN not in builtin_plan_names():
        return ""
    try:
        resolve_plan(DRIVER_PLAN, facts, state_dir=state_dir, kb=kb)
    except PlanRefused as exc:
        return f"; the {DRIVER_PLAN} plan cannot install one here either: {exc.reasons[0]}"
    return f"; run the {DRIVER_PLAN} plan first (rocm-wizard --plan {DRIVER_PLAN}), reboot, then this plan"


def _recommend_reason(name: str, rp: ResolvedPlan) -> str:
    t = dict(rp.target)
    gfx = t.get("gfx", "this GPU")
    if name == "pip-only":
        how = (f"with HSA_OVERRIDE_GFX_VERSION={t['HSA_OVERRIDE_GFX_VERSION']}" if "HSA_OVERRIDE_GFX_VERSION" in t
               else "natively")
        return (f"least invasive: torch {t.get('torch')} from {t.get('index')} carries {gfx} {how} and bundles "
                "its ROCm user space; nothing system-wide changes")
    if name == "therock-pip":
        return (f"no upstream wheel carries {gfx} without an unsafe override; AMD's torch {t.get('torch')} with the "
                f"device-{gfx.split(',')[0]} extra from {t.get('index')} is the path that can work (newer and less "
                "proven; nothing system-wide changes)")
    if name == "docker":
        return f"{t.get('image')} carries {gfx}; only the container changes"
    return f"the first applicable plan carrying {gfx}"


def recommend(facts: Facts, *, venv: str | None = None, state_dir: str | None = None, kb: KnowledgeBase | None = None,
              wizard_python: str | None = None, mirrors: MirrorConfig | None = None,
              channel: str | None = None, user_state_dir: str | None = None) -> list[PlanChoice]:
    """Every shipped plan with applicable/reasons/target, exactly one marked recommended (when any fits)."""
    out: list[PlanChoice] = []
    for pf in builtin_plans():
        try:
            rp = resolve_plan(pf.path, facts, venv=venv, state_dir=state_dir, kb=kb, wizard_python=wizard_python,
                              mirrors=mirrors, channel=channel, user_state_dir=user_state_dir)
        except PlanRefused as exc:
            out.append(PlanChoice(pf, False, exc.reasons, _declared_target(pf), False))
            continue
        idle = [sp.skipped_reason for sp in rp.steps[1:] if not sp.actions and sp.skipped_reason
                and sp.skipped_reason != NOTHING_TO_PROTECT]
        nothing = not any(sp.actions for sp in rp.steps[1:])
        ends = end_state(rp) if not nothing else None
        note = (f"the machine is already at this plan's end state ({'; '.join(ends)}): run again, each change is "
                "skipped by its check" if ends else None)
        out.append(PlanChoice(pf, True, [f"nothing to do: {idle[0]}"] if nothing and idle else [], dict(rp.target),
                              False, rp, (note,) if note else ()))
    fits = {c.plan.name: i for i, c in enumerate(out) if c.applicable and not c.reasons}
    if facts.driver.kfd_present is False and DRIVER_PLAN in fits:
        i = fits[DRIVER_PLAN]
        then = _after_driver(facts, venv=venv, state_dir=state_dir, kb=kb, wizard_python=wizard_python)
        out[i] = out[i]._replace(recommended=True, reasons=[
            "recommended: /dev/kfd is missing and no plan can use the GPU without the amdgpu kernel driver: install "
            f"it first (reboot), then {then}"])
        return out
    for name in RECOMMEND_ORDER:
        if name in fits:
            i = fits[name]
            c = out[i]
            assert c.resolved is not None
            out[i] = c._replace(recommended=True, reasons=[f"recommended: {_recommend_reason(name, c.resolved)}"])
            break
    return out


def end_state(rp: ResolvedPlan) -> list[str] | None:
    """What the facts show the plan would make that the machine already has ("ROCm 6.4.4 is installed", ...), where
    they show all of it: every step that runs says so (``AT_END``), or changes nothing but behind a check that reads
    the machine (an activate block, a group); None where a step installs, removes or reboots, or knows the machine
    lacks what it makes."""
    from wizard.steps import kind as step_kind
    from wizard.steps._common import AT_END

    ends: list[str] = []
    for sp in rp.steps[1:]:
        if sp.skipped_reason or step_kind(sp.kind).protects:
            continue
        if sp.reboot:
            return None
        there = sp.param(AT_END)
        if there:
            ends.append(str(there))
        elif there is not None or any((a.changes or a.destructive) and a.check is None for a in sp.actions):
            return None
    return ends or None


def _after_driver(facts: Facts, **kw: Any) -> str:
    """What the recommendation would be once the driver is loaded (same machine, /dev/kfd present)."""
    loaded = replace(facts, driver=replace(facts.driver, loaded=True, kfd_present=True, kfd_error=None))
    for c in recommend(loaded, **kw):
        if c.recommended and c.resolved is not None:
            return f"rocm-wizard plans again; it will recommend {c.plan.name}: {_recommend_reason(c.plan.name, c.resolved)}"
    return "rocm-wizard plans again (no plan fits this machine even with the driver loaded)"


def _declared_target(pf: PlanFile) -> dict[str, Any]:
    t = pf.target
    return {k: v for k, v in (("stream", t.stream), ("rocm", t.rocm), ("torch", t.torch), ("index", t.index),
                              ("image", t.image)) if v is not None}


def fitting_fix_plans(findings: list[Finding], facts: Facts, *, kb: KnowledgeBase | None = None) -> list[Finding]:
    """The findings with each fix's plan kept only where that plan fits this machine; where it does not, the
    fix says why (the refusal's first reason, which points at the driver plan when /dev/kfd is missing).
    Where no GPU was read at all (a bare error text), whether a plan fits is not known, and the fix says that
    rather than a refusal's "no AMD GPU was detected", which would read as a finding about the machine.
    The venv is not what is asked here: an unknown home does not hide a plan."""
    verdict: dict[str, str | None] = {}
    home = _home(facts) or "/home/user"
    out: list[Finding] = []
    unread = not gpus_read(facts)
    for f in findings:
        plan = f.fix_plan
        if plan is None:
            out.append(f)
            continue
        if unread:
            out.append(replace(f, fix_plan=None, fix=f"{f.fix} (whether the {plan} plan fits this machine is not "
                                                      "known: no GPU was read; `rocm-wizard plans` on the machine "
                                                      "lists the plans that fit)"))
            continue
        if plan not in verdict:
            try:
                resolve_plan(plan, facts, venv=f"{home}/{NEW_VENV_NAME}", kb=kb, state_dir="/var/lib/rocm-wizard")
                verdict[plan] = None
            except (PlanRefused, PlanError) as exc:
                verdict[plan] = exc.reasons[0] if isinstance(exc, PlanRefused) and exc.reasons else str(exc)
        why = verdict[plan]
        out.append(f if why is None else replace(f, fix_plan=None,
                                                 fix=f"{f.fix} (the {plan} plan does not fit this machine: {why})"))
    return out
