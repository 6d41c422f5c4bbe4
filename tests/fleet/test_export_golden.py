"""The Ansible export (``--plan NAME --export ansible DIR``): every shipped plan on two machines of the
plan goldens (the seed 7900 XT pair on 22.04, an RX 9070 XT on 24.04 with nothing installed) -> the
expected playbook and role (or refusal), and ``ansible-playbook --syntax-check`` on every one.

Regenerate after an intended change: ``ROCM_WIZARD_UPDATE_GOLDEN=1 pytest tests/fleet/test_export_golden.py``
and review the diff of tests/fleet/golden/.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wizard import binding
from wizard.fleet.export import ExportError, PlanGroup, export
from wizard.fleet.modules import module_task
from wizard.model import Facts
from wizard.plan_file import builtin_plan_names
from wizard.planner import PlanRefused, resolve_plan
from wizard.script import machine_summary

pytestmark = pytest.mark.integration

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE = os.environ.get("ROCM_WIZARD_UPDATE_GOLDEN") == "1"
MACHINES = ("seed-7900xt", "rx9070xt-noble-fresh")
CASES = [(m, p) for m in MACHINES for p in builtin_plan_names()]


def unlocked(argv: list[str]) -> tuple[str, ...]:
    """A command's argv without the wizard's lock around it (``sh -c {{ ROLE_lock }} rocm-wizard-lock MODE ...``)."""
    return tuple(argv[5:] if argv[3:4] == ["rocm-wizard-lock"] else argv)


def facts(machine: str) -> Facts:
    from test_plan_golden import machines

    return machines()[machine]


def exported(machine: str, plan: str, out: Path) -> tuple[str, str]:
    """('yml', every written file, each under a '# ==== path' line) or ('refused', one reason a line)."""
    f = facts(machine)
    try:
        rp = resolve_plan(plan, f, state_dir="/var/lib/rocm-wizard", wizard_python="python3")
    except PlanRefused as exc:
        return "refused", "".join(f"{r}\n" for r in exc.reasons)
    export([PlanGroup(rp, machine=tuple(machine_summary(f)))], out)
    text = "".join(f"# ==== {p.relative_to(out)}\n{p.read_text()}" for p in sorted(out.rglob("*.yml"))
                   if "plan_vars" not in p.parts)  # the plan as data: tests/fleet/test_collection.py
    return "yml", text


@pytest.mark.parametrize("machine, plan", CASES)
def test_export_golden(machine: str, plan: str, tmp_path: Path) -> None:
    kind, text = exported(machine, plan, tmp_path / "out")
    path = GOLDEN / machine / f"{plan}.{kind}"
    other = GOLDEN / machine / f"{plan}.{'refused' if kind == 'yml' else 'yml'}"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        other.unlink(missing_ok=True)
        return
    assert path.exists(), f"no golden {path}; run with ROCM_WIZARD_UPDATE_GOLDEN=1 and review"
    assert text == path.read_text(), f"{machine}/{plan} differs from {path} (ROCM_WIZARD_UPDATE_GOLDEN=1 to update)"


@pytest.mark.parametrize("machine, plan", CASES)
def test_each_task_is_written_once(machine: str, plan: str, tmp_path: Path) -> None:
    """No task of the export appears twice across its files (an action's own tasks, the suite's temporary directory,
    once inside its step; the tasks outside a step's block, verify's results directory, once ahead of it)."""
    yaml = pytest.importorskip("yaml")
    if exported(machine, plan, tmp_path / "out")[0] != "yml":
        pytest.skip("the plan is refused on this machine")
    names = [t["name"] for p in sorted((tmp_path / "out" / "roles").rglob("*.yml"))
             for t in yaml.safe_load(p.read_text()) or [] if isinstance(t, dict) and "name" in t]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})


def test_both_machines_export_some_plans_and_refuse_others() -> None:
    kinds = {(m, p.suffix) for m in MACHINES for p in (GOLDEN / m).iterdir()}
    assert {(m, ".yml") for m in MACHINES} <= kinds
    assert any(suffix == ".refused" for _m, suffix in kinds)  # a refusal is written as such, not exported


def test_every_export_passes_ansible_syntax_check(tmp_path: Path) -> None:
    playbook = shutil.which("ansible-playbook", path=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    if playbook is None:
        pytest.skip("ansible-core is not installed (pip install -e '.[fleet]')")
    books = []
    for machine, plan in CASES:
        out = tmp_path / machine / plan
        if exported(machine, plan, out)[0] == "yml":
            books.append(str(out / f"{plan}.yml"))
    assert len(books) >= 6
    env = {**os.environ, "ANSIBLE_HOME": str(tmp_path / ".ansible"), "ANSIBLE_LOCAL_TEMP": str(tmp_path / ".tmp"),
           "HOME": str(tmp_path)}
    res = subprocess.run([playbook, "-i", "localhost,", "-e", "rocm_wizard_hosts=all", "--syntax-check", *books], capture_output=True, text=True,
                         env=env, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]


def test_every_export_passes_ansible_lint(tmp_path: Path) -> None:
    """ansible-lint (production profile) on one export per machine: beside this interpreter, on PATH, or
    ROCM_WIZARD_ANSIBLE_LINT (it is not a dependency of the wizard: pip install ansible-lint)."""
    lint = os.environ.get("ROCM_WIZARD_ANSIBLE_LINT") or shutil.which(
        "ansible-lint", path=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    if not lint:
        pytest.skip("ansible-lint is not installed (pip install ansible-lint, or ROCM_WIZARD_ANSIBLE_LINT=PATH)")
    for machine in MACHINES:
        out = tmp_path / machine
        assert exported(machine, "upgrade-6.4", out)[0] == "yml"
        subprocess.run(["git", "init", "-q", str(out)], check=True, timeout=60)  # ansible-lint's project root
        res = subprocess.run([lint, "--offline", "--nocolor", "upgrade-6.4.yml"], cwd=out, capture_output=True,
                             text=True, timeout=600, env={**os.environ, "HOME": str(tmp_path / "home")})
        assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]


def test_every_action_is_its_module_or_an_argv_command_with_become_only_for_root(tmp_path: Path) -> None:
    """Read the role back as YAML: each action is the Ansible module that expresses it (wizard.fleet.modules) or
    an argv command, never a shell string; become exactly on the root actions; each done-check a guard that runs
    in check mode and never counts as a change; the preflight runs in check mode too."""
    yaml = pytest.importorskip("yaml")
    f = facts("seed-7900xt")
    rp = resolve_plan("downgrade-6.2", f, state_dir="/var/lib/rocm-wizard", wizard_python="python3")
    export([PlanGroup(rp)], tmp_path / "out")
    (role,) = (tmp_path / "out" / "roles").iterdir()
    tasks = yaml.safe_load((role / "tasks" / "main.yml").read_text())
    # each step behind one include; the steps that run only while unfinished behind one more (steps-A-B.yml)
    blocks = [t for outer in tasks if "ansible.builtin.include_tasks" in outer
              for t in (yaml.safe_load((role / "tasks" / outer["ansible.builtin.include_tasks"]).read_text())
                        if isinstance(outer["ansible.builtin.include_tasks"], str) else [outer])]
    expected = [s for s in rp.steps if not s.skipped_reason]
    assert [b["tags"][1] for b in blocks] == [s.kind for s in expected]
    modules: set[str] = set()
    for block, step in zip(blocks, expected):
        inc = block["ansible.builtin.include_tasks"]
        assert inc["apply"]["tags"] == block["tags"]
        body = yaml.safe_load((role / "tasks" / inc["file"]).read_text())
        assert not any("ansible.builtin.shell" in t or "shell" in t for t in body)
        if step.reboot:
            assert body[0]["ansible.builtin.reboot"]["reboot_timeout"] > 0
            continue
        if step.kind == "verify":
            continue  # the suite file run on the host: test_verify_runs_the_suite_file_copied_to_the_host
        actions = [a for a in step.actions if a.name != binding.NAME]  # the machine binding: an assert per host
        titles = {f"{a.name or a.description or a.argv[0]}" for a in actions}
        runs = [t for t in body if t["name"].split(": ", 1)[1] in titles and not t["name"].endswith("?")]
        assert len(runs) == len(actions), [t["name"] for t in runs]
        for t, a in zip(runs, actions):
            mt = module_task(a)
            if mt is not None:
                assert t[mt.module] == mt.args and "ansible.builtin.command" not in t and "changed_when" not in t
                modules.add(mt.module)
            else:
                assert unlocked(t["ansible.builtin.command"]["argv"]) == a.argv
            if step.kind == "preflight":
                assert t["check_mode"] is False, t["name"]  # read-only: it refuses in --check as for real
            if a.as_user:  # the GPU user's, through become_user when one is named (an admin connects)
                assert "rocm_wizard_gpu_user" in t["become"] and "rocm_wizard_gpu_user" in t["become_user"], t["name"]
            else:
                assert t.get("become", False) is a.root, t["name"]
            if a.check:
                guard = next(g for g in body if g.get("register") == f"{t['register']}_done")
                assert tuple(guard["ansible.builtin.command"]["argv"]) == a.check
                assert guard["check_mode"] is False and guard["changed_when"] is False
                assert f"{guard['register']}.rc != 0" in ([t["when"]] if isinstance(t["when"], str) else t["when"])
    assert {"ansible.builtin.file", "ansible.builtin.copy", "ansible.builtin.apt", "ansible.builtin.get_url"} <= modules
    kinds = [b["tags"][1] for b in blocks]
    first_destructive = next(i for i, s in enumerate(expected) if any(a.destructive for a in s.actions))
    assert kinds.index("backup") < first_destructive


def test_export_refuses_a_directory_that_is_not_an_export(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    rp = resolve_plan("pip-only", facts("seed-7900xt"), state_dir="/var/lib/rocm-wizard", wizard_python="python3")
    with pytest.raises(ExportError, match="not an earlier rocm-wizard export"):
        export([PlanGroup(rp)], tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def _as_cmd_strings(out: Path) -> None:
    """Every argv command of an export rewritten as the ``cmd:`` string ansible-lint reads (it does not inspect
    ``argv``): the same command, shlex-quoted."""
    import shlex

    yaml = pytest.importorskip("yaml")

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))

    def walk(x: object) -> None:
        if isinstance(x, dict):
            c = x.get("ansible.builtin.command")
            if isinstance(c, dict) and isinstance(c.get("argv"), list):
                x["ansible.builtin.command"] = {"cmd": shlex.join(unlocked(c["argv"]))}  # the command the lock runs
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    for p in out.rglob("*.yml"):
        doc = yaml.load(p.read_text(), Loader=Loader)
        walk(doc)
        p.write_text("---\n" + yaml.safe_dump(doc, sort_keys=False, width=10000))


def test_the_commands_left_are_those_no_builtin_module_does(tmp_path: Path) -> None:
    """ansible-lint's command-instead-of-module rule on the export's commands as it would read them (``cmd:``):
    the command-only export (fleet run's) has apt-get installs, purges, updates and wget downloads a module does;
    the standalone export has left only apt's simulation and its repair of broken dependencies (no module does
    either with no package named) and the backup's tar (an archive made: no builtin module)."""
    lint = os.environ.get("ROCM_WIZARD_ANSIBLE_LINT") or shutil.which(
        "ansible-lint", path=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    if not lint:
        pytest.skip("ansible-lint is not installed (pip install ansible-lint, or ROCM_WIZARD_ANSIBLE_LINT=PATH)")
    rp = resolve_plan("upgrade-6.4", facts("seed-7900xt"), state_dir="/var/lib/rocm-wizard", wizard_python="python3")
    found: dict[bool, list[str]] = {}
    for modules in (False, True):
        out = tmp_path / str(modules)
        export([PlanGroup(rp)], out, modules=modules)
        _as_cmd_strings(out)
        subprocess.run(["git", "init", "-q", str(out)], check=True, timeout=60)
        res = subprocess.run([lint, "--offline", "--nocolor", "-f", "pep8", "upgrade-6.4.yml"], cwd=out,
                             capture_output=True, text=True, timeout=600, env={**os.environ, "HOME": str(tmp_path / "h")})
        found[modules] = sorted(ln.split("command-instead-of-module: ", 1)[1].split(" used in place")[0]
                                for ln in res.stdout.splitlines() if "command-instead-of-module: " in ln)
    assert found[False].count("apt-get") > found[True].count("apt-get") and "wget" in found[False]
    assert found[True] == ["apt-get", "apt-get", "apt-get", "tar", "tar"], found
    yaml = pytest.importorskip("yaml")
    left = [t["ansible.builtin.command"]["cmd"] for p in (tmp_path / "True" / "roles").rglob("*.yml")
            for t in yaml.safe_load(p.read_text()) or [] if "ansible.builtin.command" in t]
    assert sorted(c.split()[1] for c in left if c.startswith("apt-get ")) == ["-f", "-f", "-s"]
