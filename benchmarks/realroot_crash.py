"""Crash consistency with the real dpkg, apt and pip: ``kill -9`` of the whole wizard session (every
process it started, dpkg and pip included) at random instants of ``downgrade-6.2`` on ``seed-7900xt``
in a real Debian 12 root, then ``resume --yes`` until the run is done; the end state (dpkg's database,
/opt/rocm* version files, the venv, the apt sources, the groups) must equal an uninterrupted run's.

    python benchmarks/realroot_crash.py [--seeds 30] [--keep DIR]

A third of the seeds kill while a dpkg process of the run is alive (an unpack, a configure, a removal),
a third while pip runs (the backup's freeze, the venv's uninstall or install), a third after a random
number of journalled actions plus a random delay.
Prints one line per seed and the share that reached the reference state. Needs root and mmdebstrap.
"""

from __future__ import annotations

import argparse
import json
import os
import random
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


def wizard(args: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ROCM_WIZARD_STATE_DIR"}
    return subprocess.run([sys.executable, "-m", "wizard", *args], capture_output=True, text=True, cwd=REPO,
                          env=env, stdin=subprocess.DEVNULL, timeout=900, **kw)  # type: ignore[call-overload]


def template(work: Path) -> Path:
    """A real root for the profile with its starting stack, built once; copied for every seed."""
    t = work / "template"
    r = wizard(["--sandbox", str(t), "--profile", PLAN[0], "--root", "debian12", "detect", "--json"])
    if r.returncode != 0:
        raise SystemExit(f"building the real root failed: {r.stderr.strip()[-500:]}")
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


def reference(work: Path, tmpl: Path) -> dict[str, object]:
    root = work / "reference"
    rb.copy(tmpl, root)
    r = wizard(["--sandbox", str(root), "--plan", PLAN[1], "--yes"])
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


def one(work: Path, tmpl: Path, seed: int, mode: str) -> tuple[str, int]:
    """Run the plan in a fresh copy, kill the session as ``mode`` says, finish. Returns (where, resumes)."""
    rng = random.Random(seed)
    root = work / f"seed-{seed}"
    rb.copy(tmpl, root)
    env = {k: v for k, v in os.environ.items() if k != "ROCM_WIZARD_STATE_DIR"}
    proc = subprocess.Popen([sys.executable, "-m", "wizard", "--sandbox", str(root), "--plan", PLAN[1], "--yes"],
                            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    where = "after the run ended"
    target = rng.randint(3, 30)
    nth_dpkg = rng.randint(1, 8)  # which dpkg process of the run to kill (the removals come first, then unpacks)
    seen: set[int] = set()
    delay = rng.uniform(0.0, 0.4)
    deadline = time.monotonic() + 300
    journal = None
    while proc.poll() is None and time.monotonic() < deadline:
        procs = _session_procs(proc.pid, root)
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
    ap.add_argument("--keep", metavar="DIR", help="work in DIR and keep it (default: a temporary directory)")
    a = ap.parse_args()
    why = "needs root" if os.geteuid() != 0 else None if rb.mmdebstrap() else "needs mmdebstrap"
    if why:
        print(f"realroot_crash: {why}", file=sys.stderr)
        return 2
    work = Path(a.keep or tempfile.mkdtemp(prefix="rw-crash-"))
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    tmpl = template(work)
    want = reference(work, tmpl)
    same = 0
    kinds: dict[str, int] = {}
    for seed in range(a.seeds):
        mode = MODES[seed % len(MODES)]
        where, resumes = one(work, tmpl, seed, mode)
        got = end_state(work / f"seed-{seed}")
        ok = got == want
        same += ok
        kind = where.split(":")[0]
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

    raise SystemExit(main_with_results(main, "realroot_crash.txt"))
