"""The half-states a real package manager leaves behind, detected, each paired with its repair.

What real apt and dpkg do (reproduced in tests/realroot/test_repair.py, in a real root):

* dpkg killed mid-unpack: its journal stays in ``/var/lib/dpkg/updates/`` and the package is
  ``install reinstreq half-installed``; every apt command then stops with "E: dpkg was interrupted, you
  must manually run 'dpkg --configure -a' to correct the problem." ``dpkg --configure -a`` replays the
  journal (and configures unpacked packages); a half-installed package is reinstalled only by
  ``apt-get -f install``. Repair: both, in that order.
* broken dependencies (``dpkg --force-depends`` removals, a failed upgrade): ``apt-get check`` fails with
  "E: Unmet dependencies". Repair: ``apt-get -f install -y``.
* the dpkg lock held by another process (unattended-upgrades, another apt): apt fails with "Could not get
  lock /var/lib/dpkg/lock-frontend". Repair: wait, bounded, saying who holds it.
* a held package (``apt-mark hold``): apt refuses a change that would take it along ("E: Error,
  pkgProblemResolver::Resolve generated breaks, this may be caused by held packages."). Not repaired:
  the user decides, with the ``apt-mark unhold`` shown.

:func:`survey` runs the read-only checks (``dpkg-query``, ``dpkg --audit``, ``apt-get check``, ``apt-mark showhold``)
through a caller's ``run`` (the live machine, a real root's entry, another executor) and reads the
lock files and dpkg's status under ``root`` directly. Locks are probed with ``fcntl(F_GETLK)`` from
this process, so a holder's pid is this process's view of it.
"""

from __future__ import annotations

import fcntl
import os
import struct
import subprocess
import time
from enum import Enum
from pathlib import Path
from typing import Callable, Collection, Sequence

from wizard.record import record


DPKG_LOCKS = ("var/lib/dpkg/lock-frontend", "var/lib/dpkg/lock")
APT_LOCKS = ("var/lib/apt/lists/lock", "var/cache/apt/archives/lock")
HALF_CONFIGURED = ("unpacked", "half-configured", "triggers-awaited", "triggers-pending")
HALF_INSTALLED = ("half-installed",)
DEFAULT_LOCK_WAIT = 120.0  # seconds (issue 10: at most 2 minutes by default)
INTERRUPTED_MESSAGE = "dpkg was interrupted, you must manually run 'dpkg --configure -a'"

Runner = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]


class HalfState(Enum):
    INTERRUPTED_DPKG = "interrupted-dpkg"
    BROKEN_DEPENDENCIES = "broken-dependencies"
    LOCK_HELD = "lock-held"
    HELD_PACKAGE = "held-package"


class RepairKind(Enum):
    RUN = "run"  # run the commands as root, in order, then survey again
    WAIT = "wait"  # wait for the lock to be released, at most ``wait_seconds``
    REFUSE = "refuse"  # the user decides; ``commands`` is what they would run


@record
class Repair:
    kind: RepairKind
    message: str
    commands: tuple[tuple[str, ...], ...] = ()
    wait_seconds: float = 0.0


@record
class LockHolder:
    path: str  # "/var/lib/dpkg/lock-frontend"
    pid: int | None  # None: the holder is not visible from here
    name: str | None  # its command name (/proc/PID/comm)

    def describe(self) -> str:
        who = f"process {self.pid}" + (f" ({self.name})" if self.name else "") if self.pid else "another process"
        return f"{self.path} is held by {who}"


@record
class Finding:
    state: HalfState
    message: str  # one line for the user
    evidence: tuple[str, ...]  # what was seen: status lines, apt's own words, lock holders
    packages: tuple[str, ...]
    repair: Repair


# ------------------------------------------------------------------------------ dpkg status (pure)


@record
class PackageState:
    name: str
    want: str  # install | hold | deinstall | purge | unknown
    flag: str  # ok | reinstreq
    status: str  # installed | half-installed | unpacked | half-configured | ...


def parse_status(text: str) -> tuple[PackageState, ...]:
    """dpkg's ``/var/lib/dpkg/status``: the Status field of every stanza."""
    out: list[PackageState] = []
    for stanza in text.split("\n\n"):
        name = status = None
        for line in stanza.splitlines():
            if line.startswith("Package: "):
                name = line[9:].strip()
            elif line.startswith("Status: "):
                status = line[8:].split()
        if name and status and len(status) == 3:
            out.append(PackageState(name, status[0], status[1], status[2]))
    return tuple(out)


STATUS_QUERY = ("dpkg-query", "-W", "-f", "${Package}\\t${Status}\\n")


def parse_query(text: str) -> tuple[PackageState, ...]:
    """``dpkg-query -W -f '${Package}\\t${Status}\\n'`` output."""
    out: list[PackageState] = []
    for line in text.splitlines():
        name, _, status = line.partition("\t")
        parts = status.split()
        if name and len(parts) == 3:
            out.append(PackageState(name, parts[0], parts[1], parts[2]))
    return tuple(out)


def package_states(root: Path, run: Runner) -> tuple[PackageState, ...]:
    """Every package's state as dpkg itself sees it: ``dpkg-query`` applies the journal of an interrupted
    run (``/var/lib/dpkg/updates``) on top of the status file; the file alone when dpkg-query fails."""
    q = run(list(STATUS_QUERY))
    if q.returncode == 0 and q.stdout.strip():
        return parse_query(q.stdout)
    try:
        return parse_status((root / "var/lib/dpkg/status").read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return ()


def journal_pending(root: Path) -> tuple[str, ...]:
    """dpkg's journal entries (``/var/lib/dpkg/updates/NNNN``): what makes apt say dpkg was interrupted."""
    try:
        return tuple(sorted(n for n in os.listdir(root / "var/lib/dpkg/updates") if n.isdigit()))
    except OSError:
        return ()


def interrupted(states: Sequence[PackageState], journal: Sequence[str]) -> Finding | None:
    half_conf = [s for s in states if s.status in HALF_CONFIGURED]
    half_inst = [s for s in states if s.status in HALF_INSTALLED or s.flag == "reinstreq"]
    if not (journal or half_conf or half_inst):
        return None
    commands: list[tuple[str, ...]] = [("dpkg", "--configure", "-a")]
    if half_inst:
        commands.append(("apt-get", "-f", "install", "-y"))
    evidence = [f"/var/lib/dpkg/updates: {len(journal)} journal entr{'y' if len(journal) == 1 else 'ies'} "
                "(apt: " + INTERRUPTED_MESSAGE + ")"] if journal else []
    evidence += [f"{s.name}: {s.want} {s.flag} {s.status}" for s in [*half_conf, *half_inst]]
    names = tuple(dict.fromkeys(s.name for s in [*half_inst, *half_conf]))
    what = (f"{', '.join(names)} left {'half-installed' if half_inst else 'unconfigured'}" if names
            else "its journal not replayed")
    return Finding(HalfState.INTERRUPTED_DPKG, f"dpkg was interrupted: {what}", tuple(evidence), names,
                   Repair(RepairKind.RUN, "finish dpkg's interrupted work: " +
                          " then ".join(" ".join(c) for c in commands), tuple(commands)))


def held(states: Sequence[PackageState], touches: Collection[str] | None = None) -> Finding | None:
    names = tuple(s.name for s in states if s.want == "hold" and (touches is None or s.name in touches))
    if not names:
        return None
    unhold = ("apt-mark", "unhold", *names)
    return Finding(HalfState.HELD_PACKAGE, f"held package{'s' if len(names) > 1 else ''}: {', '.join(names)} "
                   "(apt will not change them)", tuple(f"{n}: hold" for n in names), names,
                   Repair(RepairKind.REFUSE, f"{', '.join(names)} {'are' if len(names) > 1 else 'is'} held on "
                          f"purpose by someone: run '{' '.join(unhold)}' if the migration may change "
                          f"{'them' if len(names) > 1 else 'it'}, then resume", (unhold,)))


def broken(check: subprocess.CompletedProcess[str]) -> Finding | None:
    """``apt-get check`` output -> a finding when dependencies are unmet."""
    text = f"{check.stdout}\n{check.stderr}"
    if check.returncode == 0 or "Could not get lock" in text or INTERRUPTED_MESSAGE in text:
        return None
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    unmet = [ln for ln in lines if "Depends:" in ln or ln.startswith("E:")]
    pkgs = tuple(dict.fromkeys(ln.split(" :", 1)[0] for ln in lines if " : Depends:" in ln))
    return Finding(HalfState.BROKEN_DEPENDENCIES, "broken dependencies: " + (", ".join(pkgs) if pkgs else
                   (unmet[-1] if unmet else f"apt-get check exit {check.returncode}")),
                   tuple(unmet or lines[-3:]), pkgs,
                   Repair(RepairKind.RUN, "let apt complete or remove what the dependencies need: apt-get -f install -y",
                          (("apt-get", "-f", "install", "-y"),)))


# ------------------------------------------------------------------------------ locks


def lock_holder(root: Path, rel: str) -> LockHolder | None:
    """Who holds a POSIX write lock on ``root/rel`` (F_GETLK: a probe that takes nothing)."""
    path = root / rel
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        probe = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        kind, _, _, _, pid = struct.unpack("hhqqi", fcntl.fcntl(fd, fcntl.F_GETLK, probe))
    except OSError:
        return None
    finally:
        os.close(fd)
    if kind == fcntl.F_UNLCK:
        return None
    name = None
    if pid > 0:
        try:
            name = Path(f"/proc/{pid}/comm").read_text().strip() or None
        except OSError:
            name = None
    return LockHolder(f"/{rel}", pid if pid > 0 else None, name)


def lock_holders(root: Path, locks: Sequence[str] = (*DPKG_LOCKS, *APT_LOCKS)) -> tuple[LockHolder, ...]:
    return tuple(h for rel in locks if (h := lock_holder(root, rel)) is not None)


def lock_finding(holders: Sequence[LockHolder], wait: float = DEFAULT_LOCK_WAIT) -> Finding | None:
    if not holders:
        return None
    first = holders[0]
    return Finding(HalfState.LOCK_HELD, first.describe(), tuple(h.describe() for h in holders), (),
                   Repair(RepairKind.WAIT, f"waiting up to {wait:.0f} s for {first.name or 'the other package manager'}"
                          " to finish", (), wait))


def wait_for_locks(root: Path, timeout: float = DEFAULT_LOCK_WAIT, poll: float = 0.5,
                   on_wait: Callable[[LockHolder, float], None] | None = None,
                   locks: Sequence[str] = (*DPKG_LOCKS, *APT_LOCKS)) -> bool:
    """Wait until no lock is held (True) or ``timeout`` seconds passed (False). ``on_wait(holder, waited)``
    is called at each poll while waiting, for a live message."""
    started = time.monotonic()
    while True:
        holders = lock_holders(root, locks)
        waited = time.monotonic() - started
        if not holders:
            return True
        if waited >= timeout:
            return False
        if on_wait is not None:
            on_wait(holders[0], waited)
        time.sleep(min(poll, max(0.0, timeout - waited)))


# ------------------------------------------------------------------------------ survey


def survey(root: Path, run: Runner, *, touches: Collection[str] | None = None,
           lock_wait: float = DEFAULT_LOCK_WAIT) -> tuple[Finding, ...]:
    """Every half-state present, lock first. ``run`` runs an argv on the machine whose files are under
    ``root`` (read-only commands: ``dpkg --audit``, ``apt-get check``, ``apt-mark showhold``);
    ``touches``: the packages the plan changes (holds of other packages are not reported)."""
    findings: list[Finding] = []
    lock = lock_finding(lock_holders(root), lock_wait)
    if lock is not None:
        findings.append(lock)
    states = package_states(root, run)
    audit = run(["dpkg", "--audit"])
    intr = interrupted(states, journal_pending(root))
    if intr is not None:
        extra = tuple(ln.strip() for ln in audit.stdout.splitlines() if ln.startswith(" ") and ln.strip())
        findings.append(Finding(intr.state, intr.message, intr.evidence + tuple(f"dpkg --audit: {e}" for e in extra),
                                intr.packages, intr.repair))
    if lock is None and intr is None:
        b = broken(run(["apt-get", "check"]))
        if b is not None:
            findings.append(b)
    shown = run(["apt-mark", "showhold"])
    holds = held(states, touches)
    if holds is None and shown.returncode == 0 and shown.stdout.strip():
        names = [n for n in shown.stdout.split() if touches is None or n in touches]
        holds = held(tuple(PackageState(n, "hold", "ok", "installed") for n in names), touches)
    if holds is not None:
        findings.append(holds)
    return tuple(findings)
