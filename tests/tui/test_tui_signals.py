"""Issue 25, point 8: a TUI killed mid-run (SIGHUP: its terminal closed; SIGTERM) stops the run as the CLI does:
the running action's process group is stopped, the journal ends with a stop record naming the signal, the lock is
free, and the wizard exits 1; `resume` then goes on. The TUI runs in a subprocess on a pseudo-terminal, driven by
keys, on a sandbox machine."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest

from wizard.model import Action, ResolvedPlan, StepPlan
from wizard.runner import planfile
from wizard.sandbox import open_sandbox

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
MARK = "43.17"  # the slow action's sleep: a mark to find its process by


def slow_plan(path: Path) -> Path:
    script = f"echo start >> /home/user/starts; if [ ! -e /home/user/fast ]; then sleep {MARK}; fi"
    plan = ResolvedPlan(name="slow", title="A slow plan", why="a TUI killed mid-run", target=(),
                        steps=(StepPlan("preflight", "checks"),
                               StepPlan("groups", "slow", actions=(Action(("sh", "-c", script), "a slow action"),))))
    path.write_text(planfile.dumps(plan))
    return path


def marked() -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                argv = (d / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if MARK.encode() in argv:
                out.append(int(d.name))
    return out


class Terminal:
    """The TUI on a pseudo-terminal of 100x32; what it writes is kept (escape codes and all) to wait on."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 32, 100, 0, 0))
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=REPO,
                                     start_new_session=True)
        os.close(slave)
        self.out = b""
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            self.out += data

    def wait_for(self, text: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while text.encode() not in self.out:
            assert self.proc.poll() is None, f"the TUI exited with {self.proc.returncode} before {text!r}"
            assert time.monotonic() < deadline, f"{text!r} never shown"
            time.sleep(0.05)
        self.out = b""  # the next wait looks at what comes after

    def keys(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        try:
            os.close(self.master)
        except OSError:
            pass


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGTERM])
def test_a_killed_tui_journals_the_stop_as_the_cli_does(tmp_path: Path, sig: signal.Signals) -> None:
    root = tmp_path / "m"
    open_sandbox(root, "rx9070xt-noble")
    plan = slow_plan(tmp_path / "slow.json")
    env = {k: v for k, v in os.environ.items() if k != "ROCM_WIZARD_STATE_DIR"}
    env.update(TERM="xterm-256color", TEXTUAL_ANIMATIONS="none", COLUMNS="100", LINES="32")
    term = Terminal([sys.executable, "-m", "wizard", "--sandbox", str(root)], env)
    try:
        term.wait_for("Evidence")  # Detect's footer
        term.keys("n")
        term.wait_for("Paste an error")  # Diagnose
        term.keys("n")
        term.wait_for("Open plan file")  # Choose
        term.keys("o")
        term.wait_for("Open a plan file")
        term.keys(f"{plan}\r")
        term.wait_for("Full script")  # Review
        term.keys("c")
        term.wait_for("Yes, run it")  # Confirm
        term.keys("y")
        deadline = time.monotonic() + 60
        while not marked():
            assert time.monotonic() < deadline and term.proc.poll() is None, "the slow action never started"
            time.sleep(0.05)
        if sig is signal.SIGHUP:
            os.close(term.master)  # the terminal goes away first, as when its window is closed
        term.proc.send_signal(sig)
        code = term.proc.wait(60)
    finally:
        term.close()
    assert code == 1
    assert marked() == []  # the action's whole process group is gone before the wizard exits
    state = root / "var/lib/rocm-wizard"
    run_id = (state / "current").read_text().strip()
    recs = [json.loads(x) for x in (state / "runs" / run_id / "journal.jsonl").read_text().splitlines()]
    # the record the CLI writes for the same signal (tests/test_security_state.py)
    assert [r["outcome"] for r in recs if r["event"] == "action-end" and r["step"] == 1] == ["cancelled"]
    assert recs[-1]["event"] == "run-end" and recs[-1]["state"] == "stopped", recs[-1]
    assert f"interrupted by {sig.name}" in recs[-1]["message"]
    assert (state / "lock").read_text() == ""
    (root / "home/user/fast").write_text("")
    r = subprocess.run([sys.executable, "-m", "wizard", "resume", "--yes", "--sandbox", str(root)], cwd=REPO, env=env,
                       capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (root / "home/user/starts").read_text() == "start\nstart\n"
