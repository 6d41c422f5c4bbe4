"""X11: the docker plan can be rehearsed in a sandbox on a machine without a GPU.

The sandbox's stand-ins and its ``sh -c`` left every /dev path as the host's, so the docker step's host checks
(``test -e /dev/kfd``, ``test -d /dev/dri``) looked at this GPU-less VM's /dev, while the sandbox's own machine (the
profile's tree: dev/kfd and dev/dri/renderD* laid in its root) has them. Now the GPU's device nodes (/dev/kfd,
/dev/dri and below) are the sandbox machine's, in every place that maps a path (an argument, a script's text, the
docker stand-in's ``--device``), and nothing else of /dev is: /dev/null, /dev/fd/N and /dev/tty stay the host's.
The docker plan then walks to its end through the engine, ``resume``, the dry-run script and asked again, and
``rollback`` undoes it. Near misses: a profile without the driver loaded reads /dev/kfd absent (never the host's),
/dev/null works as before.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from runner_helpers import calls, wizard

from wizard import exit_codes
from wizard.machine_session import MachineSession, MachineSpec
from wizard.profiles import PROFILES, machine_tree
from wizard.sandbox import machine as m
from wizard.runner import planfile
from wizard.sandbox.standins import SCRIPT_PATH, map_arg, map_script

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("isolated_state")]

LAUNCHER = "home/user/rocm-wizard-docker.sh"
IMAGES = "var/lib/docker/sandbox-images.json"


def _box(tmp_path: Path, profile: str = "seed-7900xt", name: str = "box") -> Path:
    root = tmp_path / name
    r = wizard(["--sandbox", str(root), "--profile", profile, "detect"])
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    return root


def _standin(root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """A stand-in run as the sandbox runs it (its PATH, its root), from outside the root."""
    env = {"PATH": str(root / ".sandbox/bin"), "HOME": str(root / "home/user"), "LANG": "C.UTF-8",
           "ROCM_WIZARD_SANDBOX_ROOT": str(root)}
    return subprocess.run([str(root / ".sandbox/bin" / argv[0]), *argv[1:]], env=env, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=60)


def _run_script(root: Path, script: str) -> subprocess.CompletedProcess[str]:
    """tests/test_script_resume.py's run_script: the script's paths mapped as the sandbox's sh maps them."""
    mapped = SCRIPT_PATH.sub(lambda mo: map_arg(root, mo.group(1)), script)
    env = {"PATH": str(root / ".sandbox/bin"), "HOME": str(root / "home/user"), "LANG": "C.UTF-8",
           "ROCM_WIZARD_SANDBOX_ROOT": str(root)}
    return subprocess.run(["/bin/bash", "-c", mapped], env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=300)


def _images(root: Path) -> list[str]:
    p = root / IMAGES
    return json.loads(p.read_text()) if p.exists() else []


def _pulls(root: Path) -> list[list[str]]:
    return [a for a in calls(root, "docker") if a[:1] == ["pull"]]


# --------------------------------------------------------------------------- the paths mapped


def test_the_gpu_device_nodes_are_the_sandbox_machines(tmp_path: Path) -> None:
    root = tmp_path / "r"
    for path in ("/dev/kfd", "/dev/dri", "/dev/dri/renderD128", "/dev/dri/by-path/pci-0000:03:00.0-render"):
        assert map_arg(root, path) == str(root) + path
    assert map_arg(root, "--device=/dev/kfd") == f"--device={root}/dev/kfd"
    # every node a profile lays is one of them (a new node in profiles.machine_tree must be mapped too)
    for prof in PROFILES.values():
        for rel in machine_tree(prof, driver=True).nodes:
            assert m.gpu_device("/" + rel), rel
            assert map_arg(root, "/" + rel) == str(root / rel)


def test_near_miss_the_rest_of_dev_stays_the_hosts(tmp_path: Path) -> None:
    root = tmp_path / "r"
    for path in ("/dev/null", "/dev/fd/60", "/dev/tty", "/dev/stdin", "/dev", "/dev/kfdx", "/dev/drix", "/dev/shm"):
        assert map_arg(root, path) == path
        assert not m.gpu_device(path)


def test_a_dev_path_that_climbs_out_of_dev_is_the_sandbox_machines(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    # /dev/../etc/passwd is the machine's /etc/passwd: it was left as it was, the host's file (an rm of it too)
    assert map_arg(root, "/dev/../etc/passwd") == str(root / "etc/passwd")
    assert map_arg(root, "/dev/dri/../../home/user/x") == str(root / "home/user/x")
    assert map_arg(root, "/dev/dri/../kfd") == str(root / "dev/kfd")
    assert map_arg(root, "/dev/fd/../null") == "/dev/null"


def test_a_script_maps_the_gpu_nodes_and_leaves_null_and_fd(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    script = ('test -e /dev/kfd && [ -d "/dev/dri" ] && ls /dev/dri/renderD128>/dev/null; exec 3</dev/fd/60; '
              'test -e /dev/kfd;echo "$(ls /dev/dri)" 2>/dev/null </dev/tty')
    out = map_script(root, script, shell=True)
    assert out.count(f"{root}/dev/kfd") == 2 and out.count(f"{root}/dev/dri") == 3
    assert ">/dev/null;" in out and "</dev/fd/60;" in out and "2>/dev/null </dev/tty" in out
    assert SCRIPT_PATH.sub(lambda mo: map_arg(root, mo.group(1)), script).count(f"{root}/dev/") == 5
    # a GPU node spelt so the mapping cannot see it is refused, never the host's
    for odd in ("test -e /dev//kfd", "test -e /dev/./dri", "test -e //dev/kfd"):
        with pytest.raises(m.Escape):
            map_script(root, odd, shell=True)
    map_script(root, "exec 3<//dev/null", shell=True)  # (the rest of /dev as before)


def test_test_and_sh_read_the_sandbox_machines_kfd(tmp_path: Path) -> None:
    root = _box(tmp_path)
    assert (root / "dev/kfd").is_file()
    assert _standin(root, "test", "-e", "/dev/kfd").returncode == 0
    assert _standin(root, "test", "-d", "/dev/dri").returncode == 0
    assert _standin(root, "sh", "-c", "test -e /dev/kfd && test -e /dev/dri/renderD128").returncode == 0
    assert _standin(root, "bash", "-c", "test -e /dev/kfd").returncode == 0
    (root / "dev/kfd").unlink()
    assert _standin(root, "test", "-e", "/dev/kfd").returncode == 1


def test_near_miss_no_driver_reads_kfd_absent_and_null_still_works(tmp_path: Path) -> None:
    root = _box(tmp_path, "rx9070xt-noble-nodriver")
    assert not (root / "dev").exists()
    assert _standin(root, "test", "-e", "/dev/kfd").returncode == 1
    assert _standin(root, "sh", "-c", "test -e /dev/kfd").returncode == 1
    r = _standin(root, "sh", "-c", "echo hidden >/dev/null && cat /dev/null && echo shown 2>/dev/null")
    assert r.returncode == 0 and r.stdout == "shown\n", r.stderr
    assert not (root / "dev").exists()  # nothing was written as /dev/null under the root


# --------------------------------------------------------------------------- the docker stand-in


def test_docker_run_needs_the_devices_it_is_given(tmp_path: Path) -> None:
    root = _box(tmp_path, "rx9070xt-noble-nodriver")
    tag = "img:1"
    m.atomic_write(root / IMAGES, json.dumps([tag]))
    r = _standin(root, "docker", "run", "--rm", "--device=/dev/kfd", "--device", "/dev/dri", tag, "true")
    assert r.returncode == 125
    assert ('docker: Error response from daemon: error gathering device information while adding custom device '
            '"/dev/kfd": no such file or directory') in r.stderr
    # near miss: the machine with the driver has them
    box = _box(tmp_path, name="box2")
    m.atomic_write(box / IMAGES, json.dumps([tag]))
    r = _standin(box, "docker", "run", "--rm", "--device=/dev/kfd", "--device", "/dev/dri:/dev/dri:rwm", tag, "true")
    assert r.returncode == 0, r.stderr


def test_docker_image_inspect_and_rmi_know_which_images_are_there(tmp_path: Path) -> None:
    root = _box(tmp_path)
    r = _standin(root, "docker", "image", "inspect", "img:1")
    assert r.returncode == 1 and "No such image: img:1" in r.stderr
    m.atomic_write(root / IMAGES, json.dumps(["img:1"]))
    assert _standin(root, "docker", "image", "inspect", "img:1").returncode == 0
    assert _standin(root, "docker", "rmi", "img:1").returncode == 0
    assert _images(root) == []
    r = _standin(root, "docker", "rmi", "img:1")
    assert r.returncode == 1 and "No such image: img:1" in r.stderr


# --------------------------------------------------------------------------- the plan walked


def test_the_docker_plan_walks_to_its_end_in_a_sandbox(tmp_path: Path) -> None:
    root = _box(tmp_path)
    first = wizard(["--sandbox", str(root), "--plan", "docker", "--yes"])
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-2000:]
    assert "host: /dev/kfd exists" in first.stdout
    launcher = (root / LAUNCHER).read_text()
    assert "--device=/dev/kfd --device=/dev/dri" in launcher  # the launcher names the machine's own nodes
    tag = _images(root)
    assert len(tag) == 1 and tag[0] in launcher and len(_pulls(root)) == 1
    status = json.loads(wizard(["--sandbox", str(root), "status", "--json"]).stdout)
    assert status["state"] == "done"
    # resume: nothing left to run
    again = wizard(["--sandbox", str(root), "resume", "--yes"])
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    assert len(_pulls(root)) == 1
    # asked again: nothing redone (the image is there, the launcher is the same)
    mtime = (root / LAUNCHER).stat().st_mtime_ns
    asked = wizard(["--sandbox", str(root), "--plan", "docker", "--yes"])
    assert asked.returncode == 0, asked.stdout[-3000:] + asked.stderr[-2000:]
    assert len(_pulls(root)) == 1 and (root / LAUNCHER).stat().st_mtime_ns == mtime
    # rollback undoes the first run: the launcher and the image are gone
    back = wizard(["--sandbox", str(root), "rollback", "--yes"])
    assert back.returncode == 0, back.stdout[-3000:] + back.stderr[-2000:]
    assert not (root / LAUNCHER).exists() and _images(root) == []


def test_the_docker_plans_dry_run_script_walks_to_its_verify_step_and_again_redoes_nothing(tmp_path: Path) -> None:
    root = _box(tmp_path)
    r = wizard(["--sandbox", str(root), "--plan", "docker", "--dry-run"])
    assert r.returncode == 0, r.stderr
    script = r.stdout
    first = _run_script(root, script)
    # every step up to the suite: the host checks read the sandbox's nodes, the image pulled, the launcher written;
    # the suite needs a CPU torch to play the image's (tests/test_docker_sandbox_verify_X11.py runs it), as a
    # venv plan's does: without one nothing was verified, and it says so (it was "the suite stopped before its
    # summary": the docker stand-in ran nothing)
    assert first.returncode != 0
    assert "verify --image needs --verify-python PATH" in first.stderr, first.stdout[-2000:] + first.stderr[-3000:]
    assert "command: test -e /dev/kfd" not in first.stdout + first.stderr
    assert (root / LAUNCHER).is_file() and len(_images(root)) == 1 and len(_pulls(root)) == 1
    mtime = (root / LAUNCHER).stat().st_mtime_ns
    second = _run_script(root, script)
    assert "verify --image needs --verify-python PATH" in second.stderr, second.stderr[-3000:]
    assert len(_pulls(root)) == 1 and (root / LAUNCHER).stat().st_mtime_ns == mtime


def test_near_miss_the_docker_plan_on_a_machine_whose_kfd_went_stops_at_its_host_check(tmp_path: Path) -> None:
    root = _box(tmp_path)
    plan = MachineSession(MachineSpec(sandbox=str(root))).resolve("docker")
    plan_json = tmp_path / "docker.json"
    plan_json.write_text(planfile.dumps(plan))
    (root / "dev/kfd").unlink()  # the driver went away after the plan was made: the check reads the sandbox's node
    r = wizard(["--sandbox", str(root), "--plan", str(plan_json), "--yes"])
    assert r.returncode == exit_codes.FAILURE, r.stdout[-3000:] + r.stderr[-2000:]
    assert "command: test -e /dev/kfd" in r.stdout, r.stdout[-3000:]
    assert _pulls(root) == [] and not (root / LAUNCHER).exists()


def test_near_miss_a_machine_without_the_driver_is_not_offered_the_docker_plan(tmp_path: Path) -> None:
    root = _box(tmp_path, "rx9070xt-noble-nodriver")
    r = wizard(["--sandbox", str(root), "--plan", "docker", "--yes"])
    assert r.returncode != 0 and "run the driver plan first" in r.stderr, r.stdout[-2000:] + r.stderr[-2000:]
    assert _pulls(root) == []


# --------------------------------------------------------------------------- verify --image in a sandbox


def test_verify_image_in_a_sandbox_runs_the_sandboxs_docker_never_the_hosts(tmp_path: Path) -> None:
    root = _box(tmp_path)
    m.atomic_write(root / IMAGES, json.dumps(["img:1"]))
    # /bin/false plays the image's torch: the suite says nothing, and the report says so; what matters here is whose
    # docker ran (it was the host's: "Cannot connect to the Docker daemon ..." on this VM, a real container elsewhere)
    r = wizard(["--sandbox", str(root), "--verify-python", "/bin/false", "verify", "--image", "img:1", "--json"])
    assert r.returncode != 0
    used = calls(root, "docker")
    assert ["info", "--format", "{{.ServerVersion}}"] in used, r.stderr[-2000:]
    run = next(a for a in used if a[:1] == ["run"])
    assert "--device=/dev/kfd" in run and "--device=/dev/dri" in run and "cpu" in run
    assert "Cannot connect to the Docker daemon" not in r.stderr


def test_near_miss_verify_image_in_a_sandbox_without_a_cpu_torch_verifies_nothing(tmp_path: Path) -> None:
    root = _box(tmp_path)
    r = wizard(["--sandbox", str(root), "verify", "--image", "img:1", "--json"])
    assert r.returncode == exit_codes.USAGE, r.stderr
    assert "verify --image needs --verify-python PATH" in r.stderr
    assert calls(root, "docker") == []
