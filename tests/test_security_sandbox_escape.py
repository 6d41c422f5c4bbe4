"""Second security review, A4 (partly): the sandbox's path mapping missed ``//tmp/x``, ``bash -c`` scripts,
``python3 -c`` code and awk / sed programs, and six hand-written resolved-plan JSON steps wrote on the host. Each
is now refused inside the sandbox and writes nothing outside it. A4's rest: ``cd /`` followed by relative paths (the
machine's ``/`` is DIR), a ``cd`` that lands outside DIR, ``..`` in a relative operand, and an action whose relative
operands would resolve against the wizard's own working directory (``/``). Not covered (README says so): code that
builds a path at run time: argv rewriting is not confinement."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from runner_helpers import PY, plan_of, wizard

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


def test_sed_and_awk_text_is_not_taken_for_paths() -> None:
    """Only the file operands of an awk or sed program are paths: ``s/@TAG@/cp310/g`` (the wheel check's sed)
    is text and passes; ``w F``, ``r F`` and awk's redirections are mapped or refused."""
    from wizard.sandbox.standins import _program

    root = Path("/tmp/sandbox-root")
    assert _program(root, "sed", "s/@TAG@/cp310/g") == "s/@TAG@/cp310/g"
    assert _program(root, "sed", "s|/usr/lib|/x|g") == "s|/usr/lib|/x|g"
    assert _program(root, "sed", "1r /etc/hosts") == "1r /tmp/sandbox-root/etc/hosts"
    assert _program(root, "awk", "{print $1}") == "{print $1}"
    for tool, prog in (("sed", "w /tmp/x/y"), ("sed", "s/a/b/w /tmp/x/y"), ("awk", 'BEGIN{print 1 > "/tmp/x/y"}')):
        with pytest.raises(Exception, match="outside the sandbox"):
            _program(root, tool, prog)


def _run_from(cwd: Path, sandbox: Path, plan: Path) -> subprocess.CompletedProcess[str]:
    """The wizard started from ``cwd`` (``/`` below: relative operands once resolved against it, on the host)."""
    env = {k: v for k, v in os.environ.items() if k != "ROCM_WIZARD_STATE_DIR"}
    return subprocess.run([PY, "-m", "wizard", "--sandbox", str(sandbox), "--profile", "rx9070xt-noble", "--plan",
                           str(plan), "--yes"], capture_output=True, text=True, timeout=300, env=env, cwd=cwd,
                          stdin=subprocess.DEVNULL)


def test_cd_root_and_relative_operands_stay_inside_the_sandbox(tmp_path: Path) -> None:
    """``cd / && rm -rf REL`` in bash, ``rm -rf REL`` with the wizard started from ``/``, ``touch REL``, and
    python's relative open: each names the host's victim file relative to ``/``. All of
    them act on DIR's copy of that path (DIR is the machine's ``/``); the host's files are untouched."""
    victim = tmp_path / "host" / "victim"
    victim.parent.mkdir()
    victim.write_text("keep")
    rel = str(victim.relative_to("/"))
    acts = (Action(("mkdir", "-p", "/" + str(victim.parent.relative_to("/"))), "the same directory in DIR"),
            Action(("bash", "-c", f"cd / && rm -rf {rel} && echo x > {rel}.sh"), "cd-root"),
            Action(("rm", "-rf", rel), "relative-rm"),
            Action(("touch", f"{rel}.touched"), "relative-touch"),
            Action(("python3", "-c", f"open('{rel}.py', 'w').write('x')"), "python-relative"))
    plan = plan_of(StepPlan("preflight", "checks"), StepPlan("groups", "relative", actions=acts))
    pf = tmp_path / "relative.json"
    pf.write_text(planfile.dumps(plan))
    sb = tmp_path / "sb"
    r = _run_from(Path("/"), sb, pf)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert victim.read_text() == "keep"
    assert sorted(p.name for p in victim.parent.iterdir()) == ["victim"]
    inside = sb / rel
    assert {p.name for p in inside.parent.iterdir()} == {"victim.sh", "victim.touched", "victim.py"}


@pytest.mark.parametrize("argv", [
    ("sh", "-c", "cd .. && echo x > a4-up"),
    ("bash", "-c", 'cd "$(dirname "$PWD")" && echo x > a4-up'),
    ("sh", "-c", "command cd /; cd ..; echo x > a4-up"),
    ("rm", "-rf", "../a4-victim"),
    ("bash", "-c", "echo x > ../a4-up"),
    ("python3", "-c", "import os; os.chdir(os.path.dirname(os.getcwd())); open('a4-up', 'w').write('x')"),
], ids=["cd-dotdot", "cd-computed", "command-cd", "relative-dotdot", "redirect-dotdot", "python-chdir"])
def test_leaving_the_sandbox_by_a_relative_path_is_refused(tmp_path: Path, argv: tuple[str, ...]) -> None:
    """From DIR (the machine's ``/``) ``..`` is the host: a ``..`` component, a ``cd`` that lands outside DIR
    (computed at run time included, in a shell or in python) and a ``cd`` that goes around the guard are refused;
    nothing is written beside DIR and the host's file beside it survives."""
    victim = tmp_path / "a4-victim"
    victim.write_text("keep")
    plan = plan_of(StepPlan("preflight", "checks"), StepPlan("groups", "up", actions=(Action(argv, "up"),)))
    pf = tmp_path / "up.json"
    pf.write_text(planfile.dumps(plan))
    r = _run_from(tmp_path, tmp_path / "sb", pf)
    assert r.returncode != 0, r.stdout[-2000:]
    assert "outside" in r.stdout + r.stderr, r.stdout[-2000:]
    assert victim.read_text() == "keep"
    assert not (tmp_path / "a4-up").exists()
