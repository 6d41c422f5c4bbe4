"""A rehearsal root is built whole or not at all (issue 20): the build happens beside DIR and is renamed
to DIR when complete. Killed (kill -9 of its process group) at a random instant while ``--sandbox DIR
--profile P --root debian12 --plan X --yes`` builds the root, DIR is absent or a whole root, never a part
of one; the same command run again finishes the job (before: "exists, is not empty and is not a sandbox",
exit 2, or a root that lost its profile, exit 5)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wizard.realroot import rehearsal
from wizard.realroot.base import RealRootError

REPO = Path(__file__).resolve().parents[2]


def _part_of_a_root(d: Path) -> None:
    (d / "etc").mkdir(parents=True)
    (d / "etc/os-release").write_text('ID="debian"\n')


@pytest.mark.unit
def test_a_failed_build_leaves_dir_as_it_was_and_a_dead_builders_part_is_removed(tmp_path: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    d = tmp_path / "root"
    dead = tmp_path / f".root{rehearsal.BUILDING}999999999"  # a build killed before (no such process)
    _part_of_a_root(dead)

    def killed(tmp: Path, profile: str) -> None:
        _part_of_a_root(tmp)
        raise RealRootError("the build stopped half-way")

    monkeypatch.setattr(rehearsal, "_build", killed)
    with pytest.raises(RealRootError, match="half-way"):
        rehearsal._build_whole(d, "seed-7900xt")
    assert not d.exists() and not dead.exists() and not list(tmp_path.glob(".root.building-*"))

    def whole(tmp: Path, profile: str) -> None:
        _part_of_a_root(tmp)
        (tmp / ".realroot").mkdir()
        (tmp / ".realroot/machine.json").write_text(json.dumps({"profile": profile, "mirror": "http://127.0.0.1:1"}))

    monkeypatch.setattr(rehearsal, "_build", whole)
    d.mkdir()  # an empty DIR given by the user is fine
    rehearsal._build_whole(d, "seed-7900xt")
    assert rehearsal.is_real_root(d) and not list(tmp_path.glob(".root.building-*"))
    (tmp_path / "other").mkdir()
    (tmp_path / "other/file").write_text("mine")
    with pytest.raises(RealRootError, match="is not empty"):
        rehearsal._build_whole(tmp_path / "other", "seed-7900xt")


def _command(d: Path) -> list[str]:
    return [sys.executable, "-m", "wizard", "--sandbox", str(d), "--profile", "seed-7900xt", "--root", "debian12",
            "--plan", "pip-only", "--yes"]


def _run(d: Path, timeout: float = 1800) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_command(d), capture_output=True, text=True, cwd=REPO, timeout=timeout,
                          stdin=subprocess.DEVNULL)


@pytest.mark.system
@pytest.mark.realroot
def test_killed_at_a_random_instant_of_the_build_the_same_command_finishes_the_job(host_ok: None,
                                                                                   tmp_path: Path) -> None:
    seed = int(os.environ.get("ROCM_WIZARD_KILL_SEED") or time.time())
    rng = random.Random(seed)
    d = tmp_path / "root"
    for attempt in range(2):
        proc = subprocess.Popen(_command(d), cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        delay = rng.uniform(1.0, 40.0)
        try:
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        # whole or not at all: DIR is absent, or a complete root of the profile (never a part of one)
        assert not d.exists() or (rehearsal.is_real_root(d)
                                  and 'VERSION_ID="22.04"' in (d / "etc/os-release").read_text()), (seed, delay)
        if rehearsal.is_real_root(d):
            break
    runs = d / "var/lib/rocm-wizard/runs"
    if runs.is_dir() and any(runs.iterdir()):  # the kill came after the build, inside the run: resume it
        r = subprocess.run([sys.executable, "-m", "wizard", "--sandbox", str(d), "resume", "--yes"],
                           capture_output=True, text=True, cwd=REPO, timeout=1800, stdin=subprocess.DEVNULL)
    else:
        r = _run(d)
    assert r.returncode == 0, (seed, r.stdout[-3000:], r.stderr[-2000:])
    assert rehearsal.is_real_root(d) and not list(tmp_path.glob(".root.building-*"))
    assert 'VERSION_ID="22.04"' in (d / "etc/os-release").read_text()  # the profile's machine, not Debian's
    assert list(d.glob("home/user/pytorch_venv-pip-only/lib/python*/site-packages/torch-*.dist-info"))
    st = json.loads(subprocess.run([sys.executable, "-m", "wizard", "--sandbox", str(d), "status", "--json"],
                                   capture_output=True, text=True, cwd=REPO, timeout=600).stdout)
    assert st["state"] == "done" and st["drift"] == {}
