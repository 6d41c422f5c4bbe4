"""Ansible is optional: the single-machine path (detect, plans, dry run, the export) never imports it,
and a fleet command without it says so in one line and exits non-zero, creating nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

BLOCKED = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "ansible" or name.startswith("ansible."):
            raise ImportError("ansible is blocked by the test")
        return None
sys.meta_path.insert(0, Block())
from wizard.cli import main
code = main(sys.argv[1:])
assert not any(m == "ansible" or m.startswith("ansible.") for m in sys.modules), "ansible was imported"
sys.exit(code)
"""


def run_blocked(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", BLOCKED, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_single_machine_commands_never_import_ansible(tmp_path: Path) -> None:
    for args in (["--from", "seed-7900xt", "detect", "--json"], ["--from", "seed-7900xt", "plans", "--json"],
                 ["--from", "seed-7900xt", "--plan", "pip-only", "--dry-run"],
                 ["--from", "seed-7900xt", "--plan", "pip-only", "--export", "ansible", str(tmp_path / "out")]):
        res = run_blocked(*args, cwd=tmp_path)
        assert res.returncode == 0, (args, res.stderr[-2000:])
    assert (tmp_path / "out" / "pip-only.yml").is_file()


def test_fleet_without_ansible_is_one_line_and_exit_1(tmp_path: Path) -> None:
    inv = tmp_path / "inventory.ini"
    inv.write_text("h1 ansible_connection=local\n")
    code = ("import os, sys; sys.executable = '/nonexistent/python3'; os.environ['PATH'] = '/nonexistent'; "
            "from wizard.cli import main; sys.exit(main(sys.argv[1:]))")
    res = subprocess.run([sys.executable, "-c", code, "fleet", "detect", "-i", str(inv), "--fleet-dir",
                          str(tmp_path / "fleet")], capture_output=True, text=True, timeout=120)
    assert res.returncode == 1
    assert res.stderr.count("\n") == 1 and "pip install 'rocm-wizard[fleet]'" in res.stderr, res.stderr
    assert "Traceback" not in res.stderr and res.stdout == ""


def test_export_format_and_directory_errors_are_one_line(tmp_path: Path) -> None:
    res = run_blocked("--from", "seed-7900xt", "--plan", "pip-only", "--export", "chef", str(tmp_path / "x"),
                      cwd=tmp_path)
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "unknown format" in res.stderr
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    res = run_blocked("--from", "seed-7900xt", "--plan", "pip-only", "--export", "ansible", str(tmp_path / "mine"),
                      cwd=tmp_path)
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "not an earlier rocm-wizard export" in res.stderr
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["notes.txt"]
    res = run_blocked("--from", "seed-5600xt", "--plan", "pip-only", "--export", "ansible", str(tmp_path / "y"),
                      cwd=tmp_path)
    assert res.returncode == 5 and not (tmp_path / "y").exists()
    assert res.stderr.startswith("rocm-wizard: refused: no upstream wheel carries gfx1010"), res.stderr
