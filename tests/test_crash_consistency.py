"""kill -9 at journal boundaries and at random instants inside actions, then `resume --yes` until done:
the end state equals an uninterrupted run's. Boundaries are sampled (CI has 2 cores), deterministically."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest
from runner_helpers import PY, REPO, end_state, wizard

from wizard.runner.journal import Journal

pytestmark = pytest.mark.system  # dozens of sandbox runs: minutes on 2 cores

CASES = [("seed-7900xt", "downgrade-6.2"), ("rx9070xt-noble", "upgrade-7.2")]


def _finish(root: Path, limit: int = 8) -> None:
    for _ in range(limit):
        r = wizard(["resume", "--yes", "--sandbox", str(root)])
        if r.returncode == 0:
            return
        assert r.returncode in (3, 1), r.stdout[-2000:] + r.stderr
        if r.returncode == 1:
            assert "interrupted inside this action" not in r.stdout
    raise AssertionError("resume did not finish")


def _journal(root: Path) -> Journal:
    cur = (root / "var/lib/rocm-wizard/current").read_text().strip()
    return Journal(root / "var/lib/rocm-wizard/runs" / cur / "journal.jsonl")


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = {}
    for profile, plan in CASES:
        root = tmp_path_factory.mktemp("ref") / "m"
        r = wizard(["--sandbox", str(root), "--profile", profile, "--plan", plan, "--yes"])
        assert r.returncode in (0, 3), r.stdout[-3000:]
        if r.returncode == 3:
            _finish(root)
        out[(profile, plan)] = (end_state(root), len(_journal(root).records()))
    return out


def _sample(n_records: int, k: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    firsts = [1, 2, 3, n_records - 2, n_records - 1]
    pool = [i for i in range(4, n_records - 2)]
    return sorted(set(firsts + rng.sample(pool, min(k, len(pool)))))


@pytest.mark.timeout(1200)  # dozens of sandbox runs; on a loaded 2-core machine over 300 s
@pytest.mark.parametrize("profile,plan", CASES)
def test_kill_at_journal_boundaries(tmp_path: Path, reference: dict, profile: str, plan: str) -> None:
    want, n = reference[(profile, plan)]
    k = int(os.environ.get("ROCM_WIZARD_CRASH_SAMPLES", "4"))
    for i, at in enumerate(_sample(n, k, seed=len(plan))):
        root = tmp_path / f"m{i}"
        r = wizard(["--sandbox", str(root), "--profile", profile, "--plan", plan, "--yes"],
                   env={"ROCM_WIZARD_CRASH_AFTER": str(at)})
        assert r.returncode in (-9, 0, 3), (at, r.returncode, r.stderr[-500:])
        _finish(root)
        assert end_state(root) == want, f"kill -9 after journal record {at}"


def _kill_session(proc: subprocess.Popen) -> None:
    """A power cut: the wizard and every process of its session die at once."""
    sid = proc.pid  # started with start_new_session: its session id is its pid
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if os.getsid(int(pid)) == sid:
                    os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    proc.wait()


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("profile,plan", CASES)
def test_kill_at_random_instants_inside_actions(tmp_path: Path, reference: dict, profile: str, plan: str) -> None:
    want, _ = reference[(profile, plan)]
    rng = random.Random(hash(plan) & 0xFFFF)
    for i in range(int(os.environ.get("ROCM_WIZARD_CRASH_INSTANTS", "3"))):
        root = tmp_path / f"m{i}"
        env = dict(os.environ)
        env.pop("ROCM_WIZARD_STATE_DIR", None)
        proc = subprocess.Popen([PY, "-m", "wizard", "--sandbox", str(root), "--profile", profile, "--plan", plan,
                                 "--yes"], cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        target = rng.randint(3, 18)  # the n-th action-start
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                starts = sum(1 for r in _journal(root).records() if r["event"] == "action-start")
            except (OSError, ValueError):
                starts = 0
            if starts >= target:
                time.sleep(rng.uniform(0.0, 0.3))
                break
            time.sleep(0.01)
        _kill_session(proc)
        if not (root / "var/lib/rocm-wizard/current").exists():
            continue
        _finish(root)
        assert end_state(root) == want, f"power cut at action {target}"
