"""Crash consistency with the real dpkg, apt and pip: ``kill -9`` of the whole wizard session (every
process it started, dpkg and pip included) at chosen instants of a plan in a real Debian root, then
``resume --yes`` until the run is done; the end state (dpkg's database, /opt/rocm* version files, the venv,
the apt sources, the groups) must equal an uninterrupted run's.

    python benchmarks/realroot_crash.py [--seeds 30] [--profile NAME] [--keep DIR]

``--profile seed-7900xt`` (the default): ``downgrade-6.2`` in a Debian 12 root. A third of the seeds kill
while a dpkg process of the run is alive (an unpack, a configure, a removal), a third while pip runs (the
backup's freeze, the venv's uninstall or install), a third after a random number of journalled actions plus
a random delay.

``--profile debian13-distro-rocm``: Debian 13 whose ROCm and PyTorch are Debian's own packages (librocblas0
5.5.1, libamdhip64-5, python3-torch 2.6 and what they pull in, from Debian's archive), and ``core-sdk`` with
the ``--allow-remove`` consent apt's simulation asks for (found by a first run in a scratch copy). The
instants are chosen by watching the root's processes: a third of the seeds kill inside the real ``dpkg``
that removes Debian's ROCm packages (the call whose arguments name librocblas0), a third inside a
``dpkg --unpack`` of the run (AMD's Core SDK packages from the local mirror), a third inside the venv's
``pip install``; each a random time into that process.
Prints one line per seed (where it was killed, how far into that process, how many resumes) and the share
that reached the reference state. Needs root and mmdebstrap.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from wizard.realroot import base as rb  # noqa: E402
from wizard.realroot.endstate import end_state  # noqa: E402

PLAN = ("seed-7900xt", "downgrade-6.2")
MODES = ("dpkg", "pip", "random")


class Scenario:
    """A profile, its root kind, the plan run on it and the kill modes its seeds take in turn."""

    def __init__(self, profile: str, root: str, plan: str, modes: tuple[str, ...], consent: bool = False) -> None:
        self.profile, self.root, self.plan, self.modes, self.consent = profile, root, plan, modes, consent
        self.extra: tuple[str, ...] = ()  # --allow-remove PKGS where the plan asks for it


SCENARIOS = {
    "seed-7900xt": lambda: Scenario(*PLAN[:1], "debian12", PLAN[1], MODES),
    # the package Debian's ROCm removal is watched for: the large real library of the profile
    "debian13-distro-rocm": lambda: Scenario("debian13-distro-rocm", "debian13", "core-sdk",
                                             ("debian-dpkg", "unpack", "pip-install"), consent=True),
}
DEBIAN_PACKAGE = "librocblas0"
DEFAULT = SCENARIOS["seed-7900xt"]()


def wizard(args: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ROCM_WIZARD_STATE_DIR"}
    return subprocess.run([sys.executable, "-m", "wizard", *args], capture_output=True, text=True, cwd=REPO,
                          env=env, stdin=subprocess.DEVNULL, timeout=900, **kw)  # type: ignore[call-overload]


def template(work: Path, sc: Scenario = DEFAULT) -> Path:
    """A real root for the profile with its starting stack, built once; copied for every seed. Where the
    scenario's plan needs the user's consent to remove packages, a first run in a scratch copy asks apt which
    (the refusal names them: ``--allow-remove PKG,...``) and the scenario takes that consent."""
    t = work / "template"
    r = wizard(["--sandbox", str(t), "--profile", sc.profile, "--root", sc.root, "detect", "--json"])
    if r.returncode != 0:
        raise SystemExit(f"building the real root failed: {r.stderr.strip()[-500:]}")
    if sc.consent:
        probe = work / "consent-probe"
        rb.copy(t, probe)
        r = wizard(["--sandbox", str(probe), "--plan", sc.plan, "--yes"])
        asked = re.findall(r"or allow it: --allow-remove (\S+)", r.stdout)
        if r.returncode != 0 and not asked:
            raise SystemExit(f"{sc.plan} on {sc.profile} failed: {r.stdout[-1500:]}")
        sc.extra = ("--allow-remove", asked[-1]) if asked else ()
        shutil.rmtree(probe, ignore_errors=True)
    return t


def finish(root: Path, limit: int = 10) -> int:
    """resume --yes until done; returns how many resumes it took."""
    for n in range(1, limit + 1):
        r = wizard(["--sandbox", str(root), "resume", "--yes"])
        if r.returncode == 0:
            return n
        if r.returncode not in (1, 3):
            raise AssertionError(f"resume exited {r.returncode}: {r.stderr[-800:]}")
    raise AssertionError(f"not done after {limit} resumes: {r.stdout[-1500:]}")


def reference(work: Path, tmpl: Path, sc: Scenario = DEFAULT) -> dict[str, object]:
    root = work / "reference"
    rb.copy(tmpl, root)
    r = wizard(["--sandbox", str(root), "--plan", sc.plan, *sc.extra, "--yes"])
    if r.returncode not in (0, 3):
        raise SystemExit(f"the uninterrupted run failed: {r.stdout[-1500:]}")
    finish(root)
    return end_state(root)


def _session_procs(sid: int, root: Path) -> list[tuple[int, str]]:
    """The wizard's session and everything running inside its root (apt runs dpkg in a session of its own)."""
    out = []
    inside = str(root)
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            mine = os.getsid(int(pid)) == sid or os.readlink(f"/proc/{pid}/root") == inside
            if not mine:
                continue
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ProcessLookupError):
            continue
        out.append((int(pid), cmd))
    return out


def _kill_session(sid: int, root: Path) -> None:
    """A power cut: the wizard, its children and everything inside its root die at once."""
    for _ in range(3):
        for pid, _ in _session_procs(sid, root):
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _program(cmd: str) -> str:
    return cmd.split(" ")[0].rsplit("/", 1)[-1]


def _inside(mode: str, procs: list[tuple[int, str]]) -> tuple[int, str] | None:
    """The process of the run that ``mode`` kills inside, with what to report of it (None: none alive now).
    ``unpack``: a real ``dpkg --unpack``; ``debian-dpkg``: a real dpkg whose arguments name Debian's
    librocblas0 (its removal); ``pip-install``: the venv's ``pip install`` (not a freeze or an uninstall)."""
    for pid, c in procs:
        if mode == "unpack" and _program(c) == "dpkg" and "--unpack" in c.split():
            debs = [a.rsplit("/", 1)[-1].split("_")[0] for a in c.split() if a.endswith(".deb")]
            return pid, f"inside dpkg --unpack: {' '.join(debs)[:90]}"
        if mode == "debian-dpkg" and _program(c) == "dpkg" and re.search(rf"\s{DEBIAN_PACKAGE}(:\S+)?(\s|$)", c):
            op = next((a for a in c.split() if a in ("--remove", "--purge", "--unpack", "--configure")), "dpkg")
            names = [a.split(":")[0] for a in c.split()[1:] if not a.startswith("-") and not a.isdigit()]
            return pid, f"inside dpkg {op} of Debian's {DEBIAN_PACKAGE} ({len(names)} packages: " \
                        f"{' '.join(names)[:70]})"
        if mode == "pip-install" and "-m pip install " in c and not c.startswith("/usr/bin/unshare"):
            return pid, "inside pip install: " + c[c.index("-m pip install") + 3:][:80]
    return None


def one(work: Path, tmpl: Path, seed: int, mode: str, sc: Scenario = DEFAULT) -> tuple[str, int]:
    """Run the plan in a fresh copy, kill the session as ``mode`` says, finish. Returns (where, resumes)."""
    rng = random.Random(seed)
    root = work / f"seed-{seed}"
    rb.copy(tmpl, root)
    env = {k: v for k, v in os.environ.items() if k != "ROCM_WIZARD_STATE_DIR"}
    proc = subprocess.Popen([sys.executable, "-m", "wizard", "--sandbox", str(root), "--plan", sc.plan, *sc.extra,
                             "--yes"], cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    where = "after the run ended"
    # how far into the watched process the kill comes (if it still runs then): the unpack of the Core SDK's
    # packages lasts about a tenth of a second, the removal of Debian's packages and pip's install seconds
    into = rng.uniform(0.0, 0.1 if mode == "unpack" else 0.5)
    watched: dict[int, float] = {}  # pid -> when it was first seen
    watching = False
    target = rng.randint(3, 30)
    nth_dpkg = rng.randint(1, 8)  # which dpkg process of the run to kill (the removals come first, then unpacks)
    seen: set[int] = set()
    delay = rng.uniform(0.0, 0.4)
    deadline = time.monotonic() + 300
    journal = None
    while proc.poll() is None and time.monotonic() < deadline:
        procs = _session_procs(proc.pid, root)
        if mode not in MODES:
            hit = _inside(mode, procs)
            if hit is None and watching:
                into /= 4  # the process ended before the chosen instant: come earlier into the next one
            watching = hit is not None
            if hit is not None:
                now = time.monotonic()
                first = watched.setdefault(hit[0], now)
                if now - first >= into:
                    where = f"{hit[1]}; {now - first:.2f} s into it"
                    break
            time.sleep(0.001)
            continue
        dpkg = [(pid, c) for pid, c in procs if c.split(" ")[0].rsplit("/", 1)[-1] == "dpkg" and
                any(op in c for op in ("--unpack", "--configure", "--remove", "--purge", "--install"))]
        seen.update(pid for pid, _ in dpkg)
        if mode == "dpkg" and dpkg and len(seen) >= nth_dpkg:
            where = "inside dpkg: " + " ".join(dpkg[0][1].split()[-3:])[:100]
            break
        pip = [c for _, c in procs if "-m pip " in c and not c.startswith("/usr/bin/unshare")]
        if mode == "pip" and pip:
            where = "inside pip: " + pip[0][pip[0].index("-m pip"):][:80]
            break
        if mode == "random":
            if journal is None:
                cur = root / "var/lib/rocm-wizard/current"
                if cur.exists():
                    journal = root / "var/lib/rocm-wizard/runs" / cur.read_text().strip() / "journal.jsonl"
            if journal is not None and journal.exists():
                starts = sum(1 for line in journal.read_text().splitlines() if '"action-start"' in line)
                if starts >= target:
                    time.sleep(delay)
                    where = f"after action-start {target} + {delay:.2f} s"
                    break
        time.sleep(0.001)
    _kill_session(proc.pid, root)
    proc.wait()
    resumes = finish(root)
    return where, resumes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=30)
    ap.add_argument("--profile", choices=sorted(SCENARIOS), default="seed-7900xt",
                    help="the starting machine, which sets the root kind, the plan and the kill modes")
    ap.add_argument("--keep", metavar="DIR", help="work in DIR and keep it (default: a temporary directory)")
    a = ap.parse_args()
    why = "needs root" if os.geteuid() != 0 else None if rb.mmdebstrap() else "needs mmdebstrap"
    if why:
        print(f"realroot_crash: {why}", file=sys.stderr)
        return 2
    work = Path(a.keep or tempfile.mkdtemp(prefix="rw-crash-"))
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    sc = SCENARIOS[a.profile]()
    tmpl = template(work, sc)
    want = reference(work, tmpl, sc)
    print(f"--plan {' '.join((sc.plan, *sc.extra))} on {sc.profile} (--root {sc.root}); template and reference "
          f"{time.monotonic() - t0:.0f} s", flush=True)
    same = 0
    kinds: dict[str, int] = {}
    for seed in range(a.seeds):
        mode = sc.modes[seed % len(sc.modes)]
        where, resumes = one(work, tmpl, seed, mode, sc)
        got = end_state(work / f"seed-{seed}")
        ok = got == want
        same += ok
        kind = where.split(":")[0].split(" of ")[0]
        kinds[kind] = kinds.get(kind, 0) + 1
        print(f"seed {seed:2d} ({mode:6}): killed {where}; {resumes} resume(s); "
              f"{'same end state' if ok else 'DIFFERENT end state'}", flush=True)
        if not ok:
            diff = {k: (want[k], got[k]) for k in want if want[k] != got[k]}
            print("  " + json.dumps(diff)[:1500], flush=True)
        if not a.keep:
            shutil.rmtree(work / f"seed-{seed}", ignore_errors=True)
    print(f"\n{same}/{a.seeds} seeds reached the uninterrupted run's end state "
          f"({', '.join(f'{v} killed {k}' for k, v in sorted(kinds.items()))}); {time.monotonic() - t0:.0f} s")
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if same == a.seeds else 1


if __name__ == "__main__":
    from results import main_with_results  # benchmarks/results.py: --write-results

    raise SystemExit(main_with_results(main, "realroot_crash_distro.txt" if "debian13-distro-rocm" in sys.argv
                                       else "realroot_crash.txt"))
