"""Controller CPU per host of `fleet detect` and of a no-op `fleet run`, against Ansible's own cost for a
one-task play (`ansible.builtin.command: true`) on the same inventory (target: at most 2x).

The inventory is N sandbox hosts (the `rocm_wizard_sandbox` connection), each on its own copy of one
`seed-7900xt` root (a machine each: the wizard's lock, which the role takes task by task, would make hosts
sharing one root wait on each other): every host is a real Ansible host with its own connection, module runs and
results. `fleet plan` reuses the facts `fleet detect` saved. The no-op run is
`fleet run upgrade-6.4` once each root's progress file says every step is done: each host reads its
progress and skips every step (the run is prepared once beforehand, so the measured run reuses its export,
as a second `fleet run` does). CPU is the user+system time of the command and every process it waited for
(`RUSAGE_CHILDREN`). In a sandbox the "host" runs on the controller too, so the host's own part of
`fleet detect` (its `fleet facts`, measured alone in the same root) is subtracted to give the controller's; for the
no-op run, the host's own part is its one command (read the progress file, run each finished step's check on the
machine: the stand-in dpkg-query and friends are Python here), measured as a play of that task alone on the same
inventory less the one-task play (both pay Ansible's per-host cost once), and subtracted per host.
Needs host root (the sandbox connection's private mount namespace).

    python benchmarks/fleet_scale.py [--hosts 10,50] [--write-results]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PLAN = "upgrade-6.4"


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    c0, t0 = cpu(), time.perf_counter()
    res = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=3600)
    return cpu() - c0, time.perf_counter() - t0, res


def wizard(*args: str) -> list[str]:
    return [sys.executable, "-m", "wizard", *args]


def host_roots(base: Path, seed: Path, n: int) -> list[Path]:
    """N copies of the seeded root, one machine per host."""
    import shutil

    roots = [base / f"roots-{n}" / f"h{i:03d}" for i in range(1, n + 1)]
    for r in roots:
        shutil.copytree(seed, r, symlinks=True)
    return roots


def inventory(base: Path, roots: list[Path]) -> Path:
    """A host on each root; no GPU to verify with (the verify step is skipped, as on a real root)."""
    hosts = {f"h{i:03d}": {"ansible_connection": "rocm_wizard_sandbox", "rocm_wizard_sandbox_root": str(root),
                           "ansible_python_interpreter": sys.executable,
                           "rocm_wizard_unavailable": {f"h{i:03d}": {"gpu": "benchmark: the verify suite is not measured"}}}
             for i, root in enumerate(roots, 1)}
    n = len(roots)
    inv = base / f"inventory-{n}.yml"
    inv.write_text(json.dumps({"all": {"children": {"gpus": {"hosts": hosts}}}}, indent=1) + "\n")
    return inv


def one_task_play(base: Path) -> Path:
    book = base / "one-task.yml"
    book.write_text("- name: one task\n  hosts: all\n  gather_facts: false\n  tasks:\n"
                    "    - name: true\n      ansible.builtin.command:\n        argv: ['true']\n"
                    "      changed_when: false\n")
    return book


def check_play(base: Path, fleet: Path) -> Path:
    """The no-op run's one host-side command (``Read this host's progress ... and check them on the machine``), taken
    from the export the run prepared, alone in a one-task play."""
    import yaml  # ansible-core's dependency

    for path in sorted((fleet / "runs").rglob("*.yml")):
        for task in yaml.safe_load(path.read_text()) or []:
            if isinstance(task, dict) and str(task.get("name", "")).startswith("Read this host's progress"):
                keep = {k: v for k, v in task.items() if k in ("name", "ansible.builtin.command", "become",
                                                                  "environment", "changed_when", "check_mode")}
                # the role's own vars (its lock wrapper, ROLE_lock, under which the task's command runs)
                role_vars = next((p / "vars" / "main.yml" for p in path.parents if (p / "vars" / "main.yml").is_file()),
                                 None)
                play: dict[str, object] = {"name": "the no-op run's host-side command", "hosts": "all",
                                           "gather_facts": False, "tasks": [keep]}
                if role_vars is not None:
                    play["vars_files"] = [str(role_vars)]
                book = base / "check-task.yml"
                book.write_text(yaml.safe_dump([play], sort_keys=False))
                return book
    raise SystemExit(f"no progress task in the export under {fleet / 'runs'}")


def mark_done(root: Path) -> None:
    """Every step of the plan finished on a host's root (the progress file lists step numbers): the no-op run."""
    progress = root / "var" / "lib" / "rocm-wizard" / "script" / f"{PLAN}.progress"
    progress.parent.mkdir(parents=True, exist_ok=True)
    progress.write_text("".join(f"{k}\n" for k in range(1, 65)))


def ansible_version() -> str:
    from wizard.fleet import ansible_program

    out = subprocess.run([ansible_program(), "--version"], capture_output=True, text=True).stdout
    return (out.splitlines() or ["ansible-playbook ?"])[0]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", default="10,50")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    a = ap.parse_args()
    sizes = [int(x) for x in a.hosts.split(",")]
    if os.geteuid() != 0:
        print("needs root (the sandbox connection's private mount namespace)", file=sys.stderr)
        return 2
    from wizard import __version__
    from wizard.fleet import ansible_program

    tmp = Path(tempfile.mkdtemp(prefix="fleet-scale-"))
    env = {**os.environ, "HOME": str(tmp / "home"), "ANSIBLE_REMOTE_TEMP": str(tmp / "ansible-tmp"),
           "ANSIBLE_HOME": str(tmp / ".ansible"), "ANSIBLE_CONNECTION_PLUGINS":
           str(Path(__file__).resolve().parent.parent / "wizard" / "fleet" / "plugins" / "connection"),
           "ANSIBLE_PIPELINING": "1", "ANSIBLE_PYTHON_INTERPRETER": sys.executable}
    root = tmp / "seed-7900xt"
    subprocess.run(wizard("--sandbox", str(root), "--profile", "seed-7900xt", "detect", "--json"), check=True,
                   capture_output=True, cwd=tmp, env=env)
    host_side = [timed(wizard("--sandbox", str(root), "fleet", "facts"), env, tmp)[0] for _ in range(3)]
    facts_cpu = sorted(host_side)[1]
    lines = [f"rocm-wizard {__version__}, {ansible_version()}",
             f"the host's own `fleet facts` in the sandbox: {facts_cpu:.2f} s CPU (median of 3), subtracted per host "
             "from `fleet detect` (it runs on the host in a real fleet)",
             "", f"{'hosts':>5}  {'command':<24} {'CPU s':>8} {'wall s':>7} {'CPU/host':>9} {'vs Ansible':>10}"]
    print("\n".join(lines), flush=True)
    book = one_task_play(tmp)
    for n in sizes:
        roots = host_roots(tmp, root, n)
        inv = inventory(tmp, roots)
        fleet = tmp / f"fleet-{n}"
        base_cpu, base_wall, res = timed([ansible_program(), "-i", str(inv), str(book)], env, tmp)
        assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
        per = base_cpu / n
        rows = [("ansible one-task play", base_cpu, base_wall, per)]
        c, w, res = timed(wizard("fleet", "detect", "-i", str(inv), "--fleet-dir", str(fleet), "--json"), env, tmp)
        assert res.returncode == 0, res.stderr[-3000:]
        rows.append(("fleet detect (all)", c, w, c / n))
        rows.append(("fleet detect (ctrl)", c - n * facts_cpu, w, (c - n * facts_cpu) / n))
        c, w, res = timed(wizard("fleet", "plan", PLAN, "-i", str(inv), "--fleet-dir", str(fleet), "--json"), env, tmp)
        assert res.returncode == 0 and "reused the saved facts" in res.stderr, res.stderr[-3000:]
        rows.append(("fleet plan (reused)", c, w, c / n))
        for r in roots:
            mark_done(r)
        prep = subprocess.run(wizard("fleet", "run", PLAN, "-i", str(inv), "--fleet-dir", str(fleet), "--json"),
                              capture_output=True, text=True, env=env, cwd=tmp, timeout=3600)
        # prepares the export; each host's finished steps whose check fails on the seeded root run again there
        assert prep.returncode == 0, prep.stdout[-3000:] + prep.stderr[-3000:]
        c, w, res = timed(wizard("fleet", "run", PLAN, "-i", str(inv), "--fleet-dir", str(fleet), "--json"), env, tmp)
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
        assert all(r["steps_done"] == r["steps"] for r in json.loads(res.stdout)["hosts"]), res.stdout[-3000:]
        rows.append(("fleet run (no-op, all)", c, w, c / n))
        hc, _hw, hres = timed([ansible_program(), "-i", str(inv), str(check_play(tmp, fleet))], env, tmp)
        assert hres.returncode == 0, hres.stdout[-2000:] + hres.stderr[-2000:]
        host = max(0.0, hc - base_cpu)  # the command's own cost on n hosts, beyond Ansible's per-host cost
        rows.append(("fleet run (no-op, ctrl)", c - host, w, (c - host) / n))
        for name, c, w, p in rows:
            line = f"{n:>5}  {name:<24} {c:>8.1f} {w:>7.1f} {p:>9.2f} {p / per:>9.1f}x"
            print(line, flush=True)
    if not a.keep:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    from results import main_with_results  # benchmarks/results.py: --write-results

    raise SystemExit(main_with_results(main, "fleet_scale.txt"))
