"""Second security review, B8: a mirror URL's password is never shown, logged, journalled or planned (stdout, the
step logs, ``journal.jsonl``, ``plan.json``, ``detect --json``, exports), and never on a command line
(``/proc/*/cmdline``): plans name the mirror without its login, which stays in the run's own 0600 credentials file
and reaches pip (``NETRC``), wget (``WGETRC``) and apt (``/etc/apt/auth.conf.d``) through files only the action's
user can read."""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path

import pytest
from runner_helpers import wizard

from wizard.model import Action, ResolvedPlan, StepPlan, hide_passwords

pytestmark = pytest.mark.integration

SECRET = "S3cretPass"
MIRROR = f"download.pytorch.org=https://bob:{SECRET}@mirror.example.com/pt"


def test_a_url_password_is_hidden_wherever_it_is_shown() -> None:
    assert hide_passwords(f"wget https://bob:{SECRET}@m.example/x") == "wget https://bob:***@m.example/x"
    assert hide_passwords("pip install torch==2.5.1 git+https://github.com/x/y@v1") == \
        "pip install torch==2.5.1 git+https://github.com/x/y@v1"
    assert SECRET not in Action(("pip", "--index-url", f"https://bob:{SECRET}@m.example/whl"), "x").shown()


def test_a_run_with_a_mirror_password_keeps_it_out_of_output_logs_and_journal(tmp_path: Path) -> None:
    root = tmp_path / "sb"
    r = wizard(["--sandbox", str(root), "--profile", "seed-7900xt", "--mirror", MIRROR, "--plan", "pip-only", "--yes"])
    assert "https://mirror.example.com/pt" in r.stdout + r.stderr  # the mirror is used and shown, its login not
    assert SECRET not in r.stdout + r.stderr
    for p in (root / "var/log/rocm-wizard").rglob("*"):
        if p.is_file():
            assert SECRET not in p.read_text(errors="replace"), p
    (journal,) = (root / "var/lib/rocm-wizard/runs").glob("*/journal.jsonl")
    assert SECRET not in journal.read_text()
    assert SECRET not in (journal.parent / "plan.json").read_text()
    assert SECRET not in (root / ".sandbox/calls.log").read_text()  # every stand-in's argv
    creds = journal.parent / "credentials.json"
    assert SECRET in creds.read_text() and stat.S_IMODE(creds.stat().st_mode) == 0o600
    r = wizard(["--sandbox", str(root), "--mirror", MIRROR, "detect", "--json"])
    assert r.returncode == 0 and SECRET not in r.stdout
    assert [m["url"] for m in json.loads(r.stdout)["mirrors"]] == ["https://bob:***@mirror.example.com/pt"]


def test_an_export_names_the_mirror_without_its_login_and_is_private(tmp_path: Path) -> None:
    out = tmp_path / "exp"
    r = wizard(["--from", "seed-7900xt", "--mirror", MIRROR, "--plan", "pip-only", "--export", "ansible", str(out)])
    assert r.returncode == 0, r.stderr
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any("https://mirror.example.com/pt" in p.read_text() for p in files)
    assert not any(SECRET in p.read_text() for p in files)  # the hosts' own netrc / auth.conf.d carry logins
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in files)
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o700 for p in out.rglob("*") if p.is_dir())


# ------------------------------------------------------------------ the login kept out of argv and plan files


class _Mirror:
    """A wheel mirror on 127.0.0.1 that demands bob's login, serves one file and a one-wheel simple index, and at
    every request reads every process's command line (``/proc/*/cmdline``, as any local user can) for the
    password."""

    def __init__(self, wheel: bytes) -> None:
        import base64
        import http.server
        import threading

        want = "Basic " + base64.b64encode(f"bob:{SECRET}".encode()).decode()
        self.authorised: list[str] = []
        self.refused = 0
        self.seen_in_argv: list[str] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                outer._scan()
                if self.headers.get("Authorization") != want:
                    outer.refused += 1
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="mirror"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                outer.authorised.append(self.headers.get("User-Agent", "").split("/")[0])
                body = {"/pt/file.txt": b"payload\n",
                        "/pt/simple/tinypkg/": b'<a href="/pt/files/tinypkg-1.0-py3-none-any.whl">tinypkg</a>\n',
                        "/pt/files/tinypkg-1.0-py3-none-any.whl": wheel}.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Type", "text/html" if self.path.endswith("/") else "application/octet-stream")
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        threading.Timer(300, self.server.shutdown).start()  # stops by itself

    def _scan(self) -> None:
        for d in Path("/proc").iterdir():
            if d.name.isdigit():
                try:
                    text = (d / "cmdline").read_bytes().decode("utf-8", "replace")
                except OSError:
                    continue
                if SECRET in text:
                    self.seen_in_argv.append(text.replace("\0", " "))


def _wheel() -> bytes:
    import io
    import zipfile

    info = "tinypkg-1.0.dist-info"
    files = {"tinypkg/__init__.py": "", f"{info}/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    files["tinypkg-1.0.dist-info/RECORD"] = "".join(f"{n},,\n" for n in files) + "tinypkg-1.0.dist-info/RECORD,,\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for n, t in files.items():
            z.writestr(n, t)
    return buf.getvalue()


def test_a_mirror_login_reaches_wget_and_pip_through_files_never_argv_or_plan(tmp_path: Path) -> None:
    """A mirror given with bob's login in a (root's own, 0600) mirrors.toml. A run on this machine with its state in
    a temp dir downloads a file with wget and a wheel with pip (isolated, ``PIP_CONFIG_FILE=/dev/null``) from a
    127.0.0.1 mirror that demands the login: both authenticate, no process's command line held the password at any
    request, and neither ``plan.json``, the journal nor the logs hold it; the run's credentials file is 0600."""
    import sys

    from wizard.host import LiveHost
    from wizard.machines import live
    from wizard.mirror.config import load_config
    from wizard.runner.records import RunState
    from wizard.runner.service import RunService

    mirror = _Mirror(_wheel())
    cfg_dir = tmp_path / "cfg" / "rocm-wizard"
    cfg_dir.mkdir(parents=True)
    (cfg_dir / "mirrors.toml").write_text(
        f'[mirrors."download.pytorch.org"]\nurl = "http://bob:{SECRET}@127.0.0.1:{mirror.port}/pt"\n')
    os.chmod(cfg_dir / "mirrors.toml", 0o600)
    cfg = load_config(environ={"XDG_CONFIG_HOME": str(tmp_path / "cfg")})
    base = cfg.rewrite("https://download.pytorch.org/whl")[: -len("/whl")]
    assert base == f"http://127.0.0.1:{mirror.port}/pt"  # what plans carry: no login
    out, dl = tmp_path / "file.txt", tmp_path / "dl"
    steps = (StepPlan("preflight", "checks"),
             StepPlan("groups", "fetch", actions=(
                 Action(("wget", "-q", "-O", str(out), f"{base}/file.txt"), "wget from the mirror", as_user=True),
                 Action((sys.executable, "-m", "pip", "download", "--isolated", "--no-input", "--no-deps",
                         "-d", str(dl), "--index-url", f"{base}/simple", "tinypkg==1.0"), "pip from the mirror",
                        as_user=True, env=(("PIP_CONFIG_FILE", "/dev/null"),)))))
    plan = ResolvedPlan("login", "login", "", (), steps)
    machine = live(LiveHost("/", environ={k: v for k, v in os.environ.items() if k != "SUDO_USER"}),
                   state_dir=str(tmp_path / "state"))
    outcome = RunService(machine, cfg.credentials()).start(plan, yes=True)
    assert outcome.state is RunState.DONE, outcome
    assert out.read_text() == "payload\n" and [p.name for p in dl.iterdir()] == ["tinypkg-1.0-py3-none-any.whl"]
    assert "Wget" in mirror.authorised and "pip" in mirror.authorised
    assert mirror.seen_in_argv == []
    (run_dir,) = (tmp_path / "state" / "runs").iterdir()
    written = [p for p in (tmp_path / "state").rglob("*") if p.is_file() and p.name != "credentials.json"]
    assert any(p.name == "plan.json" for p in written) and any(p.name == "journal.jsonl" for p in written)
    for p in written:
        assert SECRET not in p.read_text(errors="replace"), p
    creds = run_dir / "credentials.json"
    assert SECRET in creds.read_text() and stat.S_IMODE(creds.stat().st_mode) == 0o600
    assert not list(Path(tempfile.gettempdir()).glob("rocm-wizard-login-*"))  # handed files are gone


def test_apt_gets_the_login_from_auth_conf_d_never_from_a_source_line(tmp_path: Path) -> None:
    """The action that points AMD's apt source lines at a mirror with a login writes the lines without it and
    installs the login as apt's ``/etc/apt/auth.conf.d/rocm-wizard-mirrors.conf`` (0600), from the file the run
    hands it; its argv and plan.json never hold the password."""
    from wizard import machines
    from wizard.mirror.apply import _source_rewrite
    from wizard.mirror.config import load_config
    from wizard.mirror.credentials import APT_AUTH
    from wizard.runner.records import RunState
    from wizard.runner.service import RunService
    from wizard.sandbox import open_sandbox

    root = tmp_path / "m"
    host = open_sandbox(root, "rx9070xt-noble")
    src = root / "etc/apt/sources.list.d/rocm.list"
    src.parent.mkdir(parents=True, exist_ok=True)
    src.write_text("deb [arch=amd64] https://repo.radeon.com/rocm/apt/6.2.4 jammy main\n")
    cfg = load_config([f"repo.radeon.com=https://bob:{SECRET}@mirror.example.com/radeon"], paths=())
    rewrite = _source_rewrite(cfg, ("/etc/apt/sources.list.d/rocm.list",))
    assert rewrite is not None and SECRET not in " ".join(rewrite.argv) and APT_AUTH in rewrite.changes
    plan = ResolvedPlan("apt-login", "apt-login", "", (), (StepPlan("preflight", "checks"),
                                                           StepPlan("groups", "sources", actions=(rewrite,))))
    outcome = RunService(machines.sandbox(host, root), cfg.credentials()).start(plan, yes=True)
    assert outcome.state is RunState.DONE, outcome
    assert src.read_text() == "deb [arch=amd64] https://mirror.example.com/radeon/rocm/apt/6.2.4 jammy main\n"
    auth = root / APT_AUTH.lstrip("/")
    assert auth.read_text() == f"machine mirror.example.com login bob password {SECRET}\n"
    assert stat.S_IMODE(auth.stat().st_mode) == 0o600
    (plan_json,) = (root / "var/lib/rocm-wizard/runs").glob("*/plan.json")
    assert SECRET not in plan_json.read_text() and SECRET not in (root / ".sandbox/calls.log").read_text()
