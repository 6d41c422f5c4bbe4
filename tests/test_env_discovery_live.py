"""Environment discovery on the real machine: a real running Python child found through the real /proc
(read, never attached to), and ``detect`` in-process showing how each environment was found."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import venv
from pathlib import Path

import pytest

from wizard.host import BundleHost, LiveHost
from wizard.model import FoundBy
from wizard.probes.python_envs import probe_live_envs

pytestmark = pytest.mark.integration


def torch_venv(path: Path, torch: str = "2.5.1+rocm6.2") -> Path:
    """A real venv (the stdlib's builder, no pip) whose site-packages holds torch's installed files."""
    venv.EnvBuilder(with_pip=False, symlinks=True).create(path)
    site = next(path.glob("lib/python3*/site-packages"))
    (site / f"torch-{torch}.dist-info").mkdir()
    (site / "torch").mkdir()
    (site / "torch" / "version.py").write_text(f"__version__ = '{torch}'\nhip = '6.2.41133-dd7f95766'\ncuda = None\n")
    return path


@pytest.fixture
def sleeper(tmp_path: Path):  # type: ignore[no-untyped-def]
    app = tmp_path / "srv" / "comfy"
    app.mkdir(parents=True)
    env = torch_venv(app / "venv")
    child = subprocess.Popen([str(env / "bin" / "python3"), "-c", "import time; time.sleep(600)"], cwd=app,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield child, env, app
    finally:
        child.kill()
        child.wait(timeout=10)


def test_a_real_running_python_is_found_through_the_real_proc(sleeper, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    child, env, app = sleeper
    home = tmp_path / "home"
    home.mkdir()
    host = LiveHost("/", environ={"HOME": str(home), "PATH": "/nonexistent"})
    deadline = time.monotonic() + 120  # generous: a loaded machine; the fixture kills it after the test
    while not Path(f"/proc/{child.pid}/cmdline").read_bytes().split(b"\0")[0].endswith(b"venv/bin/python3"):
        assert time.monotonic() < deadline, "the child never exec'd the venv's python"
        time.sleep(0.1)
    envs, problems = probe_live_envs(host, [])
    assert not problems
    found = next(e for e in envs if e.path == str(env))
    assert found.torch == "2.5.1+rocm6.2" and found.kind == "venv"
    proc = next(f for f in found.found if f.how is FoundBy.PROCESS)
    assert proc.where == f"pid {child.pid}" and "time.sleep(600)" in (proc.text or "")
    assert proc.app == str(app) and found.in_use
    assert child.poll() is None  # read, not attached to: the child still sleeps


def test_detect_json_and_evidence_say_how_each_env_was_found(capsys: pytest.CaptureFixture[str]) -> None:
    from wizard.cli import main
    from wizard.host import BUILTIN_EXAMPLES

    assert main(["detect", "--json", "--from", str(BUILTIN_EXAMPLES / "seed-7900xt")]) == 0
    doc = json.loads(capsys.readouterr().out)
    env = next(e for e in doc["python_envs"] if e["path"] == "/home/user/pytorch_venv")
    assert env["found"] == [{"how": "folder", "where": "/home/user/pytorch_venv", "text": "pyvenv.cfg", "app": None}]
    assert main(["detect", "--evidence", "--from", str(BUILTIN_EXAMPLES / "seed-7900xt")]) == 0
    out = capsys.readouterr().out
    assert "found" in out and "folder: /home/user/pytorch_venv: pyvenv.cfg" in out


def test_bundle_without_home_but_with_opt_is_searched(tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    torch_venv(bundle / "root" / "opt" / "sdnext" / "venv", "2.6.0+rocm6.2.4")
    (bundle / "lspci.txt").write_text("03:00.0 VGA compatible controller [0300]: AMD [1002:744c]\n")
    from wizard.probes import detect

    envs = {e.path: e for e in detect(BundleHost(bundle)).python_envs}
    assert envs["/opt/sdnext/venv"].torch == "2.6.0+rocm6.2.4"
    assert envs["/opt/sdnext/venv"].app == "/opt/sdnext"


def test_the_wizards_own_process_is_not_counted_as_use() -> None:
    """``rocm-wizard`` started from a torch venv must not mark that venv as in use by itself."""
    host = LiveHost("/", environ={"HOME": "/nonexistent", "PATH": "/nonexistent"})
    envs, _ = probe_live_envs(host, [sys.prefix])
    mine = next(e for e in envs if e.path == sys.prefix)
    assert not [f for f in mine.found if f.how is FoundBy.PROCESS and f.where == f"pid {os.getpid()}"]


def test_a_sandbox_root_is_searched_and_the_real_machine_stays_out(tmp_path: Path) -> None:
    """A rehearsal machine's homes, /opt and units are its own; the real machine's processes are not its."""
    from test_env_discovery import make_env, write

    from wizard.probes import detect
    from wizard.sandbox import open_sandbox

    root = tmp_path / "m"
    open_sandbox(root, "seed-7900xt")
    make_env(root, "/home/user/ComfyUI/venv", "2.5.1+rocm6.2")
    make_env(root, "/srv/sd/venv", "2.6.0+rocm6.2.4")
    write(root, "etc/systemd/system/sd.service", "[Service]\nWorkingDirectory=/srv/sd\nExecStart=/srv/sd/venv/bin/python launch.py\n")
    envs = {e.path: e for e in detect(open_sandbox(root)).python_envs}
    assert envs["/home/user/ComfyUI/venv"].app == "/home/user/ComfyUI"
    assert envs["/srv/sd/venv"].in_use and envs["/srv/sd/venv"].torch == "2.6.0+rocm6.2.4"
    assert envs["/home/user/pytorch_venv"].torch == "2.5.1+rocm6.2"
    assert not [f for e in envs.values() for f in e.found if f.how is FoundBy.PROCESS]


def test_detect_table_and_plan_of_a_recorded_comfyui_machine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI over a bundle laid out as a ComfyUI user's machine: the table says how each environment was
    found, and the plan pins torch beside the venv ComfyUI runs in, naming the ones it leaves alone."""
    from test_env_discovery import HOME, fake_process, lay_out_home, write

    from wizard.cli import main
    from wizard.host import BUILTIN_EXAMPLES

    bundle = tmp_path / "bundle"
    shutil.copytree(BUILTIN_EXAMPLES / "seed-7900xt", bundle)
    shutil.rmtree(bundle / "root" / "home")
    lay_out_home(bundle / "root")
    fake_process(bundle / "root", 4242, "/usr/bin/python3.10", [f"{HOME}/ComfyUI/venv/bin/python", "main.py"],
                 f"{HOME}/ComfyUI")
    write(bundle / "root", "etc/passwd", f"alice:x:1000:1000::{HOME}:/bin/bash\n")
    assert main(["detect", "--from", str(bundle)]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.lstrip().startswith(f"{HOME}/ComfyUI/venv "))
    assert "2.5.1+rocm6.2" in row and "running (pid 4242), app ComfyUI" in row
    assert "app stable-diffusion-webui" in out and "pipx" in out and "uv-tool" in out
    assert main(["--plan", "pip-only", "--dry-run", "--from", str(bundle)]) == 0
    script = capsys.readouterr().out
    assert f"venv {HOME}/ComfyUI/venv-pip-only" in script
    assert f"{HOME}/ComfyUI/venv stays as it is" in script
