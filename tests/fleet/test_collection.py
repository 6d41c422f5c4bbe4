"""The Galaxy collection ``rocm_wizard.fleet`` (``rocm-wizard fleet collection DIR``): built and installed by the real
``ansible-galaxy``, clean under ``ansible-lint --profile production``, and its role run by real ``ansible-playbook``
(local connection, everything under a temporary directory) on a plan given as data: the GPU-idle preflight, the drain
hook before the first change, user actions as the GPU user (become_user), a retried action, the undrain hook after
verify, set_stats, a second run that changes nothing and a drifted step that runs again."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from wizard.fleet.collection import NAME, NAMESPACE, ROLE, VERSION, plan_vars, sources
from wizard.fleet.yaml_text import document
from wizard.model import Action, ResolvedPlan, StepPlan

# tiers per test: the slow real-tool runs are system (python -m pytest -m system)

BIN = os.path.dirname(sys.executable)
GALAXY = shutil.which("ansible-galaxy", path=BIN + os.pathsep + os.environ["PATH"])
needs_ansible = pytest.mark.skipif(GALAXY is None, reason="ansible-core is not installed (pip install '.[fleet]')")


def env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(tmp / "home"), "ANSIBLE_HOME": str(tmp / ".ansible"),
            "ANSIBLE_LOCAL_TEMP": str(tmp / ".tmp"), "ANSIBLE_REMOTE_TEMP": str(tmp / ".rt"), "ANSIBLE_NOCOLOR": "1"}


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wizard", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600, env=env(cwd))


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the tarball `fleet collection` wrote, the collections path ansible-galaxy installed it into)"""
    if GALAXY is None:
        pytest.skip("ansible-core is not installed (pip install '.[fleet]')")
    tmp = tmp_path_factory.mktemp("collection")
    res = cli("fleet", "collection", str(tmp / "dist"), cwd=tmp)
    assert res.returncode == 0, res.stderr
    tarball = Path(res.stdout.strip())
    assert tarball == tmp / "dist" / f"{NAMESPACE}-{NAME}-{VERSION}.tar.gz"
    res = subprocess.run([GALAXY, "collection", "install", str(tarball), "-p", str(tmp / "collections")],
                         capture_output=True, text=True, timeout=300, env=env(tmp))
    assert res.returncode == 0, res.stdout + res.stderr
    return tarball, tmp / "collections"


@pytest.mark.integration
@needs_ansible
def test_the_tarball_is_ansible_galaxys_and_installs(installed: tuple[Path, Path]) -> None:
    tarball, path = installed
    with tarfile.open(tarball) as t:
        names = set(t.getnames())
        manifest = json.load(t.extractfile("MANIFEST.json"))  # type: ignore[arg-type]
    assert {"MANIFEST.json", "FILES.json", "README.md", "meta/runtime.yml", f"roles/{ROLE}/defaults/main.yml",
            f"roles/{ROLE}/meta/argument_specs.yml", "plugins/callback/rocm_wizard_events.py"} <= names
    assert manifest["collection_info"]["namespace"] == NAMESPACE and manifest["collection_info"]["version"] == VERSION
    root = path / "ansible_collections" / NAMESPACE / NAME
    assert (root / "roles" / ROLE / "tasks" / "main.yml").is_file()
    assert "ansible-galaxy collection install" in (root / "README.md").read_text()


@pytest.mark.integration
def test_the_role_holds_no_machine() -> None:
    """Nothing of a recorded machine in the role: no path, user, version or URL; the plan is a variable."""
    text = "".join(t for p, t in sources().items() if p.parts[0] == "roles")
    for literal in ("/home/", "/opt/rocm", "pytorch_venv", "6.4", "download.pytorch.org", "repo.radeon.com", "gfx"):
        assert literal not in text, literal


@pytest.mark.integration
def test_a_bad_output_dir_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    res = cli("fleet", "collection", str(tmp_path / "file"), cwd=tmp_path)
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr


@pytest.mark.integration
@needs_ansible
def test_ansible_lint_production_passes_on_the_collection(tmp_path: Path) -> None:
    lint = os.environ.get("ROCM_WIZARD_ANSIBLE_LINT") or shutil.which("ansible-lint", path=BIN + os.pathsep + os.environ["PATH"])
    if not lint:
        pytest.skip("ansible-lint is not installed (pip install ansible-lint, or ROCM_WIZARD_ANSIBLE_LINT=PATH)")
    src = tmp_path / "src"
    for rel, text in sources(repository="https://example.invalid/rocm-wizard").items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    subprocess.run(["git", "init", "-q", str(src)], check=True, timeout=60)  # ansible-lint's project root
    res = subprocess.run([lint, "--offline", "--nocolor", "--profile", "production"], cwd=src, capture_output=True,
                         text=True, timeout=600, env=env(tmp_path))
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert "production" in res.stdout + res.stderr


def _plan(tmp: Path, shared: Path) -> ResolvedPlan:
    log = str(shared / "log")

    def say(word: str, **kw: object) -> Action:
        return Action(("sh", "-c", f'echo "{word} $(id -un)" >> "$1"', "sh", log), description=word, **kw)  # type: ignore[arg-type]

    marker = str(shared / "made")
    return ResolvedPlan("toy", "a toy plan", "the role on a plan given as data", (), (
        StepPlan("preflight", "Preflight", (say("preflight"),)),
        StepPlan("backup", "Make a file", (say("make"), Action(("touch", marker), "touch", check=("test", "-e", marker))),
                 check=Action(("test", "-e", marker))),
        StepPlan("pip_pin", "As the GPU user", (say("user", as_user=True),
                                                Action(("sh", "-c", f'n=$(cat "$1" 2>/dev/null || echo 0); echo $((n + 1)) > "$1"; '
                                                        '[ "$n" -ge 1 ]', "sh", str(shared / "tries")), "flaky"))),
        StepPlan("verify", "Verify", (Action(("false",), "the suite", requires=("gpu",)),)),
    ), state_dir=str(shared / "home" / "state"))


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder the GPU user can write (pytest's own dirs are 0700), removed after the test."""
    d = Path(tempfile.mkdtemp(prefix="rocm-wizard-collection-"))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.mark.system
@needs_ansible
@pytest.mark.skipif(os.geteuid() != 0, reason="become_user to another account needs root")
def test_the_role_runs_a_plan_as_an_admin_would(installed: tuple[Path, Path], tmp_path: Path, shared: Path) -> None:
    collections = installed[1]
    nobody = pwd.getpwnam("nobody").pw_name
    os.chmod(shared, 0o1777)
    # the plan's state dir is in the GPU user's home (a user's state dir, as a plan with user actions keeps): its
    # root tasks take that lock as the user, its user tasks as themselves (an admin's 0700 dir is none a user task
    # can lock)
    (shared / "home").mkdir(mode=0o755)
    os.chown(shared / "home", pwd.getpwnam("nobody").pw_uid, pwd.getpwnam("nobody").pw_gid)
    (shared / "log").touch()
    os.chmod(shared / "log", 0o666)  # every action appends who ran it, root or the GPU user
    data = plan_vars(_plan(tmp_path, shared))
    flaky = data["rocm_wizard_plan"]["steps"][2]["actions"][1]
    assert flaky["retry"] is False
    flaky["retry"] = True  # a network action's retries, on a command that fails once
    (tmp_path / "plan.yml").write_text(document(data))
    hooks = str(shared / "log")
    (tmp_path / "site.yml").write_text(document([{
        "name": "Toy plan", "hosts": "all", "gather_facts": False, "vars_files": [str(tmp_path / "plan.yml")],
        "roles": [{"role": f"{NAMESPACE}.{NAME}.{ROLE}"}]}]))
    # the host's own python3 (the GPU user cannot run the controller's venv); the modules need only the standard library
    python = shutil.which("python3", path="/usr/bin:/bin") or pytest.skip("no /usr/bin/python3 for the GPU user")
    (tmp_path / "inv.ini").write_text(f"h1 ansible_connection=local ansible_python_interpreter={python} "
                                      "ansible_become_method=su ansible_become_flags='-s /bin/sh'\n")
    extra = {"rocm_wizard_gpu_user": nobody, "rocm_wizard_retry_delay": 0, "rocm_wizard_results": str(tmp_path / "results"),
             "rocm_wizard_unavailable": {"h1": {"gpu": "no GPU here"}},
             "rocm_wizard_drain": f"echo drain >> {hooks}", "rocm_wizard_undrain": f"echo undrain >> {hooks}"}
    e = {**env(tmp_path), "ANSIBLE_COLLECTIONS_PATH": str(collections), "ANSIBLE_SHOW_CUSTOM_STATS": "1",
         "ANSIBLE_PIPELINING": "1"}

    def play() -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(Path(BIN) / "ansible-playbook"), "-i", str(tmp_path / "inv.ini"),
                               str(tmp_path / "site.yml"), "-e", json.dumps(extra)],
                              capture_output=True, text=True, timeout=900, env=e, cwd=tmp_path)

    res = play()
    assert res.returncode == 0, res.stdout[-5000:] + res.stderr[-2000:]
    assert (shared / "log").read_text().splitlines() == [
        "preflight root", "drain", "make root", f"user {nobody}", "undrain"]
    assert (shared / "tries").read_text().strip() == "2"  # failed once, retried
    assert json.loads((tmp_path / "results" / "h1" / "verify.json").read_text()) == {"skipped": "no GPU here"}
    assert (shared / "home" / "state" / "script" / "toy.progress").read_text().split() == ["1", "2", "3"]
    assert "CUSTOM STATS" in res.stdout and "'verify': 'skipped'" in res.stdout.replace('"', "'")

    again = play()  # nothing left: no hook, no action, nothing changed
    assert again.returncode == 0, again.stdout[-5000:]
    assert len((shared / "log").read_text().splitlines()) == 5
    assert "changed=0" in again.stdout.split("PLAY RECAP")[1]

    (shared / "made").unlink()  # drift: step 2's check fails; it runs again, alone, drained
    third = play()
    assert third.returncode == 0, third.stdout[-5000:]
    assert (shared / "log").read_text().splitlines()[5:] == ["drain", "make root", "undrain"]
    assert (shared / "made").exists()
