"""The installed console script driven in tmux, end to end on the seed-7900xt sandbox:
detect -> choose downgrade-6.2 -> run -> reboot (the app exits 3) -> relaunch -> resume -> verify -> report.

Isolated tmux server (-L), killed in `finally`; the sandbox and every state dir live in tmp_path.
Verify runs against a CPU torch when ROCM_WIZARD_TEST_TORCH_PYTHON names one; otherwise the sandbox
reports the verify step as skipped (not passed), and this test checks that it says so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).parent / "rocm-wizard"

pytestmark = [
    pytest.mark.system,
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(not SCRIPT.exists(), reason="the rocm-wizard console script is not installed in this venv"),
]


class Tmux:
    def __init__(self, tmp: Path) -> None:
        self.sock = f"rwe2e-{os.getpid()}-{int(time.time() * 1000) % 100000}"
        self.tmp = tmp
        self.last = ""

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.sock, *args], capture_output=True, text=True, timeout=30).stdout

    def start(self, env: dict[str, str]) -> None:
        envs = [f"{k}={v}" for k, v in env.items()]
        subprocess.run(["tmux", "-L", self.sock, "-f", "/dev/null", "new-session", "-d", "-x", "100", "-y", "32",
                        "env", "-i", *envs, "bash", "--norc", "--noprofile"], check=True, timeout=30)

    def capture(self) -> str:
        self.last = self.tmux("capture-pane", "-p")
        return self.last

    def keys(self, *keys: str) -> None:
        for k in keys:
            self.tmux("send-keys", k)
            time.sleep(0.05)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-l", text)
        self.tmux("send-keys", "Enter")

    def wait(self, *texts: str, timeout: float = 60) -> str:
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            screen = self.capture()
            if all(t in screen for t in texts):
                return screen
            time.sleep(0.15)
        raise AssertionError(f"waited {timeout}s for {texts!r}; the screen was:\n{self.last}")

    def wait_any(self, *texts: str, timeout: float = 60, settle: str) -> str:
        """Wait until one of ``texts`` shows; a text in ``texts[1:]`` only counts together with ``settle``."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            screen = self.capture()
            if texts[0] in screen or any(t in screen and settle in screen for t in texts[1:]):
                return screen
            time.sleep(0.15)
        raise AssertionError(f"waited {timeout}s for any of {texts!r}; the screen was:\n{self.last}")

    def kill(self) -> None:
        subprocess.run(["tmux", "-L", self.sock, "kill-server"], capture_output=True, timeout=30)


def to_confirm_downgrade(t: Tmux) -> None:
    """From the app's start on seed-7900xt: Detect -> Diagnose -> Choose downgrade-6.2 -> Review -> Confirm."""
    t.wait("[Detect]", "AMD Radeon RX", "gfx1100", "1002:744c", timeout=60)
    t.keys("n")
    t.wait("[Diagnose]")
    t.keys("n")
    t.wait("[Choose]", "★ recommended")
    for _ in range(12):
        if "Downgrade to ROCm 6.2.4" in t.capture():
            break
        t.keys("Down")
        time.sleep(0.2)
    t.wait("Downgrade to ROCm 6.2.4")
    t.keys("Enter")
    t.wait("[Review]", "destructive", "Preflight", "undo from backup")
    t.keys("c")
    t.wait("[Confirm]", "Yes, run it")


def tmux_env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "home").mkdir(exist_ok=True)
    return {
        "TERM": "xterm-256color", "TEXTUAL_ANIMATIONS": "none", "ROCM_WIZARD_THEME": "textual-dark",
        "XDG_STATE_HOME": str(tmp_path / "xdg-state"), "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
        "HOME": str(tmp_path / "home"), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
        "PS1": "$ ",
    }


@pytest.mark.smoke
def test_seed_7900xt_downgrade_reboot_resume_verify_report(tmp_path: Path) -> None:
    torch_python = os.environ.get("ROCM_WIZARD_TEST_TORCH_PYTHON")
    sb = tmp_path / "sandbox"
    env = tmux_env(tmp_path)
    cmd = f"{SCRIPT} --sandbox {sb} --profile seed-7900xt"
    if torch_python:
        cmd += f" --verify-python {torch_python}"
    t = Tmux(tmp_path)
    try:
        t.start(env)
        t.type(f"{cmd}; echo EXIT=$?")
        to_confirm_downgrade(t)
        t.keys("y")
        screen = t.wait("What happens next", "Reboot now", timeout=240)
        assert "resume" in screen
        t.keys("n")
        screen = t.wait("EXIT=3", timeout=60)
        assert "reboot-pending" in screen and "--sandbox" in screen

        t.type(f"clear; {cmd}; echo EXIT=$?")
        screen = t.wait("A migration is waiting", "downgrade-6.2", timeout=60)
        assert "has rebooted" in screen and "Verify" in screen
        t.keys("r")
        screen = t.wait_any("[Report]", "[Run]   machine", timeout=300, settle="FAILED")
        assert "[Report]" in screen, f"the resumed run did not finish:\n{screen}"
        if torch_python:
            assert "Verify:" in screen and "✔ pass" in screen, screen
            assert "✔ Finished" in screen
        else:
            assert "✔ Finished, NOT VERIFIED" in screen  # a skipped verify is said on the verdict line
            assert "skipped" in screen and "--verify-python" in screen  # skipped, never reported as passed
        assert "journal:" in screen and "replayable plan:" in screen and "plan.json" in screen
        assert "planned" not in screen  # the steps run before the reboot show as done (from the journal)
        t.keys("q")
        t.wait("EXIT=0", timeout=30)
    finally:
        t.kill()
    journals = list(sb.glob("var/lib/rocm-wizard/runs/*/journal.jsonl"))
    assert len(journals) == 1 and '"state": "done"' in journals[0].read_text()


def test_sudo_prompt_in_the_real_terminal_then_the_run_uses_sudo_n(tmp_path: Path) -> None:
    """The app suspends for sudo's own prompt (a sandbox with a password): a wrong password is
    refused, Ctrl+C at the prompt gives up with nothing changed, the right one lets the run go on
    with every root action as ``sudo -n``."""
    from wizard.sandbox import open_sandbox

    sb = tmp_path / "sandbox"
    open_sandbox(sb, "seed-7900xt")
    (sb / ".sandbox/sudo-password").write_text("rehearse\n")
    t = Tmux(tmp_path)
    try:
        t.start(tmux_env(tmp_path))
        t.type(f"{SCRIPT} --sandbox {sb}; echo EXIT=$?")
        to_confirm_downgrade(t)
        assert "administrator rights" in t.last
        t.keys("y")
        screen = t.wait("rocm-wizard needs administrator rights", "[sudo] password for user:")
        assert "[Run]" not in screen  # the app is suspended: this is the terminal itself
        t.type("wrong")
        t.wait("Sorry, try again.")
        t.keys("C-c")
        t.wait("[Confirm]", "sudo did not grant administrator rights")
        assert not list(sb.glob("var/lib/rocm-wizard/runs/*/journal.jsonl"))  # nothing started

        t.keys("y")
        t.wait("[sudo] password for user:")
        time.sleep(0.3)
        t.type("rehearse")
        t.wait("What happens next", "Reboot now", timeout=240)
        t.keys("n")
        t.wait("EXIT=3", timeout=60)
    finally:
        t.kill()
    sudo_calls = [line for line in (sb / ".sandbox/calls.log").read_text().splitlines() if '"tool": "sudo"' in line]
    assert sum('"argv": ["-v"]' in c for c in sudo_calls) == 2  # the two prompts
    assert any('"argv": ["-n", "--", "apt-get"' in c for c in sudo_calls)  # root actions, never prompting
    journal = next(sb.glob("var/lib/rocm-wizard/runs/*/journal.jsonl")).read_text()
    assert '"state": "reboot-pending"' in journal and "rehearse" not in journal


def test_newcomer_without_an_amd_gpu_is_offered_a_rehearsal(tmp_path: Path) -> None:
    """The README's first command on a machine with no AMD GPU: the wizard says so and `r` opens the
    built-in sandbox machine (created under the state dir, here in tmp_path); nothing else is touched."""
    from wizard.host import LiveHost
    from wizard.probes import detect

    if detect(LiveHost()).gpus:
        pytest.skip("this machine has an AMD GPU: the wizard works on it instead of offering a rehearsal")
    env = tmux_env(tmp_path)
    env["ROCM_WIZARD_STATE_DIR"] = str(tmp_path / "state")
    t = Tmux(tmp_path)
    try:
        t.start(env)
        t.type(f"{SCRIPT}; echo EXIT=$?")
        screen = t.wait("No AMD GPU was found on this machine", "Press r to rehearse", timeout=60)
        assert "[Detect]" in screen
        t.keys("r")  # every profile is offered, with where it lives; Enter takes the first, seed-7900xt
        t.wait("Rehearse on which machine?", "seed-7900xt", "seed-5600xt", timeout=30)
        t.keys("Enter")
        t.wait("No torch to verify with", timeout=30)  # a newcomer has no CPU torch: go on unverified
        t.keys("s")
        screen = t.wait("sandbox:", "gfx1100", "1002:744c", timeout=60)
        assert "rehearsal" in screen  # the sandbox lives under the state dir
        t.keys("q")
        t.wait("EXIT=0", timeout=30)
    finally:
        t.kill()
    assert (tmp_path / "state/rehearsal/seed-7900xt/.sandbox/machine.json").is_file()


def test_an_interrupted_run_is_refused_a_second_plan_at_choose_and_resumed_itself(tmp_path: Path) -> None:
    """Issue 10's case in a real terminal: downgrade-6.2 killed mid-run, the wizard restarted, "Later",
    pip-only chosen: refused at Choose, naming the run; restarted again, `r` continues that same run."""
    sb = tmp_path / "sandbox"
    env = tmux_env(tmp_path)
    crash_env = {k: v for k, v in os.environ.items() if k != "ROCM_WIZARD_STATE_DIR"}
    crash_env["ROCM_WIZARD_CRASH_AFTER"] = "30"  # kill -9 inside the run, after the purge started
    crashed = subprocess.run([str(SCRIPT), "--sandbox", str(sb), "--profile", "seed-7900xt", "--plan",
                              "downgrade-6.2", "--yes"], env=crash_env, capture_output=True, text=True,
                             stdin=subprocess.DEVNULL, timeout=300)
    assert crashed.returncode == -9, crashed.stdout[-2000:]
    journals = list(sb.glob("var/lib/rocm-wizard/runs/*/journal.jsonl"))
    assert len(journals) == 1
    run_id = journals[0].parent.name
    calls_before = (sb / ".sandbox/calls.log").read_text()
    cmd = f"{SCRIPT} --sandbox {sb}"
    t = Tmux(tmp_path)
    try:
        t.start(env)
        t.type(f"{cmd}; echo EXIT=$?")
        t.wait("A migration is waiting", "downgrade-6.2", timeout=60)
        t.keys("l")
        for _ in range(4):
            if "[Choose]" in t.capture():
                break
            t.keys("n")
            time.sleep(0.4)
        screen = t.wait("[Choose]", "A new plan cannot start", timeout=30)
        assert run_id in screen and "interrupted" in screen
        for _ in range(12):
            if "pip-only" in t.capture() or "pip only" in t.last.lower():
                break
            t.keys("Down")
            time.sleep(0.2)
        t.keys("Enter")
        time.sleep(1.0)
        screen = t.capture()
        assert "[Choose]" in screen and "[Review]" not in screen and "[Run]" not in screen, screen
        t.keys("q")
        t.wait("EXIT=", timeout=30)
        assert (sb / ".sandbox/calls.log").read_text() == calls_before  # the refused plan ran nothing

        t.type(f"clear; {cmd}; echo EXIT=$?")
        t.wait("A migration is waiting", "downgrade-6.2", timeout=60)
        t.keys("r")
        # the run was started unattended (--yes): its resume keeps that answer and reboots without asking
        t.wait("Reboot pending", "Verify", timeout=240)
        t.keys("q")
        t.wait("EXIT=3", timeout=60)
    finally:
        t.kill()
    journals = list(sb.glob("var/lib/rocm-wizard/runs/*/journal.jsonl"))
    assert [j.parent.name for j in journals] == [run_id]  # the same run went on; no second run was made
    assert '"state": "reboot-pending"' in journals[0].read_text()


# ------------------------------------------------------------------ issue 25: the RX 5600 XT on nightly, verified
# with a CPU torch that came through a local PyPI-style mirror (never the internet)

WHEEL_DIRS = (Path("/opt/wheels"), Path("/opt/pypi/files"), Path("/opt/pypi-more/files"))
TORCH_DEPS = ("torch", "filelock", "typing-extensions", "setuptools", "sympy", "mpmath", "networkx", "jinja2",
              "markupsafe", "fsspec")


def local_wheels() -> dict[str, list[Path]]:
    """The CPU torch wheel and its dependencies' wheels found on this machine, by project name."""
    import re

    found: dict[str, list[Path]] = {}
    for d in WHEEL_DIRS:
        for whl in sorted(d.glob("*.whl")) if d.is_dir() else ():
            project = re.sub(r"[-_.]+", "-", whl.name.split("-", 1)[0]).lower()
            if project in TORCH_DEPS and (project != "torch" or "+cpu" in whl.name):
                found.setdefault(project, []).append(whl)
    return found


class Mirror:
    """PyTorch's CPU index as a site mirror on 127.0.0.1 (PEP 503 pages under /pt/whl/cpu/, the wheels under
    /files/), built from wheels on this machine; it records what was asked of it and stops in ``close``."""

    def __init__(self, wheels: dict[str, list[Path]]) -> None:
        import http.server
        import threading

        files = {w.name: w for ws in wheels.values() for w in ws}
        self.requests: list[str] = []
        mirror = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                from urllib.parse import unquote

                path = unquote(self.path.split("?", 1)[0])
                mirror.requests.append(path)
                parts = [p for p in path.split("/") if p]
                if parts[:3] == ["pt", "whl", "cpu"] and len(parts) == 4 and parts[3] in wheels:
                    links = "".join(f'<a href="/files/{w.name}">{w.name}</a>\n' for w in wheels[parts[3]])
                    self._send(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n".encode(), "text/html")
                elif len(parts) == 2 and parts[0] == "files" and parts[1] in files:
                    self._send(files[parts[1]].read_bytes(), "application/octet-stream")
                else:
                    self.send_error(404)

            def _send(self, body: bytes, kind: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/pt"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.timeout(1500)  # pip installs a ~190 MB CPU torch wheel (3 min on a loaded 2-core machine)
def test_rx5600xt_nightly_rehearsed_to_the_end_and_verified_with_a_cpu_torch_from_a_local_mirror(
        tmp_path: Path) -> None:
    """On a machine without an AMD GPU: the wizard started on the nightly channel with a site mirror of PyTorch's
    CPU index; r, the seed-5600xt machine; no torch to verify with, m makes one through the mirror; Choose warns
    that nightly builds are not releases and recommends therock-pip; the run goes to the end and Verify passes
    with that CPU torch."""
    from wizard.host import LiveHost
    from wizard.probes import detect

    if detect(LiveHost()).gpus:
        pytest.skip("this machine has an AMD GPU: the wizard works on it instead of offering a rehearsal")
    wheels = local_wheels()
    missing = [p for p in TORCH_DEPS if p not in wheels]
    if missing or sys.version_info[:2] != (3, 11):
        pytest.skip(f"no local CPU torch 2.13 (cp311) with its dependencies to serve (missing: {missing})")
    env = tmux_env(tmp_path)
    env["ROCM_WIZARD_STATE_DIR"] = str(tmp_path / "state")
    env["PIP_CONFIG_FILE"] = os.devnull  # this machine's pip.conf (local wheel dirs) is set aside: only the mirror
    env["PIP_NO_CACHE_DIR"] = "1"
    mirror = Mirror(wheels)
    t = Tmux(tmp_path)
    try:
        t.start(env)
        t.type(f"{SCRIPT} --channel nightly --mirror download.pytorch.org={mirror.url}; echo EXIT=$?")
        t.wait("No AMD GPU was found on this machine", "Press r to rehearse", timeout=60)
        t.keys("r")
        t.wait("Rehearse on which machine?", "seed-5600xt", timeout=30)
        t.keys("Down", "Enter")  # the second profile: seed-5600xt
        screen = t.wait("No torch to verify with", "the site mirror", timeout=30)
        assert mirror.url in screen or "127.0.0.1" in screen  # what m runs, the mirror first
        t.keys("m")
        screen = t.wait("[Detect]", "gfx1010", timeout=900)  # pip installs the CPU torch, then the rehearsal opens
        t.keys("n")
        t.wait("[Diagnose]")
        t.keys("n")
        screen = t.wait("[Choose]", "Nightly channel", "★ recommended", timeout=60)
        assert "not releases" in screen and "therock-pip" in screen
        t.keys("Enter")
        t.wait("[Review]", "Preflight", timeout=60)
        t.keys("c")
        t.wait("[Confirm]", "Yes, run it")
        t.keys("y")
        screen = t.wait_any("[Report]", "[Run]   ", timeout=600, settle="FAILED")
        assert "[Report]" in screen, f"the rehearsal did not finish:\n{screen}"
        assert "✔ Finished" in screen and "NOT VERIFIED" not in screen, screen
        assert "Verify:" in screen and "✔ pass" in screen, screen
        t.keys("q")
        t.wait("EXIT=0", timeout=30)
    finally:
        t.kill()
        mirror.close()
    torch_files = [r for r in mirror.requests if r.startswith("/files/torch-") and "+cpu" in r]
    assert "/pt/whl/cpu/torch/" in mirror.requests and len(torch_files) == 1, mirror.requests
    made = tmp_path / "state/rehearsal/cpu-torch"
    assert (made / ".made").read_text().strip() == "the site mirror of PyTorch's CPU index"
    sb = tmp_path / "state/rehearsal/seed-5600xt"
    journals = list(sb.glob("var/lib/rocm-wizard/runs/*/journal.jsonl"))
    assert len(journals) == 1 and '"state": "done"' in journals[0].read_text()
    assert "therock-pip" in journals[0].parent.name
    logs = "".join(p.read_text(errors="replace") for p in sb.glob("var/log/rocm-wizard/*/*verify*.log"))
    assert str(made / "bin/python") in logs or "torch 2.13.0+cpu" in logs
