"""Benchmark: `rocm-wizard detect --json` vs a bare `python3 -c pass` and `python -m torch.utils.collect_env`.

    python benchmarks/detect_speed.py [--runs 15] [--torch-python PATH] [--fresh-install]
    python benchmarks/detect_speed.py --home-case /work/main/.venv/bin/rocm-wizard   (issue 27's case)

Prints the median wall time of each (whole processes, as a user runs them) and the ratios the
project targets: detect within 2x a bare `python -c pass` of the interpreter that runs the wizard
(median of paired ratios: each detect run is timed next to a bare run, so the VM's drifting speed
cancels; CPU time of both is shown too), detect under 0.25 s, at least 15x faster than collect_env. The torch
interpreter defaults to $ROCM_WIZARD_TEST_TORCH_PYTHON (a venv with the CPU torch).
``--fresh-install`` measures a regular (non-editable) install made into a temporary venv, which
is what a user runs; otherwise the ``rocm-wizard`` on PATH is measured. The package is byte-compiled
first, as ``pip install`` leaves it.
``--home-case BASELINE`` measures `detect --json` in a built home of 200 folders and 20 torch environments
(the layouts the applications' installers make), this build against BASELINE (today's code) in interleaved
runs; the target is at most 1.5x.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time


def median_seconds(argv: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _interpreter(exe: str) -> str:
    """The Python that runs a console script (its #! line), else this one."""
    try:
        with open(exe, "rb") as fh:
            first = fh.readline().decode(errors="replace").strip()
    except OSError:
        return sys.executable
    return first[2:].split()[0] if first.startswith("#!") and "python" in first else sys.executable


def paired_ratio(argv: list[str], base: list[str], runs: int,
                 env: dict[str, str] | None = None) -> tuple[float, float, float, float]:
    """(median wall ratio, median argv wall s, median base wall s, CPU ratio) of interleaved runs."""
    ratios, walls, bases = [], [], []
    cpu = {0: 0.0, 1: 0.0}
    for i in range(runs + 2):
        pair = []
        for k, cmd in enumerate((base, argv)):
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env)
            pair.append(time.perf_counter() - t)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            if i >= 2:  # two warm-up pairs: page cache, .pyc files
                cpu[k] += (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        if i >= 2:
            bases.append(pair[0])
            walls.append(pair[1])
            ratios.append(pair[1] / pair[0])
    return statistics.median(ratios), statistics.median(walls), statistics.median(bases), cpu[1] / max(cpu[0], 1e-9)


def build_home(home: str, folders: int = 200, envs: int = 20) -> None:
    """A lived-in home: ``folders`` folders, ``envs`` of them holding a torch environment where the
    applications' installers put one (``<app>/venv``, ``.venv``, ``fooocus_env``, ``installer_files/env``,
    one level below in ``~/ai/<app>/venv``, a folder that is itself a venv); the others are projects with
    files and a few folders. Each environment's site-packages has torch's files and 60 other packages."""
    layouts = ["venv", ".venv", "fooocus_env", "installer_files/env", "below", "self"]

    def touch(path: str, text: str = "") -> None:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            fh.write(text)

    def env(prefix: str, conda: bool) -> None:
        touch(f"{prefix}/conda-meta/history" if conda else f"{prefix}/pyvenv.cfg", "home = /usr/bin\nversion = 3.10.12\n")
        touch(f"{prefix}/bin/python")
        site = f"{prefix}/lib/python3.10/site-packages"
        for i in range(60):
            os.makedirs(f"{site}/package{i}-1.0.dist-info")
            os.makedirs(f"{site}/package{i}")
        os.makedirs(f"{site}/torch-2.5.1+rocm6.2.dist-info")
        touch(f"{site}/torch/version.py", "__version__ = '2.5.1+rocm6.2'\nhip = '6.2.41133-dd7f95766'\ncuda = None\n")
        for g in ("gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1101", "gfx1102"):
            touch(f"{site}/torch/lib/rocblas/library/TensileLibrary_lazy_{g}.dat")
            touch(f"{site}/torch/lib/hipblaslt/library/TensileLibrary_{g}.co")

    for i in range(folders):
        d = f"{home}/folder{i:03d}"
        if i < envs:
            how = layouts[i % len(layouts)]
            if how == "self":
                env(d, False)
            elif how == "below":
                env(f"{d}/app/venv", False)
                touch(f"{d}/app/main.py")
            else:
                env(f"{d}/{how}", how == "installer_files/env")
                touch(f"{d}/main.py")
            continue
        for f in ("README.md", "setup.py", "notes.txt"):
            touch(f"{d}/{f}", "x")
        for sub in ("assets", "scripts", "config"):
            touch(f"{d}/{sub}/file.txt", "x")
        os.makedirs(f"{d}/.git/objects")
    for dot in (".cache/pip", ".config/autostart", ".local/share/applications", ".mozilla/firefox"):
        os.makedirs(f"{home}/{dot}", exist_ok=True)


def home_case(exe: str, baseline: str, runs: int) -> None:
    """detect --json in a home of 200 folders and 20 environments: this build against ``baseline`` (today's
    code), interleaved in the same run on the same machine."""
    import tempfile

    home = os.path.join(tempfile.mkdtemp(prefix="rw-bench-home-"), "alice")
    build_home(home)
    env = {**os.environ, "HOME": home}
    env.pop("VIRTUAL_ENV", None)
    env.pop("CONDA_PREFIX", None)
    subprocess.run([_interpreter(baseline), "-I", "-c", "import compileall, wizard\n"
                    "compileall.compile_dir(wizard.__path__[0], quiet=1)"], check=False, stdout=subprocess.DEVNULL)
    counts = []
    for cmd in (baseline, exe):
        out = subprocess.run([cmd, "detect", "--json"], capture_output=True, text=True, env=env, check=False)
        import json

        doc = json.loads(out.stdout)
        counts.append(sum(1 for e in doc["python_envs"] if e.get("torch") and (e.get("path") or "").startswith(home)))
    ratio, new, old, cpu = paired_ratio([exe, "detect", "--json"], [baseline, "detect", "--json"], runs, env)
    print(f"home case: {home} (200 folders, 20 environments with torch)")
    print(f"  today's code {baseline}: {old * 1000:7.1f} ms median, finds {counts[0]} of the 20")
    print(f"  this build   {exe}: {new * 1000:7.1f} ms median, finds {counts[1]} of the 20")
    print(f"  this build / today's code = {ratio:.2f}x median of {runs} paired runs (CPU time {cpu:.2f}x) "
          f"(target <= 1.5x: {'met' if ratio <= 1.5 else 'NOT met'})")
    ratio, new, old, cpu = paired_ratio([exe, "detect", "--json"], [baseline, "detect", "--json"], runs)
    print(f"this machine as it is (HOME={os.environ.get('HOME')}): today's code {old * 1000:.1f} ms, this build "
          f"{new * 1000:.1f} ms: {ratio:.2f}x median of {runs} paired runs (CPU time {cpu:.2f}x)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--torch-python", default=os.environ.get("ROCM_WIZARD_TEST_TORCH_PYTHON"))
    ap.add_argument("--fresh-install", action="store_true", help="measure a regular install in a temp venv")
    ap.add_argument("--home-case", metavar="BASELINE_EXE",
                    help="only the 200-folder home case: this build against BASELINE_EXE (today's rocm-wizard)")
    args = ap.parse_args()
    exe = shutil.which("rocm-wizard") or os.path.join(os.path.dirname(sys.executable), "rocm-wizard")
    if args.fresh_install:
        import tempfile

        venv = os.path.join(tempfile.mkdtemp(prefix="rw-bench-"), "venv")
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q", repo], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        exe = os.path.join(venv, "bin", "rocm-wizard")
    print(f"measuring {exe}")
    python = _interpreter(exe)
    # A user's install has its bytecode (pip compiles it); an editable checkout under PYTHONDONTWRITEBYTECODE
    # would otherwise recompile every module on every run and measure the compiler, not the wizard.
    subprocess.run([python, "-I", "-c", "import compileall, wizard, wizard.steps, wizard.plans\n"
                    "for m in (wizard, wizard.steps, wizard.plans):\n"
                    "    compileall.compile_dir(m.__path__[0], quiet=1)"], check=True, stdout=subprocess.DEVNULL)
    if args.home_case:
        home_case(exe, args.home_case, max(args.runs, 21))
        return 0
    ratio2, det, bare, cpu_ratio = paired_ratio([exe, "detect", "--json"], [python, "-c", "pass"], max(args.runs, 21))
    print(f"bare `{python} -c pass`: {bare * 1000:7.1f} ms median; detect --json beside it: {det * 1000:7.1f} ms")
    print(f"detect --json / python -c pass = {ratio2:.2f}x median of {max(args.runs, 21)} paired runs "
          f"(CPU time {cpu_ratio:.2f}x) (target <= 2x: {'met' if ratio2 <= 2 else 'NOT met'})")
    floor, _, _, _ = paired_ratio([python, "-c", "import argparse, json, re"], [python, "-c", "pass"],
                                  max(args.runs, 21))
    print(f"floor: `import argparse, json, re` alone / python -c pass = {floor:.2f}x (what any such CLI pays "
          "before it reads a file, typing not counted: detect imports none; over 2x on a regular install, where the "
          "bare start preloads none of it)")
    live = median_seconds([exe, "detect", "--json"], args.runs)
    bundle = median_seconds([exe, "detect", "--json", "--from", "seed-7900xt"], args.runs)
    version = median_seconds([exe, "--version"], args.runs)
    print(f"rocm-wizard detect --json (this machine):   {live * 1000:7.1f} ms median of {args.runs}")
    print(f"rocm-wizard detect --json --from seed-7900xt: {bundle * 1000:7.1f} ms")
    print(f"rocm-wizard --version:                       {version * 1000:7.1f} ms")
    probe = subprocess.run([python, "-I", "-c", "import sys; from wizard.cli import main; main(['--version']);"
                            "print(sorted(m for m in ('textual','torch','rich') if m in sys.modules))"],
                           capture_output=True, text=True, check=False)
    print(f"modules imported by --version among textual/torch/rich: {probe.stdout.strip().splitlines()[-1]}")
    print(f"target detect < 250 ms: {'met' if live < 0.25 else 'NOT met'} (ratio to target {live / 0.25:.2f})")
    if not args.torch_python:
        print("collect_env: skipped (give --torch-python or set ROCM_WIZARD_TEST_TORCH_PYTHON)")
        return 0
    ce = median_seconds([args.torch_python, "-m", "torch.utils.collect_env"], max(3, args.runs // 3))
    print(f"python -m torch.utils.collect_env:          {ce * 1000:7.1f} ms median")
    ratio = ce / live
    print(f"collect_env / detect = {ratio:.1f}x (target >= 15x: {'met' if ratio >= 15 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    from results import main_with_results  # benchmarks/results.py: --write-results

    # the README quotes both: the checkout's install and a regular one (--fresh-install), each from its own file
    raise SystemExit(main_with_results(main, "detect_speed_fresh_install.txt" if "--fresh-install" in sys.argv
                                       else "detect_speed.txt"))
