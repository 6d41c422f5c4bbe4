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
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from packaging.version import InvalidVersion, Version

from wizard import paths, preflight
from wizard.kb import DockerImage, KnowledgeBase, Release, Wheel
from wizard.mirror.apply import apply as mirror_apply
from wizard.mirror.config import MirrorConfig
from wizard.model import KERNEL_DRIVER, Action, Facts, PythonEnv, ResolvedPlan, StepPlan
from wizard.plan_file import PlanError, PlanFile, builtin_plans, load_plan

__all__ = ["PlanError", "PlanRefused", "PlanChoice", "resolve_plan", "recommend", "default_state_dir"]

GIB = 1 << 30
RECOMMEND_ORDER = ("pip-only", "therock-pip", "docker", "upgrade-7.2", "upgrade-6.4", "downgrade-6.2", "therock")
NEW_VENV_NAME = "rocm-wizard-venv"
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
    if path is None and param != "auto":
        path = f"{home}/{param[2:]}" if param.startswith("~/") and home else (None if param.startswith("~/")
                                                                              else param)
    envs = [e for e in facts.python_envs if e.path and e.kind in ("venv", "conda")]
    if path is None:
        path = beside_venv(pf.name, [e.path for e in sorted(envs, key=lambda e: (e.build != "rocm", e.torch is None))
                                     if e.path])
    if path is None:
        path = f"{home or HOME_VAR}/{NEW_VENV_NAME}"
    path = path.rstrip("/") or "/"
    env = next((e for e in facts.python_envs if e.path == path), None)
    return path, env is not None, env, home


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
    """(wheel row or None, therock index or None, override or None, notes)"""
    t = pf.target
    notes: list[str] = []
    if t.index == "therock":
        tr = kb.therock()
        if tr is None:
            reasons.append("the knowledge base has no TheRock index")
            return None, None, None, notes
        missing = [g for g in m.gfx if g not in tr.device_extras]
        if missing:
            reasons.append(f"TheRock has no device extra for {', '.join(missing)}")
        return None, tr.multi_arch_index, None, notes
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

    # "newest" prefers rows the knowledge base does not mark uncertain; an uncertain newer one is noted
    ranked = sorted(rows, key=lambda w: (w.uncertain is None, _v(w.torch), _v(w.rocm)), reverse=True)
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
        notes.append(f"torch {pick.torch} is the newest row the knowledge base confirms; {', '.join(newer)} "
                     "exist there marked uncertain")
    return pick, None, ov, notes


@dataclass(frozen=True)
class _Target:
    """The target resolved against the machine: what the steps install, and where."""

    venv: str | None = None
    venv_exists: bool = False
    python_version: str | None = None
    home: str | None = None
    wheel: Wheel | None = None
    therock_index: str | None = None
    wheel_notes: tuple[str, ...] = ()
    override: str | None = None
    image: DockerImage | None = None
    release: Release | None = None


def _resolve_target(pf: PlanFile, facts: Facts, kb: KnowledgeBase, m: _Machine, venv: str | None,
                    reasons: list[str]) -> _Target:
    t = pf.target
    home = _home(facts)
    venv_path: str | None = None
    venv_exists = False
    py_version: str | None = None
    wheel = therock_index = override = None
    notes: list[str] = []
    if t.torch is not None:  # torch goes into a venv
        venv_path, venv_exists, env, home = _choose_venv(pf, facts, venv, reasons)
        py_version = env.python_version if env else next(
            (e.python_version for e in facts.python_envs if e.kind == "system" and e.python_version), None)
        if env and env.build == "cuda" and facts.other_gpus:
            reasons.append(f"{venv_path} holds a CUDA torch and this machine also has "
                           f"{facts.other_gpus[0]}: replacing it would break that GPU's setup; pass a new venv")
        if m.gfx:
            wheel, therock_index, override, notes = _wheel_choice(pf, kb, m, py_version, reasons)
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
    release = kb.release(t.rocm) if t.rocm else None
    return _Target(venv_path, venv_exists, py_version, home, wheel, therock_index, tuple(notes), override, image,
                   release)


def resolve_plan(spec: str, facts: Facts, *, venv: str | None = None, state_dir: str | None = None,
                 wizard_python: str | None = None, kb: KnowledgeBase | None = None,
                 lock_wait: int = preflight.LOCK_WAIT, mirrors: MirrorConfig | None = None) -> ResolvedPlan:
    from wizard.kb import load_kb
    from wizard.steps import kind as step_kind
    from wizard.steps._common import StepContext, StepRefused

    pf = load_plan(spec)
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
                       therock_index=tg.therock_index, wheel_notes=tg.wheel_notes, override=tg.override,
                       venv=tg.venv, venv_exists=tg.venv_exists, python_version=tg.python_version, home=tg.home,
                       user=_user(facts, tg.home), image=tg.image, state_dir=state,
                       backup_dir=f"{state.rstrip('/')}/backup/{pf.name}",
                       wizard_python=wizard_python or sys.executable or "python3", lock_wait=lock_wait)

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
    if facts.driver.kfd_present is False and KERNEL_DRIVER not in effects:
        reasons.append("/dev/kfd is missing: the amdgpu kernel driver is not loaded, and this plan does not "
                       "install one")
    if reasons:
        raise PlanRefused(list(dict.fromkeys(reasons)))

    acts = [a for sp in steps for a in sp.actions]
    if any(a.root for a in acts) or any(sp.reboot for sp in steps):
        checks.insert(0, preflight.ssh_advice())
    if any(a.root for a in acts):
        checks.insert(1, preflight.root_available())
    target: list[tuple[str, Any]] = [("stream", pf.target.stream)]
    if tg.release:
        target.append(("rocm", tg.release.version))
    if tg.wheel is not None:
        target += [("torch", tg.wheel.torch), ("index", tg.wheel.index), ("index_url", tg.wheel.index_url)]
    if tg.therock_index:
        target += [("torch", "newest on TheRock"), ("index_url", tg.therock_index)]
    if tg.image is not None:
        target.append(("image", tg.image.tag))
    if m.gfx:
        target.append(("gfx", ",".join(m.gfx)))
    if tg.override:
        target.append(("HSA_OVERRIDE_GFX_VERSION", tg.override))
    if tg.venv:
        target.append(("venv", tg.venv))
    plan = ResolvedPlan(name=pf.name, title=pf.title, why=pf.why, target=tuple(target),
                        steps=(preflight.step(checks), *steps), source_file=pf.path, state_dir=state)
    return mirror_apply(plan, mirrors) if mirrors is not None else plan


def _recommend_reason(name: str, rp: ResolvedPlan) -> str:
    t = dict(rp.target)
    gfx = t.get("gfx", "this GPU")
    if name == "pip-only":
        how = (f"with HSA_OVERRIDE_GFX_VERSION={t['HSA_OVERRIDE_GFX_VERSION']}" if "HSA_OVERRIDE_GFX_VERSION" in t
               else "natively")
        return (f"least invasive: torch {t.get('torch')} from {t.get('index')} carries {gfx} {how} and bundles "
                "its ROCm user space; nothing system-wide changes")
    if name == "therock-pip":
        return (f"no upstream wheel carries {gfx} without an unsafe override; TheRock's device-{gfx.split(',')[0]} "
                "extra is the path that can work (newer and less proven; nothing system-wide changes)")
    if name == "docker":
        return f"{t.get('image')} carries {gfx}; only the container changes"
    return f"the first applicable plan carrying {gfx}"


def recommend(facts: Facts, *, venv: str | None = None, state_dir: str | None = None, kb: KnowledgeBase | None = None,
              wizard_python: str | None = None, mirrors: MirrorConfig | None = None) -> list[PlanChoice]:
    """Every shipped plan with applicable/reasons/target, exactly one marked recommended (when any fits)."""
    out: list[PlanChoice] = []
    for pf in builtin_plans():
        try:
            rp = resolve_plan(pf.path, facts, venv=venv, state_dir=state_dir, kb=kb, wizard_python=wizard_python,
                              mirrors=mirrors)
        except PlanRefused as exc:
            out.append(PlanChoice(pf, False, exc.reasons, _declared_target(pf), False))
            continue
        out.append(PlanChoice(pf, True, [], dict(rp.target), False, rp))
    fits = {c.plan.name: i for i, c in enumerate(out) if c.applicable}
    for name in RECOMMEND_ORDER:
        if name in fits:
            i = fits[name]
            c = out[i]
            assert c.resolved is not None
            out[i] = c._replace(recommended=True, reasons=[f"recommended: {_recommend_reason(name, c.resolved)}"])
            break
    return out


def _declared_target(pf: PlanFile) -> dict[str, Any]:
    t = pf.target
    return {k: v for k, v in (("stream", t.stream), ("rocm", t.rocm), ("torch", t.torch), ("index", t.index),
                              ("image", t.image)) if v is not None}
