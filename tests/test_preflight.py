"""Preflight is step 0 of every run and is enforced: each failing check stops the run before the first
change (exit 1), the journal shows the failed check and nothing after it, and the sandbox's calls.log
has no purge. Also: the lock wait, --skip-preflight, and the checks' own programs against real
inputs (a local HTTP server for the network checks)."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest
from runner_helpers import PY, REPO, calls, wizard

from wizard import preflight
from wizard.runner import planfile

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


def _journal(root: Path) -> list[dict]:
    cur = (root / "var/lib/rocm-wizard/current").read_text().strip()
    path = root / "var/lib/rocm-wizard/runs" / cur / "journal.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def assert_stopped_in_preflight(root: Path, r: subprocess.CompletedProcess[str], check: str) -> list[dict]:
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr
    recs = _journal(root)
    failed = [x for x in recs if x["event"] == "action-end" and x["outcome"] != "ok"]
    assert len(failed) == 1 and failed[0]["step"] == 0, failed
    steps_started = {x["step"] for x in recs if x["event"] == "step-start"}
    assert steps_started == {0}, steps_started  # nothing after the preflight
    assert recs[-1]["event"] == "run-end" and recs[-1]["state"] == "failed" and recs[-1]["step"] == 0
    plan = planfile.load(root / "var/lib/rocm-wizard/runs" / (root / "var/lib/rocm-wizard/current").read_text().strip()
                         / "plan.json")
    assert plan.steps[0].actions[failed[0]["action"]].name == check
    assert not [c for c in calls(root, "apt-get") if "purge" in c], "a purge ran"
    assert not [c for c in calls(root, "amdgpu-install") if "--uninstall" in c], "an uninstall ran"
    assert "preflight check" in r.stdout and "nothing was changed" in r.stdout.replace("\n", " ")
    return recs


def _plan_json(root: Path, profile: str, name: str, tmp: Path, edit: dict[str, str] | None = None) -> Path:
    """The plan resolved for the sandbox machine as it is now, written as a replayable plan file;
    ``edit`` replaces strings in every argv (a URL pointed at a test server)."""
    from wizard import machines
    from wizard.planner import resolve_plan
    from wizard.probes import detect
    from wizard.sandbox import open_sandbox

    host = open_sandbox(root, profile)
    plan = resolve_plan(name, detect(host), state_dir=machines.sandbox(host, root).machine_state,
                        wizard_python=PY)
    text = planfile.dumps(plan)
    for a, b in (edit or {}).items():
        text = text.replace(a, b)
    p = tmp / "plan.json"
    p.write_text(text)
    return p


@contextmanager
def http_server(pages: dict[str, bytes]) -> Iterator[str]:
    """A server on 127.0.0.1 answering ``pages`` and 404 for anything else; stopped on exit."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self, body: bool) -> None:
            data = pages.get(self.path)
            self.send_response(200 if data is not None else 404)
            self.send_header("Content-Length", str(len(data or b"")))
            self.end_headers()
            if body and data:
                self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            self._answer(True)

        def do_HEAD(self) -> None:  # noqa: N802
            self._answer(False)

        def log_message(self, *args: object) -> None:
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


def test_dpkg_lock_held_waits_with_a_message_then_stops_before_any_change(tmp_path: Path) -> None:
    root = tmp_path / "m"
    wizard(["--sandbox", str(root), "--profile", "seed-7900xt", "detect"])
    holder = subprocess.Popen([PY, "-c", (
        "import fcntl, os, sys, time\n"
        f"fd = os.open({str(root / 'var/lib/dpkg/lock-frontend')!r}, os.O_RDWR)\n"
        "fcntl.lockf(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(120)")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        r = wizard(["--sandbox", str(root), "--plan", "downgrade-6.2", "--yes", "--lock-wait", "2"])
    finally:
        holder.kill()
        holder.wait()
    assert_stopped_in_preflight(root, r, "package-lock")
    assert f"locked by pid {holder.pid}" in r.stdout and "--lock-wait" in r.stdout
    assert "waiting for /var/lib/dpkg/lock-frontend" in r.stdout or "waiting for" in r.stdout
    # the lock is gone: resuming runs the preflight again, and the run goes on to the reboot
    r2 = wizard(["resume", "--yes", "--sandbox", str(root)])
    assert r2.returncode == 3, r2.stdout[-3000:]


def test_an_unreachable_package_url_stops_before_any_change(tmp_path: Path) -> None:
    root = tmp_path / "m"
    wizard(["--sandbox", str(root), "--profile", "seed-7900xt", "detect"])
    with http_server({}) as base:  # answers 404 to everything
        url = "https://repo.radeon.com/amdgpu-install/6.2.4/ubuntu/jammy/amdgpu-install_6.2.60204-1_all.deb"
        plan = _plan_json(root, "seed-7900xt", "downgrade-6.2", tmp_path,
                          {url: f"{base}/amdgpu-install/6.2.4/ubuntu/jammy/amdgpu-install_6.2.60204-1_all.deb"})
        r = wizard(["--sandbox", str(root), "--plan", str(plan), "--yes"])
    assert_stopped_in_preflight(root, r, "package-url")
    assert "404" in r.stdout


def test_no_wheel_for_the_target_python_stops_before_any_change(tmp_path: Path) -> None:
    root = tmp_path / "m"
    wizard(["--sandbox", str(root), "--profile", "seed-7900xt", "detect"])
    # the index serves torch 2.5.1 for CPython 3.11 and 3.12 only; the venv is Python 3.10
    page = ("<html><body>\n" + "".join(
        f'<a href="torch-2.5.1%2Brocm6.2-{t}-{t}-linux_x86_64.whl">torch-2.5.1+rocm6.2-{t}-{t}-linux_x86_64.whl</a>\n'
        for t in ("cp311", "cp312")) + "</body></html>\n").encode()
    with http_server({"/whl/rocm6.2/torch/": page}) as base:
        plan = _plan_json(root, "seed-7900xt", "downgrade-6.2", tmp_path,
                          {"https://download.pytorch.org/whl/rocm6.2": f"{base}/whl/rocm6.2"})
        r = wizard(["--sandbox", str(root), "--plan", str(plan), "--yes", "--skip-preflight", "python-version"])
    recs = assert_stopped_in_preflight(root, r, "wheel")
    assert "no torch wheel for cp310 (this Python)" in r.stdout
    assert any(x["event"] == "preflight-skip" and x["names"] == ["python-version"] for x in recs)


def test_the_wheel_check_reads_the_index_for_this_pythons_tag() -> None:
    tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    pages = {"/enc/torch/": f'<a href="torch-2.5.1%2Brocm6.2-{tag}-{tag}-linux_x86_64.whl">x</a>'.encode(),
             "/plain/torch/": f"torch-2.5.1+rocm6.2-{tag}-{tag}-linux_x86_64.whl\n".encode(),
             "/other/torch/": b"torch-2.5.1+rocm6.2-cp39-cp39-linux_x86_64.whl\n"}
    with http_server(pages) as base:
        for index, version, ok in (("enc", "2.5.1", True), ("plain", "2.5.1", True), ("enc", "any", True),
                                   ("enc", "2.5.10", False), ("enc", "2.6.0", False), ("other", "2.5.1", False),
                                   ("other", "any", False), ("missing", "2.5.1", False)):
            a = preflight.wheel_on_index(PY, f"{base}/{index}", "torch", version)
            res = subprocess.run(a.argv, capture_output=True, text=True, timeout=60)
            assert (res.returncode == 0) is ok, (index, version, res.stdout, res.stderr)


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare (util-linux) for a private tmpfs")
def test_too_little_disk_stops_before_any_change(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    root = tmp_path / "m"
    wizard(["--sandbox", str(root), "--profile", "rx9070xt-noble", "detect"])
    plan = _plan_json(root, "rx9070xt-noble", "pip-only", tmp_path)  # planned with the disk as it was
    # the venv's home on an 8 MiB tmpfs (a private mount namespace: nothing leaks out of the test)
    home = root / "home/user"
    script = (f'set -e; cp -a {home} {tmp_path}/home-copy; mount -t tmpfs -o size=8m tmpfs {home}; '
              f'cp -a {tmp_path}/home-copy/. {home}/; exec "$@"')
    env = {k: v for k, v in os.environ.items() if k != "ROCM_WIZARD_STATE_DIR"}
    r = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", PY, "-m",
                        "wizard", "--sandbox", str(root), "--plan", str(plan), "--yes"], capture_output=True,
                       text=True, cwd=REPO, env=env, stdin=subprocess.DEVNULL, timeout=300)
    if r.returncode != 1 and "mount" in r.stderr:
        pytest.skip(f"tmpfs cannot be mounted here: {r.stderr.strip()[:200]}")
    assert_stopped_in_preflight(root, r, "disk-venv")
    assert "GiB free on /home/user" in r.stdout.replace(str(root), "") or "GiB free" in r.stdout


def test_secure_boot_on_with_a_dkms_plan_stops_before_any_change(tmp_path: Path) -> None:
    root = tmp_path / "m"
    wizard(["--sandbox", str(root), "--profile", "seed-7900xt", "detect"])
    plan = _plan_json(root, "seed-7900xt", "downgrade-6.2", tmp_path)  # planned with Secure Boot off
    install = next(s for s in planfile.load(plan).steps if s.kind == "rocm_install")
    assert install.param("dkms") is True  # the machine has the DKMS driver: the plan keeps it
    cfg = root / ".sandbox/machine.json"
    d = json.loads(cfg.read_text())
    d["secure_boot"] = True  # switched on in the firmware since
    cfg.write_text(json.dumps(d))
    r = wizard(["--sandbox", str(root), "--plan", str(plan), "--yes"])
    assert_stopped_in_preflight(root, r, "secure-boot")
    assert "Secure Boot is on" in r.stdout


def test_skip_preflight_names_must_exist_and_are_journalled(tmp_path: Path) -> None:
    root = tmp_path / "m"
    r = wizard(["--sandbox", str(root), "--profile", "rx9070xt-noble", "--plan", "pip-only", "--yes",
                "--skip-preflight", "no-such-check"])
    assert r.returncode == 2 and "no-such-check" in r.stderr and "disk-venv" in r.stderr
    assert not (root / "var/lib/rocm-wizard/current").exists()


def test_the_lock_check_passes_when_free_and_names_the_holder_when_not(tmp_path: Path) -> None:
    lock = tmp_path / "lock-frontend"
    lock.write_text("")
    check = preflight.package_lock_free("apt", 1)
    assert check is not None
    argv = [*check.argv[:3], "1", str(lock)]
    assert subprocess.run(argv, capture_output=True, timeout=60).returncode == 0
    fd = os.open(lock, os.O_RDWR)
    try:
        child = subprocess.Popen([PY, "-c", "import fcntl, os, sys, time\n"
                                  f"fd = os.open({str(lock)!r}, os.O_RDWR)\nfcntl.lockf(fd, fcntl.LOCK_EX)\n"
                                  "print('held', flush=True)\ntime.sleep(30)"], stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        res = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        child.kill()
        child.wait()
    finally:
        os.close(fd)
    assert res.returncode == 1 and f"pid {child.pid}" in res.stderr
