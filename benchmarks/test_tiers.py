"""Wall time of each test tier, and of the README's test command, on this machine.

Runs, one after another, ``python -m pytest -m unit``, ``-m integration``, the README's plain
``python -m pytest`` (unit + integration + the system smoke) and ``-m system``, and prints each one's wall
time and pytest's summary line (target for the plain command: about 10 minutes on a quiet 2-core machine).
``--write-results`` also writes benchmarks/results/test_tiers.txt, with the command and the machine; the lines of
tiers not run this time stay in it under their own run's header (so ``--tiers system`` alone keeps the others).
Not a test (pytest collects only tests/): it runs the suite, so run it on a quiet machine.

    python benchmarks/test_tiers.py [--tiers unit,integration,default,system] [--write-results]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results import machine_line, write_results  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TIERS = {
    "unit": ["-m", "unit"],
    "integration": ["-m", "integration"],
    "default": [],  # the README's command: unit + integration + the system smoke
    "system": ["-m", "system"],
}


def summary_line(out: str) -> str:
    """pytest's closing line ("3277 passed, 96 skipped in 771.86s"), with or without its ``=`` frame (-q)."""
    words = (" passed", " failed", " error", " skipped", " deselected", " no tests ran")
    lines = [ln.strip("= ") for ln in out.splitlines() if " in " in ln and any(w in ln for w in words)]
    return lines[-1] if lines else "(no summary: see the output)"


def run_tier(name: str, log_dir: Path | None) -> tuple[float, int, str]:
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *TIERS[name]]
    t0 = time.monotonic()
    res = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if log_dir is not None:  # pytest's whole output, to see which tests failed
        (log_dir / f"{name}.log").write_text(res.stdout + res.stderr)
    return time.monotonic() - t0, res.returncode, summary_line(res.stdout)


def kept_blocks(old: str, rerun: set[str]) -> str:
    """The earlier runs' blocks of the results file (a ``#`` header, then one line per tier), without the tiers run
    again now; a block left with no tier line goes."""
    blocks: list[list[str]] = []
    for line in old.splitlines():
        if line.startswith("# ") and not line.startswith("# machine:"):
            blocks.append([line])
        elif blocks and line.strip():
            blocks[-1].append(line)
    out = []
    for block in blocks:
        head = [ln for ln in block if ln.startswith("#")]
        tiers = [ln for ln in block if not ln.startswith("#") and ln.split()[0] not in rerun]
        if tiers:
            out.append("\n".join(head + tiers))
    return "".join(f"\n{b}\n" for b in out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tiers", default="unit,integration,default,system",
                    help="comma-separated, from: " + ", ".join(TIERS))
    ap.add_argument("--write-results", action="store_true", help="write benchmarks/results/test_tiers.txt")
    ap.add_argument("--log-dir", type=Path, default=None, help="also write each tier's whole pytest output there")
    a = ap.parse_args()
    names = [t.strip() for t in a.tiers.split(",") if t.strip()]
    unknown = [t for t in names if t not in TIERS]
    if unknown:
        ap.error(f"unknown tier(s): {', '.join(unknown)} (from: {', '.join(TIERS)})")
    if a.log_dir is not None:
        a.log_dir.mkdir(parents=True, exist_ok=True)  # before the tiers run: a missing folder must not lose them
    lines = [machine_line()]
    print(lines[0], flush=True)
    failed = False
    for name in names:
        seconds, rc, summary = run_tier(name, a.log_dir)
        cmd = " ".join(["python -m pytest", *TIERS[name]])
        lines.append(f"{name:<12} {seconds:7.0f} s  ({seconds / 60:.1f} min)  exit {rc}  `{cmd}`: {summary}")
        print(lines[-1], flush=True)
        failed |= rc != 0
    if a.write_results:
        from results import RESULTS

        old = RESULTS / "test_tiers.txt"
        kept = kept_blocks(old.read_text(encoding="utf-8"), set(names)) if old.is_file() else ""
        write_results("test_tiers.txt", "\n".join(lines) + "\n" + kept)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
