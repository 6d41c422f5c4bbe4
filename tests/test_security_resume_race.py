"""Second security review, A14: after the wizard is killed with SIGKILL (the OOM killer, ``kill -9``, systemd's
final stop), ``resume`` started the same action while the orphaned one still ran (two pips into one venv). Every
action now inherits the wizard's lock, so the lock stays held until the last process the run started is gone: the
resume is refused with one line (exit 4) naming why, and the action never runs twice."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from runner_helpers import PY, REPO, plan_of, wizard

from wizard.model import Action, StepPlan
from wizard.runner import planfile
from wizard.sandbox import open_sandbox

pytestmark = pytest.mark.integration


def test_resume_after_sigkill_waits_for_the_orphaned_action(tmp_path: Path) -> None:
    root = tmp_path / "m"
    open_sandbox(root, "rx9070xt-noble")
    starts = root / "home/user/starts"
    script = "trap '' TERM HUP INT; echo $$ >> /home/user/starts; sleep 30"
    plan = plan_of(StepPlan("preflight", "checks"),
                   StepPlan("groups", "slow", actions=(Action(("sh", "-c", script), "a slow action"),)))
    pf = tmp_path / "slow.json"
    pf.write_text(planfile.dumps(plan))
    env = dict(os.environ)
    env.pop("ROCM_WIZARD_STATE_DIR", None)
    p = subprocess.Popen([PY, "-m", "wizard", "--sandbox", str(root), "--plan", str(pf), "--yes"], cwd=REPO, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    orphan = None
    try:
        deadline = time.monotonic() + 120
        while not (starts.exists() and starts.read_text().strip()):
            assert time.monotonic() < deadline and p.poll() is None
            time.sleep(0.05)
        orphan = int(starts.read_text().split()[0])
        p.kill()
        p.wait(timeout=30)
        r = wizard(["resume", "--yes", "--sandbox", str(root)])
        assert r.returncode == 4, r.stdout[-1000:] + r.stderr
        assert "an action it ran is not" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert len(starts.read_text().split()) == 1  # not started a second time
    finally:
        if p.poll() is None:
            p.kill()
        if orphan is not None:
            try:
                os.killpg(orphan, signal.SIGKILL)  # the action's own group (the runner starts each in one)
            except ProcessLookupError:
                pass
    from wizard.runner.lock import Lock, LockHeld

    deadline = time.monotonic() + 30
    while True:  # the action's group gone, the lock is free again
        try:
            Lock(root / "var/lib/rocm-wizard/lock").acquire().release()
            break
        except LockHeld:
            assert time.monotonic() < deadline, "the lock outlived the action's process group"
            time.sleep(0.2)
