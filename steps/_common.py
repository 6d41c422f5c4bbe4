"""What every step receives (StepContext) and small builders for common actions.

Steps never execute anything: they return ``StepPlan``s made of ``Action``s (argv lists). Where a
command's output must land in a file, or a file must be written, the argv runs a tiny, fixed program
(``sh -c`` with positional arguments, or ``python3 -c``) so that the argv alone is the whole command:
the runner runs it as is, and the dry-run script prints it shlex-quoted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Generic, Sequence, TypeVar

from wizard.model import KERNEL_DRIVER, Action, Facts, Gpu, RocmInstall, StepPlan
from wizard.record import field, record, replace

if TYPE_CHECKING:
    from wizard.kb import DockerImage, KnowledgeBase, Release, VendorWheel, Wheel, WheelIndex
    from wizard.plan_file import StepSpec, Target

MOK = "mok"  # StepPlan.effects: a machine-owner key is queued and enrolled at the next boot
# StepPlan.params key: the machine already has what the step makes, as its facts show (the value says what): asked
# again, each of its changes is skipped by its check. Set to "" where the step knows the machine lacks it; absent
# where the facts cannot tell (the planner's end-state note: wizard.planner.end_state)
AT_END = "at_end"


class StepRefused(Exception):
    """The step cannot be planned on this machine; each reason is one line. No reasons: the planner
    already said why (the target could not be resolved) and the step is left out silently."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = list(reasons)


@record
class NoParams:
    """The parameters of a step kind that takes none (besides ``title``)."""


def package_manager(facts: Facts) -> str | None:
    """apt, dnf or zypper: as detected, else by the distro family."""
    pm = facts.os.package_manager
    if pm:
        return pm
    os_id = (facts.os.id or "").lower()
    like = {x.lower() for x in facts.os.like}
    if os_id in ("ubuntu", "debian") or "debian" in like or "ubuntu" in like:
        return "apt"
    if os_id in ("rhel", "centos", "rocky", "almalinux", "ol", "fedora") or "rhel" in like or "fedora" in like:
        return "dnf"
    if os_id.startswith("sles") or os_id.startswith("opensuse") or "suse" in like:
        return "zypper"
    return None


@record
class StepContext:
    facts: Facts
    kb: KnowledgeBase
    plan_name: str
    target: Target
    spec: StepSpec
    params: Any = field(default_factory=NoParams)  # the step kind's typed parameter record
    gpus: tuple[Gpu, ...] = ()  # the GPUs the stack is set up for
    hidden: tuple[Gpu, ...] = ()  # AMD GPUs to hide from HIP (unusable iGPU)
    gfx: tuple[str, ...] = ()  # their hardware gfx targets, sorted, unique
    release: Release | None = None  # the system ROCm release of the target
    wheel: Wheel | None = None  # the upstream wheel row (None for TheRock)
    therock_index: str | None = None  # the AMD index (URL) with the GPUs' device extras when the plan uses one
    amd_index: WheelIndex | None = None  # that index's knowledge-base row (its channel: stable or not)
    vendor_wheel: VendorWheel | None = None  # AMD's torch build pinned from it (None: the index's newest)
    rocm_requirement: str | None = None  # "rocm[libraries,device-gfx1201]==10.0.0" where the KB has it
    release_notes: tuple[str, ...] = ()  # what the choice of the target release wants said
    wheel_notes: tuple[str, ...] = ()  # what the wheel choice wants said (uncertain newer rows)
    override: str | None = None  # HSA_OVERRIDE_GFX_VERSION to set (None: none)
    venv: str | None = None
    venv_exists: bool = False
    python_version: str | None = None  # of the venv (or of python3 for a new one), when known
    home: str | None = None
    user: str | None = None
    image: DockerImage | None = None
    state_dir: str = "/var/lib/rocm-wizard"
    backup_dir: str = "/var/lib/rocm-wizard/backup"
    wizard_python: str = "python3"
    lock_wait: int = 120  # seconds the preflight waits for a package-manager lock
    allow_remove: tuple[str, ...] = ()  # installed dependents of the distribution's ROCm a purge may remove too
    effects_before: frozenset[str] = frozenset()  # effects of the steps planned before this one
    earlier: tuple[str, ...] = ()  # kinds of the steps before this one
    later: tuple[str, ...] = ()  # kinds of the steps after this one
    extra: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def pm(self) -> str | None:
        return package_manager(self.facts)

    @property
    def venv_python(self) -> str:
        return f"{self.venv}/bin/python"

    @property
    def kernel_driver_before(self) -> bool:
        """An earlier step installs or removes the kernel driver (a reboot loads the change)."""
        return KERNEL_DRIVER in self.effects_before

    def title(self, default: str) -> str:
        return self.spec.title or default


def installed_target(ctx: StepContext) -> RocmInstall | None:
    """The install of the target release when the machine's facts show it is already the installed one: its stream
    and version, found by its version file at the release's own path, the only install of that stream, and the
    release's core and meta packages (the knowledge base's ``packages``, its names without a wildcard: rocm-core,
    which owns that version file, and rocm) among the installed ones. dpkg's packages are read in state ``ii`` only
    (one half-installed or half-configured is left out by the probe), so a broken core package is not taken for an
    installed target: that install is purged and installed again."""
    rel = ctx.release
    if rel is None or not rel.version:
        return None
    same = [i for i in ctx.facts.rocm.installs if i.stream == rel.stream]
    if len(same) != 1:
        return None
    inst = same[0]
    if (inst.version != rel.version or inst.how != "version-file" or not inst.packages
            or (rel.install_path is not None and inst.path != rel.install_path)):
        return None
    core = [p for p in rel.packages if not any(c in p for c in "*?[")]
    return inst if all(p in inst.packages for p in core) else None


# --- guards: the package manager's half-states, repaired on every entry to a step that uses it ---------

# exit 0 when a package is reinstall-required after its unpack ("install reinstreq unpacked": a kill as dpkg
# finished unpacking it): ``dpkg --configure -a`` and ``apt-get -f install`` refuse it ("in a very bad
# inconsistent state; you should reinstall it before attempting configuration") on every resume, so the
# reinstall guard below repairs it, and the two guards before it leave it alone
UNCONFIGURABLE = "dpkg-query -W -f '${Status}\\n' 2>/dev/null | grep -Eq ' reinstreq (unpacked|half-configured)$'"
# exit 0 when dpkg was not interrupted: no pending journal entries in /var/lib/dpkg/updates (what apt
# checks before "dpkg was interrupted, you must manually run 'dpkg --configure -a'") and nothing
# half-installed or half-configured (``dpkg --audit`` prints nothing) that configuring could repair
DPKG_CLEAN = ('test -z "$(ls -A /var/lib/dpkg/updates 2>/dev/null)" && '
              '{ test -z "$(dpkg --audit 2>/dev/null)" || ' + UNCONFIGURABLE + '; }')
# exit 0 when apt sees no unmet dependency and dpkg no half-installed package (``dpkg --configure -a`` does not
# reinstall one that a kill mid-unpack left ``reinstreq half-installed``; ``apt-get -f install`` does)
APT_CLEAN = '{ apt-get check >/dev/null 2>&1 && test -z "$(dpkg --audit 2>/dev/null)"; } || ' + UNCONFIGURABLE
# exit 0 when no package is marked reinstall-required (a kill mid-unpack leaves it "install reinstreq
# half-installed": neither ``dpkg --configure -a`` nor ``apt-get -f install`` reinstalls it)
NO_REINSTREQ = "! dpkg-query -W -f '${Status}\\n' 2>/dev/null | grep -q ' reinstreq '"
# reinstall exactly the packages dpkg marks reinstall-required, from the configured repositories, then
# configure what waited on them
REINSTALL = ("pkgs=$(dpkg-query -W -f '${Package} ${Status}\\n' 2>/dev/null | awk '$3 == \"reinstreq\" {print $1}'); "
             '[ -z "$pkgs" ] || { apt-get install --reinstall -y $pkgs && dpkg --configure -a; }')
# sh -c HOLD_CHECK sh PKG...: fail, naming the unhold the user must decide on, when one of PKG is held
HOLD_CHECK = ('held=$(apt-mark showhold "$@" 2>/dev/null | tr "\\n" " " | sed "s/ *$//"); '
              'if [ -n "$held" ]; then echo "held packages the plan changes: $held. A hold is the admin\'s '
              'decision: if you decide so, run: sudo apt-mark unhold $held (then rocm-wizard resume)" >&2; exit 1; fi')


def package_guards(pm: str | None, lock_wait: int, packages: Sequence[str] = ()) -> list[Action]:
    """Actions that run first on every entry to a step that drives the package manager (``repeat``),
    so a resume after a crash repairs the real half-states before going on, each journalled: another
    package manager's lock (wait, bounded, with a message), an interrupted dpkg (``dpkg --configure -a``),
    broken dependencies (``apt-get -f install``), a held package the step changes (refused, naming the
    ``apt-mark unhold`` the admin must decide on). On a healthy machine each is a done-check and no more."""
    from wizard import preflight

    out: list[Action] = []
    lock = preflight.package_lock_free(pm, lock_wait)
    if lock is not None:
        out.append(replace(lock, name=None, repeat=True,
                           description=f"wait for the package manager's lock (at most {lock_wait} s)"))
    if pm == "apt":
        out += [
            Action(("dpkg", "--configure", "-a"), "repair an interrupted dpkg (dpkg --configure -a)", root=True,
                   check=("sh", "-c", DPKG_CLEAN), changes=("dpkg",), repeat=True, timeout=3600),
            Action(("apt-get", "-f", "install", "-y"), "repair broken dependencies and reinstall half-installed "
                   "packages (apt-get -f install)", root=True, check=("sh", "-c", APT_CLEAN), changes=("dpkg",),
                   repeat=True, timeout=3600),
            Action(("sh", "-c", REINSTALL), "reinstall the packages a kill mid-unpack left half-installed "
                   "(apt-get install --reinstall)", root=True, check=("sh", "-c", NO_REINSTREQ), changes=("dpkg",),
                   repeat=True, timeout=3600),
        ]
        if packages:
            out.append(Action(("sh", "-c", HOLD_CHECK, "sh", *packages), "no package the step changes is held",
                              repeat=True))
    return out


# --- undo: what a step contributes to a rollback ------------------------------------------------


@record
class Undo:
    """A step's part of a rollback: (why, action) pairs run in order, and what cannot be restored."""

    actions: tuple[tuple[str, Action], ...] = ()
    cannot: tuple[str, ...] = ()


@record
class UndoContext:
    """What a step's ``undo`` may know: its own resolved step, which of its actions really ran (from
    the journal: an action a done-check skipped did not run), the backup manifest, and read access to
    the machine's files (the backup's freeze files)."""

    step: StepPlan
    index: int
    ran: tuple[int, ...]  # indexes into step.actions, in the order they ran
    manifest: dict[str, Any] | None
    read_text: Callable[[str], str | None]
    glob: Callable[[str], list[str]]
    kb: KnowledgeBase | None = None

    @property
    def ran_actions(self) -> list[Action]:
        return [self.step.actions[a] for a in self.ran if 0 <= a < len(self.step.actions)]

    def manifest_env(self, path: str) -> dict[str, Any] | None:
        for env in (self.manifest or {}).get("envs", []):
            if isinstance(env, dict) and env.get("path") == path:
                return env
        return None


def undo_each_action(u: UndoContext) -> Undo:
    """The default undo: every action that ran and changed something, newest first, through its own
    ``undo`` argv; one that has none is listed as not restorable."""
    actions: list[tuple[str, Action]] = []
    cannot: list[str] = []
    for act in reversed(u.ran_actions):
        if not act.changes:
            continue
        if act.undo:
            actions.append((f"undo: {act.description or act.shown()}",
                            Action(act.undo, root=act.root, as_user=act.as_user, changes=act.changes)))
        else:
            cannot.append(f"step {u.index + 1} ({u.step.title}): {act.description or act.shown()} has no undo")
    return Undo(tuple(actions), tuple(cannot))


def no_undo(u: UndoContext) -> Undo:
    """For steps that change nothing a rollback should touch (checks, the backup itself, verify)."""
    return Undo()


def no_checks(ctx: StepContext, step: StepPlan) -> Sequence[Action]:
    return ()


P = TypeVar("P")


@record
class StepKind(Generic[P]):
    """Everything about one step kind, declared by its module as ``KIND``: the registry in
    ``wizard.steps`` collects them; the plan-file loader validates against ``params``; the planner
    calls ``plan`` and ``preflight``; a rollback calls ``undo`` for the steps whose actions ran."""

    name: str
    summary: str
    params: type[P]  # a frozen record: its fields (with defaults) are the plan file's keys
    plan: Callable[[StepContext], StepPlan]  # may raise StepRefused
    destructive: bool = False  # must come after a backup step (checked when a plan file loads)
    # the facts this kind needs from a target release on this machine, as "what is missing" lines
    # (empty: complete); the planner's rocm = "newest" picks the newest release every step finds complete
    release_facts: Callable[[Release, Facts], list[str]] | None = None
    # the kind exists only to protect the steps after it (a backup): when none of them does anything, the
    # planner skips it too, so a plan with nothing to do does nothing
    protects: bool = False
    target_needs: tuple[str, ...] = ()  # [target] keys a plan using this kind must set ("rocm", "torch" ...)
    streams: tuple[str, ...] | None = None  # the target streams it fits (None: any)
    preflight: Callable[[StepContext, StepPlan], Sequence[Action]] = no_checks
    undo: Callable[[UndoContext], Undo] = undo_each_action
    # every kind states how "done" is known: its ``plan`` sets ``StepPlan.check`` (the check that reads the
    # machine), or this says why the record of the step is the answer where it sets none
    record_only: str | None = None


# --- fixed helper programs (shown verbatim in the dry-run) ----------------------------------------

# sh -c CAPTURE sh OUTFILE CMD ARGS...: run CMD, its stdout (and stderr) into OUTFILE
CAPTURE = 'out=$1; shift; "$@" >"$out" 2>&1'
# the same, but a missing or failing command leaves a note instead of failing the step
CAPTURE_OPTIONAL = 'out=$1; shift; if command -v "$1" >/dev/null 2>&1; then "$@" >"$out" 2>&1 || true; ' \
                   'else echo "not installed: $1" >"$out"; fi'
# python3 -c WRITE PATH MODE CONTENT: write a file atomically (same directory, then rename)
WRITE = ("import os,sys\n"
         "p,mode,text=sys.argv[1],int(sys.argv[2],8),sys.argv[3]\n"
         "d=os.path.dirname(p) or '.'\n"
         "os.makedirs(d,exist_ok=True)\n"
         "t=p+'.rocm-wizard.tmp'\n"
         "with open(t,'w') as f: f.write(text)\n"
         "os.chmod(t,mode)\n"
         "os.replace(t,p)")
# python3 -c SAME PATH CONTENT: exit 0 when PATH already holds exactly CONTENT
SAME = ("import sys\n"
        "try: sys.exit(0 if open(sys.argv[1]).read()==sys.argv[2] else 1)\n"
        "except OSError: sys.exit(1)")


def capture(out: str, argv: list[str], description: str, *, optional: bool = False, root: bool = False,
            as_user: bool = False) -> Action:
    script = CAPTURE_OPTIONAL if optional else CAPTURE
    return Action(
        argv=("sh", "-c", script, "sh", out, *argv),
        description=description,
        root=root,
        as_user=as_user,
        changes=(out,),
    )


def write_file(path: str, content: str, description: str, *, mode: str = "644", root: bool = False,
               as_user: bool = False, python: str = "python3", destructive: bool = False,
               undo: tuple[str, ...] | None = None) -> Action:
    return Action(
        argv=(python, "-c", WRITE, path, mode, content),
        description=description,
        root=root,
        as_user=as_user,
        check=(python, "-c", SAME, path, content),
        changes=(path,),
        destructive=destructive,
        undo=undo,
    )


def system_path(path: str) -> bool:
    """A path only root may write (/var, /etc, /opt, /usr, /srv); a user's home or /tmp is not."""
    return path.startswith(("/var/", "/etc/", "/opt/", "/usr/", "/srv/"))


def skipped(kind: str, title: str, reason: str, notes: tuple[str, ...] = ()) -> StepPlan:
    return StepPlan(kind=kind, title=title, actions=(), skipped_reason=reason, notes=notes)

