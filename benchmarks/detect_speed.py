"""Benchmark: `rocm-wizard detect --json` vs `python -m torch.utils.collect_env`, in one run.

    python benchmarks/detect_speed.py [--runs 15] [--torch-python PATH] [--fresh-install]

Prints the median wall time of each (whole processes, as a user runs them) and the ratios the
project targets: detect under 0.25 s, at least 15x faster than collect_env. The torch
interpreter defaults to $ROCM_WIZARD_TEST_TORCH_PYTHON (a venv with the CPU torch).
``--fresh-install`` measures a regular (non-editable) install made into a temporary venv, which
is what a user runs; otherwise the ``rocm-wizard`` on PATH is measured.
"""

from __future__ import annotations

import argparse
import os
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--torch-python", default=os.environ.get("ROCM_WIZARD_TEST_TORCH_PYTHON"))
    ap.add_argument("--fresh-install", action="store_true", help="measure a regular install in a temp venv")
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
    live = median_seconds([exe, "detect", "--json"], args.runs)
    bundle = median_seconds([exe, "detect", "--json", "--from", "seed-7900xt"], args.runs)
    version = median_seconds([exe, "--version"], args.runs)
    print(f"rocm-wizard detect --json (this machine):   {live * 1000:7.1f} ms median of {args.runs}")
    print(f"rocm-wizard detect --json --from seed-7900xt: {bundle * 1000:7.1f} ms")
    print(f"rocm-wizard --version:                       {version * 1000:7.1f} ms")
    probe = subprocess.run([sys.executable, "-c", "import sys; from wizard.cli import main; main(['--version']);"
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
    raise SystemExit(main())
