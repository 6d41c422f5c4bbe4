"""Second security review, B1 (and B11): nothing from a machine, a plan file or a flag is ever template code in
an exported playbook. Every attack writes a marker file through ``lookup('pipe', ...)`` if Ansible renders it;
the exports are run through a real ``ansible-playbook --check`` against a sandbox host (the wizard's own
connection plugin), as the review did, and no marker may appear."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wizard.fleet.export import ExportError, PlanGroup, export
from wizard.model import ResolvedPlan
from wizard.planner import resolve_plan
from wizard.record import replace
from wizard.runner import planfile

# tiers per test: the slow real-tool runs are system (python -m pytest -m system)

SEED = "seed-7900xt"


def jinja(marker: str) -> str:
    """A template that writes ``marker`` (relative: beside the playbook) if it is ever rendered; no white space,
    no slash, so it fits a directory name and a URL."""
    return "{{lookup('pipe','id>%s')}}" % marker


def wizard(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wizard", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600, env={**os.environ, "HOME": str(cwd / "home")})


def seed_plan() -> ResolvedPlan:
    from test_plan_golden import machines

    return resolve_plan("pip-only", machines()[SEED], state_dir="/var/lib/rocm-wizard", wizard_python="python3")


def markers(base: Path) -> list[str]:
    return sorted(str(p) for p in base.rglob("pwn-*"))


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Four exports from a sandbox whose user's venv directory is named with a template (a host fact):
    the shipped plan as is, a plan TOML with a template in its venv and a step title, a template in a
    ``--mirror`` URL, and a plan whose name is a template (built in-process from the same host: the loaders refuse
    such a name)."""
    base = tmp_path_factory.mktemp("exports")
    host = base / "h1"
    res = wizard("--sandbox", str(host), "--profile", SEED, "detect", "--json", cwd=base)
    assert res.returncode == 0, res.stderr
    home = host / "home" / "user"
    (home / "pytorch_venv").rename(home / ("v" + jinja("pwn-host")))
    out: dict[str, Path] = {"base": base, "host": host}
    res = wizard("--sandbox", str(host), "--plan", "pip-only", "--export", "ansible", str(base / "fact"), cwd=base)
    assert res.returncode == 0, res.stderr
    out["fact"] = base / "fact" / "pip-only.yml"
    toml = base / "jinja.toml"
    toml.write_text(
        'title = "Pin %s"\nwhy = "w"\n[target]\nstream = "pip"\ntorch = "newest"\nindex = "auto"\n'
        'venv = "/home/user/%s"\n[[steps]]\nkind = "backup"\ntitle = "Keep %s"\n[[steps]]\nkind = "pip_pin"\n'
        '[[steps]]\nkind = "env"\n' % (jinja("pwn-title"), jinja("pwn-venv"), jinja("pwn-step")))
    res = wizard("--sandbox", str(host), "--plan", str(toml), "--export", "ansible", str(base / "toml"), cwd=base)
    assert res.returncode == 0, res.stderr
    out["toml"] = base / "toml" / "jinja.yml"
    res = wizard("--sandbox", str(host), "--mirror", "download.pytorch.org=https://mirror.example/" + jinja("pwn-url"),
                 "--plan", "pip-only", "--export", "ansible", str(base / "mirror"), cwd=base)
    assert res.returncode == 0, res.stderr
    out["mirror"] = base / "mirror" / "pip-only.yml"
    from wizard.probes import detect
    from wizard.sandbox import open_sandbox

    # resolved from the host the playbook runs on: a plan is bound to its machine (its kernel included)
    plan = resolve_plan("pip-only", detect(open_sandbox(host)), state_dir="/var/lib/rocm-wizard",
                        wizard_python="python3")
    out["name"] = export([PlanGroup(replace(plan, name="n" + jinja("pwn-name"), title=jinja("pwn-ptitle")))],
                         base / "name")
    return out


@pytest.mark.integration
def test_every_templated_string_of_machine_text_is_unsafe(exports: dict[str, Path]) -> None:
    """Read back as YAML: every string that holds one of the attacks' templates carries ``!unsafe``."""
    yaml = pytest.importorskip("yaml")

    class Unsafe(str):
        pass

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!unsafe", lambda loader, node: Unsafe(loader.construct_scalar(node)))
    found: list[str] = []

    def walk(v: object) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                walk(k)
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, str) and "lookup(" in v:
            assert isinstance(v, Unsafe), v
            found.append(v)

    for key in ("fact", "toml", "mirror", "name"):
        for f in exports[key].parent.rglob("*.yml"):
            walk(yaml.load(f.read_text(), Loader=Loader))
    # the titles are in the roles' comments only, and in plan_vars/ as data (!unsafe)
    assert {m for m in ("pwn-host", "pwn-title", "pwn-venv", "pwn-step", "pwn-url", "pwn-name", "pwn-ptitle")
            if any(m in v for v in found)} == {"pwn-host", "pwn-venv", "pwn-step", "pwn-url", "pwn-name", "pwn-title",
                                               "pwn-ptitle"}


@pytest.mark.system
@pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox connection needs root (unshare --mount)")
def test_ansible_playbook_check_renders_nothing(exports: dict[str, Path]) -> None:
    """``ansible-playbook --check`` of all four exports against the sandbox host: every play runs, the task
    names come back literally, and no template ran (no marker file anywhere)."""
    playbook = shutil.which("ansible-playbook", path=os.path.dirname(sys.executable))
    if playbook is None:
        pytest.skip("ansible-core is not installed (pip install -e '.[fleet]')")
    from wizard.fleet.ansible_run import environment

    base = exports["base"]
    inv = base / "inventory.ini"
    inv.write_text(f"h1 ansible_connection=rocm_wizard_sandbox rocm_wizard_sandbox_root={exports['host']} "
                   f"ansible_python_interpreter={sys.executable}\n")
    events = base / "events.jsonl"
    env = {**environment(base / "fleet", events), "HOME": str(base / "home"),
           "ANSIBLE_REMOTE_TEMP": str(exports["host"] / "ansible-tmp")}  # inside the sandbox: a copy task stages there
    books = [str(exports[k]) for k in ("fact", "toml", "name", "mirror")]  # the mirror's refusal last (below)
    res = subprocess.run([playbook, "-i", str(inv), "-e", "rocm_wizard_hosts=all", "--check", *books], capture_output=True, text=True, env=env,
                         cwd=base, timeout=900)
    assert markers(base) == [], res.stdout[-3000:]
    records = [json.loads(line) for line in events.read_text().splitlines() if line.strip()]
    # --check runs the read-only preflight: the hostile mirror (a URL holding a template, never rendered) cannot be
    # read, so that export's preflight refuses the host there, as a real run would; nothing else fails
    failed = [r["task"].split(" : ")[-1] for r in records if r.get("status") in ("failed", "unreachable")]
    assert res.returncode == 0 or failed == ["Step 1/6 preflight: wheel"], res.stdout[-3000:] + res.stderr[-2000:]
    names = [r.get("task", "") for r in records]
    for marker in ("pwn-host", "pwn-venv"):  # (block and play names are not events)
        assert any(jinja(marker) in n for n in names), marker
    # the mirror's URL comes back literally in its preflight's refusal (or, where it could be read, in task names)
    assert any(jinja("pwn-url") in r.get("task", "") + r.get("message", "") for r in records)


@pytest.mark.integration
def test_a_host_name_or_requirement_is_never_written_into_a_conditional(tmp_path: Path) -> None:
    plan = seed_plan()
    for hosts in (("a'] or lookup('pipe','id') or ['",), ("../../x",), ("h1", "h{{2}}")):
        with pytest.raises(ExportError, match="not a name an export can hold"):
            export([PlanGroup(plan, hosts=hosts)], tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.integration
def test_a_resolved_plan_name_is_a_plan_name(tmp_path: Path) -> None:
    """B10 and B11: a resolved-plan JSON whose name is shell text, a path or a template is refused (it became
    the dry-run script's progress path and the export's file name); so is a relative state_dir."""
    plan = seed_plan()
    good = json.loads(planfile.dumps(plan))
    for name in ('x$(touch pwn-name)"; touch pwn-name2; "', "../../../../tmp/pwn-exportpath", jinja("pwn"), ""):
        doc = {**good, "plan": {**good["plan"], "name": name}}
        f = tmp_path / "p.json"
        f.write_text(json.dumps(doc))
        with pytest.raises(planfile.PlanFileError, match="key 'name'"):
            planfile.load(f)
        res = subprocess.run([sys.executable, "-m", "wizard", "--from", SEED, "--plan", str(f), "--dry-run"],
                             capture_output=True, text=True, cwd=tmp_path, timeout=120)
        assert res.returncode != 0 and "key 'name'" in res.stderr and "Traceback" not in res.stderr, res.stderr
        assert len(res.stderr.strip().splitlines()) == 1, res.stderr
        res = subprocess.run([sys.executable, "-m", "wizard", "--from", SEED, "--plan", str(f), "--export", "ansible",
                              str(tmp_path / "exp")], capture_output=True, text=True, cwd=tmp_path, timeout=120)
        assert res.returncode != 0 and not (tmp_path / "exp").exists()
    assert markers(tmp_path) == [] and not (tmp_path / "tmp").exists()
    doc = {**good, "plan": {**good["plan"], "state_dir": "rel/$(id)"}}
    with pytest.raises(planfile.PlanFileError, match="state_dir"):
        planfile.loads(json.dumps(doc))


@pytest.mark.integration
def test_a_resolved_plan_file_is_bounded(tmp_path: Path) -> None:
    """B11: a huge or deeply nested JSON plan is one line, not minutes or an internal error."""
    with pytest.raises(planfile.PlanFileError, match="larger than"):
        planfile.loads('{"format": "%s", "why": "%s"}' % (planfile.FORMAT, "x" * (planfile.MAX_BYTES + 1)))
    with pytest.raises(planfile.PlanFileError, match="nested too deeply"):
        planfile.loads('{"format": "%s", "plan": %s}' % (planfile.FORMAT, "[" * 100_000 + "]" * 100_000))
