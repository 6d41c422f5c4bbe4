"""Second security review, B8 (the part that is done): a mirror URL's password is never shown, logged or journalled
(stdout, the step logs, ``journal.jsonl``, ``detect --json``), and an export that carries it is private (umask 077).
Not done: the plan's own ``plan.json`` (0600) and the commands' argv (``/proc/*/cmdline``) still hold it; handing
credentials to wget/pip through a 0600 netrc or pip config would take them out of argv."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from runner_helpers import wizard

from wizard.model import Action, hide_passwords

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
    assert "bob:***@" in r.stdout + r.stderr  # the mirror is used and shown, its password not
    assert SECRET not in r.stdout + r.stderr
    for p in (root / "var/log/rocm-wizard").rglob("*"):
        if p.is_file():
            assert SECRET not in p.read_text(errors="replace"), p
    (journal,) = (root / "var/lib/rocm-wizard/runs").glob("*/journal.jsonl")
    assert SECRET not in journal.read_text()
    r = wizard(["--sandbox", str(root), "--mirror", MIRROR, "detect", "--json"])
    assert r.returncode == 0 and SECRET not in r.stdout
    assert [m["url"] for m in json.loads(r.stdout)["mirrors"]] == ["https://bob:***@mirror.example.com/pt"]


def test_an_export_that_carries_a_mirror_password_is_private(tmp_path: Path) -> None:
    out = tmp_path / "exp"
    r = wizard(["--from", "seed-7900xt", "--mirror", MIRROR, "--plan", "pip-only", "--export", "ansible", str(out)])
    assert r.returncode == 0, r.stderr
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(SECRET in p.read_text() for p in files)  # the playbook needs it to reach the mirror
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in files)
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o700 for p in out.rglob("*") if p.is_dir())
