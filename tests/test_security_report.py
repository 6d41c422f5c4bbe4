"""`report --bundle` (issue 16 items 5 and 10): planted links, missing directories, modes, redaction."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from wizard.evidence import Redactor, collect, write_bundle
from wizard.host import BundleHost, LiveHost

pytestmark = pytest.mark.integration


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wizard", *args], capture_output=True, text=True, timeout=120)


def one_line(res: subprocess.CompletedProcess[str], code: int = 2) -> str:
    assert res.returncode == code, (res.returncode, res.stdout[-500:], res.stderr[-1000:])
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    return lines[0]


NO_REDACTION = Redactor((), None)


@pytest.mark.parametrize("dangling", [False, True])
def test_a_planted_partial_link_never_makes_root_write_its_target(tmp_path: Path, dangling: bool) -> None:
    victim = tmp_path / "victim"
    if not dangling:
        victim.write_text("root's file\n")
    out = tmp_path / "out.tar.gz"
    os.symlink(victim, tmp_path / "out.tar.gz.partial")
    with pytest.raises(FileExistsError, match="planted"):
        write_bundle({"lspci.txt": "x\n"}, str(out), NO_REDACTION)
    assert (victim.read_text() == "root's file\n") if not dangling else not os.path.lexists(victim)
    assert os.path.islink(tmp_path / "out.tar.gz.partial") and not out.exists()


def test_the_cli_refuses_a_planted_partial_in_one_line(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("root's file\n")
    os.symlink(victim, tmp_path / "out.tar.gz.partial")
    line = one_line(cli("report", "--bundle", str(tmp_path / "out.tar.gz")))
    assert "already exists" in line
    assert victim.read_text() == "root's file\n"


def test_a_missing_parent_is_an_error_not_created(tmp_path: Path) -> None:
    for out in (tmp_path / "no" / "such" / "out.tar.gz", tmp_path / "no" / "such" / "dir"):
        line = one_line(cli("report", "--bundle", str(out)))
        assert "does not exist" in line
        assert not (tmp_path / "no").exists()


def test_an_existing_out_or_a_link_at_out_is_refused(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("root's file\n")
    os.symlink(victim, tmp_path / "out.tar.gz")
    os.symlink(victim, tmp_path / "outdir")
    for out in ("out.tar.gz", "outdir"):
        with pytest.raises(FileExistsError):
            write_bundle({"lspci.txt": "x\n"}, str(tmp_path / out), NO_REDACTION)
    assert victim.read_text() == "root's file\n"


def test_results_are_0600_and_load_back(tmp_path: Path) -> None:
    old = os.umask(0)  # even under umask 000
    try:
        arc = write_bundle({"lspci.txt": "x\n", "root/etc/os-release": "ID=debian\n"}, str(tmp_path / "b.tar.gz"),
                           NO_REDACTION)
        d = write_bundle({"lspci.txt": "x\n", "root/etc/os-release": "ID=debian\n"}, str(tmp_path / "b"),
                         NO_REDACTION)
    finally:
        os.umask(old)
    assert stat.S_IMODE(arc.stat().st_mode) == 0o600
    assert not (tmp_path / "b.tar.gz.partial").exists()
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    for p in [d / "lspci.txt", d / "root" / "etc" / "os-release"]:
        assert stat.S_IMODE(p.stat().st_mode) == 0o600
    assert stat.S_IMODE((d / "root" / "etc").stat().st_mode) == 0o700
    with tarfile.open(arc) as tf:
        assert {m.mode for m in tf.getmembers()} == {0o600}
    assert BundleHost(arc).read_text("/etc/os-release") == "ID=debian\n"
    assert BundleHost(d).captured("lspci.txt") == "x\n"


# -- redaction ---------------------------------------------------------------------------------------------

SECRETS = {
    "url password": ("pip index https://alice:s3cr3tPass@pypi.example.com/simple", "s3cr3tPass"),
    "postgres": ("DATABASE_URL=postgres://app:pgPassw0rd@db.internal:5432/x", "pgPassw0rd"),
    "bare user:pass@": ("proxy alice:hunter22@proxy.example.com:3128", "hunter22"),
    "password: key": ("  password: correct-horse-battery\n", "correct-horse-battery"),
    "password= key": ("smtp_password=Tr0ub4dor&3 other", "Tr0ub4dor"),
    "glpat": ("CI uses glpat-AbCdEfGhIjKlMnOpQrSt12", "glpat-AbCdEfGhIjKlMnOpQrSt12"),
    "pypi": ("upload with pypi-AgEIcHlwaS5vcmcCJGFiY2RlZmdoLWlqa2wtbW5vcC1xcnN0", "pypi-AgEIcHlwaS5vcmcCJGFi"),
    "github_pat": ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKL",
                   "github_pat_11ABCDEFG"),
    "gho": ("token gho_16C7e42F292c6912E7710c838347Ae178B4a", "gho_16C7e42F292c6912E7710c838347Ae178B4a"),
    "xoxb": ("slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "xoxb-123456789012"),
    "bearer jwt": ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
                   "eyJzdWIiOiIxMjM0NTY3ODkwIn0"),
    "bare jwt": ("cookie=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
                 "dozjgNryP4J3jVmNHl0w5N"),
    "s3 presigned": ("GET https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential="
                     "AKIAIOSFODNN7EXAMPLE%2F20240101&X-Amz-Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963",
                     "fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963"),
    "hf": ("HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz123456", "hf_abcdefghijklmnopqrstuvwxyz"),
    "aws": ("aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
}


@pytest.mark.parametrize("case", sorted(SECRETS))
def test_a_secret_is_redacted(case: str) -> None:
    text, secret = SECRETS[case]
    out = Redactor(("alice",), None)(text)
    assert secret not in out and "***" in out, out


def test_the_host_name_goes_with_its_domain() -> None:
    r = Redactor((), "gpu01.lab.example.com")
    out = r("Linux gpu01 6.8.0 ...\nssh gpu01.lab.example.com\nsearch lab.example.com\n")
    assert "gpu01" not in out and "example.com" not in out and "lab." not in out, out
    short = Redactor((), "gpu01")("prompt root@gpu01.lab.example.com:~#")
    assert "gpu01" not in short and "lab.example.com" not in short, short


def test_a_default_host_name_is_not_replaced_in_the_evidence() -> None:
    text = "ID=ubuntu\nLinux ubuntu 6.8.0-45-generic #45-Ubuntu SMP\nhttps://repo.radeon.com/amdgpu/ubuntu\n"
    assert Redactor((), "ubuntu")(text) == text
    assert Redactor((), "ubuntu.corp.example.org")("search corp.example.org\n" + text) == "search domain\n" + text


def test_a_user_named_like_a_package_keeps_the_package() -> None:
    r = Redactor(("torch",), None)
    text = ("torch==2.5.1+rocm6.2\nPyTorch version: 2.5.1\nimport torch\n/home/torch/venv/bin/python\n"
            "uid=1000(torch) gid=1000(torch) groups=1000(torch),44(video)\nSUDO_USER=torch\ntorch@gpu01:~$ ls\n")
    out = r(text)
    assert "torch==2.5.1+rocm6.2" in out and "import torch" in out and "PyTorch version" in out
    assert "/home/user/venv" in out and "uid=1000(user) gid=1000(user)" in out and "SUDO_USER=user" in out
    assert "user@gpu01" in out


def test_what_is_not_secret_stays() -> None:
    text = ("tokenizers==0.19.1\nPWD=/srv/x\n0000:03:00.0 VGA [1002:744c]\ntest_x PASSED\n"
            "https://download.pytorch.org/whl/rocm6.2\nPassword reset not needed\n")
    assert Redactor(("alice",), "gpu01")(text) == text


def test_secret_environment_is_never_collected(tmp_path: Path) -> None:
    env = {"PATH": "/nonexistent", "HF_TOKEN": "hf_abcdefghijklmnopqrstuvwxyz123456", "GITHUB_TOKEN": "ghp_" + "a" * 36,
           "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
           "PIP_INDEX_URL": "https://alice:pipPassw0rd@pypi.example.com/simple", "HSA_OVERRIDE_GFX_VERSION": "10.3.0"}
    files = collect(LiveHost(tmp_path, environ=env))
    blob = "\n".join(files.values())
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in blob
    for name, value in env.items():
        if name not in ("PATH", "HSA_OVERRIDE_GFX_VERSION"):
            assert value not in blob and "pipPassw0rd" not in blob


def test_the_tuis_script_export_never_writes_through_a_planted_link(tmp_path: Path) -> None:
    """The TUI writes rocm-wizard-PLAN.sh into the current directory (often a shared one)."""
    from wizard.machine_session import MachineSession, MachineSpec
    from wizard.tui.services import Services

    victim = tmp_path / "victim"
    victim.write_text("root's file\n")
    victim.chmod(0o600)
    export = tmp_path / "shared"
    export.mkdir()
    svc = Services(MachineSession(MachineSpec(from_="seed-7900xt")), export_dir=export)
    plan = svc.resolve("pip-only")
    os.symlink(victim, export / "rocm-wizard-pip-only.sh.partial")
    with pytest.raises(FileExistsError, match="planted"):
        svc.export_script(plan)
    os.unlink(export / "rocm-wizard-pip-only.sh.partial")
    os.symlink(victim, export / "rocm-wizard-pip-only.sh")  # a link at the name itself is replaced, not followed
    path = svc.export_script(plan)
    assert not path.is_symlink() and path.read_text().startswith("#!/usr/bin/env bash")
    assert stat.S_IMODE(path.stat().st_mode) == 0o755
    assert victim.read_text() == "root's file\n" and stat.S_IMODE(victim.stat().st_mode) == 0o600
