"""Issue 16, the runner's part: each attack performed for real in a sandbox or a temp dir, and the
safe outcome asserted (sandbox escapes, rollbacks that delete what the run never made, a pip-only
rollback that purges system ROCm, root running user-writable code, state dirs others can write,
edited plan files, signals, kill -9 mid-rollback, a full disk, a corrupt journal)."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest
from runner_helpers import PY, REPO, calls, end_state, plan_of, wizard

from wizard.model import Action, StepPlan
from wizard.runner import planfile
from wizard.sandbox import open_sandbox

pytestmark = pytest.mark.integration

ONE_LINE_ERR = ("Traceback", "internal error")


def one_line(r: subprocess.CompletedProcess[str]) -> str:
    """stderr is one line, no traceback, no internal error."""
    err = r.stderr.strip()
    assert err.count("\n") == 0 and not any(x in r.stdout + r.stderr for x in ONE_LINE_ERR), r.stdout + r.stderr
    return err


def tree(path: Path) -> dict[str, str]:
    return {str(p.relative_to(path)): (p.read_text() if p.is_file() else "<dir>") for p in sorted(path.rglob("*"))}


def plan_toml(tmp_path: Path, venv: str, name: str = "custom") -> Path:
    text = (REPO / "plans/pip-only.toml").read_text().replace('index = "auto"', f'index = "auto"\nvenv = {json.dumps(venv)}')
    p = tmp_path / f"{name}.toml"
    p.write_text(text)
    return p


def journal(root: Path, state: Path | None = None) -> list[dict]:
    st = state or root / "var/lib/rocm-wizard"
    cur = (st / "current").read_text().strip()
    return [json.loads(line) for line in (st / "runs" / cur / "journal.jsonl").read_text().splitlines() if line]


def status(root: Path, *extra: str) -> dict:
    r = wizard(["status", "--sandbox", str(root), *extra, "--json"])
    return json.loads(r.stdout)


# ------------------------------------------------------------------ item 3: the sandbox never leaves DIR


def test_dotdot_venv_never_touches_the_directory_outside_the_sandbox(tmp_path: Path) -> None:
    """A plan's venv with '..' is refused at the door (one line, exit 2), before any sandbox exists; the
    sandbox's own path mapping (the next test) keeps a '..' that reaches it inside DIR as well."""
    root, victim = tmp_path / "m", tmp_path / "victimdir"
    victim.mkdir()
    (victim / "thesis.txt").write_text("years of work\n")
    before = tree(victim)
    plan = plan_toml(tmp_path, "/home/../../victimdir")  # from ROOT/home, two levels up is tmp_path
    r = wizard(["--sandbox", str(root), "--profile", "seed-7900xt", "--plan", str(plan), "--yes"])
    assert r.returncode == 2 and "'..'" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert tree(victim) == before and not (root / "victimdir").exists()


def test_standins_and_sh_scripts_map_every_path_inside_the_root(tmp_path: Path) -> None:
    root, victim = tmp_path / "m", tmp_path / "victimdir"
    victim.mkdir()
    (victim / "keep").write_text("keep\n")
    host = open_sandbox(root, "rx9070xt-noble")
    env = dict(host.environ)

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(root / ".sandbox/bin" / argv[0]), *argv[1:]], capture_output=True, text=True,
                              env=env, stdin=subprocess.DEVNULL)

    assert run("mkdir", "-p", "/var/../../../victimdir/sub").returncode == 0
    assert (root / "victimdir/sub").is_dir() and not (victim / "sub").exists()
    assert run("sh", "-c", "echo x > /home/../../victimdir/planted").returncode == 0
    assert (root / "victimdir/planted").read_text() == "x\n" and not (victim / "planted").exists()
    assert run("rm", "-rf", "--", "/home/../../victimdir").returncode == 0
    assert not (root / "victimdir").exists()
    for script in ("echo x > /tmp/planted", "rm -rf /x/../victimdir", f"cat {victim}/keep"):
        r = run("sh", "-c", script)
        assert r.returncode == 126 and "outside the sandbox" in r.stderr, (script, r.stderr)
    # a directory inside the root that links out of it is not a way out either
    os.symlink(victim, root / "home/user/out")
    r = run("touch", "/home/user/out/planted")
    assert r.returncode == 126 and not (victim / "planted").exists()
    assert tree(victim) == {"keep": "keep\n"}


# ------------------------------------------------------------------ item 2: only what the run created goes


def test_an_existing_directory_that_is_not_a_venv_is_refused_at_plan_time(tmp_path: Path) -> None:
    root = tmp_path / "m"
    open_sandbox(root, "seed-7900xt")
    (root / "home/user/projects").mkdir()
    (root / "home/user/projects/thesis.tex").write_text("\\section{Results}\n")
    plan = plan_toml(tmp_path, "/home/user/projects")
    for extra in (["--dry-run"], ["--yes"]):
        r = wizard(["--sandbox", str(root), "--plan", str(plan), *extra])
        assert r.returncode == 5, r.stdout[-2000:] + r.stderr
        err = one_line(r)
        assert "refused: /home/user/projects exists and is not a Python venv" in err
    assert not (root / "var/lib/rocm-wizard/runs").exists()
    assert sorted(p.name for p in (root / "home/user/projects").iterdir()) == ["thesis.tex"]


def _mkdir_plan(path: str):
    step = StepPlan("groups", "make a directory", actions=(
        Action(("mkdir", "-p", "--", path), f"create {path}", changes=(path,), undo=("rm", "-rf", "--", path)),))
    return plan_of(StepPlan("preflight", "checks"), step)


@pytest.mark.parametrize("existed", [True, False])
def test_rollback_deletes_only_what_the_journal_says_the_run_created(tmp_path: Path, existed: bool) -> None:
    from wizard import machines

    root = tmp_path / "m"
    host = open_sandbox(root, "rx9070xt-noble")
    d = root / "home/user/projects"
    if existed:
        d.mkdir()
        (d / "thesis.tex").write_text("chapter 1\n")
    service = machines.service(machines.sandbox(host, root))
    assert service.start(_mkdir_plan("/home/user/projects"), yes=True).state.value == "done"
    starts = [r for r in journal(root) if r["event"] == "action-start" and r["step"] == 1]
    assert starts[0]["existed" if existed else "absent"] == ["/home/user/projects"]
    _, rb = service.rollback_plan()
    out = service.rollback(yes=True)
    assert out.state.value == "rolled-back"
    if existed:
        assert rb.actions == [] and any("/home/user/projects is kept: it existed before the run" in c for c in rb.cannot)
        assert (d / "thesis.tex").read_text() == "chapter 1\n"
    else:
        assert [a.argv for _, a in rb.actions] == [("rm", "-rf", "--", "/home/user/projects")]
        assert not d.exists()


# ------------------------------------------------------------------ item 4: rollback undoes what ran, no more


def test_pip_only_rollback_never_touches_system_rocm(tmp_path: Path) -> None:
    root = tmp_path / "m"
    open_sandbox(root, "seed-7900xt")  # system ROCm 6.2 installed: the backup manifest names it
    before = end_state(root)
    r = wizard(["--sandbox", str(root), "--plan", "pip-only", "--yes"])
    assert r.returncode == 0, r.stdout[-3000:]
    # a user-only plan keeps its backup in the user's state dir (issue 25)
    backups = root / "home/user/.local/state/rocm-wizard/backup"
    manifest = json.loads(next(backups.glob("*/manifest.json")).read_text())
    assert manifest["rocm"]["version"]
    n = {t: len(calls(root, t)) for t in ("apt-get", "amdgpu-install", "wget", "dpkg")}
    r = wizard(["rollback", "--yes", "--sandbox", str(root)])
    assert r.returncode == 0, r.stdout[-3000:]
    assert {t: len(calls(root, t)) for t in n} == n  # no purge, no download, no reinstall
    after = end_state(root)
    assert after["dpkg"] == before["dpkg"] and after["rocm"] == before["rocm"]
    assert after["venvs"] == before["venvs"]


def test_a_failed_rollback_is_never_called_done(tmp_path: Path) -> None:
    root = tmp_path / "m"
    r = wizard(["--sandbox", str(root), "--profile", "seed-7900xt", "--plan", "downgrade-6.2", "--yes"])
    assert r.returncode == 3, r.stdout[-3000:]
    (root / ".sandbox/fail").mkdir()
    (root / ".sandbox/fail/wget").write_text("\nwget: unable to resolve host address 'repo.radeon.com'\n")
    r = wizard(["rollback", "--yes", "--sandbox", str(root)])
    assert r.returncode == 1, r.stdout[-3000:]
    assert status(root)["state"] == "rollback-failed"
    r = wizard(["resume", "--yes", "--sandbox", str(root)])
    assert r.returncode == 1 and "rollback" in r.stderr and "done" not in r.stdout.lower(), r.stdout + r.stderr
    assert status(root)["state"] == "rollback-failed"


# ------------------------------------------------------------------ item 8: kill -9 mid-rollback


def test_kill9_mid_rollback_is_seen_continued_and_cleans_the_resume_unit(tmp_path: Path) -> None:
    root = tmp_path / "m"
    r = wizard(["--sandbox", str(root), "--profile", "seed-7900xt", "--plan", "downgrade-6.2", "--yes"])
    assert r.returncode == 3, r.stdout[-3000:]
    unit = root / "etc/systemd/system/rocm-wizard-resume.service"
    assert unit.is_file() and (root / "etc/profile.d/rocm-wizard.sh").is_file()
    n = len(journal(root))
    r = wizard(["rollback", "--yes", "--sandbox", str(root)], env={"ROCM_WIZARD_CRASH_AFTER": str(n + 4)})
    assert r.returncode == -signal.SIGKILL
    assert status(root)["state"] == "rolling-back"
    r = wizard(["resume", "--yes", "--sandbox", str(root)])
    assert r.returncode == 1 and "rollback" in r.stderr, r.stdout + r.stderr
    assert status(root)["state"] == "rolling-back"
    r = wizard(["rollback", "--yes", "--sandbox", str(root)])
    assert r.returncode == 0, r.stdout[-3000:]
    assert status(root)["state"] == "rolled-back"
    assert not unit.exists() and not (root / "etc/profile.d/rocm-wizard.sh").exists()
    assert not (root / "var/lib/rocm-wizard/resume-pending").exists()
    assert not (root / "etc/systemd/system/multi-user.target.wants/rocm-wizard-resume.service").exists()


# ------------------------------------------------------------------ item 6c: an edited plan.json


def test_resume_and_rollback_refuse_a_plan_edited_after_the_crash(tmp_path: Path) -> None:
    root = tmp_path / "m"
    r = wizard(["--sandbox", str(root), "--profile", "seed-7900xt", "--plan", "downgrade-6.2", "--yes"],
               env={"ROCM_WIZARD_CRASH_AFTER": "40"})
    assert r.returncode == -signal.SIGKILL
    state = root / "var/lib/rocm-wizard"
    plan_path = state / "runs" / (state / "current").read_text().strip() / "plan.json"
    doc = json.loads(plan_path.read_text())
    doc["plan"]["steps"] = [s for s in doc["plan"]["steps"] if s["kind"] != "backup"]
    plan_path.write_text(json.dumps(doc))
    dpkg = end_state(root)["dpkg"]
    for cmd in ("resume", "rollback"):
        r = wizard([cmd, "--yes", "--sandbox", str(root)])
        assert r.returncode == 1, r.stdout + r.stderr
        assert "changed since run" in one_line(r)
    assert end_state(root)["dpkg"] == dpkg


# ------------------------------------------------------------------ item 10: a resolved-plan JSON as plan file


def test_a_resolved_plan_file_dry_runs_and_keeps_the_backup_first_rule(tmp_path: Path) -> None:
    a = tmp_path / "a"
    r = wizard(["--sandbox", str(a), "--profile", "rx9070xt-noble", "--plan", "upgrade-7.2", "--yes"])
    assert r.returncode == 0, r.stdout[-2000:]
    cur = (a / "var/lib/rocm-wizard/current").read_text().strip()
    good = tmp_path / "good.json"
    good.write_text((a / "var/lib/rocm-wizard/runs" / cur / "plan.json").read_text())
    b = tmp_path / "b"
    r = wizard(["--sandbox", str(b), "--profile", "rx9070xt-noble", "--plan", str(good), "--dry-run"])
    assert r.returncode == 0 and r.stdout.startswith("#!/usr/bin/env bash"), r.stderr
    doc = json.loads(good.read_text())
    doc["plan"]["steps"] = [s for s in doc["plan"]["steps"] if s["kind"] != "backup"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    before = end_state(b)
    for extra in (["--dry-run"], ["--yes"]):
        r = wizard(["--sandbox", str(b), "--plan", str(bad), *extra])
        assert r.returncode == 5, r.stdout[-2000:] + r.stderr
        assert "comes before any backup step" in r.stderr and "Traceback" not in r.stderr
    assert end_state(b) == before and not (b / "var/lib/rocm-wizard/runs").exists()


def test_a_resolved_plan_file_with_a_mistyped_action_is_one_line(tmp_path: Path) -> None:
    root = tmp_path / "m"
    open_sandbox(root, "seed-7900xt")
    plan = plan_of(StepPlan("preflight", "checks"),
                   StepPlan("groups", "g", actions=(Action(("true",), "nothing", check=("false",)),)))
    doc = json.loads(planfile.dumps(plan))
    for key, value in (("root", "yes"), ("argv", "rm -rf /"), ("check", [1]), ("timeout", -1), ("surprise", 1)):
        bad = json.loads(json.dumps(doc))
        bad["plan"]["steps"][1]["actions"][0][key] = value
        f = tmp_path / "bad.json"
        f.write_text(json.dumps(bad))
        for extra in (["--dry-run"], ["--yes"]):
            r = wizard(["--sandbox", str(root), "--plan", str(f), *extra])
            assert r.returncode == 2, (key, r.stdout + r.stderr)
            assert str(f) in one_line(r) and repr(key) in r.stderr, (key, r.stderr)
    assert not (root / "var/lib/rocm-wizard/runs").exists()
