"""The standalone export's Ansible modules (wizard/fleet/modules.py): each action shape a step builds that one of
Ansible's own modules expresses becomes that module with the same paths, packages, URLs, modes and content;
every other shape stays an argv command; fleet run's export (rehearsal hosts act through commands only) has no
module that edits a host's files. The verify suite the role copies to the host needs the standard library and
torch only, and its JSON lines are read back as the wizard's own verify JSON is."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest

from wizard.fleet.export import SUITE_FILE, PlanGroup, export
from wizard.fleet.modules import module_task
from wizard.fleet.run import verify_result
from wizard.model import Action
from wizard.planner import resolve_plan
from wizard.steps._common import write_file
from wizard.steps.rocm_install import FETCH_DEB
from wizard.verify.launch import SUITE_PATH

URL = "https://repo.radeon.com/amdgpu-install/6.4.4/ubuntu/jammy/amdgpu-install_6.4.60404-1_all.deb"
DEB = "/var/lib/rocm-wizard/downloads/amdgpu-install_6.4.60404-1_all.deb"
GUARD = ("test", "-d", "/x")

MAPPED = [
    (Action(("mkdir", "-p", "--", "/var/lib/w/downloads"), check=GUARD), "ansible.builtin.file",
     {"path": "/var/lib/w/downloads", "state": "directory", "mode": "0755"}, ()),
    (Action(("mkdir", "-p", "-m", "0700", "--", "/var/lib/w/backup/p"), check=GUARD), "ansible.builtin.file",
     {"path": "/var/lib/w/backup/p", "state": "directory", "mode": "0700"}, ()),
    (Action(("chmod", "0700", "--", "/var/lib/w/backup/p")), "ansible.builtin.file",
     {"path": "/var/lib/w/backup/p", "mode": "0700"}, ()),
    (Action(("chmod", "-R", "go-rwx", "--", "/var/lib/w/backup/p")), "ansible.builtin.file",
     {"path": "/var/lib/w/backup/p", "state": "directory", "recurse": True, "mode": "go-rwx"}, ()),
    (Action(("rm", "-f", "--", "/etc/apt/sources.list.d/rocm.list", "/etc/apt/keyrings/rocm.gpg")),
     "ansible.builtin.file", {"path": "{{ item }}", "state": "absent"},
     ("/etc/apt/sources.list.d/rocm.list", "/etc/apt/keyrings/rocm.gpg")),
    (Action(("rm", "-rf", "--", "/opt/rocm-6.2.0")), "ansible.builtin.file", {"path": "{{ item }}", "state": "absent"},
     ("/opt/rocm-6.2.0",)),
    (write_file("/etc/apt/sources.list.d/amdrocm.sources", "Types: deb\nURIs: {{ not a template }}\n", "src", root=True),
     "ansible.builtin.copy", {"content": "Types: deb\nURIs: {{ not a template }}\n",
                              "dest": "/etc/apt/sources.list.d/amdrocm.sources", "mode": "0644"}, ()),
    (Action(("apt-get", "-y", "purge", "rocm-core", "hip-runtime-amd")), "ansible.builtin.apt",
     {"name": ["rocm-core", "hip-runtime-amd"], "state": "absent", "purge": True}, ()),
    (Action(("apt-get", "install", "-y", "rocm", "amdgpu-dkms=1:6.10.5")), "ansible.builtin.apt",
     {"name": ["rocm", "amdgpu-dkms=1:6.10.5"], "state": "present"}, ()),
    (Action(("apt-get", "install", "-y", DEB)), "ansible.builtin.apt", {"deb": DEB}, ()),
    (Action(("apt-get", "update")), "ansible.builtin.apt", {"update_cache": True}, ()),
    (Action(("wget", "-q", "-O", "/var/lib/w/key.asc", "https://repo.amd.com/rocm/key.asc")), "ansible.builtin.get_url",
     {"url": "https://repo.amd.com/rocm/key.asc", "dest": "/var/lib/w/key.asc", "mode": "0644", "force": True}, ()),
    (Action(("sh", "-c", FETCH_DEB, "sh", DEB, URL)), "ansible.builtin.get_url",
     {"url": URL, "dest": DEB, "mode": "0644", "force": True}, ()),
    (Action(("wget", "-q", "--spider", URL), timeout=120), "ansible.builtin.uri",
     {"url": URL, "method": "HEAD", "timeout": 120}, ()),
    (Action(("usermod", "-a", "-G", "render,video", "user")), "ansible.builtin.user",
     {"name": "user", "groups": ["render", "video"], "append": True}, ()),
]

COMMANDS = [
    Action(("mkdir", "-p", "--", "/var/lib/w/downloads")),  # no guard: the module would chmod an existing directory
    Action(("apt-get", "-f", "install", "-y")),  # apt's repair of broken dependencies: no module does it without names
    Action(("apt-get", "-s", "purge", "rocm-core")),  # the simulation
    Action(("apt-get", "install", "-y", "$(uname -r)")),  # not a package name
    Action(("apt-get", "-y", "purge", "--auto-remove", "rocm-core")),  # an option the mapping does not carry
    Action(("rm", "-f", "--", "relative/path")),
    Action(("chmod", "u+s,g=x", "--", "/x")),  # not one symbolic mode the mapping reads
    Action(("wget", "-q", "-O", "/var/lib/w/key.asc", "ftp://host/key")),
    Action(("tar", "-czf", "/var/lib/w/b.tar.gz", "-C", "/", "etc/apt")),  # makes an archive: no builtin module
    Action(("python3", "-m", "venv", "/home/u/venv")),
    Action(("apt-get", "update"), ok_codes=(0, 100)),  # accepted exit codes are a command's
    Action(("sh", "-c", FETCH_DEB, "sh", DEB, URL), redact=(5,)),  # a redacted argv stays a no_log command
]


@pytest.mark.unit
@pytest.mark.parametrize("action, module, args, loop", MAPPED, ids=[m[0].argv[0] + "-" + m[1] for m in MAPPED])
def test_an_action_a_module_expresses_is_that_module(action: Action, module: str, args: dict, loop: tuple) -> None:
    mt = module_task(action)
    assert mt is not None
    assert (mt.module, mt.args, mt.loop) == (module, args, loop)


@pytest.mark.unit
@pytest.mark.parametrize("action", COMMANDS, ids=[" ".join(a.argv)[:40] for a in COMMANDS])
def test_any_other_action_stays_a_command(action: Action) -> None:
    assert module_task(action) is None


@pytest.mark.unit
def test_a_written_file_gets_its_directory_first_and_apt_goes_on_in_check_mode() -> None:
    mt = module_task(write_file("/etc/apt/preferences.d/rocm-pin-600", "Pin: x\n", "pin", root=True))
    assert mt is not None and mt.parent == "/etc/apt/preferences.d" and mt.check_mode_fails
    assert all(m.check_mode_fails for a, name, _args, _l in MAPPED if name == "ansible.builtin.apt"
               for m in [module_task(a)] if m is not None)


def _machine():  # type: ignore[no-untyped-def]
    from test_plan_golden import machines

    return machines()["seed-7900xt"]


def _tasks(out: Path) -> list[dict]:
    yaml = pytest.importorskip("yaml")

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))
    tasks: list[dict] = []
    for p in sorted((out / "roles").glob("*/tasks/*.yml")):
        tasks += yaml.load(p.read_text(), Loader=Loader) or []
    return tasks


HOST_SIDE_EFFECT_FREE = {"ansible.builtin.command", "ansible.builtin.reboot", "ansible.builtin.assert",
                         "ansible.builtin.debug", "ansible.builtin.set_fact", "ansible.builtin.set_stats",
                         "ansible.builtin.include_tasks", "ansible.builtin.shell"}


@pytest.mark.integration
def test_fleet_runs_export_acts_on_hosts_through_commands_only_and_the_standalone_one_through_modules(
        tmp_path: Path) -> None:
    rp = resolve_plan("upgrade-6.4", _machine(), state_dir="/var/lib/rocm-wizard", wizard_python="python3")
    export([PlanGroup(rp)], tmp_path / "run", modules=False)
    export([PlanGroup(rp)], tmp_path / "alone")

    def host_modules(tasks: list[dict]) -> set[str]:
        return {k for t in tasks if t.get("delegate_to") != "localhost" for k in t if k.startswith("ansible.builtin.")}

    assert host_modules(_tasks(tmp_path / "run")) <= HOST_SIDE_EFFECT_FREE  # the sandbox connection's contract
    assert not (tmp_path / "run" / "roles" / "rocm_wizard_upgrade_6_4" / "files").exists()
    alone = host_modules(_tasks(tmp_path / "alone"))
    assert {"ansible.builtin.apt", "ansible.builtin.file", "ansible.builtin.copy", "ansible.builtin.get_url",
            "ansible.builtin.uri", "ansible.builtin.tempfile"} <= alone


@pytest.mark.integration
def test_standalone_verify_copies_the_suite_file_and_runs_it_with_the_venvs_python(tmp_path: Path) -> None:
    rp = resolve_plan("upgrade-6.4", _machine(), state_dir="/var/lib/rocm-wizard", wizard_python="python3")
    export([PlanGroup(rp)], tmp_path / "out")
    role = tmp_path / "out" / "roles" / "rocm_wizard_upgrade_6_4"
    assert (role / "files" / SUITE_FILE).read_bytes() == SUITE_PATH.read_bytes()
    tasks = _tasks(tmp_path / "out")
    copy = next(t for t in tasks if t.get("ansible.builtin.copy", {}).get("src") == SUITE_FILE)
    run = next(t for t in tasks if t["name"].startswith("Step 10/10 verify: run the suite"))
    argv = run["ansible.builtin.command"]["argv"]
    venv_python = next(s for s in rp.steps if s.kind == "verify").actions[0].argv[5]
    assert argv[0] == venv_python and argv[1] == copy["ansible.builtin.copy"]["dest"] and "--json" in argv
    assert "wizard" not in argv and "-m" not in argv  # nothing of the wizard on the host
    assert copy["become_user"] == run["become_user"]  # the GPU user's copy, run as the GPU user
    cleanup = tasks[tasks.index(run) + 1]
    assert cleanup["ansible.builtin.file"]["state"] == "absent"


@pytest.mark.unit
def test_the_suite_needs_the_standard_library_and_torch_only() -> None:
    names = set()
    for node in ast.walk(ast.parse(SUITE_PATH.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names.add((node.module or "").split(".")[0])
    assert names - set(sys.stdlib_module_names) - {"__future__"} == {"torch"}


@pytest.mark.integration
def test_the_suites_own_json_lines_are_read_as_the_verify_result(tmp_path: Path) -> None:
    path = tmp_path / "verify.json"
    lines = [{"type": "suite", "schema": 1}, {"type": "check", "name": "import", "device": "cpu", "status": "pass"},
             {"type": "check", "name": "matmul", "device": "cuda:0", "status": "fail", "error": "wrong numbers"},
             {"type": "summary"}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert verify_result(path) == {"status": "fail", "checks": 2, "findings": ["matmul: fail: wrong numbers"]}
    path.write_text("".join(json.dumps(x) + "\n" for x in lines[:2]))
    assert verify_result(path)["status"] == "pass"
    path.write_text("")  # the suite said nothing: never a pass
    assert verify_result(path)["status"] == "fail"
    path.write_text('{"type": "suite"}\nTraceback (most recent call last):\n')
    assert verify_result(path)["status"] == "fail"


@pytest.mark.integration
def test_a_standalone_export_refuses_a_sandbox_host_before_anything_runs(tmp_path: Path) -> None:
    """The sandbox connection contains commands only: the standalone export's modules would change the
    controller's own files, so its play stops such a host first (outside --check); fleet run's export has no
    module and no such refusal."""
    import os
    import shutil
    import subprocess

    playbook = shutil.which("ansible-playbook", path=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    if playbook is None:
        pytest.skip("ansible-core is not installed (pip install -e '.[fleet]')")
    from wizard.fleet import realroots

    rp = resolve_plan("pip-only", _machine(), state_dir=str(tmp_path / "state"), wizard_python="python3")
    book = export([PlanGroup(rp)], tmp_path / "alone")
    assert "rocm-wizard sandbox" not in export([PlanGroup(rp)], tmp_path / "run", modules=False).read_text()
    inv = tmp_path / "inventory.ini"
    inv.write_text(f"h1 ansible_connection=rocm_wizard_sandbox rocm_wizard_sandbox_root={tmp_path / 'nowhere'} "
                   f"ansible_python_interpreter={sys.executable}\n")
    env = {**os.environ, "ANSIBLE_HOME": str(tmp_path / ".ansible"), "HOME": str(tmp_path / "home"),
           "ANSIBLE_LOCAL_TEMP": str(tmp_path / ".tmp"),
           "ANSIBLE_CONNECTION_PLUGINS": str(Path(realroots.__file__).parent / "plugins" / "connection")}
    res = subprocess.run([playbook, "-i", str(inv), str(book), "-e", "rocm_wizard_hosts=all"], capture_output=True,
                         text=True, timeout=300, env=env)
    assert res.returncode != 0 and "h1 is a rocm-wizard sandbox" in res.stdout, res.stdout[-3000:]
    assert "Put the host into its plan group" not in res.stdout and not (tmp_path / "state").exists()
