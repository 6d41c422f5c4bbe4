"""Review V9 of the session's merges (P10, B10, D9, A9, K10, L9). Each case failed on the merged code; each has a near
miss that must not fire.

* K10's gpu_memory read any run of digits: a paste showing a GTT total and a MemTotal hundreds of digits long (a
  hostile or damaged bundle) made ``gtt_default_limit``'s float arithmetic raise OverflowError, and
  ``rocm-wizard diagnose --from BUNDLE`` stopped with "internal error". amdgpu's pool files are u64 and MemTotal an
  unsigned long of kB: a number longer than 20 digits is no such value and is not read.
* B10's dry-run script took the wizard's lock through a helper that opened STATE/lock as it found it: a symlink
  planted there (or a state dir others can write, where one can be planted) had the helper, root for a system state
  dir, write its holder into the file the link names and empty it when the script ended. The engine refuses such a
  state dir (``wizard.runner.state``: a symlink, a path writable by group or others, one owned by neither root nor
  the user); the script's helper now refuses it as well, changing nothing.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from wizard.model import Action, EvidenceText, Facts, Gpu, StepPlan
from wizard.parsers.gpu_memory import parse_gpu_memory

GIB = 1 << 30
HUGE = "9" * 400


# --------------------------------------------------------------------------- 1. gpu_memory: hostile numbers


def _apu_facts(text: str) -> Facts:
    gpu = Gpu(name="AMD Radeon 8060S Graphics", gfx="gfx1151", gfx_reported="gfx1151", integrated=True, hip_index=0)
    return Facts(gpus=(gpu,), origin="test", texts=(EvidenceText("paste.txt", text, 1, "text", True),))


def _values(gtt: str, mem_kb: str) -> str:
    return (f"/sys/class/drm/card1/device/mem_info_gtt_total:{gtt}\n"
            f"$ grep MemTotal /proc/meminfo\nMemTotal:       {mem_kb} kB\n")


@pytest.mark.unit
def test_a_number_no_u64_holds_is_not_read_as_a_memory_size() -> None:
    got = parse_gpu_memory(_values(HUGE, HUGE) + f"GPU[0]\t\t: GTT Total Memory (B): {HUGE}\n"
                           f"$ cat /sys/class/drm/card1/device/mem_info_vram_total\n{HUGE}\n")
    assert got.gtt == () and got.vram == () and got.mem_total is None, got
    # near miss: the largest u64 and a real Strix Halo's values are read
    top = str((1 << 64) - 1)
    assert parse_gpu_memory(_values(top, "130023568")).gtt == (int(top),)
    assert parse_gpu_memory(_values("66571993088", "130023568")).mem_total == 130023568 * 1024


@pytest.mark.unit
def test_diagnosis_of_a_paste_with_huge_memory_values_does_not_crash() -> None:
    from wizard.diagnose import diagnose

    found = {f.id for f in diagnose(_apu_facts(_values(HUGE, HUGE)))}  # raised OverflowError before
    assert "strix-halo-gtt-limit" not in found
    # near miss: the kernel's default limit (half of MemTotal) is still listed to check
    at_default = {f.id: f for f in diagnose(_apu_facts(_values("66571993088", "130023568")))}
    assert at_default["strix-halo-gtt-limit"].to_check is not None


# --------------------------------------------------------------------------- 2. the script's lock helper


def _script(tmp_path: Path, state: Path) -> tuple[Path, Path]:
    from runner_helpers import plan_of
    from test_plan_golden import machines

    from wizard.record import replace
    from wizard.script import render

    count = tmp_path / "count"
    step = StepPlan("pip_pin", "count", (Action(("sh", "-c", f"echo x >> {count}"), "count"),))
    plan = replace(plan_of(step, name="scripted"), state_dir=str(state))
    path = tmp_path / "plan.sh"
    path.write_text(render(plan, machines()["seed-7900xt"]))
    return path, count


def _bash(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(path)], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.integration
def test_the_script_does_not_write_through_a_symlink_planted_as_the_lock(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    victim = tmp_path / "victim.conf"
    victim.write_text("precious\n")
    (state / "lock").symlink_to(victim)
    path, count = _script(tmp_path, state)
    r = _bash(path)
    assert victim.read_text() == "precious\n"  # was the holder's JSON, then emptied when the script ended
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "symlink" in lines[0] and str(state / "lock") in lines[0], lines
    assert not count.exists()


@pytest.mark.integration
def test_the_script_refuses_a_state_dir_others_can_write(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    state.chmod(0o777)  # anyone could plant the lock there between a check and the open
    path, count = _script(tmp_path, state)
    r = _bash(path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "writable by group or others" in r.stderr and not count.exists()
    assert not (state / "lock").exists()


@pytest.mark.integration
def test_near_miss_a_lock_file_left_by_an_earlier_run_is_taken(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    (state / "lock").write_text('{"pid": 1, "start_time": "x", "command": "old", "proc_start": null}\n')
    (state / "lock").chmod(0o600)
    path, count = _script(tmp_path, state)
    r = _bash(path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert count.read_text() == "x\n" and (state / "lock").read_text() == ""  # let go, emptied
