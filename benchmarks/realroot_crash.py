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

``--profile debian-real``: kills inside real package work of real packages, on two Debian-packaged profiles
(seeds alternate between them; no Debian suite has both: bookworm has no librocblas0, and the CPU torch wheel
is for Python 3.11, trixie's is 3.13):

* debian13-distro-rocm whose apt has Debian's librocblas0 (the archive's own .deb, SHA256 checked against
  Debian's index, served from a local apt source) and whose user's reinstall of it was cut off inside
  ``dpkg --unpack`` (killed there for real while the template is made: ``reinstreq half-installed``).
  ``core-sdk`` (with the consent apt asks for): its package guards reinstall librocblas0, the real
  ``dpkg --unpack`` of Debian's file, before its purge; the seeds kill inside that unpack.
* debian12-distro-rocm whose user has a venv with PyTorch's real CPU wheel (torch 2.13.0+cpu, from this
  machine's wheel index by ``pip download``, installed by the root's pip from the site wheelhouse that its
  /etc/pip.conf names). ``pip-only`` into that venv runs to its end once in the template; each seed runs
  ``rollback --yes``, whose ``pip install`` of the real torch wheel (from the wheelhouse) it kills inside, and
  then ``rollback --yes`` until the rollback is done.

Prints one line per seed (where it was killed, how far into that process, how many resumes) and the share
that reached the reference state. Needs root and mmdebstrap (and, for debian-real, https to Debian's archive
once: the .deb is cached beside the root tarballs).
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
from typing import Callable

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from wizard.realroot import base as rb  # noqa: E402
from wizard.realroot.endstate import end_state  # noqa: E402

PLAN = ("seed-7900xt", "downgrade-6.2")
MODES = ("dpkg", "pip", "random")


class Scenario:
    """A profile, its root kind, the plan run on it and the kill modes its seeds take in turn. ``prepare``: what
    the starting machine has beyond the profile (done once in the template, before anything runs).
    ``rollback``: the seeds interrupt ``rollback --yes`` of the plan (run uninterrupted in the template) instead
    of the plan itself."""

    def __init__(self, profile: str, root: str, plan: str, modes: tuple[str, ...], consent: bool = False,
                 prepare: Callable[[Path, Path], str] | None = None, args: tuple[str, ...] = (),
                 rollback: bool = False) -> None:
        self.profile, self.root, self.plan, self.modes, self.consent = profile, root, plan, modes, consent
        self.prepare, self.rollback = prepare, rollback
        self.extra: tuple[str, ...] = args  # --venv, and --allow-remove PKGS where the plan asks for it
        self.started = ""  # what prepare said it made

    @property
    def command(self) -> tuple[str, ...]:
        """What each seed runs and interrupts, after --sandbox ROOT."""
        return ("rollback", "--yes") if self.rollback else ("--plan", self.plan, *self.extra, "--yes")

    @property
    def shown(self) -> str:
        plan = " ".join((self.plan, *self.extra))
        return f"--plan {plan} then rollback --yes" if self.rollback else f"--plan {plan}"


def _debian_real() -> list[Scenario]:
    """Debian's own ROCm and a real CPU torch: two profiles, as no Debian suite has both (bookworm has no
    librocblas0; the CPU torch wheel is cp311, trixie's python3 is 3.13)."""
    return [Scenario("debian13-distro-rocm", "debian13", "core-sdk", ("debian-unpack",), consent=True,
                     prepare=interrupted_upgrade),
            Scenario("debian12-distro-rocm", "debian12", "pip-only", ("torch-install",), prepare=cpu_torch_venv,
                     args=("--venv", CPU_VENV), rollback=True)]


SCENARIOS: dict[str, Callable[[], list[Scenario]]] = {
    "seed-7900xt": lambda: [Scenario(*PLAN[:1], "debian12", PLAN[1], MODES)],
    # the package Debian's ROCm removal is watched for: the large real library of the profile
    "debian13-distro-rocm": lambda: [Scenario("debian13-distro-rocm", "debian13", "core-sdk",
                                              ("debian-dpkg", "unpack", "pip-install"), consent=True)],
    "debian-real": _debian_real,
}
DEBIAN_PACKAGE = "librocblas0"
# how far into the real work a seed kills, at most (seconds): the unpack of librocblas0 lasts about 15 s here,
# pip's install of the torch wheel about 12 s
REAL_INTO = {"debian-unpack": 10.0, "torch-install": 8.0}
DEFAULT = SCENARIOS["seed-7900xt"]()[0]


ARCHIVE = "https://deb.debian.org/debian"  # Debian's archive, where mmdebstrap took the profile's packages
LOCAL_ARCHIVE = "/var/cache/rocm-wizard-rehearsal/debian"  # inside the root: a copy of the package, as an apt source
CPU_VENV = "/home/user/cpu-venv"
CPU_TORCH = "torch==2.13.0+cpu"  # the real CPU wheel from this machine's wheel index (pip download)
WHEELHOUSE = "/opt/wheels"  # inside the root: the site's wheelhouse its /etc/pip.conf names


def _in_root(root: Path, argv: list[str], *, user: bool = False, cwd: str | None = None,
             timeout: float = 1800) -> subprocess.CompletedProcess[str]:
    from wizard.realroot.machine import open_root

    r = open_root(root).run(argv, as_user=user, cwd=cwd, timeout=timeout)
    if r.returncode != 0:
        tail = (r.stderr.strip() or r.stdout.strip() or "no output").splitlines()[-1]
        raise SystemExit(f"{' '.join(argv)} in {root}: exit {r.returncode}: {tail}")
    return r


def debian_deb(root: Path, package: str, suite: str) -> Path:
    """Debian's own .deb of the version ``root`` has installed, from Debian's archive (its Packages index read over
    https, the file's SHA256 checked against it); cached beside the root tarballs."""
    import hashlib
    import lzma
    import urllib.request

    from wizard.realroot.endstate import dpkg_status

    version = dpkg_status(root).get(package, "").split(" ")[0]
    if not version:
        raise SystemExit(f"{package} is not installed in {root}")
    with urllib.request.urlopen(f"{ARCHIVE}/dists/{suite}/main/binary-amd64/Packages.xz", timeout=300) as resp:
        index = lzma.decompress(resp.read()).decode()
    stanza = next((st for st in index.split("\n\n") if f"\nPackage: {package}\n" in f"\n{st}\n"
                   and f"\nVersion: {version}\n" in f"\n{st}\n"), None)
    if stanza is None:
        raise SystemExit(f"{package} {version} is no longer in Debian's {suite} index; rebuild the root")
    fields = dict(line.split(": ", 1) for line in stanza.splitlines() if ": " in line and not line.startswith(" "))
    cache = rb.cache_dir() / "debs"
    cache.mkdir(parents=True, exist_ok=True)
    deb = cache / fields["Filename"].rsplit("/", 1)[-1]
    if not deb.is_file() or hashlib.sha256(deb.read_bytes()).hexdigest() != fields["SHA256"]:
        part = deb.with_name(deb.name + ".part")
        with urllib.request.urlopen(f"{ARCHIVE}/{fields['Filename']}", timeout=1800) as resp, open(part, "wb") as out:
            shutil.copyfileobj(resp, out, 1 << 20)
        if hashlib.sha256(part.read_bytes()).hexdigest() != fields["SHA256"]:
            part.unlink()
            raise SystemExit(f"{fields['Filename']}: SHA256 differs from Debian's index")
        os.replace(part, deb)
    return deb


def interrupted_upgrade(root: Path, work: Path) -> str:
    """The machine's apt has Debian's librocblas0 (a local copy of the archive's file, as an apt source) and the
    user's reinstall of it was cut off inside dpkg --unpack (killed there for real): dpkg marks it
    ``reinstreq half-installed``, which the plan's package guards reinstall (the real dpkg --unpack of it)
    before its purge removes it."""
    from wizard.realroot.enter import ROOT_USER, enter_argv
    from wizard.realroot.machine import SUITES

    deb = debian_deb(root, DEBIAN_PACKAGE, SUITES["debian13"][0])
    inside = root / LOCAL_ARCHIVE.lstrip("/")
    inside.mkdir(parents=True, exist_ok=True)
    shutil.copy2(deb, inside / deb.name)
    _in_root(root, ["sh", "-c", "apt-ftparchive packages . > Packages"], cwd=LOCAL_ARCHIVE)
    (root / "etc/apt/sources.list.d/debian-archive-copy.list").write_text(
        f"deb [trusted=yes] file:{LOCAL_ARCHIVE} ./\n")
    _in_root(root, ["apt-get", "update"])
    for _ in range(5):
        proc = subprocess.Popen(enter_argv(root, ["dpkg", "--unpack", f"{LOCAL_ARCHIVE}/{deb.name}"],
                                           user=ROOT_USER), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        started = time.monotonic()
        while proc.poll() is None and time.monotonic() - started < 1.5:
            time.sleep(0.01)
        _kill_session(proc.pid, root)
        proc.wait()
        status = rb_status(root, DEBIAN_PACKAGE)
        if "reinstreq half-installed" in status:
            return f"{DEBIAN_PACKAGE} {status}: its reinstall killed inside dpkg --unpack of {deb.name}"
    raise SystemExit(f"dpkg --unpack of {deb.name} was never caught unpacking: {rb_status(root, DEBIAN_PACKAGE)}")


def rb_status(root: Path, package: str) -> str:
    from wizard.realroot.endstate import dpkg_status

    return dpkg_status(root).get(package, "not known to dpkg")


def cpu_torch_venv(root: Path, work: Path) -> str:
    """The user's venv with PyTorch's real CPU wheel and its dependencies, installed by the root's pip from the
    site's wheelhouse that /etc/pip.conf names (copied from this machine's wheel index by ``pip download``)."""
    house = work / "wheelhouse"
    r = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:", "--python-version",
                        "3.11", "--platform", "manylinux_2_28_x86_64", "--dest", str(house), CPU_TORCH],
                       capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        raise SystemExit(f"pip download {CPU_TORCH}: {(r.stderr.strip() or 'no output').splitlines()[-1]}")
    dest = root / WHEELHOUSE.lstrip("/")
    dest.mkdir(parents=True, exist_ok=True)
    for whl in house.glob("*.whl"):
        shutil.copy2(whl, dest / whl.name)
        os.chmod(dest / whl.name, 0o644)
    (root / "etc/pip.conf").write_text(f"[global]\nno-index = true\nfind-links = {WHEELHOUSE}\n")
    _in_root(root, ["python3", "-m", "venv", CPU_VENV], user=True)
    _in_root(root, [f"{CPU_VENV}/bin/pip", "install", "--disable-pip-version-check", CPU_TORCH], user=True)
    return f"{CPU_VENV} with {CPU_TORCH} ({len(list(house.glob('*.whl')))} wheels) from {WHEELHOUSE} (/etc/pip.conf)"


def wizard(args: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ROCM_WIZARD_STATE_DIR"}
    return subprocess.run([sys.executable, "-m", "wizard", *args], capture_output=True, text=True, cwd=REPO,
                          env=env, stdin=subprocess.DEVNULL, timeout=900, **kw)  # type: ignore[call-overload]


def template(work: Path, sc: Scenario = DEFAULT) -> Path:
    """A real root for the profile with its starting stack, built once; copied for every seed. Where the
    scenario's plan needs the user's consent to remove packages, a first run in a scratch copy asks apt which
    (the refusal names them: ``--allow-remove PKG,...``) and the scenario takes that consent."""
    t = work / ("template" if sc is DEFAULT else f"template-{sc.profile}")
    r = wizard(["--sandbox", str(t), "--profile", sc.profile, "--root", sc.root, "detect", "--json"])
    if r.returncode != 0:
        raise SystemExit(f"building the real root failed: {r.stderr.strip()[-500:]}")
    if sc.prepare is not None:
        sc.started = sc.prepare(t, work)
    if sc.consent:
        probe = work / "consent-probe"
        rb.copy(t, probe)
        r = wizard(["--sandbox", str(probe), "--plan", sc.plan, *sc.extra, "--yes"])
        asked = re.findall(r"or allow it: --allow-remove (\S+)", r.stdout)
        if r.returncode != 0 and not asked:
            raise SystemExit(f"{sc.plan} on {sc.profile} failed: {r.stdout[-1500:]}")
        sc.extra = (*sc.extra, "--allow-remove", asked[-1]) if asked else sc.extra
        shutil.rmtree(probe, ignore_errors=True)
    if sc.rollback:  # the seeds roll back what the plan did: it runs to its end here, once
        r = wizard(["--sandbox", str(t), "--plan", sc.plan, *sc.extra, "--yes"])
        if r.returncode not in (0, 3):
            raise SystemExit(f"{sc.plan} on {sc.profile} failed: {r.stdout[-1500:]}")
        finish(t)
    return t


def finish(root: Path, limit: int = 10, sc: Scenario = DEFAULT) -> int:
    """resume --yes (rollback --yes where the seeds interrupt a rollback) until done; returns how many it took."""
    for n in range(1, limit + 1):
        r = wizard(["--sandbox", str(root), "rollback" if sc.rollback else "resume", "--yes"])
        if r.returncode == 0:
            return n
        if r.returncode not in (1, 3):
            raise AssertionError(f"resume exited {r.returncode}: {r.stderr[-800:]}")
    raise AssertionError(f"not done after {limit} resumes: {r.stdout[-1500:]}")


def reference(work: Path, tmpl: Path, sc: Scenario = DEFAULT) -> dict[str, object]:
    root = work / ("reference" if sc is DEFAULT else f"reference-{sc.profile}")
    rb.copy(tmpl, root)
    r = wizard(["--sandbox", str(root), *sc.command])
    if r.returncode not in (0, 3):
        raise SystemExit(f"the uninterrupted run failed: {r.stdout[-1500:]}")
    finish(root, sc=sc)
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
    librocblas0 (its removal); ``pip-install``: the venv's ``pip install`` (not a freeze or an uninstall);
    ``debian-unpack``: a ``dpkg --unpack`` of Debian's own librocblas0 .deb; ``torch-install``: a ``pip install``
    of the real CPU torch."""
    for pid, c in procs:
        if mode == "debian-unpack" and _program(c) == "dpkg" and "--unpack" in c.split():
            debs = [a.rsplit("/", 1)[-1] for a in c.split() if a.endswith(".deb")]
            if any(d.startswith(f"{DEBIAN_PACKAGE}_") for d in debs):
                return pid, f"inside dpkg --unpack of Debian's {' '.join(debs)[:80]}"
        if mode == "torch-install" and "-m pip install " in c and CPU_TORCH in c.split() \
                and not c.startswith("/usr/bin/unshare"):
            return pid, "inside pip install: " + c[c.index("-m pip install") + 3:][:80]
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
    proc = subprocess.Popen([sys.executable, "-m", "wizard", "--sandbox", str(root), *sc.command], cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    where = "after the run ended"
    # how far into the watched process the kill comes (if it still runs then): the unpack of the Core SDK's
    # packages lasts about a tenth of a second, the removal of Debian's packages and pip's install seconds; the
    # unpack of Debian's librocblas0 and pip's install of the real torch wheel (REAL_INTO) longer
    into = rng.uniform(0.0, 0.1 if mode == "unpack" else REAL_INTO.get(mode, 0.5))
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
    resumes = finish(root, sc=sc)
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
    scs = SCENARIOS[a.profile]()
    made: list[tuple[Path, dict[str, object]]] = []
    for sc in scs:
        t1 = time.monotonic()
        tmpl = template(work, sc)
        made.append((tmpl, reference(work, tmpl, sc)))
        print(f"{sc.shown} on {sc.profile} (--root {sc.root}){'; starting with ' + sc.started if sc.started else ''}; "
              f"template and reference {time.monotonic() - t1:.0f} s", flush=True)
    same = 0
    kinds: dict[str, int] = {}
    for seed in range(a.seeds):
        sc = scs[seed % len(scs)]
        tmpl, want = made[seed % len(scs)]
        mode = sc.modes[seed // len(scs) % len(sc.modes)]
        where, resumes = one(work, tmpl, seed, mode, sc)
        got = end_state(work / f"seed-{seed}")
        ok = got == want
        same += ok
        kind = where.split(":")[0].split(" of ")[0]
        kinds[kind] = kinds.get(kind, 0) + 1
        print(f"seed {seed:2d} ({mode:6}{', ' + sc.profile if len(scs) > 1 else ''}): killed {where}; "
              f"{resumes} {'rollback' if sc.rollback else 'resume'}(s); "
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
                                       else "realroot_crash_debian.txt" if "debian-real" in sys.argv
                                       else "realroot_crash.txt"))
