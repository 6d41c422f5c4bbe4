"""The base tarball cache (key, location, reuse), copying and unpacking, the host checks and the CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from wizard.realroot import base as rb
from wizard.realroot.machine import RealRoot

pytestmark = [pytest.mark.system, pytest.mark.realroot]


def test_cache_key_follows_the_package_set_and_location_follows_the_user() -> None:
    a = rb.BaseSpec()
    assert a.key() == rb.BaseSpec().key() and len(a.key()) == 16
    assert rb.BaseSpec(packages=(*rb.PACKAGES, "curl")).key() != a.key()
    assert rb.BaseSpec(packages=tuple(reversed(rb.PACKAGES))).key() == a.key()
    assert rb.BaseSpec(suite="trixie").filename.startswith("debian-trixie-minbase-")
    assert rb.cache_dir({}, uid=0) == Path("/var/cache/rocm-wizard/roots")
    assert rb.cache_dir({"XDG_CACHE_HOME": "/x/c"}, uid=1000) == Path("/x/c/rocm-wizard/roots")
    assert rb.cache_dir({"HOME": "/home/u"}, uid=1000) == Path("/home/u/.cache/rocm-wizard/roots")
    assert rb.cache_dir({"ROCM_WIZARD_ROOT_CACHE": "/t/c", "XDG_CACHE_HOME": "/x"}, uid=0) == Path("/t/c")


def test_host_requirements_are_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rb.os, "geteuid", lambda: 1000)
    with pytest.raises(rb.RealRootError, match="needs root on the host"):
        rb.require_host()
    monkeypatch.setattr(rb.os, "geteuid", lambda: 0)
    monkeypatch.setattr(rb.shutil, "which", lambda name: None)
    with pytest.raises(rb.RealRootError, match="mmdebstrap is not installed: apt-get install mmdebstrap"):
        rb.require_host()


def test_refuses_a_non_empty_destination(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("")
    with pytest.raises(rb.RealRootError, match="not empty"):
        rb.unpack(tmp_path / "none.tar", tmp_path)
    with pytest.raises(rb.RealRootError, match="not empty"):
        rb.copy(tmp_path / "none", tmp_path)


def test_the_cached_base_is_reused(session_base: Path) -> None:
    again = rb.ensure_base()
    assert not again.built and again.path.is_file()
    assert (session_base / "usr/bin/python3").exists()
    assert not (session_base / "usr/share/doc/python3").exists() or \
        [p.name for p in (session_base / "usr/share/doc/python3").iterdir()] == ["copyright"]


def test_cli_check_and_run(new_root: Callable[..., RealRoot]) -> None:
    r = new_root("seed-7900xt")
    cli = [sys.executable, "-m", "wizard.realroot"]
    ok = subprocess.run([*cli, "check", str(r.path)], capture_output=True, text=True)
    assert ok.returncode == 0 and "no half-states" in ok.stdout
    assert r.run(["apt-mark", "hold", "rocm"]).returncode == 0
    held = subprocess.run([*cli, "check", str(r.path)], capture_output=True, text=True)
    assert held.returncode == 1 and "held-package: held package: rocm" in held.stdout
    assert "repair (refuse): " in held.stdout
    run = subprocess.run([*cli, "run", str(r.path), "--user", "--", "sh", "-c", "id -un; exit 3"],
                         capture_output=True, text=True)
    assert run.returncode == 3 and run.stdout.strip() == "user"
    bad = subprocess.run([*cli, "run", str(r.path / "nowhere"), "--", "true"], capture_output=True, text=True)
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "not a real root" in bad.stderr
