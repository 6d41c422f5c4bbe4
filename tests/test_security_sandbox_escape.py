"""Second security review, A4 (partly): the sandbox's path mapping missed ``//tmp/x``, ``bash -c`` scripts,
``python3 -c`` code and awk / sed programs, and six hand-written resolved-plan JSON steps wrote on the host. Each
is now refused inside the sandbox and writes nothing outside it. Not covered (README says so): ``cd /`` followed by
relative paths, and code that builds a path at run time: argv rewriting is not confinement."""

from __future__ import annotations

from pathlib import Path

import pytest
from runner_helpers import plan_of, wizard

from wizard.model import Action, StepPlan
from wizard.runner import planfile

pytestmark = pytest.mark.integration


def attacks(w: Path) -> dict[str, tuple[str, ...]]:
    return {
        "esc6": ("bash", "-c", f"echo x > {w}/esc6"),
        "esc7": ("python3", "-c", f"open('{w}/esc7', 'w').write('x')"),
        "esc8": ("sh", "-c", f"echo x > /{w}/esc8"),
        "esc12": ("awk", f'BEGIN{{print "x" > "{w}/esc12"}}'),
        "esc13": ("sed", "-n", f"w {w}/esc13", "/etc/hostname"),
    }


@pytest.mark.parametrize("name", ["esc6", "esc7", "esc8", "esc12", "esc13"])
def test_a_resolved_plan_step_cannot_write_outside_the_sandbox(tmp_path: Path, name: str) -> None:
    w = tmp_path / "host"
    w.mkdir()
    argv = attacks(w)[name]
    plan = plan_of(StepPlan("preflight", "checks"), StepPlan("groups", "escape", actions=(Action(argv, name),)))
    pf = tmp_path / "escape.json"
    pf.write_text(planfile.dumps(plan))
    r = wizard(["--sandbox", str(tmp_path / "sb"), "--profile", "rx9070xt-noble", "--plan", str(pf), "--yes"])
    assert r.returncode != 0, r.stdout[-2000:]
    assert "outside the sandbox" in r.stdout + r.stderr, r.stdout[-2000:]
    assert list(w.iterdir()) == []
