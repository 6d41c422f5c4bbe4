"""Fast checks of real roots as fleet hosts (the slow end-to-end run: test_fleet_realroots.py): a verify the
host cannot run is reported as skipped (never passed) from the exported playbook's own record, and an
inventory naming a real root that is not one fails in one line, creating nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wizard.fleet.export import PlanGroup, export
from wizard.fleet.run import all_ok, verify_result
from wizard.planner import resolve_plan

pytestmark = pytest.mark.integration

ANSIBLE = shutil.which("ansible-playbook", path=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
needs_ansible = pytest.mark.skipif(ANSIBLE is None, reason="ansible-core is not installed (pip install '.[fleet]')")


def test_skipped_verify_is_reported_as_skipped_and_never_as_passed(tmp_path: Path) -> None:
    path = tmp_path / "verify.json"
    path.write_text(json.dumps({"skipped": "real root: no GPU"}))
    v = verify_result(path)
    assert v == {"status": "skipped", "reason": "real root: no GPU"}
    row = {"host": "h", "failed": None, "verify": v}
    assert all_ok([row])
    path.write_text(json.dumps({"skipped": ""}))
    assert verify_result(path)["status"] == "fail"  # an empty reason is not a skip


@needs_ansible
def test_exported_verify_step_is_skipped_where_the_gpu_is_unavailable(tmp_path: Path) -> None:
    """The export run by real ansible-playbook, only its verify step (tags), on a host marked as having no GPU:
    the suite's command does not run and the controller records the reason as the host's verify JSON."""
    from test_plan_golden import machines

    facts = machines()["seed-7900xt"]
    rp = resolve_plan("pip-only", facts, state_dir=str(tmp_path / "state"), wizard_python="python3")
    book = export([PlanGroup(rp, ("h1",))], tmp_path / "out")
    k = next(i for i, s in enumerate(rp.steps, 1) if s.kind == "verify")
    inv = tmp_path / "inventory.ini"
    inv.write_text(f"h1 ansible_connection=local ansible_python_interpreter={sys.executable}\n")
    results = tmp_path / "results"
    extra = {"rocm_wizard_results": str(results), "rocm_wizard_unavailable": {"h1": {"gpu": "no GPU in this test"}}}
    res = subprocess.run([str(ANSIBLE), "-i", str(inv), "-e", "rocm_wizard_hosts=all", str(book), "--tags", f"step-{k}", "-e", json.dumps(extra)],
                         capture_output=True, text=True, timeout=600,
                         env={**os.environ, "ANSIBLE_HOME": str(tmp_path / ".ansible"), "HOME": str(tmp_path / "home"),
                              "ANSIBLE_LOCAL_TEMP": str(tmp_path / ".tmp"), "ANSIBLE_REMOTE_TEMP": str(tmp_path / ".rt")})
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert verify_result(results / "h1" / "verify.json") == {"status": "skipped", "reason": "no GPU in this test"}
    # the step's include is skipped as a whole: nothing of the suite reaches the host
    assert f"Step {k}/{len(rp.steps)} verify: Verify: matmul" in res.stdout and "skipping: [h1]" in res.stdout
    assert "run the suite" not in res.stdout and "included: " not in res.stdout.split("verify: Verify: matmul")[1]


@needs_ansible
@pytest.mark.parametrize("line", ["h1 ansible_connection=rocm_wizard_realroot rocm_wizard_realroot={root}",
                                  "h1 ansible_connection=rocm_wizard_realroot"])
def test_a_realroot_host_that_is_not_one_is_one_line(tmp_path: Path, line: str) -> None:
    (tmp_path / "plain").mkdir()
    inv = tmp_path / "inventory.ini"
    inv.write_text(line.format(root=tmp_path / "plain") + "\n")
    res = subprocess.run([sys.executable, "-m", "wizard", "fleet", "detect", "-i", str(inv), "--fleet-dir",
                          str(tmp_path / "fleet")], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "HOME": str(tmp_path / "home")})
    assert res.returncode == 1, res.stdout + res.stderr
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr, res.stderr
    assert "h1:" in res.stderr and ("not a real root" in res.stderr or "needs rocm_wizard_realroot" in res.stderr)
    assert list((tmp_path / "plain").iterdir()) == [] and not (tmp_path / "fleet" / "hosts").exists()
